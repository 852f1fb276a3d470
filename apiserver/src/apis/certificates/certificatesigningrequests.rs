//! CertificateSigningRequests, `certificates.k8s.io/v1` (`KK/pkg/registry/certificates/certificates`,
//! `KK/pkg/apis/certificates/validation`, `KK/pkg/apis/core/validation`'s `ValidateSignerName`):
//! cluster-scoped, short name `csr`, any name. `spec.request` is a PEM `CERTIFICATE REQUEST` whose
//! signature verifies; `usages` are required, known and distinct; `signerName` is a `domain/path` name
//! (never the legacy one on create); `expirationSeconds` is at least 600. Conditions have a type, a known
//! status (`True` only for Approved, Denied and Failed), no duplicate types, never both Approved and Denied;
//! `status.certificate` is PEM `CERTIFICATE` blocks. The requester's identity is the server's to write:
//! kubesim has no authentication, so no user reaches the strategy and, as upstream does for a request
//! without one, `username`, `uid`, `groups` and `extra` are cleared and left empty.
//!
//! The main endpoint changes neither spec nor status after create. `/status` keeps the spec and the
//! Approved and Denied conditions and may set the certificate once; `/approval` changes only the
//! conditions. No update removes an Approved, Denied or Failed condition. New conditions get their
//! `lastUpdateTime` and `lastTransitionTime`; strategies have no clock, so "now" is the time the field
//! manager has just written into `managedFields` for this write (none when the write is not tracked).
//! The "updates may not modify a condition" rule is left out: its message carries `cmp.Diff` output, and
//! `/status` restores those conditions before validation anyway, so it cannot fire there.

use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use crate::apis::printers::{age, age_column, doc_column, human_duration, name, name_column};
use crate::apis::{status, Printer, ResourceInfo, SubresourceInfo, STATUS_VERBS};
use crate::registry::field_error::{BadValue, FieldError, FieldErrorType};
use crate::registry::meta;
use crate::registry::names;
use crate::registry::resource::Resource;
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};

const KIND: &str = "CertificateSigningRequest";

/// The catalog's entry.
pub(crate) fn info() -> ResourceInfo {
    ResourceInfo {
        short_names: &["csr"],
        namespaced: false,
        subresources: vec![
            status(KIND),
            SubresourceInfo {
                name: "approval",
                sub: Subresource::Approval,
                kind: KIND,
                kind_group_version: None,
                verbs: STATUS_VERBS,
            },
        ],
        ..ResourceInfo::new(resource(), "certificatesigningrequest", Arc::new(Csrs), printer())
    }
}

fn resource() -> Resource {
    Resource {
        group: "certificates.k8s.io".into(),
        version: "v1".into(),
        kind: KIND.into(),
        plural: "certificatesigningrequests".into(),
        etcd_prefix: "certificatesigningrequests".into(),
    }
}

/// Every key usage a request may ask for.
const USAGES: &[&str] = &[
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
];

/// `kubernetes.io/legacy-unknown`, refused on create in v1.
const LEGACY_SIGNER: &str = "kubernetes.io/legacy-unknown";
const APPROVED: &str = "Approved";
const DENIED: &str = "Denied";
const FAILED: &str = "Failed";

/// The CertificateSigningRequest strategy (the main, status and approval strategies in one).
struct Csrs;

/// What the compatibility rules tolerate in an update, given the stored object
/// (`certificateValidationOptions`).
#[derive(Default)]
struct Options {
    setting_approval: bool,
    setting_certificate: bool,
    both_approved_and_denied: bool,
    legacy_signer: bool,
    duplicate_condition_types: bool,
    empty_condition_type: bool,
    arbitrary_certificate: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
}

fn spec_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("spec").and_then(|s| s.get(field)).and_then(Value::as_str).unwrap_or("")
}

fn usages(obj: &Value) -> Vec<&str> {
    obj.pointer("/spec/usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default()
}

fn conditions(obj: &Value) -> Vec<&Value> {
    obj.pointer("/status/conditions").and_then(Value::as_array).map(|c| c.iter().collect()).unwrap_or_default()
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

fn conditions_of<'a>(obj: &'a Value, kind: &str) -> Vec<&'a Value> {
    conditions(obj).into_iter().filter(|c| text(c, "type") == kind).collect()
}

