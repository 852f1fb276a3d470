//! The Deployment controller's arithmetic over ReplicaSets (kube-controller-manager 1.32,
//! `pkg/controller/deployment/util/deployment_util.go`: `ResolveFenceposts`, `MaxSurge`, `MaxUnavailable`,
//! `NewRSNewReplicas`, `IsSaturated`, `FindActiveOrLatest`, `GetProportion`, the replica counts;
//! `pkg/controller/controller_utils.go`: `FilterActiveReplicaSets` and the ReplicaSet orderings;
//! apimachinery's `intstr.GetScaledValueFromIntOrPercent`; `k8s.io/utils/integer.RoundToInt32`). Sans-IO:
//! Deployment and ReplicaSet JSON in, numbers and orders out.
//!
//! Replica counts are Go's `int32`: `maxSurge` rounds a percentage up, `maxUnavailable` rounds it down, and
//! when both come to zero `maxUnavailable` becomes one, so that a rollout can always move.

use std::cmp::Ordering;

use serde_json::Value;

use crate::kcm::replicaset::pods::creation_time_us;

/// `apps.DefaultDeploymentUniqueLabelKey`: the label that tells a Deployment's ReplicaSets apart.
/// `DesiredReplicasAnnotation`: the Deployment's replicas when the ReplicaSet was last sized.
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// `MaxReplicasAnnotation`: the Deployment's replicas plus its surge, likewise.
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// `apps.RollingUpdateDeploymentStrategyType`.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `apps.RecreateDeploymentStrategyType`.
pub const RECREATE: &str = "Recreate";

/// `metadata.<field>` as a string ("" when absent).
pub fn meta<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.pointer(&format!("/metadata/{field}")).and_then(Value::as_str).unwrap_or("")
}

fn int32_at(obj: &Value, pointer: &str) -> Option<i32> {
    obj.pointer(pointer).and_then(Value::as_i64).map(go_int32)
}

/// Go's conversion of an integer to `int32`: the low 32 bits.
pub fn go_int32(v: i64) -> i32 {
    v as i32
}

/// `*spec.replicas` of a Deployment or a ReplicaSet (the apiserver defaults it to 1).
pub fn replicas(obj: &Value) -> i32 {
    int32_at(obj, "/spec/replicas").unwrap_or(1)
}

/// `status.<field>` as an `int32` (0 when absent).
pub fn status_count(obj: &Value, field: &str) -> i32 {
    int32_at(obj, &format!("/status/{field}")).unwrap_or(0)
}

/// `spec.strategy.type`.
pub fn strategy_type(d: &Value) -> &str {
    d.pointer("/spec/strategy/type").and_then(Value::as_str).unwrap_or("")
}

/// `IsRollingUpdate`.
pub fn is_rolling_update(d: &Value) -> bool {
    strategy_type(d) == ROLLING_UPDATE
}

/// `intstr.GetScaledValueFromIntOrPercent`: an integer as it is, a percentage of `total` rounded up or down.
pub fn scaled_value(int_or_percent: Option<&Value>, total: i32, round_up: bool) -> Result<i32, String> {
    let Some(value) = int_or_percent.filter(|v| !v.is_null()) else {
        return Err("nil value for IntOrString".to_string());
    };
    if let Some(n) = value.as_i64() {
        return Ok(go_int32(n));
    }
    let Some(text) = value.as_str() else {
        return Err("invalid value for IntOrString: invalid type: neither int nor percentage".to_string());
    };
    let Some(number) = text.strip_suffix('%') else {
        return Err("invalid value for IntOrString: invalid type: string is not a percentage".to_string());
    };
    let percent: i64 = number.parse().map_err(|_| {
        format!("invalid value for IntOrString: invalid value \"{text}\": strconv.Atoi: parsing \"{number}\": invalid syntax")
    })?;
    let scaled = percent as f64 * f64::from(total) / 100.0;
    Ok(go_float_to_int32(if round_up { scaled.ceil() } else { scaled.floor() }))
}

