//! What a failed etcd request means for retrying it, as clientv3's retry interceptor decides
//! (`clientv3/retry_interceptor.go` in etcd 3.4, unchanged in the 3.5 client kube-apiserver 1.32 uses):
//! a request that surely never reached a member may go to another; a read (`repeatable`) is retried on
//! any `Unavailable`, whether the transport broke or the member answered so (`etcdserver: no leader`,
//! `etcdserver: request timed out`); a write (`nonRepeatable`) only when it never left, since a write whose
//! connection broke may have been applied. Every other answer is final.
//!
//! The transport library's own words never reach the apiserver's clients: a failure of the connection is
//! told in grpc-go's words, which is what kube-apiserver's etcd client passes on.

use std::error::Error as _;

/// Whether a request may be repeated without changing what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Policy {
    /// Reads, lease grants and the like: repeating one is harmless (clientv3's `repeatable`).
    Repeatable,
    /// Puts, deletes and txns: repeated only when the first surely never reached a member.
    NonRepeatable,
}

/// What went wrong with one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// No connection could be made: the request never left the client.
    NotSent,
    /// The connection broke, or went silent past the keepalive, with the request in flight: it may have
    /// been applied.
    Broken,
    /// The member answered `Unavailable` (`etcdserver: no leader`, `etcdserver: request timed out`, ...).
    Unavailable,
    /// Any other answer, which retrying does not change.
    Final,
}

impl Failure {
    /// What `status` means.
    pub(crate) fn of(status: &tonic::Status) -> Failure {
        let from_etcd = status.message().starts_with("etcdserver: ");
        match status.code() {
            tonic::Code::Unavailable if from_etcd => Failure::Unavailable,
            _ if from_etcd => Failure::Final,
            _ if never_connected(status) => Failure::NotSent,
            // The transport's codes for a connection that went away under a request (tonic says
            // "operation was canceled" or "transport error", simulated TCP "connection reset" or "broken
            // pipe"; grpc-go "transport is closing").
            tonic::Code::Unavailable | tonic::Code::Cancelled | tonic::Code::Unknown | tonic::Code::Internal => {
                Failure::Broken
            }
            _ => Failure::Final,
        }
    }

    /// Whether a request under `policy` that failed so may be sent again (to the next endpoint).
    pub(crate) fn retriable(self, policy: Policy) -> bool {
        match (self, policy) {
            (Failure::NotSent, _) => true,
            (Failure::Broken | Failure::Unavailable, Policy::Repeatable) => true,
            (Failure::Broken | Failure::Unavailable, Policy::NonRepeatable) | (Failure::Final, _) => false,
        }
    }

    /// Whether the endpoint is left for a while after failing so: any failure but a final answer (which
    /// shows the member up and serving).
    pub(crate) fn leaves_endpoint(self) -> bool {
        self != Failure::Final
    }

    /// The status the apiserver sees when this failure is the last: etcd's answers as they are, the
    /// transport's in grpc-go's words (`address` is the endpoint's `host:port`).
    pub(crate) fn status(self, status: tonic::Status, address: &str) -> tonic::Status {
        match self {
            Failure::Unavailable | Failure::Final => status,
            Failure::NotSent => tonic::Status::unavailable(format!(
                "connection error: desc = \"transport: Error while dialing: dial tcp {address}: connect: connection refused\""
            )),
            Failure::Broken => tonic::Status::unavailable(BROKEN),
        }
    }
}

/// grpc-go's text for a request whose connection closed under it.
pub(crate) const BROKEN: &str = "error reading from server: EOF";

/// Whether `status` is a failure to connect: an I/O error of the kinds a refused, unreachable or timed-out
/// dial gives (simulated TCP says so directly; hyper wraps it as a connect error) anywhere in its causes.
fn never_connected(status: &tonic::Status) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = status.source();
    let own = status.message();
    if own.contains("tcp connect error") || own.contains("dns error") || own.contains("connection refused") {
        return true;
    }
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as K;
            if matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::AddrNotAvailable
                    | K::NotConnected
                    | K::HostUnreachable
                    | K::NetworkUnreachable
            ) {
                return true;
            }
        }
        let text = e.to_string();
        if text.contains("tcp connect error") || text.contains("dns error") || text.contains("timeout expired") {
            return true;
        }
        cause = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_retry_on_any_unavailable_and_writes_only_when_nothing_was_sent() {
        let cases = [
            (Failure::NotSent, Policy::Repeatable, true),
            (Failure::NotSent, Policy::NonRepeatable, true),
            (Failure::Broken, Policy::Repeatable, true),
            (Failure::Broken, Policy::NonRepeatable, false),
            (Failure::Unavailable, Policy::Repeatable, true),
            (Failure::Unavailable, Policy::NonRepeatable, false),
            (Failure::Final, Policy::Repeatable, false),
            (Failure::Final, Policy::NonRepeatable, false),
        ];
        for (failure, policy, want) in cases {
            assert_eq!(failure.retriable(policy), want, "{failure:?} under {policy:?}");
        }
    }

    #[test]
    fn etcd_answers_are_told_from_transport_failures_by_their_text() {
        let cases = [
            (tonic::Status::unavailable("etcdserver: no leader"), Failure::Unavailable),
            (tonic::Status::unavailable("etcdserver: request timed out"), Failure::Unavailable),
            (tonic::Status::out_of_range("etcdserver: mvcc: required revision has been compacted"), Failure::Final),
            (tonic::Status::invalid_argument("etcdserver: duplicate key given in txn request"), Failure::Final),
            (tonic::Status::cancelled("operation was canceled"), Failure::Broken),
            (tonic::Status::unknown("transport error"), Failure::Broken),
            (tonic::Status::unavailable("tcp connect error"), Failure::NotSent),
            (
                tonic::Status::from(std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused")),
                Failure::NotSent,
            ),
            (tonic::Status::from(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset")), Failure::Broken),
            (tonic::Status::permission_denied("etcdserver: permission denied"), Failure::Final),
        ];
        for (status, want) in cases {
            assert_eq!(Failure::of(&status), want, "{status:?}");
        }
    }

    #[test]
    fn transport_failures_reach_the_apiserver_in_grpc_go_words() {
        let status = Failure::NotSent.status(tonic::Status::unavailable("tcp connect error"), "127.0.0.1:2379");
        assert_eq!(
            status.message(),
            "connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:2379: connect: connection refused\""
        );
        assert_eq!(Failure::Broken.status(tonic::Status::cancelled("operation was canceled"), "x").message(), BROKEN);
        let etcd = tonic::Status::unavailable("etcdserver: no leader");
        assert_eq!(Failure::Unavailable.status(etcd, "x").message(), "etcdserver: no leader");
    }
}
