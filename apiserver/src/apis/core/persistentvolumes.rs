//! PersistentVolumes, core `v1` (`KK/pkg/registry/core/persistentvolume`,
//! `KK/pkg/apis/core/validation`: `ValidatePersistentVolume`, `ValidatePersistentVolumeSpec`,
//! `ValidatePersistentVolumeUpdate`; `KK/pkg/apis/core/v1/defaults.go`: `SetDefaults_PersistentVolume`):
//! cluster-scoped, names are DNS subdomains. v1 defaults the reclaim policy to `Retain`, the volume mode
//! to `Filesystem` and a hostPath's `type` to `""`; a new volume is `Pending` with its phase transition
//! time set to its creation time. A volume needs access modes (known ones, `ReadWriteOncePod` alone), a
//! capacity, a known reclaim policy (not `Recycle` for a hostPath of `/`), exactly one volume source
//! (hostPath, nfs, local and csi sources are checked further, a csi source's secret references too; a
//! local volume needs node affinity), a class name that is a DNS subdomain and a known volume mode. After
//! creation the source and the volume mode never change. The status belongs to `/status`; a delete
//! answers the deleted object. The `kubernetes.io/pv-protection` finalizer that admission adds (and a
//! controller removes) is not added here: kubesim runs no such controller.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::apis::printers::{age, age_column, column, doc_column, meta_str, name, name_column};
use crate::apis::{status, Printer, ResourceInfo};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategies::common;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["pv"],
        namespaced: false,
        subresources: vec![status("PersistentVolume")],
        ..ResourceInfo::new(resource(), "persistentvolume", Arc::new(PersistentVolumes), printer())
    }
}

fn resource() -> Resource {
    Resource::core("PersistentVolume", "persistentvolumes")
}

/// The PersistentVolume strategy.
struct PersistentVolumes;

