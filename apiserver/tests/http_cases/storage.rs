//! `storage.k8s.io/v1` storage classes over HTTP: defaults, the settings that never change, the default
//! class in a table, and a delete that answers the object. Class names start with `storage-`: they are
//! shared by every case of the server.

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const SCS: &str = "/apis/storage.k8s.io/v1/storageclasses";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a storage class is defaulted, keeps its settings, prints as the default class and a delete answers it",
            vec![
                post(SCS, r#"{"metadata":{"name":"storage-fast","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"example.com/disk","parameters":{"type":"ssd"}}"#)
                    .field("/reclaimPolicy", json!("Delete"))
                    .field("/volumeBindingMode", json!("Immediate")),
                get(&format!("{SCS}/storage-fast")).field("/provisioner", json!("example.com/disk")),
                get(SCS).field("/kind", json!("StorageClassList")),
                get(&format!("{SCS}/storage-fast"))
                    .header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                    .field("/columnDefinitions/4/name", json!("AllowVolumeExpansion"))
                    .field("/rows/0/cells/0", json!("storage-fast (default)"))
                    .field("/rows/0/cells/2", json!("Delete"))
                    .field("/rows/0/cells/4", json!(false)),
                put(&format!("{SCS}/storage-fast"), r#"{"metadata":{"name":"storage-fast"},"provisioner":"example.com/disk","parameters":{"type":"ssd"},"allowVolumeExpansion":true}"#)
                    .field("/allowVolumeExpansion", json!(true)),
                put(&format!("{SCS}/storage-fast"), r#"{"metadata":{"name":"storage-fast"},"provisioner":"example.com/other","parameters":{"type":"hdd"}}"#).status(
                    422,
                    "Invalid",
                    r#"StorageClass.storage.k8s.io "storage-fast" is invalid: [parameters: Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates to provisioner are forbidden.]"#,
                ),
                delete(&format!("{SCS}/storage-fast"))
                    .field("/kind", json!("StorageClass"))
                    .field("/metadata/name", json!("storage-fast")),
                get(&format!("{SCS}/storage-fast")).code(404),
            ],
        ),
        case(
            "a storage class needs a provisioner and known policies",
            vec![
                post(SCS, r#"{"metadata":{"name":"storage-bad"},"provisioner":"","reclaimPolicy":"Recycle"}"#).status(
                    422,
                    "Invalid",
                    r#"StorageClass.storage.k8s.io "storage-bad" is invalid: [provisioner: Required value, reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"]"#,
                ),
                post(SCS, r#"{"metadata":{"name":"storage-mode"},"provisioner":"example.com/disk","volumeBindingMode":"Later"}"#).status(
                    422,
                    "Invalid",
                    r#"StorageClass.storage.k8s.io "storage-mode" is invalid: volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer""#,
                ),
            ],
        ),
    ]
}