/// Go's `int32(f)` on amd64 for a value out of range (or not a number): the smallest `int32`.
fn go_float_to_int32(f: f64) -> i32 {
    if f.is_finite() && f >= f64::from(i32::MIN) && f <= f64::from(i32::MAX) {
        f as i32
    } else {
        i32::MIN
    }
}

/// `integer.RoundToInt32`: halves away from zero.
pub fn round_to_int32(a: f64) -> i32 {
    go_float_to_int32(if a < 0.0 { (a - 0.5).trunc() } else { (a + 0.5).trunc() })
}

/// `ResolveFenceposts`: `(maxSurge, maxUnavailable)` for `desired` replicas; an absent value counts as 0.
pub fn resolve_fenceposts(
    max_surge: Option<&Value>,
    max_unavailable: Option<&Value>,
    desired: i32,
) -> Result<(i32, i32), String> {
    let zero = Value::from(0);
    let surge = scaled_value(Some(max_surge.filter(|v| !v.is_null()).unwrap_or(&zero)), desired, true)?;
    let mut unavailable =
        scaled_value(Some(max_unavailable.filter(|v| !v.is_null()).unwrap_or(&zero)), desired, false)?;
    if surge == 0 && unavailable == 0 {
        // Rounding down may leave both at zero; one unavailable pod lets the rollout move even without room
        // to surge (a quota, say).
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

fn rolling_params(d: &Value) -> (Option<&Value>, Option<&Value>) {
    (d.pointer("/spec/strategy/rollingUpdate/maxSurge"), d.pointer("/spec/strategy/rollingUpdate/maxUnavailable"))
}

/// `MaxUnavailable`: 0 unless rolling (or with no replicas), never more than the replicas.
pub fn max_unavailable(d: &Value) -> i32 {
    let desired = replicas(d);
    if !is_rolling_update(d) || desired == 0 {
        return 0;
    }
    let (surge, unavailable) = rolling_params(d);
    // Validation rejects what would not resolve; such a value counts as 0, as upstream ignores the error.
    let (_, unavailable) = resolve_fenceposts(surge, unavailable, desired).unwrap_or((0, 0));
    unavailable.min(desired)
}

/// `MaxSurge`: 0 unless rolling.
pub fn max_surge(d: &Value) -> i32 {
    if !is_rolling_update(d) {
        return 0;
    }
    let (surge, unavailable) = rolling_params(d);
    resolve_fenceposts(surge, unavailable, replicas(d)).unwrap_or((0, 0)).0
}

/// `GetReplicaCountForReplicaSets`: the sum of `spec.replicas`.
pub fn spec_replica_sum(rss: &[Value]) -> i32 {
    rss.iter().fold(0i32, |sum, rs| sum.wrapping_add(replicas(rs)))
}

/// The sum of one status count (`GetActualReplicaCountForReplicaSets` for `replicas`, and the ready and
/// available counts).
pub fn status_sum(rss: &[Value], field: &str) -> i32 {
    rss.iter().fold(0i32, |sum, rs| sum.wrapping_add(status_count(rs, field)))
}

/// `NewRSNewReplicas`: the size the new ReplicaSet may grow to now.
pub fn new_rs_new_replicas(d: &Value, all_rss: &[Value], new_rs: &Value) -> Result<i32, String> {
    let desired = replicas(d);
    match strategy_type(d) {
        ROLLING_UPDATE => {
            let surge = scaled_value(rolling_params(d).0, desired, true)?;
            let current = spec_replica_sum(all_rss);
            let max_total = desired.wrapping_add(surge);
            if current >= max_total {
                return Ok(replicas(new_rs));
            }
            // Up to the room left under the surge, never past the desired count.
            let scale_up = (max_total - current).min(desired - replicas(new_rs));
            Ok(replicas(new_rs) + scale_up)
        }
        RECREATE => Ok(desired),
        other => Err(format!("deployment type {other} isn't supported")),
    }
}

/// `getIntFromAnnotation`: `strconv.Atoi` of the annotation, as an `int32`.
pub fn int_annotation(rs: &Value, key: &str) -> Option<i32> {
    let text = rs.pointer("/metadata/annotations").and_then(|a| a.get(key)).and_then(Value::as_str)?;
    parse_go_int(text).map(go_int32)
}

/// `strconv.Atoi` / `ParseInt(s, 10, 64)`: an optional sign and decimal digits, nothing else.
pub fn parse_go_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `IsSaturated`: the new ReplicaSet has, wants and makes available all of the Deployment's replicas.
pub fn is_saturated(d: &Value, rs: Option<&Value>) -> bool {
    let Some(rs) = rs else { return false };
    let desired = replicas(d);
    let Some(annotated) = int_annotation(rs, DESIRED_REPLICAS) else { return false };
    replicas(rs) == desired && annotated == desired && status_count(rs, "availableReplicas") == desired
}

/// `FilterActiveReplicaSets`: those with replicas wanted.
pub fn filter_active(rss: &[Value]) -> Vec<Value> {
    rss.iter().filter(|rs| replicas(rs) > 0).cloned().collect()
}

/// `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub fn by_creation(a: &Value, b: &Value) -> Ordering {
    let at = |rs: &Value| creation_time_us(rs).unwrap_or(i64::MIN);
    at(a).cmp(&at(b)).then_with(|| meta(a, "name").cmp(meta(b, "name")))
}

/// `ReplicaSetsBySizeOlder`: larger first, older first among equals.
pub fn by_size_older(a: &Value, b: &Value) -> Ordering {
    replicas(b).cmp(&replicas(a)).then_with(|| by_creation(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger first, newer first among equals.
pub fn by_size_newer(a: &Value, b: &Value) -> Ordering {
    replicas(b).cmp(&replicas(a)).then_with(|| by_creation(b, a))
}

/// `FindActiveOrLatest`: the one active ReplicaSet, or the newest when none is active; `None` when
/// several are active (they are scaled in proportion).
pub fn find_active_or_latest(new_rs: Option<&Value>, old_rss: &[Value]) -> Option<Value> {
    if new_rs.is_none() && old_rss.is_empty() {
        return None;
    }
    let mut olds = old_rss.to_vec();
    olds.sort_by(|a, b| by_creation(b, a));
    let mut all = olds.clone();
    all.extend(new_rs.cloned());
    let active = filter_active(&all);
    match active.len() {
        0 => new_rs.cloned().or_else(|| olds.first().cloned()),
        1 => active.into_iter().next(),
        _ => None,
    }
}

/// `getReplicaSetFraction`: how many replicas `rs` gains (or loses, negative) when its Deployment's
/// `replicas + maxSurge` replaces the `max-replicas` it was last sized for.
fn replica_set_fraction(rs: &Value, d: &Value) -> i32 {
    if replicas(d) == 0 {
        return -replicas(rs);
    }
    let deployment_replicas = replicas(d).wrapping_add(max_surge(d));
    // Without the annotation the Deployment's current size stands in: not exact when other ReplicaSets
    // were sized differently, but the caller's bounds keep the result in limits.
    let annotated = int_annotation(rs, MAX_REPLICAS).unwrap_or_else(|| status_count(d, "replicas"));
    let new_size = f64::from(replicas(rs).wrapping_mul(deployment_replicas)) / f64::from(annotated);
    round_to_int32(new_size).wrapping_sub(replicas(rs))
}

/// `GetProportion`: the share of `to_add` (so far `added`) that `rs` takes, bounded by what is left.
pub fn get_proportion(rs: Option<&Value>, d: &Value, to_add: i32, added: i32) -> i32 {
    let Some(rs) = rs else { return 0 };
    if replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(replicas: i32, surge: Value, unavailable: Value) -> Value {
        json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}})
    }

    fn rs(name: &str, replicas: i32, created: &str) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": created}, "spec": {"replicas": replicas}})
    }

    #[test]
    fn int_or_percent_scales_with_upstream_rounding() {
        let cases = [
            (json!(3), 10, true, Ok(3)),
            (json!("25%"), 4, true, Ok(1)),
            (json!("25%"), 5, true, Ok(2)),
            (json!("25%"), 5, false, Ok(1)),
            (json!("10%"), 9, false, Ok(0)),
            (json!("0%"), 9, true, Ok(0)),
            (json!("100%"), 7, false, Ok(7)),
            (json!("5"), 10, true, Err("invalid value for IntOrString: invalid type: string is not a percentage")),
            (
                json!("x%"),
                10,
                true,
                Err("invalid value for IntOrString: invalid value \"x%\": strconv.Atoi: parsing \"x\": invalid syntax"),
            ),
        ];
        for (value, total, up, want) in cases {
            assert_eq!(scaled_value(Some(&value), total, up), want.map_err(String::from), "{value} of {total}");
        }
        assert_eq!(scaled_value(None, 1, true), Err("nil value for IntOrString".to_string()));
    }

    #[test]
    fn fenceposts_as_upstream_resolves_them() {
        // upstream's TestResolveFenceposts and the doc comment's table.
        let cases = [
            (json!("0%"), json!("0%"), 0, (0, 1)),
            (json!("39%"), json!("39%"), 10, (4, 3)),
            (json!("oops"), json!("39%"), 10, (-1, -1)),
            (json!("55%"), json!("urg"), 10, (-1, -1)),
            (json!("0%"), json!("1%"), 2, (0, 1)),
            (json!("1%"), json!("25%"), 2, (1, 0)),
            (json!("1%"), json!("0%"), 1, (1, 0)),
            (json!(0), json!(0), 5, (0, 1)),
            // An absent value counts as 0.
            (Value::Null, json!("39%"), 10, (0, 3)),
            (json!("39%"), Value::Null, 10, (4, 0)),
            (Value::Null, Value::Null, 10, (0, 1)),
        ];
        for (surge, unavailable, desired, want) in cases {
            let got = resolve_fenceposts(Some(&surge), Some(&unavailable), desired);
            if want == (-1, -1) {
                assert!(got.is_err(), "{surge} {unavailable}");
            } else {
                assert_eq!(got, Ok(want), "{surge} {unavailable} {desired}");
            }
        }
    }

    #[test]
    fn max_surge_and_max_unavailable() {
        // upstream's TestMaxUnavailable.
        let cases = [
            (deployment(10, json!(0), json!(1)), 1),
            (deployment(10, json!(1), json!(0)), 0),
            (deployment(10, json!(0), json!(20)), 10),
            (deployment(10, json!(0), json!(0)), 1),
            (deployment(10, json!("25%"), json!("25%")), 2),
            (deployment(0, json!(0), json!(1)), 0),
            (json!({"spec": {"replicas": 10, "strategy": {"type": "Recreate"}}}), 0),
        ];
        for (d, want) in cases {
            assert_eq!(max_unavailable(&d), want, "{d}");
        }
        assert_eq!(max_surge(&deployment(4, json!("25%"), json!("25%"))), 1);
        assert_eq!(max_surge(&deployment(10, json!("25%"), json!("25%"))), 3);
        assert_eq!(max_surge(&json!({"spec": {"replicas": 10, "strategy": {"type": "Recreate"}}})), 0);
    }

    #[test]
    fn new_replica_set_sizes() {
        // upstream's TestNewRSNewReplicas: every ReplicaSet together holds 5 (one of 5 replicas).
        let t = "2023-11-14T22:13:20Z";
        let cases = [
            ("can not scale up - to newRSReplicas", ROLLING_UPDATE, 1, 5, 1, 5),
            ("scale up - to depReplicas", ROLLING_UPDATE, 6, 2, 10, 6),
            ("recreate - to depReplicas", RECREATE, 3, 1, 1, 3),
        ];
        for (name, strategy, dep_replicas, new_replicas, surge, want) in cases {
            let mut d = deployment(dep_replicas, json!(surge), json!(1));
            d["spec"]["strategy"]["type"] = json!(strategy);
            let new_rs = rs("foo-v2", new_replicas, t);
            assert_eq!(new_rs_new_replicas(&d, &[rs("foo-v2", 5, t)], &new_rs), Ok(want), "{name}");
        }
        // The brief's case: 4 replicas at 25 %/25 %, the old ReplicaSet at 4: the new one starts at 1.
        let d = deployment(4, json!("25%"), json!("25%"));
        let new_rs = rs("new", 0, t);
        assert_eq!(new_rs_new_replicas(&d, &[rs("old", 4, t), new_rs.clone()], &new_rs), Ok(1));
    }

    #[test]
    fn orderings_and_the_active_or_latest() {
        let (t1, t2) = ("2023-11-14T22:13:20Z", "2023-11-14T22:13:21Z");
        let mut rss = vec![rs("b", 2, t1), rs("a", 2, t1), rs("c", 5, t2), rs("d", 2, t2)];
        rss.sort_by(by_creation);
        let names = |rss: &[Value]| rss.iter().map(|r| meta(r, "name").to_string()).collect::<Vec<_>>();
        assert_eq!(names(&rss), ["a", "b", "c", "d"]);
        rss.sort_by(by_size_older);
        assert_eq!(names(&rss), ["c", "a", "b", "d"]);
        rss.sort_by(by_size_newer);
        assert_eq!(names(&rss), ["c", "d", "b", "a"]);

        // upstream's TestFindActiveOrLatest (abridged).
        let new_rs = rs("new", 0, t2);
        let old = rs("old", 0, t1);
        let cases = [
            (Some(new_rs.clone()), vec![old.clone()], Some("new")),
            (None, vec![old.clone(), rs("older", 0, "2023-11-14T22:13:19Z")], Some("old")),
            (Some(new_rs.clone()), vec![rs("old", 3, t1)], Some("old")),
            (Some(rs("new", 1, t2)), vec![rs("old", 3, t1)], None),
            (None, vec![], None),
        ];
        for (new_rs, olds, want) in cases {
            let got = find_active_or_latest(new_rs.as_ref(), &olds);
            assert_eq!(got.as_ref().map(|r| meta(r, "name")), want);
        }
    }

    #[test]
    fn proportions_and_saturation() {
        // upstream's TestGetReplicaSetFraction / TestGetProportion cases.
        let annotated = |replicas: i32, max: &str| {
            let mut r = rs("x", replicas, "2023-11-14T22:13:20Z");
            r["metadata"]["annotations"] = json!({"deployment.kubernetes.io/max-replicas": max});
            r
        };
        let d = |replicas: i32| deployment(replicas, json!(0), json!(1));
        let cases = [
            // (deployment replicas, rs replicas, max-replicas annotation, to add, added, want)
            (15, 10, "10", 5, 0, 5),
            (15, 10, "10", 5, 3, 2),
            (5, 10, "10", -5, 0, -5),
            (5, 10, "10", -5, -3, -2),
            (12, 5, "10", 2, 0, 1),
            (13, 5, "10", 3, 0, 2),
            (0, 7, "10", -7, 0, -7),
            (10, 0, "10", 5, 0, 0),
            (10, 10, "10", 0, 0, 0),
        ];
        for (dr, rr, max, to_add, added, want) in cases {
            assert_eq!(get_proportion(Some(&annotated(rr, max)), &d(dr), to_add, added), want, "{dr} {rr} {to_add}");
        }
        // Without the annotation the Deployment's status.replicas is the base.
        let mut dep = d(20);
        dep["status"] = json!({"replicas": 10});
        assert_eq!(get_proportion(Some(&rs("x", 5, "")), &dep, 10, 0), 5);
        assert_eq!(round_to_int32(2.5), 3);
        assert_eq!(round_to_int32(-2.5), -3);
        assert_eq!(round_to_int32(2.49), 2);

        let mut sat = rs("new", 3, "");
        sat["metadata"]["annotations"] = json!({"deployment.kubernetes.io/desired-replicas": "3"});
        sat["status"] = json!({"availableReplicas": 3});
        assert!(is_saturated(&d(3), Some(&sat)));
        sat["status"] = json!({"availableReplicas": 2});
        assert!(!is_saturated(&d(3), Some(&sat)));
        assert!(!is_saturated(&d(3), None));
    }

    #[test]
    fn go_integers() {
        let cases = [("12", Some(12)), ("-3", Some(-3)), ("+4", Some(4)), ("", None), ("1x", None), ("-", None)];
        for (text, want) in cases {
            assert_eq!(parse_go_int(text), want, "{text}");
        }
    }
}