/// The bytes of a `[]byte` field (base64 in JSON); `None` when absent.
fn bytes_field(obj: &Value, pointer: &str) -> Option<Vec<u8>> {
    let text = obj.pointer(pointer).and_then(Value::as_str)?;
    Some(STANDARD.decode(text).unwrap_or_else(|_| text.as_bytes().to_vec()))
}

/// Go's `%#v` of a `[]byte`.
fn go_bytes(bytes: Option<&[u8]>) -> String {
    match bytes {
        None => "[]byte(nil)".into(),
        Some(b) => {
            let items: Vec<String> = b.iter().map(|x| format!("{x:#x}")).collect();
            format!("[]byte{{{}}}", items.join(", "))
        }
    }
}

fn duplicate(field: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorType::Duplicate,
        field: field.into(),
        value: BadValue::Str(value.into()),
        detail: String::new(),
    }
}

/// `ParseCSR` and `CheckSignature`: why `request` is not a signed PKCS#10 request in PEM. The texts for
/// DER that does not parse are ours (Go's come from its ASN.1 decoder); the others are Go's.
fn check_request(request: &[u8]) -> Option<String> {
    const NOT_A_REQUEST: &str = "PEM block type must be CERTIFICATE REQUEST";
    let Ok(block) = pem::parse(request) else { return Some(NOT_A_REQUEST.into()) };
    if block.tag() != "CERTIFICATE REQUEST" {
        return Some(NOT_A_REQUEST.into());
    }
    use x509_parser::prelude::FromDer;
    let csr = match x509_parser::certification_request::X509CertificationRequest::from_der(block.contents()) {
        Ok(([], csr)) => csr,
        Ok(_) => return Some("asn1: syntax error: trailing data".into()),
        Err(_) => return Some("x509: malformed certificate request".into()),
    };
    let algorithm = csr.certification_request_info.subject_pki.algorithm.algorithm.to_id_string();
    csr.verify_signature().err().map(|_| {
        match algorithm.as_str() {
            "1.2.840.10045.2.1" => "x509: ECDSA verification failure",
            "1.3.101.112" => "x509: Ed25519 verification failure",
            _ => "crypto/rsa: verification error",
        }
        .to_string()
    })
}

/// `validateCertificate`: why `pem` is not a list of PEM `CERTIFICATE` blocks (empty is fine).
fn check_certificate(data: &[u8]) -> Option<String> {
    if data.is_empty() {
        return None;
    }
    let blocks = pem::parse_many(data).unwrap_or_default();
    for block in &blocks {
        if block.tag() != "CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {}",
                crate::go_text::quote(block.tag())
            ));
        }
        if block.headers().iter().next().is_some() {
            return Some("no PEM block headers are permitted".into());
        }
        if x509_parser::parse_x509_certificate(block.contents()).is_err() {
            return Some("x509: malformed certificate".into());
        }
    }
    blocks.is_empty().then(|| "must contain at least one CERTIFICATE PEM block".into())
}

