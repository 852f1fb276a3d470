//! Repetition without generators: a `[[client]]`, a `[[client.step]]` or a `[[fault]]` table with
//! `for_each = { i = "1..=5" }` (a range, `a..b` or `a..=b`, or a list: `{ node = ["etcd-1", "etcd-2"] }`)
//! stands for one copy per value, every `{i}` in its strings (and `{i+1}`, `{i-2}` for numbers) replaced by
//! the value. A step with `for_each` and a list of `steps` (`[[client.step.steps]]`) repeats that block of
//! steps; a fault with `for_each` and `every_ms` is applied at `at_ms` (or `delay_ms`) plus `k * every_ms`
//! for its k-th copy. Expressions are strings, so `expect = { revision = "{i} + 3" }` is the number the
//! copy expects.
//!
//! The expansion works on toml's own parse tree, before the file is read into its typed tables, so every
//! copy keeps the places of its template: an error in any copy points at the template's line and column.

use std::ops::Range;

use toml::de::{DeArray, DeTable, DeValue};
use toml::Spanned;

/// A problem with a `for_each`, at its place.
pub type Error = (Range<usize>, String);

/// Expands every `for_each` of the document: clients, their steps (and blocks of steps), and faults.
pub fn expand(doc: &mut DeTable<'_>) -> Result<(), Error> {
    if let Some(clients) = doc.get_mut("client") {
        expand_list(clients, &mut |copy| {
            if let DeValue::Table(t) = copy.get_mut() {
                if let Some(steps) = t.get_mut("step") {
                    expand_list(steps, &mut |_| Ok(()))?;
                }
            }
            Ok(())
        })?;
    }
    if let Some(faults) = doc.get_mut("fault") {
        expand_list(faults, &mut |_| Ok(()))?;
    }
    Ok(())
}

/// Expands the tables of an array of tables in place; `inner` runs on each resulting table (a client's
/// steps are expanded after the client). A step with a block of `steps` becomes those steps.
fn expand_list<'i>(
    list: &mut Spanned<DeValue<'i>>,
    inner: &mut dyn FnMut(&mut Spanned<DeValue<'i>>) -> Result<(), Error>,
) -> Result<(), Error> {
    let DeValue::Array(items) = list.get_ref() else { return Ok(()) };
    let mut out: Vec<Spanned<DeValue<'i>>> = Vec::new();
    for item in items.iter() {
        let Some(table) = item.get_ref().as_table() else {
            out.push(item.clone());
            continue;
        };
        let Some(for_each) = table.get("for_each") else {
            if let Some(block) = table.get("steps") {
                return Err((block.span(), "`steps` is a block to repeat: it goes with `for_each`".into()));
            }
            let mut copy = item.clone();
            inner(&mut copy)?;
            out.push(copy);
            continue;
        };
        let (var, values) = loop_values(for_each)?;
        let every_ms = every_ms(table)?;
        for (k, value) in values.iter().enumerate() {
            let mut copy = item.clone();
            substitute(&mut copy, &var, value);
            let DeValue::Table(t) = copy.get_mut() else { unreachable!("a table's copy is a table") };
            t.remove("for_each");
            t.remove("every_ms");
            if let Some(every) = every_ms {
                shift_time(t, k as u64 * every)?;
            }
            match t.remove("steps") {
                // A block: its steps, each expanded in turn, in place of the step that held them.
                Some(mut block) => {
                    if t.iter().next().is_some() {
                        let keys: Vec<String> = t.keys().map(|k| k.get_ref().to_string()).collect();
                        return Err((
                            for_each.span(),
                            format!("a block of `steps` takes only `for_each` beside it; it has {}", keys.join(", ")),
                        ));
                    }
                    expand_list(&mut block, inner)?;
                    if let DeValue::Array(steps) = block.into_inner() {
                        out.extend(steps);
                    }
                }
                None => {
                    inner(&mut copy)?;
                    out.push(copy);
                }
            }
        }
    }
    *list.get_mut() = DeValue::Array(out.into_iter().collect::<DeArray<'i>>());
    Ok(())
}

/// The loop's one variable and its values, as text.
fn loop_values(for_each: &Spanned<DeValue<'_>>) -> Result<(String, Vec<Value>), Error> {
    let span = for_each.span();
    let Some(table) = for_each.get_ref().as_table() else {
        return Err((span, "`for_each` is a table of one variable: expected `{ i = \"1..=3\" }`".into()));
    };
    let mut vars = table.iter();
    let (Some((var, values)), None) = (vars.next(), vars.next()) else {
        return Err((span, "`for_each` takes exactly one variable (`{ i = \"1..=3\" }`)".into()));
    };
    let var = var.get_ref().to_string();
    if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err((span, format!("`for_each` variable {var:?}: expected letters, digits and `_`")));
    }
    let values = match values.get_ref() {
        DeValue::String(s) => range(s).map_err(|m| (values.span(), m))?,
        DeValue::Array(a) => {
            let mut out = Vec::new();
            for v in a.iter() {
                match v.get_ref() {
                    DeValue::String(s) => out.push(Value::Text(s.to_string())),
                    DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                        Ok(n) => out.push(Value::Number(n)),
                        Err(_) => return Err((v.span(), "an integer out of range".into())),
                    },
                    _ => return Err((v.span(), "`for_each` values are integers or strings".into())),
                }
            }
            out
        }
        _ => {
            return Err((values.span(), "expected a range (`\"1..=3\"`, `\"0..4\"`) or a list of values".into()));
        }
    };
    if values.is_empty() {
        return Err((span, "`for_each` gives no values: the table would vanish".into()));
    }
    if values.len() > MAX_COPIES {
        return Err((span, format!("`for_each` gives {} values; at most {MAX_COPIES}", values.len())));
    }
    Ok((var, values))
}

