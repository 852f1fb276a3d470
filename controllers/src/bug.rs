//! The controller runtime's bug switches: client-go behaviour the runtime corrects by default and a
//! scenario can put back, each declared once here beside the rule it changes (`kubesim bugs` lists them).

kubesim_failpoints::bugs! {
    /// A client-go behaviour kubesim's controller managers correct, which a scenario can put back.
    pub enum Bug {
        /// A controller manager's controllers write whenever they run, whether or not the lease is still
        /// theirs: client-go's leader election has no fence, so a manager paused past its lease wakes and
        /// writes before its renew loop notices that another manager leads.
        UnfencedLeader => (
            "unfenced-leader",
            "kubernetes #67651",
            "a controller manager's controllers keep writing after its lease may have passed to another manager (client-go's leader election has no fence), so a manager paused past its lease acts beside the new leader when it wakes"
        ),
    }
}

/// The switches on.
pub type Bugs = kubesim_failpoints::BugSet<Bug>;