/// `ValidateSignerName`.
fn validate_signer_name(field: &str, signer: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if signer.is_empty() {
        errs.push(FieldError::required(field, ""));
        return errs;
    }
    let segments: Vec<&str> = signer.split('/').collect();
    if segments.len() != 2 {
        errs.push(FieldError::invalid(
            field,
            signer,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return errs;
    }
    let (domain, path) = (segments[0], segments[1]);
    if domain.len() > names::DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(FieldError::too_long(field, names::DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let labels: Vec<&str> = domain.split('.').collect();
    for label in &labels {
        let problems = names::dns1123_label(label);
        if !problems.is_empty() {
            for p in problems {
                errs.push(FieldError::invalid(
                    field,
                    domain,
                    &format!("validating label {}: {p}", crate::go_text::quote(label)),
                ));
            }
            break;
        }
    }
    if labels.len() < 2 {
        errs.push(FieldError::invalid(
            field,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    for label in path.split('.') {
        let problems = names::dns1123_subdomain(label);
        if !problems.is_empty() {
            for p in problems {
                errs.push(FieldError::invalid(
                    field,
                    path,
                    &format!("validating label {}: {p}", crate::go_text::quote(label)),
                ));
            }
            break;
        }
    }
    let max = names::DNS1123_SUBDOMAIN_MAX_LENGTH * 2 + names::DNS1123_LABEL_MAX_LENGTH + 2;
    if signer.len() > max {
        errs.push(FieldError::too_long(field, max));
    }
    errs
}

/// `validateConditions`.
fn validate_conditions(obj: &Value, opts: &Options) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(obj).into_iter().enumerate() {
        let at = format!("status.conditions[{i}]");
        let kind = text(c, "type");
        if !opts.empty_condition_type && kind.is_empty() {
            errs.push(FieldError::required(&format!("{at}.type"), ""));
        }
        let allowed: &[&str] =
            if matches!(kind, APPROVED | DENIED | FAILED) { &["True"] } else { &["False", "True", "Unknown"] };
        let status = text(c, "status");
        if status.is_empty() {
            errs.push(FieldError::required(&format!("{at}.status"), ""));
        } else if !allowed.contains(&status) {
            errs.push(FieldError::not_supported(&format!("{at}.status"), status, allowed));
        }
        if !opts.both_approved_and_denied {
            let clash = match kind {
                APPROVED => {
                    approved = true;
                    denied
                }
                DENIED => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if clash {
                errs.push(FieldError::invalid(
                    &format!("{at}.type"),
                    kind,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !opts.duplicate_condition_types {
            if seen.contains(&kind) {
                errs.push(duplicate(&format!("{at}.type"), kind));
            }
            seen.push(kind);
        }
    }
    errs
}

/// `validateCertificateSigningRequest`.
fn validate_csr(obj: &Value, opts: &Options) -> Vec<FieldError> {
    let mut errs = meta::validate_object_meta(obj, false, |_, _| Vec::new());
    let request = bytes_field(obj, "/spec/request");
    if let Some(why) = check_request(request.as_deref().unwrap_or_default()) {
        errs.push(FieldError {
            kind: FieldErrorType::Invalid,
            field: "spec.request".into(),
            value: BadValue::GoSyntax(go_bytes(request.as_deref())),
            detail: why,
        });
    }
    let usages = usages(obj);
    if usages.is_empty() {
        errs.push(FieldError::required("spec.usages", ""));
    }
    if !opts.unknown_usages {
        let mut known = USAGES.to_vec();
        known.sort_unstable();
        for (i, usage) in usages.iter().enumerate() {
            if !USAGES.contains(usage) {
                errs.push(FieldError::not_supported(&format!("spec.usages[{i}]"), usage, &known));
            }
        }
    }
    if !opts.duplicate_usages {
        for (i, usage) in usages.iter().enumerate() {
            if usages[..i].contains(usage) {
                errs.push(duplicate(&format!("spec.usages[{i}]"), usage));
            }
        }
    }
    let signer = spec_str(obj, "signerName");
    if !opts.legacy_signer && signer == LEGACY_SIGNER {
        errs.push(FieldError::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        errs.extend(validate_signer_name("spec.signerName", signer));
    }
    if let Some(seconds) = obj.pointer("/spec/expirationSeconds").and_then(Value::as_i64) {
        if seconds < 600 {
            errs.push(FieldError::invalid_int(
                "spec.expirationSeconds",
                seconds,
                "may not specify a duration less than 600 seconds (10 minutes)",
            ));
        }
    }
    errs.extend(validate_conditions(obj, opts));
    if !opts.arbitrary_certificate {
        if let Some(why) = check_certificate(&bytes_field(obj, "/status/certificate").unwrap_or_default()) {
            errs.push(FieldError::invalid("status.certificate", "<certificate data>", &why));
        }
    }
    errs
}

/// `getValidationOptions`: what `old` already holds is tolerated.
fn options(new: &Value, old: Option<&Value>) -> Options {
    let Some(old) = old else { return Options::default() };
    let types: Vec<&str> = conditions(old).into_iter().map(|c| text(c, "type")).collect();
    let old_usages = usages(old);
    let certificate = |o: &Value| bytes_field(o, "/status/certificate").unwrap_or_default();
    Options {
        both_approved_and_denied: types.contains(&APPROVED) && types.contains(&DENIED),
        legacy_signer: spec_str(old, "signerName") == LEGACY_SIGNER,
        duplicate_condition_types: types.iter().enumerate().any(|(i, t)| types[..i].contains(t)),
        empty_condition_type: types.contains(&""),
        arbitrary_certificate: certificate(new) == certificate(old) || check_certificate(&certificate(old)).is_some(),
        unknown_usages: old_usages.iter().any(|u| !USAGES.contains(u)),
        duplicate_usages: old_usages.iter().enumerate().any(|(i, u)| old_usages[..i].contains(u)),
        ..Options::default()
    }
}

/// `validateCertificateSigningRequestUpdate`.
fn validate_update(new: &Value, old: &Value, opts: &Options) -> Vec<FieldError> {
    let mut errs = validate_csr(new, opts);
    for kind in [APPROVED, DENIED, FAILED] {
        if conditions_of(new, kind).len() < conditions_of(old, kind).len() {
            errs.push(FieldError::forbidden(
                "status.conditions",
                &format!("updates may not remove a condition of type {}", crate::go_text::quote(kind)),
            ));
        }
    }
    if !opts.setting_approval {
        for kind in [APPROVED, DENIED] {
            if conditions_of(new, kind).len() > conditions_of(old, kind).len() {
                errs.push(FieldError::forbidden(
                    "status.conditions",
                    &format!("updates may not add a condition of type {}", crate::go_text::quote(kind)),
                ));
            }
        }
    }
    let certificate = |o: &Value| bytes_field(o, "/status/certificate").unwrap_or_default();
    let (new_cert, old_cert) = (certificate(new), certificate(old));
    if new_cert != old_cert {
        if !opts.setting_certificate {
            errs.push(FieldError::forbidden("status.certificate", "updates may not set certificate content"));
        } else if !old_cert.is_empty() {
            errs.push(FieldError::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
    }
    errs.extend(meta::validate_object_meta_update(new, old, false, |_, _| Vec::new()));
    errs
}

/// The time of this write: the latest `managedFields` entry's, which the field manager has just set.
fn write_time(obj: &Value) -> Option<String> {
    meta::get(obj, "managedFields")?
        .as_array()?
        .iter()
        .filter_map(|e| e.get("time")?.as_str())
        .max()
        .map(str::to_string)
}

/// `populateConditionTimestamps`: conditions without times get now's; a transition time is kept from a
/// stored condition of the same type and status.
fn stamp_conditions(new: &mut Value, old: &Value) {
    let Some(now) = write_time(new) else { return };
    let olds: Vec<Value> = conditions(old).into_iter().cloned().collect();
    let Some(list) = new.pointer_mut("/status/conditions").and_then(Value::as_array_mut) else { return };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        let unset = |v: Option<&Value>| v.is_none_or(|t| t.is_null() || t.as_str() == Some(""));
        if unset(c.get("lastUpdateTime")) {
            c.insert("lastUpdateTime".into(), Value::from(now.as_str()));
        }
        if unset(c.get("lastTransitionTime")) {
            let same = |o: &&Value| {
                o.get("type") == c.get("type")
                    && o.get("status") == c.get("status")
                    && !unset(o.get("lastTransitionTime"))
            };
            let kept = olds.iter().find(same).and_then(|o| o.get("lastTransitionTime").cloned());
            c.insert("lastTransitionTime".into(), kept.unwrap_or_else(|| Value::from(now.as_str())));
        }
    }
}

/// `preserveConditionInstances`: the stored conditions of `kind` replace the new ones, if as many.
fn preserve_conditions(new: &mut Value, old: &Value, kind: &str) {
    let olds = conditions_of(old, kind);
    let Some(list) = new.pointer_mut("/status/conditions").and_then(Value::as_array_mut) else { return };
    let at: Vec<usize> = list.iter().enumerate().filter(|(_, c)| text(c, "type") == kind).map(|(i, _)| i).collect();
    if at.len() == olds.len() {
        for (i, old) in at.into_iter().zip(olds) {
            list[i] = old.clone();
        }
    }
}

fn set_section(new: &mut Value, old: &Value, section: &str) {
    match old.get(section) {
        Some(v) => new[section] = v.clone(),
        None => {
            new.as_object_mut().map(|o| o.remove(section));
        }
    }
}

impl Strategy for Csrs {
    fn namespace_scoped(&self) -> bool {
        false
    }

    fn supports(&self, sub: Subresource) -> bool {
        matches!(sub, Subresource::Status | Subresource::Approval)
    }

    /// The requester fields are the server's (no user here: left empty); nothing is approved on create.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            for field in ["username", "uid", "groups", "extra"] {
                spec.remove(field);
            }
        }
        if let Some(map) = obj.as_object_mut() {
            map.insert("status".into(), json!({}));
        }
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        set_section(new, old, "spec");
        set_section(new, old, "status");
    }

    fn prepare_for_subresource_update(&self, sub: Subresource, new: &mut Value, old: &Value) {
        set_section(new, old, "spec");
        match sub {
            Subresource::Approval => {
                stamp_conditions(new, old);
                let conditions = new.pointer("/status/conditions").cloned();
                set_section(new, old, "status");
                let status = new.as_object_mut().expect("an object").entry("status").or_insert_with(|| json!({}));
                match (conditions, status.as_object_mut()) {
                    (Some(c), Some(s)) => {
                        s.insert("conditions".into(), c);
                    }
                    (None, Some(s)) => {
                        s.remove("conditions");
                    }
                    _ => {}
                }
            }
            _ => {
                preserve_conditions(new, old, APPROVED);
                preserve_conditions(new, old, DENIED);
                stamp_conditions(new, old);
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate_csr(obj, &Options::default())
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate_update(new, old, &options(new, Some(old)))
    }

    fn validate_subresource_update(&self, sub: Subresource, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut opts = options(new, Some(old));
        match sub {
            Subresource::Approval => opts.setting_approval = true,
            _ => opts.setting_certificate = true,
        }
        validate_update(new, old, &opts)
    }
}

impl DeleteStrategy for Csrs {}

/// `extractCSRStatus`: Denied, Approved or Pending, then `,Failed` and `,Issued`.
fn condition_cell(obj: &Value) -> String {
    let has = |kind: &str| !conditions_of(obj, kind).is_empty();
    let mut cell = String::from(if has(DENIED) {
        "Denied"
    } else if has(APPROVED) {
        "Approved"
    } else {
        "Pending"
    });
    if has(FAILED) {
        cell.push_str(",Failed");
    }
    if obj.pointer("/status/certificate").and_then(Value::as_str).is_some_and(|c| !c.is_empty()) {
        cell.push_str(",Issued");
    }
    cell
}

/// `printCertificateSigningRequest`.
fn printer() -> Printer {
    const SPEC: &str = "io.k8s.api.certificates.v1.CertificateSigningRequestSpec";
    const STATUS: &str = "io.k8s.api.certificates.v1.CertificateSigningRequestStatus";
    Printer {
        columns: vec![
            name_column(),
            age_column(),
            doc_column("SignerName", "string", SPEC, "signerName", 0),
            doc_column("Requestor", "string", SPEC, "request", 0),
            doc_column("RequestedDuration", "string", SPEC, "expirationSeconds", 0),
            doc_column("Condition", "string", STATUS, "conditions", 0),
        ],
        cells: |obj, now, _| {
            let signer = match spec_str(obj, "signerName") {
                "" => "<none>",
                s => s,
            };
            let duration = obj
                .pointer("/spec/expirationSeconds")
                .and_then(Value::as_i64)
                .map_or_else(|| "<none>".to_string(), human_duration);
            vec![
                name(obj),
                age(obj, now),
                Value::from(signer),
                Value::from(spec_str(obj, "username")),
                Value::from(duration),
                Value::from(condition_cell(obj)),
            ]
        },
    }
}

#[cfg(test)]
mod tests;