const ACCESS_MODES: &[&str] = &["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
const RECLAIM_POLICIES: &[&str] = &["Delete", "Recycle", "Retain"];
const VOLUME_MODES: &[&str] = &["Block", "Filesystem"];
const HOST_PATH_TYPES: &[&str] =
    &["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"];

/// The volume sources in the order validation visits them: the JSON key and the path its "more than one"
/// error names (`cephfs` is `cephFS` there).
const SOURCES: &[(&str, &str)] = &[
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// Placeholder for the phase transition time of a new volume, replaced by its creation time once the
/// store has set it (`canonicalize`): strategies have no clock of their own.
const TRANSITION_PENDING: &str = "";

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/spec/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn source<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.pointer(&format!("/spec/{key}")).filter(|v| !v.is_null())
}

/// `SetDefaults_PersistentVolume` and `SetDefaults_HostPathVolumeSource`; the `VolumeAttributesClass`
/// field is dropped, its feature gate being off in 1.32.
fn set_defaults(obj: &mut Value, old: Option<&Value>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else { return };
    if spec.get("persistentVolumeReclaimPolicy").and_then(Value::as_str).unwrap_or("").is_empty() {
        spec.insert("persistentVolumeReclaimPolicy".into(), json!("Retain"));
    }
    if spec.get("volumeMode").is_none_or(Value::is_null) {
        spec.insert("volumeMode".into(), json!("Filesystem"));
    }
    if let Some(host_path) = spec.get_mut("hostPath").and_then(Value::as_object_mut) {
        if host_path.get("type").is_none_or(Value::is_null) {
            host_path.insert("type".into(), json!(""));
        }
    }
    if old.and_then(|o| o.pointer("/spec/volumeAttributesClassName")).is_none() {
        spec.remove("volumeAttributesClassName");
    }
}

/// `validatePathNoBacksteps`.
fn no_backsteps(path: &str, field: &str) -> Option<FieldError> {
    path.split('/').any(|p| p == "..").then(|| FieldError::invalid(field, path, "must not contain '..'"))
}

fn validate_host_path(src: &Value, errs: &mut Vec<FieldError>) {
    let path = src.get("path").and_then(Value::as_str).unwrap_or("");
    if path.is_empty() {
        errs.push(FieldError::required("spec.hostPath.path", ""));
        return;
    }
    errs.extend(no_backsteps(path, "spec.hostPath.path"));
    if let Some(kind) = src.get("type").and_then(Value::as_str) {
        if !HOST_PATH_TYPES.contains(&kind) {
            errs.push(FieldError::not_supported("spec.hostPath.type", kind, HOST_PATH_TYPES));
        }
    }
}

fn validate_nfs(src: &Value, errs: &mut Vec<FieldError>) {
    let text = |f: &str| src.get(f).and_then(Value::as_str).unwrap_or("");
    if text("server").is_empty() {
        errs.push(FieldError::required("spec.nfs.server", ""));
    }
    if text("path").is_empty() {
        errs.push(FieldError::required("spec.nfs.path", ""));
    }
    if !text("path").starts_with('/') {
        errs.push(FieldError::invalid("spec.nfs.path", text("path"), "must be an absolute path"));
    }
}

fn validate_local(src: &Value, errs: &mut Vec<FieldError>) {
    let path = src.get("path").and_then(Value::as_str).unwrap_or("");
    if path.is_empty() {
        errs.push(FieldError::required("spec.local.path", ""));
        return;
    }
    errs.extend(no_backsteps(path, "spec.local.path"));
}

/// `ValidateCSIDriverName` and the volume handle.
fn validate_csi(src: &Value, errs: &mut Vec<FieldError>) {
    let driver = src.get("driver").and_then(Value::as_str).unwrap_or("");
    if driver.is_empty() {
        errs.push(FieldError::required("spec.csi.driver", ""));
    }
    if driver.len() > 63 {
        errs.push(FieldError::too_long("spec.csi.driver", 63));
    }
    for msg in names::dns1123_subdomain(&driver.to_lowercase()) {
        errs.push(FieldError::invalid("spec.csi.driver", driver, &msg));
    }
    if src.get("volumeHandle").and_then(Value::as_str).unwrap_or("").is_empty() {
        errs.push(FieldError::required("spec.csi.volumeHandle", ""));
    }
    for secret in
        ["controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef", "nodeExpandSecretRef"]
    {
        if let Some(reference) = src.get(secret).filter(|r| !r.is_null()) {
            validate_secret_reference(reference, &format!("spec.csi.{secret}"), errs);
        }
    }
}

/// `validatePVSecretReference`: a name that is a DNS subdomain, a namespace that is a DNS label.
fn validate_secret_reference(reference: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for (field, check) in
        [("name", names::dns1123_subdomain as fn(&str) -> Vec<String>), ("namespace", names::dns1123_label)]
    {
        let value = reference.get(field).and_then(Value::as_str).unwrap_or("");
        let field = format!("{path}.{field}");
        if value.is_empty() {
            errs.push(FieldError::required(&field, ""));
        }
        for msg in if value.is_empty() { vec![] } else { check(value) } {
            errs.push(FieldError::invalid(&field, value, &msg));
        }
    }
}

/// `validateVolumeNodeAffinity` as far as the presence of its terms; whether it is specified.
fn validate_node_affinity(obj: &Value, errs: &mut Vec<FieldError>) -> bool {
    let Some(affinity) = obj.pointer("/spec/nodeAffinity").filter(|a| !a.is_null()) else { return false };
    match affinity.get("required").filter(|r| !r.is_null()) {
        None => errs.push(FieldError::required("spec.nodeAffinity.required", "must specify required node constraints")),
        Some(required) => {
            if required.get("nodeSelectorTerms").and_then(Value::as_array).is_none_or(Vec::is_empty) {
                errs.push(FieldError::required(
                    "spec.nodeAffinity.required.nodeSelectorTerms",
                    "must have at least one node selector term",
                ));
            }
        }
    }
    true
}

/// `ValidatePersistentVolumeSpec` (not inline).
fn validate_spec(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let modes: Vec<&str> = obj
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .map_or(vec![], |m| m.iter().map(|v| v.as_str().unwrap_or("")).collect());
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", ""));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in &modes {
        if !ACCESS_MODES.contains(mode) {
            errs.push(FieldError::not_supported("spec.accessModes", mode, ACCESS_MODES));
        }
        if *mode == "ReadWriteOncePod" {
            once_pod = true;
        } else if ACCESS_MODES.contains(mode) {
            other = true;
        }
    }
    if once_pod && other {
        errs.push(FieldError::forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"));
    }
    // An absent or empty capacity; a capacity naming other resources is not checked here (its message
    // prints Go's %#v of the quantities).
    match obj.pointer("/spec/capacity").filter(|c| !c.is_null()).and_then(Value::as_object) {
        Some(c) if !c.is_empty() => {}
        capacity => {
            errs.push(FieldError::required("spec.capacity", ""));
            errs.push(FieldError {
                kind: FieldErrorType::NotSupported,
                field: "spec.capacity".into(),
                value: BadValue::GoSyntax(
                    if capacity.is_some() { "core.ResourceList{}" } else { "core.ResourceList(nil)" }.into(),
                ),
                detail: "supported values: \"storage\"".into(),
            });
        }
    }
    let policy = spec_str(obj, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !RECLAIM_POLICIES.contains(&policy) {
        errs.push(FieldError::not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES));
    }
    let affinity = validate_node_affinity(obj, &mut errs);
    let mut count = 0;
    for (key, field) in SOURCES {
        let Some(src) = source(obj, key) else { continue };
        // A flexVolume is counted but never refused as a second source.
        if count > 0 && *key != "flexVolume" {
            errs.push(FieldError::forbidden(&format!("spec.{field}"), "may not specify more than 1 volume type"));
            continue;
        }
        count += 1;
        match *key {
            "hostPath" => validate_host_path(src, &mut errs),
            "nfs" => validate_nfs(src, &mut errs),
            "local" => {
                validate_local(src, &mut errs);
                if !affinity {
                    errs.push(FieldError::required("spec.nodeAffinity", "Local volume requires node affinity"));
                }
            }
            "csi" => validate_csi(src, &mut errs),
            _ => {}
        }
    }
    if count == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    if let Some(path) = source(obj, "hostPath").and_then(|h| h.get("path")).and_then(Value::as_str) {
        if clean_is_root(path) && policy == "Recycle" {
            errs.push(FieldError::forbidden(
                "spec.persistentVolumeReclaimPolicy",
                "may not be 'recycle' for a hostPath mount of '/'",
            ));
        }
    }
    let class = spec_str(obj, "storageClassName");
    if !class.is_empty() {
        for msg in names::dns1123_subdomain(class) {
            errs.push(FieldError::invalid("spec.storageClassName", class, &msg));
        }
    }
    if let Some(mode) = obj.pointer("/spec/volumeMode").and_then(Value::as_str) {
        if !VOLUME_MODES.contains(&mode) {
            errs.push(FieldError::not_supported("spec.volumeMode", mode, VOLUME_MODES));
        }
    }
    errs
}

/// Whether Go's `path.Clean(path)` is `/`.
fn clean_is_root(path: &str) -> bool {
    path.starts_with('/') && path.split('/').all(|p| p.is_empty() || p == "." || p == "..")
}

/// The volume source of a spec: every source field (a CSI `controllerExpandSecretRef` may be added later).
fn volume_source(obj: &Value, strip_expand_secret: bool) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, _) in SOURCES {
        if let Some(src) = source(obj, key) {
            out.insert((*key).into(), src.clone());
        }
    }
    if strip_expand_secret {
        if let Some(csi) = out.get_mut("csi").and_then(Value::as_object_mut) {
            csi.remove("controllerExpandSecretRef");
        }
    }
    out
}

