//! The tests of [`super`]: its upstream validation messages, defaults, update rules and printer.

use super::*;
use crate::registry::field_error::messages;

/// A P-256 request for `CN=alice,O=dev`, made with `openssl req -new`.
const CSR_PEM: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHaMIGAAgEAMB4xDjAMBgNVBAMMBWFsaWNlMQwwCgYDVQQKDANkZXYwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAASwaC4cv9JqQ64PZXZTtmOSYaTVWNm7yKFB1Fm3
q+4bQmvy2UJ9aNTVz6pd9K3Z+3B5lhp1QSKnmp8zW3mbEBRloAAwCgYIKoZIzj0E
AwIDSQAwRgIhAOXN6KuhleWnXq93DD5GhWLCn2Ef/Tkfnfa3c/Cn4FAHAiEAnNl+
EnxKdjAEtB1DbDJE79hnE0h5eWsl23lUNsVEvCk=
-----END CERTIFICATE REQUEST-----
";
/// A self-signed certificate for the same key, made with `openssl req -x509`.
const CERT_PEM: &str = "-----BEGIN CERTIFICATE-----
MIIBeDCCAR2gAwIBAgIUF/KWwT1nsNZ6skEp3aHXfodU1qIwCgYIKoZIzj0EAwIw
EDEOMAwGA1UEAwwFYWxpY2UwIBcNMjYxMTI4MTk0MjU5WhgPMjEyNjExMDQxOTQy
NTlaMBAxDjAMBgNVBAMMBWFsaWNlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
sGguHL/SakOuD2V2U7ZjkmGk1VjZu8ihQdRZt6vuG0Jr8tlCfWjU1c+qXfSt2ftw
eZYadUEip5qfM1t5mxAUZaNTMFEwHQYDVR0OBBYEFDZ16x8GiPMochFhcg9uo+xU
qqReMB8GA1UdIwQYMBaAFDZ16x8GiPMochFhcg9uo+xUqqReMA8GA1UdEwEB/wQF
MAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhANQCyKFNEYgQL24Tz6RvEHm9Hi3d3U3w
/T/0uE5vUGDCAiEAj1P1vx1Qq40YgDLzAjW9tv906edJatNjpQMujmyWjwk=
-----END CERTIFICATE-----
";

fn b64(text: &str) -> String {
    STANDARD.encode(text)
}

fn csr(name: &str) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": KIND, "metadata": {"name": name},
        "spec": {"request": b64(CSR_PEM), "signerName": "example.com/signer", "usages": ["client auth"]}})
}

fn with(mut obj: Value, pointer: &str, value: Value) -> Value {
    *obj.pointer_mut(pointer).expect("the pointer exists") = value;
    obj
}

fn condition(kind: &str, status: &str) -> Value {
    json!({"type": kind, "status": status, "reason": "R", "message": "m"})
}

#[test]
fn requests_are_validated_as_upstream_validates_them() {
    let s = Csrs;
    let usages_list = "\"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", \"timestamping\"";
    // The common name's last letter changed: the DER still parses, the signature no longer verifies.
    let tampered = CSR_PEM.replace("MIHaMIGAAgEAMB4xDjAMBgNVBAMMBWFsaWNl", "MIHaMIGAAgEAMB4xDjAMBgNVBAMMBWFsaWNm");
    let cases: Vec<(Value, Vec<String>)> = vec![
        (csr("ok"), vec![]),
        (
            with(csr("a"), "/spec/request", json!(b64("hi"))),
            vec!["spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST".into()],
        ),
        (
            with(csr("a"), "/spec/usages", json!([])),
            vec!["spec.usages: Required value".into()],
        ),
        (
            with(csr("a"), "/spec/usages", json!(["client auth", "flying", "client auth"])),
            vec![
                format!("spec.usages[1]: Unsupported value: \"flying\": supported values: {usages_list}"),
                "spec.usages[2]: Duplicate value: \"client auth\"".into(),
            ],
        ),
        (with(csr("a"), "/spec/signerName", json!("")), vec!["spec.signerName: Required value".into()]),
        (
            with(csr("a"), "/spec/signerName", json!("signer")),
            vec!["spec.signerName: Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'".into()],
        ),
        (
            with(csr("a"), "/spec/signerName", json!("example/Signer")),
            vec![
                "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots".into(),
                "spec.signerName: Invalid value: \"Signer\": validating label \"Signer\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into(),
            ],
        ),
        (
            with(csr("a"), "/spec/signerName", json!(LEGACY_SIGNER)),
            vec!["spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version".into()],
        ),
        (
            with(csr("a"), "/spec", json!({"request": b64(CSR_PEM), "signerName": "example.com/s", "usages": ["any"], "expirationSeconds": 599})),
            vec!["spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)".into()],
        ),
    ];
    for (obj, want) in &cases {
        assert_eq!(messages(s.validate(obj)), *want, "{obj}");
    }
    let bad = with(csr("a"), "/spec/request", json!(b64(&tampered)));
    let got = messages(s.validate(&bad));
    assert_eq!(got.len(), 1);
    assert!(got[0].ends_with(": x509: ECDSA verification failure"), "{got:?}");
}

