//! Lease ids for LeaseGrant requests with ID = 0, chosen before the request is applied so that every
//! replica applies the same id (etcd's `reqIDGen`).

use crate::types::{LeaseId, MemberId};

/// etcd's id layout: the low 16 bits of the member id in the top bits, then a counter seeded from the clock
/// at start-up. The seed comes in from the shell (simulated time under madsim), never from a clock read here.
#[derive(Debug)]
pub(crate) struct LeaseIdGen {
    prefix: u64,
    suffix: u64,
}

impl LeaseIdGen {
    pub(crate) fn new(member: MemberId, start_ms: u64) -> LeaseIdGen {
        LeaseIdGen { prefix: (member.0 & 0xffff) << 48, suffix: (start_ms & 0xff_ffff_ffff) << 8 }
    }

    /// The next id; positive and never 0, as etcd masks off the sign bit.
    pub(crate) fn next_id(&mut self) -> LeaseId {
        self.suffix = (self.suffix + 1) & 0xffff_ffff_ffff;
        let id = (self.prefix | self.suffix) & (i64::MAX as u64);
        LeaseId(if id == 0 { 1 } else { id as i64 })
    }
}
