//! The `clusterrole-aggregation-controller` (in progress).

use super::Context;
use crate::runtime::selection::Descriptor;

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "clusterrole-aggregation-controller",
    aliases: &["clusterrole-aggregation"],
    disabled_by_default: false,
};

pub async fn run(_ctx: Context) {}
