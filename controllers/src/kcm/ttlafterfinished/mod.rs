//! The `ttl-after-finished-controller` (in progress).

use super::Context;
use crate::runtime::selection::Descriptor;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "ttl-after-finished-controller", aliases: &["ttl-after-finished"], disabled_by_default: false };

pub async fn run(_ctx: Context) {}
