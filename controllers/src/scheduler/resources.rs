//! Resource quantities as the scheduler counts them: `resource.Quantity` parsed exactly, a pod's requests
//! summed as component-helpers' `PodRequests` does (containers summed, init containers as a running
//! maximum with restartable "sidecar" init containers accumulated, overhead added), and the scheduler's
//! `framework.Resource` (cpu in millicores, the rest in whole units rounded up).
//!
//! Upstream: `staging/src/k8s.io/component-helpers/resource/helpers.go` (`PodRequests`,
//! `AggregateContainerRequests`), `pkg/scheduler/framework/types.go` (`Resource.Add`), and
//! `pkg/scheduler/util/pod_resources.go` (the non-zero defaults scoring uses: 100m cpu, 200Mi memory).

use std::collections::BTreeMap;

use serde_json::Value;

/// `DefaultMilliCPURequest`: what scoring counts for a container that sets no cpu request.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// `DefaultMemoryRequest`: what scoring counts for a container that sets no memory request (200 MiB).
pub const DEFAULT_MEMORY_REQUEST_BYTES: i64 = 200 * 1024 * 1024;

const NANO: i128 = 1_000_000_000;

/// A quantity's value in nano units (`1` is `1_000_000_000`), or `None` when the text is not a quantity.
/// Finer than a nano unit rounds up, as upstream's `Quantity` does.
pub fn parse_nanos(text: &str) -> Option<i128> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    // Beyond 30 significant digits no cluster's quantity goes; refusing them keeps the arithmetic in range.
    let digits = digits.trim_start_matches('0');
    if digits.len() > 30 {
        return None;
    }
    let mantissa: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let (factor, exponent): (i128, i32) = match suffix {
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        "n" => (1, -9),
        "u" => (1, -6),
        "m" => (1, -3),
        "" => (1, 0),
        "k" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "P" => (1, 15),
        "E" => (1, 18),
        s if s.starts_with(['e', 'E']) => (1, s[1..].parse::<i32>().ok()?),
        _ => return None,
    };
    // The value is mantissa * factor * 10^(exponent - fraction digits), in nanos 10^9 times that.
    let scale = exponent + 9 - fraction.len() as i32;
    let base = mantissa.checked_mul(factor)?;
    let nanos = if scale >= 0 {
        base.checked_mul(10i128.checked_pow(scale as u32)?)?
    } else {
        let divisor = 10i128.checked_pow(scale.unsigned_abs()).unwrap_or(i128::MAX);
        base / divisor + i128::from(base % divisor != 0)
    };
    Some(if negative { -nanos } else { nanos })
}

/// `Quantity.Value()`: whole units, rounded up.
pub fn whole(nanos: i128) -> i64 {
    clamp(nanos.div_euclid(NANO) + i128::from(nanos.rem_euclid(NANO) != 0))
}

/// `Quantity.MilliValue()`: thousandths, rounded up.
pub fn milli(nanos: i128) -> i64 {
    let per = NANO / 1000;
    clamp(nanos.div_euclid(per) + i128::from(nanos.rem_euclid(per) != 0))
}

fn clamp(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// A `ResourceList` by name, in nano units; unreadable quantities count as zero, as the apiserver's
/// validation never lets one through.
pub type ResourceList = BTreeMap<String, i128>;

/// A `ResourceList` from its JSON (`{"cpu": "500m", ...}`).
pub fn resource_list(value: Option<&Value>) -> ResourceList {
    let Some(Value::Object(map)) = value else { return ResourceList::new() };
    map.iter()
        .map(|(name, q)| {
            let nanos = match q {
                Value::String(s) => parse_nanos(s).unwrap_or(0),
                Value::Number(n) => n.as_i64().map(|v| v as i128 * NANO).unwrap_or(0),
                _ => 0,
            };
            (name.clone(), nanos)
        })
        .collect()
}

fn add_list(into: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        *into.entry(name.clone()).or_insert(0) += q;
    }
}

