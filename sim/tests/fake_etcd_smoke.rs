//! The smallest simulation (`sim::demo`): one member, one client. Pins what the client sees and that the same
//! seed gives the same transcript twice.
#![cfg(madsim)]

#[test]
fn member_serves_grpc_over_the_simulated_network() {
    let seen = sim::demo::transcript(7);
    assert_eq!(
        seen,
        vec![
            "watch created=true id=0 rev=1",
            "put a1=x rev=2 prev=None",
            "put a2=y rev=3 prev=None",
            "put a1=z rev=4 prev=Some(\"x\")",
            "range count=2 rev=4",
            "event a1 rev=2 version=1",
            "event a2 rev=3 version=1",
            "event a1 rev=4 version=2",
            "lease ttl=5 id_nonzero=true",
        ]
    );
}

#[test]
fn same_seed_same_transcript() {
    assert_eq!(sim::demo::transcript(11), sim::demo::transcript(11));
}
