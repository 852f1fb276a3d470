//! The `disruption-controller` (in progress).

use super::Context;
use crate::runtime::selection::Descriptor;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "disruption-controller", aliases: &["disruption"], disabled_by_default: false };

pub async fn run(_ctx: Context) {}