/// The most copies one `for_each` makes.
const MAX_COPIES: usize = 10_000;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Number(i64),
    Text(String),
}

/// `a..b` (b excluded) or `a..=b`.
fn range(s: &str) -> Result<Vec<Value>, String> {
    let bad = || format!("range {s:?}: expected `a..b` or `a..=b` with integers a <= b");
    let (a, b, inclusive) = match (s.split_once("..="), s.split_once("..")) {
        (Some((a, b)), _) => (a, b, true),
        (None, Some((a, b))) => (a, b, false),
        _ => return Err(bad()),
    };
    let (a, b): (i64, i64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    let end = if inclusive { b.checked_add(1).ok_or_else(bad)? } else { b };
    if end < a || (end - a) as u128 > MAX_COPIES as u128 {
        return Err(bad());
    }
    Ok((a..end).map(Value::Number).collect())
}

/// `every_ms`, when given.
fn every_ms(table: &DeTable<'_>) -> Result<Option<u64>, Error> {
    let Some(v) = table.get("every_ms") else { return Ok(None) };
    match v.get_ref().as_integer().and_then(|i| u64::from_str_radix(i.as_str(), i.radix()).ok()) {
        Some(ms) => Ok(Some(ms)),
        None => Err((v.span(), "`every_ms` is a number of milliseconds".into())),
    }
}

/// Moves a fault copy later by `by_ms`: its `at_ms`, or its `delay_ms` after a step. The new time is
/// written as text, which a fault's times accept as they accept numbers.
fn shift_time(t: &mut DeTable<'_>, by_ms: u64) -> Result<(), Error> {
    let key = if t.contains_key("at_ms") { "at_ms" } else { "delay_ms" };
    let Some(v) = t.get_mut(key) else {
        return Err((0..0, "`every_ms` spaces copies of a fault given `at_ms`, or `after` with `delay_ms`".into()));
    };
    let base = match v.get_ref() {
        DeValue::Integer(i) => u64::from_str_radix(i.as_str(), i.radix()).ok(),
        DeValue::String(s) => s.parse().ok(),
        _ => None,
    };
    let Some(base) = base else {
        return Err((v.span(), format!("`{key}` is a number of milliseconds")));
    };
    *v.get_mut() = DeValue::String(std::borrow::Cow::Owned((base + by_ms).to_string()));
    Ok(())
}

/// Replaces `{var}`, `{var+n}` and `{var-n}` in every string of the value (a string stays a string: the
/// typed tables read numbers from text where they take expressions, and a fault's times from digits).
fn substitute(v: &mut Spanned<DeValue<'_>>, var: &str, value: &Value) {
    match v.get_mut() {
        DeValue::String(s) if s.contains('{') => {
            *s = std::borrow::Cow::Owned(fill(s, var, value));
        }
        DeValue::Array(a) => {
            for item in a.iter_mut() {
                substitute(item, var, value);
            }
        }
        DeValue::Table(t) => {
            for (_, item) in t.iter_mut() {
                substitute(item, var, value);
            }
        }
        _ => {}
    }
}

/// `text` with each placeholder of `var` filled in; other braces are left as they are.
fn fill(text: &str, var: &str, value: &Value) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let inner = after[..close].replace(' ', "");
        match placeholder(&inner, var, value) {
            Some(filled) => out.push_str(&filled),
            None => out.push_str(&rest[open..open + close + 2]),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// What `{inner}` stands for, if it is a placeholder of `var`.
fn placeholder(inner: &str, var: &str, value: &Value) -> Option<String> {
    let tail = inner.strip_prefix(var)?;
    match (value, tail) {
        (Value::Number(n), "") => Some(n.to_string()),
        (Value::Text(t), "") => Some(t.clone()),
        (Value::Number(n), t) => {
            let (sign, k) = t.split_at(1);
            let k: i64 = k.parse().ok()?;
            match sign {
                "+" => Some((n + k).to_string()),
                "-" => Some((n - k).to_string()),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_other_braces_kept() {
        let n = Value::Number(3);
        assert_eq!(fill("/k/{i}", "i", &n), "/k/3");
        assert_eq!(fill("{i+1} and {i - 1}", "i", &n), "4 and 2");
        assert_eq!(fill("{j} {i}", "i", &n), "{j} 3");
        assert_eq!(fill("no {close", "i", &n), "no {close");
        assert_eq!(fill("w-{i}", "i", &Value::Text("etcd-2".into())), "w-etcd-2");
    }

    #[test]
    fn ranges_are_half_open_or_inclusive() {
        assert_eq!(range("1..=3").unwrap(), vec![Value::Number(1), Value::Number(2), Value::Number(3)]);
        assert_eq!(range("0..2").unwrap(), vec![Value::Number(0), Value::Number(1)]);
        assert!(range("3..1").is_err());
        assert!(range("a..b").is_err());
    }
}