#[test]
fn create_clears_the_requester_and_the_status() {
    let mut obj = csr("c");
    obj["spec"]["username"] = json!("mallory");
    obj["spec"]["groups"] = json!(["system:masters"]);
    obj["status"] = json!({"conditions": [condition("Approved", "True")]});
    Csrs.prepare_for_create(&mut obj);
    assert_eq!(obj["spec"].get("username"), None);
    assert_eq!(obj["spec"].get("groups"), None);
    assert_eq!(obj["status"], json!({}));
}

fn stored() -> Value {
    let mut obj = csr("c");
    Csrs.prepare_for_create(&mut obj);
    obj["metadata"]["resourceVersion"] = json!("5");
    obj["metadata"]["managedFields"] =
        json!([{"manager": "kubectl", "operation": "Update", "time": "2026-01-02T03:04:05Z"}]);
    obj
}

#[test]
fn the_main_endpoint_keeps_spec_and_status() {
    let old = stored();
    let mut new = with(old.clone(), "/spec/signerName", json!("other.io/x"));
    new["status"] = json!({"conditions": [condition("Approved", "True")]});
    new["metadata"]["labels"] = json!({"a": "b"});
    Csrs.prepare_for_update(&mut new, &old);
    assert_eq!(new["spec"], old["spec"]);
    assert_eq!(new["status"], json!({}));
    assert_eq!(new["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(messages(Csrs.validate_update(&new, &old)), Vec::<String>::new());
}

#[test]
fn approval_sets_conditions_only_and_stamps_them() {
    let old = stored();
    let mut new = old.clone();
    new["status"] = json!({"conditions": [condition("Approved", "True")], "certificate": b64(CERT_PEM)});
    Csrs.prepare_for_subresource_update(Subresource::Approval, &mut new, &old);
    assert_eq!(new["status"].get("certificate"), None);
    assert_eq!(new["status"]["conditions"][0]["lastUpdateTime"], "2026-01-02T03:04:05Z");
    assert_eq!(new["status"]["conditions"][0]["lastTransitionTime"], "2026-01-02T03:04:05Z");
    assert_eq!(messages(Csrs.validate_subresource_update(Subresource::Approval, &new, &old)), Vec::<String>::new());
    assert_eq!(condition_cell(&new), "Approved");

    let mut both = old.clone();
    both["status"] = json!({"conditions": [condition("Approved", "True"), condition("Denied", "True"), condition("Approved", "True"), condition("", "Maybe")]});
    Csrs.prepare_for_subresource_update(Subresource::Approval, &mut both, &old);
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Approval, &both, &old)),
        [
            "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive",
            "status.conditions[2].type: Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive",
            "status.conditions[2].type: Duplicate value: \"Approved\"",
            "status.conditions[3].type: Required value",
            "status.conditions[3].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
        ]
    );
    let mut falsy = old.clone();
    falsy["status"] = json!({"conditions": [{"type": "Denied", "status": "False"}, {"type": "Custom"}]});
    Csrs.prepare_for_subresource_update(Subresource::Approval, &mut falsy, &old);
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Approval, &falsy, &old)),
        [
            "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\"",
            "status.conditions[1].status: Required value",
        ]
    );
}