fn validate(obj: &Value) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, names::name_is_dns_subdomain);
    errs.extend(validate_spec(obj));
    errs
}

impl Strategy for PersistentVolumes {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        sub == Subresource::Status
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        set_defaults(obj, None);
        obj["status"] = json!({"phase": "Pending", "lastPhaseTransitionTime": TRANSITION_PENDING});
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_defaults(new, Some(old));
        common::keep_status(new, old);
    }

    /// The status strategy: the spec is the stored one; a phase that stays keeps its transition time when
    /// the update leaves it out. (A changed phase without a time of its own would get the time now;
    /// strategies have no clock, so it is left without one.)
    fn prepare_for_subresource_update(&self, _sub: Subresource, new: &mut Value, old: &Value) {
        common::keep_all_but_status(new, old);
        let phase = |o: &Value| o.pointer("/status/phase").and_then(Value::as_str).unwrap_or("").to_string();
        let time = |o: &Value| o.pointer("/status/lastPhaseTransitionTime").filter(|t| !t.is_null()).cloned();
        let (new_time, old_time) = (time(new), time(old));
        if phase(new) == phase(old) && new_time.is_none() {
            if let (Some(t), Some(status)) = (old_time, new.get_mut("status").and_then(Value::as_object_mut)) {
                status.insert("lastPhaseTransitionTime".into(), t);
            }
        } else if phase(new) != phase(old) && (new_time.is_none() || new_time == old_time) {
            if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
                status.remove("lastPhaseTransitionTime");
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj)
    }

    /// `ValidatePersistentVolume` twice (the strategy and `ValidatePersistentVolumeUpdate` both run it),
    /// then the update rules.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain);
        errs.extend(validate_spec(new));
        errs.extend(validate(new));
        let adds_expand_secret = source(old, "csi").is_some_and(|c| c.get("controllerExpandSecretRef").is_none());
        if volume_source(new, adds_expand_secret) != volume_source(old, false) {
            errs.push(FieldError::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation\n",
            ));
        }
        errs.extend(common::immutable(new.pointer("/spec/volumeMode"), old.pointer("/spec/volumeMode"), "volumeMode"));
        errs
    }

    /// `ValidatePersistentVolumeStatusUpdate`: the metadata rules.
    fn validate_subresource_update(&self, _sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        meta::validate_object_meta_update(new, old, false, names::name_is_dns_subdomain)
    }

    /// A new volume's phase transition time is its creation time.
    fn canonicalize(&self, obj: &mut Value) {
        if obj.pointer("/status/lastPhaseTransitionTime").and_then(Value::as_str) == Some(TRANSITION_PENDING) {
            let created = meta_str(obj, "creationTimestamp").to_string();
            obj["status"]["lastPhaseTransitionTime"] = Value::from(created);
        }
    }
}

