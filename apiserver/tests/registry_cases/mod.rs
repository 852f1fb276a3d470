//! The registry cases, one module per area, and the harness that runs them.

/// The [`harness::Case`] list of the given async case functions, each named after its function.
macro_rules! cases {
    ($($case:ident),* $(,)?) => {
        vec![$(crate::registry_cases::harness::Case { name: stringify!($case), run: |ctx| Box::pin($case(ctx)) }),*]
    };
}

pub mod admission;
pub mod bad_input;
pub mod crud;
pub mod custom;
pub mod dry_run;
pub mod finalizers;
pub mod graceful;
pub mod harness;
pub mod lifecycle;
pub mod pods;
pub mod subresources;
pub mod watch;