#[test]
fn status_keeps_approval_and_issues_once() {
    let mut approved = stored();
    approved["status"] = json!({"conditions": [condition("Approved", "True")]});
    // /status may not add approval conditions, nor remove them.
    let mut denied = approved.clone();
    denied["status"] = json!({"conditions": [condition("Approved", "True"), condition("Denied", "True")]});
    Csrs.prepare_for_subresource_update(Subresource::Status, &mut denied, &approved);
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &denied, &approved)),
        [
            "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive",
            "status.conditions: Forbidden: updates may not add a condition of type \"Denied\"",
        ]
    );
    let mut dropped = approved.clone();
    dropped["status"] = json!({});
    Csrs.prepare_for_subresource_update(Subresource::Status, &mut dropped, &approved);
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &dropped, &approved)),
        ["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
    );
    // An approval condition that changed is the stored one again.
    let mut changed = approved.clone();
    changed["status"] = json!({"conditions": [condition("Approved", "True")], "certificate": b64(CERT_PEM)});
    changed["status"]["conditions"][0]["reason"] = json!("Other");
    Csrs.prepare_for_subresource_update(Subresource::Status, &mut changed, &approved);
    assert_eq!(changed["status"]["conditions"][0]["reason"], "R");
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &changed, &approved)),
        Vec::<String>::new()
    );
    assert_eq!(condition_cell(&changed), "Approved,Issued");
    // The certificate is set once; it must be PEM certificates.
    let mut again = changed.clone();
    again["status"]["certificate"] = json!(b64(&CERT_PEM.repeat(2)));
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &again, &changed)),
        ["status.certificate: Forbidden: updates may not modify existing certificate content"]
    );
    let mut junk = approved.clone();
    junk["status"]["certificate"] = json!(b64(CSR_PEM));
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &junk, &approved)),
        ["status.certificate: Invalid value: \"<certificate data>\": only CERTIFICATE PEM blocks are allowed, found \"CERTIFICATE REQUEST\""]
    );
    junk["status"]["certificate"] = json!(b64("nothing"));
    assert_eq!(
        messages(Csrs.validate_subresource_update(Subresource::Status, &junk, &approved)),
        ["status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"]
    );
    // The approval endpoint may not set it.
    let mut via_approval = approved.clone();
    via_approval["status"]["certificate"] = json!(b64(CERT_PEM));
    assert_eq!(
        messages(validate_update(&via_approval, &approved, &Options { setting_approval: true, ..Options::default() })),
        ["status.certificate: Forbidden: updates may not set certificate content"]
    );
}

#[test]
fn the_kind_and_its_subresources_are_known_kinds() {
    let info = info();
    assert!(crate::registry::kinds::find("certificates.k8s.io", "v1", KIND).is_some());
    assert_eq!(info.subresources.iter().map(|s| s.name).collect::<Vec<_>>(), ["status", "approval"]);
    assert!(Csrs.supports(Subresource::Approval) && Csrs.supports(Subresource::Status));
}

#[test]
fn the_printer_shows_signer_requestor_duration_and_condition() {
    let mut obj = csr("p");
    obj["spec"]["username"] = json!("alice");
    obj["spec"]["expirationSeconds"] = json!(3600);
    let cells = (printer().cells)(&obj, 0, &[]);
    assert_eq!(
        cells,
        vec![
            json!("p"),
            json!("<unknown>"),
            json!("example.com/signer"),
            json!("alice"),
            json!("60m"),
            json!("Pending")
        ]
    );
    obj["status"] = json!({"conditions": [condition("Denied", "True"), condition("Failed", "True")]});
    assert_eq!(condition_cell(&obj), "Denied,Failed");
    obj["spec"].as_object_mut().unwrap().remove("expirationSeconds");
    assert_eq!((printer().cells)(&obj, 0, &[])[4], json!("<none>"));
}
