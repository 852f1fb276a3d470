//! `certificates.k8s.io/v1` over HTTP: certificate signing requests created, approved through `/approval`,
//! issued through `/status`, printed and refused with kube-apiserver 1.32's codes and texts. Their names
//! are this file's own, since they are cluster-scoped.

use serde_json::json;

use super::{case, delete, get, post, put, Case};

const CSRS: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
/// A P-256 request for `CN=alice,O=dev` (`openssl req -new`), base64 as `spec.request` carries it.
const REQUEST: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIYU1JR0FBZ0VBTUI0eERqQU1CZ05WQkFNTUJXRnNhV05sTVF3d0NnWURWUVFLREFOa1pYWXdXVEFUQmdjcQpoa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVN3YUM0Y3Y5SnFRNjRQWlhaVHRtT1NZYVRWV05tN3lLRkIxRm0zCnErNGJRbXZ5MlVKOWFOVFZ6NnBkOUszWiszQjVsaHAxUVNLbm1wOHpXM21iRUJSbG9BQXdDZ1lJS29aSXpqMEUKQXdJRFNRQXdSZ0loQU9YTjZLdWhsZVduWHE5M0RENUdoV0xDbjJFZi9Ua2ZuZmEzYy9DbjRGQUhBaUVBbk5sKwpFbnhLZGpBRXRCMURiREpFNzlobkUwaDVlV3NsMjNsVU5zVkV2Q2s9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=";
/// A self-signed certificate for the same key (`openssl req -x509`), base64.
const CERTIFICATE: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJlRENDQVIyZ0F3SUJBZ0lVRi9LV3dUMW5zTlo2c2tFcDNhSFhmb2RVMXFJd0NnWUlLb1pJemowRUF3SXcKRURFT01Bd0dBMVVFQXd3RllXeHBZMlV3SUJjTk1qWXhNVEk0TVRrME1qVTVXaGdQTWpFeU5qRXhNRFF4T1RReQpOVGxhTUJBeERqQU1CZ05WQkFNTUJXRnNhV05sTUZrd0V3WUhLb1pJemowQ0FRWUlLb1pJemowREFRY0RRZ0FFCnNHZ3VITC9TYWtPdUQyVjJVN1pqa21HazFWalp1OGloUWRSWnQ2dnVHMEpyOHRsQ2ZXalUxYytxWGZTdDJmdHcKZVpZYWRVRWlwNXFmTTF0NW14QVVaYU5UTUZFd0hRWURWUjBPQkJZRUZEWjE2eDhHaVBNb2NoRmhjZzl1byt4VQpxcVJlTUI4R0ExVWRJd1FZTUJhQUZEWjE2eDhHaVBNb2NoRmhjZzl1byt4VXFxUmVNQThHQTFVZEV3RUIvd1FGCk1BTUJBZjh3Q2dZSUtvWkl6ajBFQXdJRFNRQXdSZ0loQU5RQ3lLRk5FWWdRTDI0VHo2UnZFSG05SGkzZDNVM3cKL1QvMHVFNXZVR0RDQWlFQWoxUDF2eDFRcTQwWWdETHpBalc5dHY5MDZlZEphdE5qcFFNdWpteVdqd2s9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

fn csr(name: &str, status: &str) -> String {
    format!(
        r#"{{"metadata":{{"name":"{name}"}},"spec":{{"request":"{REQUEST}","signerName":"example.com/signer","usages":["client auth"],"expirationSeconds":3600}},"status":{status}}}"#
    )
}

const APPROVED: &str = r#"{"conditions":[{"type":"Approved","status":"True","reason":"Test","message":"ok"}]}"#;

pub fn cases() -> Vec<Case> {
    let one = format!("{CSRS}/csr-http-a");
    vec![
        case(
            "certificate signing requests: created pending, approved through /approval, issued through /status",
            vec![
                post(CSRS, &csr("csr-http-a", APPROVED))
                    .code(201)
                    .field("/status", json!({}))
                    .field("/spec/usages", json!(["client auth"])),
                get(&one).field("/spec/signerName", json!("example.com/signer")),
                get(CSRS).contains(r#""name":"csr-http-a""#),
                // The main endpoint keeps the status as it was.
                put(&one, &csr("csr-http-a", APPROVED)).code(200).field("/status", json!({})),
                // /status may not approve.
                put(&format!("{one}/status"), &csr("csr-http-a", APPROVED)).status(
                    422,
                    "Invalid",
                    r#"CertificateSigningRequest.certificates.k8s.io "csr-http-a" is invalid: status.conditions: Forbidden: updates may not add a condition of type "Approved""#,
                ),
                put(&format!("{one}/approval"), &csr("csr-http-a", &format!(r#"{{"certificate":"{CERTIFICATE}","conditions":[{{"type":"Approved","status":"True","reason":"Test","message":"ok"}}]}}"#)))
                    .code(200)
                    .field("/status/conditions/0/type", json!("Approved"))
                    .field("/status/conditions/0/reason", json!("Test"))
                    .field("/status/certificate", serde_json::Value::Null),
                put(&format!("{one}/approval"), &csr("csr-http-a", r#"{"conditions":[{"type":"Approved","status":"True"},{"type":"Denied","status":"True"}]}"#)).status(
                    422,
                    "Invalid",
                    r#"CertificateSigningRequest.certificates.k8s.io "csr-http-a" is invalid: status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive"#,
                ),
                put(&format!("{one}/status"), &csr("csr-http-a", &format!(r#"{{"certificate":"{CERTIFICATE}","conditions":[{{"type":"Approved","status":"True","reason":"Test","message":"ok"}}]}}"#)))
                    .code(200)
                    .field("/status/certificate", json!(CERTIFICATE))
                    .field("/status/conditions/0/type", json!("Approved")),
                get(&one)
                    .header("accept", TABLE)
                    .field("/columnDefinitions/2/name", json!("SignerName"))
                    .field("/rows/0/cells/2", json!("example.com/signer"))
                    .field("/rows/0/cells/4", json!("60m"))
                    .field("/rows/0/cells/5", json!("Approved,Issued")),
                delete(&one).field("/kind", json!("Status")).field("/status", json!("Success")),
            ],
        ),
        case(
            "certificate signing requests: usages and a signer are required, the request must be signed PEM",
            vec![
                post(
                    CSRS,
                    &format!(r#"{{"metadata":{{"name":"csr-http-b"}},"spec":{{"request":"{REQUEST}","signerName":"","usages":[]}}}}"#),
                )
                .status(
                    422,
                    "Invalid",
                    r#"CertificateSigningRequest.certificates.k8s.io "csr-http-b" is invalid: [spec.usages: Required value, spec.signerName: Required value]"#,
                ),
                post(
                    CSRS,
                    r#"{"metadata":{"name":"csr-http-b"},"spec":{"request":"aGk=","signerName":"example.com/s","usages":["client auth"],"expirationSeconds":60}}"#,
                )
                .status(
                    422,
                    "Invalid",
                    r#"CertificateSigningRequest.certificates.k8s.io "csr-http-b" is invalid: [spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST, spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)]"#,
                ),
            ],
        ),
    ]
}