/// The persistentvolumes store answers a delete with the deleted object (`ReturnDeletedObject`).
impl DeleteStrategy for PersistentVolumes {
    fn return_deleted_object(&self) -> bool {
        true
    }
}

/// `GetAccessModesAsString`: the short names in a fixed order, each once.
fn access_modes(obj: &Value) -> String {
    let modes: Vec<&str> = obj
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .map_or(vec![], |m| m.iter().filter_map(Value::as_str).collect());
    [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")]
        .iter()
        .filter(|(mode, _)| modes.contains(mode))
        .map(|(_, short)| *short)
        .collect::<Vec<_>>()
        .join(",")
}

/// `printPersistentVolume`: capacity, access modes, reclaim policy, phase (`Terminating` once deleted),
/// claim, classes, reason; the volume mode with `-o wide`.
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.core.v1.PersistentVolumeSpec";
    const STATUS: &str = "io.k8s.api.core.v1.PersistentVolumeStatus";
    Printer {
        columns: vec![
            name_column(),
            doc_column("Capacity", "string", SPEC, "capacity", 0),
            doc_column("Access Modes", "string", SPEC, "accessModes", 0),
            doc_column("Reclaim Policy", "string", SPEC, "persistentVolumeReclaimPolicy", 0),
            doc_column("Status", "string", STATUS, "phase", 0),
            doc_column("Claim", "string", SPEC, "claimRef", 0),
            column("StorageClass", "string", "StorageClass of the pv", 0),
            column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv", 0),
            doc_column("Reason", "string", STATUS, "reason", 0),
            age_column(),
            doc_column("VolumeMode", "string", SPEC, "volumeMode", 1),
        ],
        cells: |obj, now, _| {
            let text = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
            let or_unset = |p: &str| match text(p) {
                t if t.is_empty() => "<unset>".to_string(),
                t => t,
            };
            let capacity = match text("/spec/capacity/storage") {
                c if c.is_empty() => "0".to_string(),
                c => c,
            };
            let phase = if meta_str(obj, "deletionTimestamp").is_empty() {
                text("/status/phase")
            } else {
                "Terminating".into()
            };
            let claim = match obj.pointer("/spec/claimRef").filter(|c| !c.is_null()) {
                Some(_) => format!("{}/{}", text("/spec/claimRef/namespace"), text("/spec/claimRef/name")),
                None => String::new(),
            };
            let class =
                match meta::get(obj, "annotations").and_then(|a| a.get("volume.beta.kubernetes.io/storage-class")) {
                    Some(class) => class.as_str().unwrap_or("").to_string(),
                    None => text("/spec/storageClassName"),
                };
            vec![
                name(obj),
                Value::from(capacity),
                Value::from(access_modes(obj)),
                Value::from(text("/spec/persistentVolumeReclaimPolicy")),
                Value::from(phase),
                Value::from(claim),
                Value::from(class),
                Value::from(or_unset("/spec/volumeAttributesClassName")),
                Value::from(text("/status/reason")),
                age(obj, now),
                Value::from(or_unset("/spec/volumeMode")),
            ]
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::field_error::messages;

    fn pv(spec: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"}, "spec": spec})
    }

    fn created(spec: Value) -> Value {
        let mut obj = pv(spec);
        PersistentVolumes.prepare_for_create(&mut obj);
        obj
    }

    fn host_path() -> Value {
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/data"}})
    }

    #[test]
    fn a_new_volume_gets_v1_defaults_and_is_pending() {
        let mut obj = created(host_path());
        assert_eq!(obj["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(obj["spec"]["volumeMode"], "Filesystem");
        assert_eq!(obj["spec"]["hostPath"], json!({"path": "/data", "type": ""}));
        assert_eq!(messages(PersistentVolumes.validate(&obj)), Vec::<String>::new());
        obj["metadata"]["creationTimestamp"] = json!("2024-01-02T03:04:05Z");
        PersistentVolumes.canonicalize(&mut obj);
        assert_eq!(obj["status"], json!({"phase": "Pending", "lastPhaseTransitionTime": "2024-01-02T03:04:05Z"}));
        // The gated field is dropped.
        let mut vac = host_path();
        vac["volumeAttributesClassName"] = json!("gold");
        assert!(created(vac)["spec"].get("volumeAttributesClassName").is_none());
    }

    #[test]
    fn volumes_are_validated_as_upstream_validates_them() {
        let cases: &[(Value, &[&str])] = &[
            (json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "v-1"}}), &[]),
            (
                json!({"hostPath": {"path": "/data"}}),
                &[
                    "spec.accessModes: Required value",
                    "spec.capacity: Required value",
                    "spec.capacity: Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "WriteOnly"]}),
                &[
                    "spec.accessModes: Unsupported value: \"WriteOnly\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                    "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
                    "spec: Required value: must specify a volume type",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/"}, "nfs": {"server": "s", "path": "/x"}, "persistentVolumeReclaimPolicy": "Recycle"}),
                &[
                    "spec.nfs: Forbidden: may not specify more than 1 volume type",
                    "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "nfs": {"path": "x"}, "persistentVolumeReclaimPolicy": "Keep", "volumeMode": "Raw", "storageClassName": "Fast"}),
                &[
                    "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\"",
                    "spec.nfs.server: Required value",
                    "spec.nfs.path: Invalid value: \"x\": must be an absolute path",
                    "spec.storageClassName: Invalid value: \"Fast\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/../x"}}),
                &[
                    "spec.local.path: Invalid value: \"/mnt/../x\": must not contain '..'",
                    "spec.nodeAffinity: Required value: Local volume requires node affinity",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"}, "nodeAffinity": {"required": {"nodeSelectorTerms": []}}}),
                &["spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term"],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d", "type": "Pipe"}}),
                &["spec.hostPath.type: Unsupported value: \"Pipe\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\""],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "Bad_Driver"}}),
                &[
                    "spec.csi.driver: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    "spec.csi.volumeHandle: Required value",
                ],
            ),
            (
                json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d.example.com", "volumeHandle": "h", "nodePublishSecretRef": {"name": "s"}}}),
                &["spec.csi.nodePublishSecretRef.namespace: Required value"],
            ),
        ];
        for (spec, want) in cases {
            assert_eq!(messages(PersistentVolumes.validate(&created(spec.clone()))), *want, "{spec}");
        }
    }

    #[test]
    fn the_source_and_mode_never_change_and_the_status_is_kept() {
        let s = PersistentVolumes;
        let old = created(host_path());
        let mut new = old.clone();
        new["spec"]["hostPath"]["path"] = json!("/other");
        new["spec"]["volumeMode"] = json!("Block");
        new["spec"]["capacity"]["storage"] = json!("2Gi");
        new["status"] = json!({"phase": "Bound"});
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], old["status"]);
        assert_eq!(
            messages(s.validate_update(&new, &old)),
            [
                "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n",
                "volumeMode: Invalid value: \"Block\": field is immutable",
            ]
        );
        let mut grown = old.clone();
        grown["spec"]["capacity"]["storage"] = json!("2Gi");
        assert_eq!(messages(s.validate_update(&grown, &old)), Vec::<String>::new());
    }

    #[test]
    fn the_status_subresource_tracks_the_phase_transition_time() {
        let s = PersistentVolumes;
        let mut old = created(host_path());
        old["status"]["lastPhaseTransitionTime"] = json!("2024-01-02T03:04:05Z");
        let mut same = old.clone();
        same["spec"]["persistentVolumeReclaimPolicy"] = json!("Delete");
        same["status"] = json!({"phase": "Pending", "message": "waiting"});
        s.prepare_for_subresource_update(Subresource::Status, &mut same, &old);
        assert_eq!(same["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(same["status"]["lastPhaseTransitionTime"], "2024-01-02T03:04:05Z");
        let mut moved = old.clone();
        moved["status"]["phase"] = json!("Available");
        s.prepare_for_subresource_update(Subresource::Status, &mut moved, &old);
        assert!(moved["status"].get("lastPhaseTransitionTime").is_none());
    }

    #[test]
    fn the_printer_shows_what_kubectl_shows() {
        let mut obj = created(host_path());
        obj["spec"]["accessModes"] = json!(["ReadWriteMany", "ReadWriteOnce"]);
        obj["spec"]["claimRef"] = json!({"namespace": "ns", "name": "data"});
        obj["spec"]["storageClassName"] = json!("fast");
        assert_eq!(
            (printer().cells)(&obj, 0, &[]),
            vec![
                json!("pv1"),
                json!("1Gi"),
                json!("RWO,RWX"),
                json!("Retain"),
                json!("Pending"),
                json!("ns/data"),
                json!("fast"),
                json!("<unset>"),
                json!(""),
                json!("<unknown>"),
                json!("Filesystem")
            ]
        );
        obj["metadata"]["deletionTimestamp"] = json!("2024-01-02T03:04:05Z");
        obj["metadata"]["annotations"] = json!({"volume.beta.kubernetes.io/storage-class": "slow"});
        let cells = (printer().cells)(&obj, 0, &[]);
        assert_eq!((cells[4].clone(), cells[6].clone()), (json!("Terminating"), json!("slow")));
    }
}