fn max_list(into: &mut ResourceList, other: &ResourceList) {
    for (name, q) in other {
        let slot = into.entry(name.clone()).or_insert(*q);
        *slot = (*slot).max(*q);
    }
}

/// A container's requests, with `defaults` filled in for the names it leaves out (`applyNonMissing`).
fn container_requests(container: &Value, defaults: &ResourceList) -> ResourceList {
    let mut list = resource_list(container.pointer("/resources/requests"));
    for (name, q) in defaults {
        list.entry(name.clone()).or_insert(*q);
    }
    list
}

/// `PodRequests`: what the pod asks of a node. `defaults` stands in for requests a container leaves
/// out (`NonMissingContainerRequests`; empty for the fit check, the non-zero defaults for scoring).
pub fn pod_requests(pod: &Value, defaults: &ResourceList) -> ResourceList {
    let list =
        |field: &str| pod.pointer(&format!("/spec/{field}")).and_then(Value::as_array).cloned().unwrap_or_default();
    let mut requests = ResourceList::new();
    for container in list("containers") {
        add_list(&mut requests, &container_requests(&container, defaults));
    }
    // Init containers run one at a time, each beside the sidecars started before it; sidecars keep
    // running beside the regular containers too.
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for container in list("initContainers") {
        let own = container_requests(&container, defaults);
        let during = if container.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add_list(&mut requests, &own);
            add_list(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut during = own;
            add_list(&mut during, &sidecars);
            during
        };
        max_list(&mut init_max, &during);
    }
    max_list(&mut requests, &init_max);
    add_list(&mut requests, &resource_list(pod.pointer("/spec/overhead")));
    requests
}

/// The non-zero defaults scoring counts for containers without cpu or memory requests.
pub fn non_zero_defaults() -> ResourceList {
    ResourceList::from([
        ("cpu".to_string(), DEFAULT_MILLI_CPU_REQUEST as i128 * NANO / 1000),
        ("memory".to_string(), DEFAULT_MEMORY_REQUEST_BYTES as i128 * NANO),
    ])
}

/// `IsScalarResourceName`: extended resources (`example.com/gpu`), hugepages, `kubernetes.io/`-prefixed
/// native resources and attachable volumes, which the scheduler counts by name.
pub fn is_scalar_resource_name(name: &str) -> bool {
    let prefixed_native = name.contains("kubernetes.io/");
    let extended = name.contains('/') && !prefixed_native && !name.starts_with("requests.");
    extended || prefixed_native || name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")
}

/// `IsExtendedResourceName`.
pub fn is_extended_resource_name(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

/// `framework.Resource`: cpu in millicores, memory and ephemeral storage in bytes, the pod count, and
/// scalar resources by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resource {
    pub milli_cpu: i64,
    pub memory_bytes: i64,
    pub ephemeral_storage_bytes: i64,
    pub allowed_pods: i64,
    pub scalar: BTreeMap<String, i64>,
}

