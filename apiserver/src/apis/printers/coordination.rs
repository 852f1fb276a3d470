//! The printers of `coordination.k8s.io` resources (`printLease`).

use serde_json::Value;

use super::*;

/// `printLease`: the holder.
pub(crate) fn leases() -> Printer {
    Printer {
        columns: vec![
            name_column(),
            doc_column("Holder", "string", "io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity", 0),
            age_column(),
        ],
        cells: |obj, now, _| {
            let holder = obj.pointer("/spec/holderIdentity").and_then(Value::as_str).unwrap_or("");
            vec![name(obj), Value::from(holder), age(obj, now)]
        },
    }
}
