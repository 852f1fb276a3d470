//! The conformance cases, one module per area, and the harness that runs them on a server.

/// The [`harness::Case`] list of the given async case functions, each named after its function.
macro_rules! cases {
    ($($case:ident),* $(,)?) => {
        vec![$(crate::conformance::harness::Case { name: stringify!($case), run: |ctx| Box::pin($case(ctx)) }),*]
    };
}

pub mod cacher;
pub mod crud;
pub mod harness;
pub mod list;
pub mod proxy;
pub mod store;
pub mod watch;
