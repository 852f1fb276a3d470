//! `storage.k8s.io/v1` CSI kinds over HTTP: CSIDriver (defaults, fields that never change, the
//! generation), CSINode (null lists, drivers that stay unchanged), VolumeAttachment (status reset, its
//! `/status`, a spec that never changes) and CSIStorageCapacity (namespaced, immutable topology, kube's
//! default table). Updates go through merge patches, as these kinds refuse updates without a
//! resourceVersion. Cluster-scoped names start with `csi-`: they are shared by every case of the server.

use serde_json::json;

use super::{case, delete, get, patch, post, Case};

const DRIVERS: &str = "/apis/storage.k8s.io/v1/csidrivers";
const NODES: &str = "/apis/storage.k8s.io/v1/csinodes";
const ATTACHMENTS: &str = "/apis/storage.k8s.io/v1/volumeattachments";
const CAPACITIES: &str = "/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities";
const MERGE: &str = "application/merge-patch+json";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

pub fn cases() -> Vec<Case> {
    vec![
        case(
            "a CSI driver is defaulted, keeps attachRequired and its modes, counts generations and a delete answers it",
            vec![
                post(DRIVERS, r#"{"metadata":{"name":"csi-disk.example.com"},"spec":{"tokenRequests":[{"audience":"vault"}]}}"#)
                    .field("/spec/attachRequired", json!(true))
                    .field("/spec/podInfoOnMount", json!(false))
                    .field("/spec/storageCapacity", json!(false))
                    .field("/spec/fsGroupPolicy", json!("ReadWriteOnceWithFSType"))
                    .field("/spec/volumeLifecycleModes", json!(["Persistent"]))
                    .field("/spec/requiresRepublish", json!(false))
                    .field("/spec/seLinuxMount", json!(false))
                    .field("/metadata/generation", json!(null))
                    .field("/metadata/managedFields/0/fieldsV1/f:spec/f:attachRequired", json!({})),
                get(&format!("{DRIVERS}/csi-disk.example.com")).field("/spec/tokenRequests/0/audience", json!("vault")),
                get(DRIVERS).field("/kind", json!("CSIDriverList")),
                get(&format!("{DRIVERS}/csi-disk.example.com"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("AttachRequired"))
                    .field("/columnDefinitions/4/name", json!("TokenRequests"))
                    .field("/columnDefinitions/6/name", json!("Modes"))
                    .field("/rows/0/cells/1", json!(true))
                    .field("/rows/0/cells/4", json!("vault"))
                    .field("/rows/0/cells/6", json!("Persistent")),
                patch(&format!("{DRIVERS}/csi-disk.example.com"), MERGE, r#"{"spec":{"podInfoOnMount":true}}"#)
                    .field("/spec/podInfoOnMount", json!(true))
                    .field("/metadata/generation", json!(1)),
                patch(
                    &format!("{DRIVERS}/csi-disk.example.com"),
                    MERGE,
                    r#"{"spec":{"attachRequired":false,"volumeLifecycleModes":["Ephemeral"]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"CSIDriver.storage.k8s.io "csi-disk.example.com" is invalid: [spec.attachedRequired: Invalid value: false: field is immutable, spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable]"#,
                ),
                delete(&format!("{DRIVERS}/csi-disk.example.com"))
                    .field("/kind", json!("CSIDriver"))
                    .field("/metadata/name", json!("csi-disk.example.com")),
                get(&format!("{DRIVERS}/csi-disk.example.com")).code(404),
            ],
        ),
        case(
            "a CSI driver's spec is checked",
            vec![post(
                DRIVERS,
                r#"{"metadata":{"name":"csi-bad.example.com"},"spec":{"fsGroupPolicy":"Always","tokenRequests":[{"audience":"a","expirationSeconds":60},{"audience":"a"}]}}"#,
            )
            .status(
                422,
                "Invalid",
                r#"CSIDriver.storage.k8s.io "csi-bad.example.com" is invalid: [spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType", spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, spec.tokenRequests[1].audience: Duplicate value: "a"]"#,
            )],
        ),
        case(
            "a CSI node writes its empty lists as null, keeps the drivers it has and a delete answers it",
            vec![
                post(NODES, r#"{"metadata":{"name":"csi-node-1"},"spec":{"drivers":[{"name":"disk.example.com","nodeID":"n-1"}]}}"#)
                    .field("/spec/drivers/0/topologyKeys", json!(null)),
                get(&format!("{NODES}/csi-node-1"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Drivers"))
                    .field("/rows/0/cells/1", json!(1)),
                patch(
                    &format!("{NODES}/csi-node-1"),
                    MERGE,
                    r#"{"spec":{"drivers":[{"name":"disk.example.com","nodeID":"n-2","topologyKeys":null}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"CSINode.storage.k8s.io "csi-node-1" is invalid: spec.drivers: Invalid value: storage.CSINodeDriver{Name:"disk.example.com", NodeID:"n-2", TopologyKeys:[]string(nil), Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"#,
                ),
                patch(&format!("{NODES}/csi-node-1"), MERGE, r#"{"spec":{"drivers":[]}}"#)
                    .field("/spec/drivers", json!(null)),
                get(NODES).field("/kind", json!("CSINodeList")),
                delete(&format!("{NODES}/csi-node-1")).field("/kind", json!("CSINode")),
                post(
                    NODES,
                    r#"{"metadata":{"name":"csi-node-2"},"spec":{"drivers":[{"name":"a.example.com","nodeID":"n","topologyKeys":["zone","zone"]},{"name":"a.example.com","nodeID":""}]}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"CSINode.storage.k8s.io "csi-node-2" is invalid: [spec.drivers[0]: Duplicate value: "zone", spec.drivers[1].nodeID: Required value, spec.drivers[1].name: Duplicate value: "a.example.com"]"#,
                ),
            ],
        ),
        case(
            "a volume attachment starts unattached, takes its status through /status, never changes its spec and a delete answers it",
            vec![
                post(
                    ATTACHMENTS,
                    r#"{"metadata":{"name":"csi-va-1"},"spec":{"attacher":"disk.example.com","source":{"persistentVolumeName":"pv-1"},"nodeName":"node-1"},"status":{"attached":true}}"#,
                )
                .field("/status", json!({"attached": false})),
                patch(&format!("{ATTACHMENTS}/csi-va-1/status"), MERGE, r#"{"status":{"attached":true,"attachmentMetadata":{"dev":"/dev/sdb"}}}"#)
                    .field("/status/attached", json!(true))
                    .field("/status/attachmentMetadata/dev", json!("/dev/sdb")),
                patch(&format!("{ATTACHMENTS}/csi-va-1"), MERGE, r#"{"metadata":{"labels":{"a":"b"}},"status":{"attached":false}}"#)
                    .field("/metadata/labels/a", json!("b"))
                    .field("/status/attached", json!(true)),
                get(&format!("{ATTACHMENTS}/csi-va-1"))
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/format", json!("name"))
                    .field("/rows/0/cells/1", json!("disk.example.com"))
                    .field("/rows/0/cells/2", json!("pv-1"))
                    .field("/rows/0/cells/3", json!("node-1"))
                    .field("/rows/0/cells/4", json!(true)),
                patch(&format!("{ATTACHMENTS}/csi-va-1"), MERGE, r#"{"spec":{"nodeName":"node-2"}}"#).status(
                    422,
                    "Invalid",
                    r#"VolumeAttachment.storage.k8s.io "csi-va-1" is invalid: spec: Invalid value: storage.VolumeAttachmentSpec{Attacher:"disk.example.com", Source:storage.VolumeAttachmentSource{PersistentVolumeName:(*string)(0xc000000000), InlineVolumeSpec:(*core.PersistentVolumeSpec)(nil)}, NodeName:"node-2"}: field is immutable"#,
                ),
                get(ATTACHMENTS).field("/kind", json!("VolumeAttachmentList")),
                delete(&format!("{ATTACHMENTS}/csi-va-1")).field("/kind", json!("VolumeAttachment")),
                post(ATTACHMENTS, r#"{"metadata":{"name":"csi-va-2"},"spec":{"attacher":"","source":{},"nodeName":"node-1"}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"VolumeAttachment.storage.k8s.io "csi-va-2" is invalid: [spec.attacher: Required value, spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, spec.attacher: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]"#,
                    ),
            ],
        ),
        case(
            "a CSI storage capacity keeps its topology and class, writes canonical quantities, prints kube's default table and a delete answers a status",
            vec![
                post(
                    CAPACITIES,
                    r#"{"metadata":{"name":"fast-zone-a"},"storageClassName":"fast","nodeTopology":{"matchLabels":{"zone":"a"}},"capacity":"10240Mi"}"#,
                )
                .field("/metadata/namespace", json!("{ns}"))
                .field("/capacity", json!("10Gi")),
                patch(&format!("{CAPACITIES}/fast-zone-a"), MERGE, r#"{"capacity":"20Gi","maximumVolumeSize":"0.5Gi"}"#)
                    .field("/capacity", json!("20Gi"))
                    .field("/maximumVolumeSize", json!("512Mi")),
                patch(&format!("{CAPACITIES}/fast-zone-a"), MERGE, r#"{"storageClassName":"slow","nodeTopology":{"matchLabels":{"zone":"b"}}}"#)
                    .status(
                        422,
                        "Invalid",
                        r#"CSIStorageCapacity.storage.k8s.io "fast-zone-a" is invalid: [nodeTopology: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"zone":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable, storageClassName: Invalid value: "slow": field is immutable]"#,
                    ),
                get(CAPACITIES)
                    .header("Accept", TABLE)
                    .field("/columnDefinitions/1/name", json!("Created At"))
                    .field("/rows/0/cells/0", json!("fast-zone-a")),
                post(CAPACITIES, r#"{"metadata":{"name":"bad"},"storageClassName":"","capacity":"-1Gi"}"#).status(
                    422,
                    "Invalid",
                    r#"CSIStorageCapacity.storage.k8s.io "bad" is invalid: [storageClassName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), capacity: Invalid value: "-1Gi": must be greater than or equal to 0]"#,
                ),
                delete(&format!("{CAPACITIES}/fast-zone-a")).field("/kind", json!("Status")).field("/status", json!("Success")),
                get(&format!("{CAPACITIES}/fast-zone-a")).code(404),
            ],
        ),
    ]
}
