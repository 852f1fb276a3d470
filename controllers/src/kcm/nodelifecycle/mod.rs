//! The `node-lifecycle-controller` (in progress).

use super::Context;
use crate::runtime::selection::Descriptor;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "node-lifecycle-controller", aliases: &["nodelifecycle"], disabled_by_default: false };

pub async fn run(_ctx: Context) {}
