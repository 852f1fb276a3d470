//! The garbage collector (`garbage-collector-controller`): placeholder shell, being written.

pub mod decide;
pub mod graph;

use super::Context;
use crate::runtime::selection::Descriptor;

pub const DESCRIPTOR: Descriptor =
    Descriptor { name: "garbage-collector-controller", aliases: &["garbagecollector"], disabled_by_default: false };

pub async fn run(_ctx: Context) {}