impl Resource {
    /// `Resource.Add` of a list onto an empty resource (`NewResource`).
    pub fn from_list(list: &ResourceList) -> Resource {
        let mut r = Resource::default();
        for (name, q) in list {
            match name.as_str() {
                "cpu" => r.milli_cpu += milli(*q),
                "memory" => r.memory_bytes += whole(*q),
                "pods" => r.allowed_pods += whole(*q),
                "ephemeral-storage" => r.ephemeral_storage_bytes += whole(*q),
                n if is_scalar_resource_name(n) => *r.scalar.entry(n.to_string()).or_insert(0) += whole(*q),
                _ => {}
            }
        }
        r
    }

    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory_bytes += other.memory_bytes;
        self.ephemeral_storage_bytes += other.ephemeral_storage_bytes;
        self.allowed_pods += other.allowed_pods;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) += v;
        }
    }

    pub fn sub(&mut self, other: &Resource) {
        self.milli_cpu -= other.milli_cpu;
        self.memory_bytes -= other.memory_bytes;
        self.ephemeral_storage_bytes -= other.ephemeral_storage_bytes;
        self.allowed_pods -= other.allowed_pods;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) -= v;
        }
    }

    /// Whether nothing is requested (`fitsRequest` then checks only the pod count).
    pub fn is_empty_request(&self) -> bool {
        self.milli_cpu == 0 && self.memory_bytes == 0 && self.ephemeral_storage_bytes == 0 && self.scalar.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quantities_parse_as_upstreams() {
        let cases: &[(&str, Option<i64>, Option<i64>)] = &[
            // text, MilliValue, Value
            ("500m", Some(500), Some(1)),
            ("1", Some(1000), Some(1)),
            ("1.5", Some(1500), Some(2)),
            ("2Ki", Some(2_048_000), Some(2048)),
            ("1Gi", Some(1_073_741_824_000), Some(1_073_741_824)),
            ("1G", Some(1_000_000_000_000), Some(1_000_000_000)),
            ("1e3", Some(1_000_000), Some(1000)),
            ("100n", Some(1), Some(1)),
            ("0.1m", Some(1), Some(1)),
            ("0", Some(0), Some(0)),
            ("1x", None, None),
            ("", None, None),
            (".", None, None),
        ];
        for (text, m, v) in cases {
            let nanos = parse_nanos(text);
            assert_eq!(nanos.map(milli), *m, "milli of {text}");
            assert_eq!(nanos.map(whole), *v, "value of {text}");
        }
    }

    #[test]
    fn pod_requests_sum_containers_max_init_containers_and_add_overhead() {
        let c = |cpu: &str, mem: &str| json!({"resources": {"requests": {"cpu": cpu, "memory": mem}}});
        let cases = vec![
            // Upstream's example: containers 2+1 cpu, 1G+1G memory; init containers up to 3G memory.
            (
                json!({"spec": {"containers": [c("2", "1G"), c("1", "1G")], "initContainers": [c("2", "1G"), c("2", "3G")]}}),
                (3000, 3_000_000_000),
            ),
            // An init container larger than the containers' sum sets the request.
            (json!({"spec": {"containers": [c("1", "1G")], "initContainers": [c("4", "1G")]}}), (4000, 1_000_000_000)),
            // A sidecar runs beside the containers and beside later init containers.
            (
                json!({"spec": {
                "containers": [c("1", "1G")],
                "initContainers": [
                    {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "1G"}}},
                    c("1", "1G"),
                ]}}),
                (1500, 2_000_000_000),
            ),
            // Overhead adds on top.
            (json!({"spec": {"containers": [c("1", "1G")], "overhead": {"cpu": "250m"}}}), (1250, 1_000_000_000)),
        ];
        for (pod, (cpu, mem)) in cases {
            let r = Resource::from_list(&pod_requests(&pod, &ResourceList::new()));
            assert_eq!((r.milli_cpu, r.memory_bytes), (cpu, mem), "{pod}");
        }
    }

    #[test]
    fn scoring_defaults_fill_only_missing_requests() {
        let pod = json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "0"}}}, {}]}});
        let r = Resource::from_list(&pod_requests(&pod, &non_zero_defaults()));
        assert_eq!(r.milli_cpu, 100);
        assert_eq!(r.memory_bytes, 2 * DEFAULT_MEMORY_REQUEST_BYTES);
    }

    #[test]
    fn scalar_resources_are_told_apart() {
        for (name, scalar) in [
            ("example.com/gpu", true),
            ("hugepages-2Mi", true),
            ("kubernetes.io/foo", true),
            ("cpu", false),
            ("pods", false),
            ("requests.example.com/x", false),
        ] {
            assert_eq!(is_scalar_resource_name(name), scalar, "{name}");
        }
        let r =
            Resource::from_list(&resource_list(Some(&json!({"example.com/gpu": "2", "pods": "110", "bogus": "1"}))));
        assert_eq!(r.scalar, BTreeMap::from([("example.com/gpu".to_string(), 2)]));
        assert_eq!(r.allowed_pods, 110);
    }
}
