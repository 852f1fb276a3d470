//! `resource.Quantity` as the quota controller needs it (apimachinery 1.32, `api/resource/quantity.go`):
//! parsed exactly into nano units with the format of its suffix, added and subtracted (`+`, `-`) as `Quantity.Add`
//! (a zero takes the other's format), compared by value, and written as `Quantity.String()` writes it,
//! canonical for its format. The apiserver's ResourceQuota admission plugin writes `status.used` the same
//! way, so that both writers of a quota's status print the same usage alike.

use std::cmp::Ordering;

use serde_json::Value;

const NANO: i128 = 1_000_000_000;

/// How a quantity is written back (`Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `Ki` .. `Ei`.
    BinarySi,
    /// `n` .. `E`, or none.
    DecimalSi,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// A quantity: its value in nano units and the format it prints in.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    nanos: i128,
    pub format: Format,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Quantity) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

/// `a / b`, a remainder rounding away from zero (a quantity finer than a nano unit rounds up in size).
fn div_away(a: i128, b: i128) -> i128 {
    a / b + if a % b == 0 { 0 } else { a.signum() }
}

const SI: &[(&str, i32)] =
    &[("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];
const BINARY: &[&str] = &["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];

/// `Add`: the sum, in the left quantity's format unless it is zero.
impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Quantity { nanos: self.nanos.saturating_add(other.nanos), format }
    }
}

/// `Sub`: the difference, in the left quantity's format unless it is zero.
impl std::ops::Sub for Quantity {
    type Output = Quantity;

    fn sub(self, other: Quantity) -> Quantity {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Quantity { nanos: self.nanos.saturating_sub(other.nanos), format }
    }
}

impl Quantity {
    /// `resource.NewQuantity(n, DecimalSI)`.
    pub fn int(n: i64) -> Quantity {
        Quantity { nanos: i128::from(n) * NANO, format: Format::DecimalSi }
    }

    /// `resource.Quantity{Format: DecimalSI}`.
    pub fn zero() -> Quantity {
        Quantity::int(0)
    }

    /// `resource.ParseQuantity`; `None` for what is not a quantity (or beyond about 10^28).
    pub fn parse(text: &str) -> Option<Quantity> {
        let (negative, unsigned) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let end = unsigned.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let mut digits: i128 = format!("{whole}{fraction}").parse().ok()?;
        if negative {
            digits = -digits;
        }
        let fraction_len = i32::try_from(fraction.len()).ok()?;
        if let Some(i) = BINARY.iter().position(|b| *b == suffix) {
            let scaled = digits.checked_mul(1024_i128.checked_pow(i as u32 + 1)?)?.checked_mul(NANO)?;
            let nanos = div_away(scaled, 10_i128.checked_pow(fraction_len as u32)?);
            return Some(Quantity { nanos, format: Format::BinarySi });
        }
        let (exponent, format) = match SI.iter().find(|(s, _)| *s == suffix) {
            Some((_, e)) => (*e, Format::DecimalSi),
            None => {
                let exponent = suffix.strip_prefix(['e', 'E'])?;
                let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                if unsigned.is_empty() || !unsigned.bytes().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                (exponent.parse::<i32>().ok()?, Format::DecimalExponent)
            }
        };
        let shift = exponent.checked_add(9)?.checked_sub(fraction_len)?;
        let nanos = if shift >= 0 {
            digits.checked_mul(10_i128.checked_pow(shift as u32)?)?
        } else {
            div_away(digits, 10_i128.checked_pow(shift.unsigned_abs())?)
        };
        Some(Quantity { nanos, format })
    }

    /// A quantity as JSON holds it: a string, or a number (which `UnmarshalJSON` reads too).
    pub fn from_json(value: &Value) -> Option<Quantity> {
        match value {
            Value::String(s) => Quantity::parse(s),
            Value::Number(n) => Quantity::parse(&n.to_string()),
            _ => None,
        }
    }

    pub fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// `Quantity.String()`.
    pub fn to_text(self) -> String {
        if self.nanos == 0 {
            return "0".into();
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let magnitude = self.nanos.unsigned_abs();
        let nano = NANO as u128;
        // BinarySI prints only whole values of at least 1024 in binary (`CanonicalizeBytes`).
        if self.format == Format::BinarySi && magnitude >= 1024 * nano && magnitude.is_multiple_of(nano) {
            let (mut amount, mut power) = (magnitude / nano, 0);
            while power < BINARY.len() && amount.is_multiple_of(1024) {
                amount /= 1024;
                power += 1;
            }
            let suffix = if power == 0 { "" } else { BINARY[power - 1] };
            return format!("{sign}{amount}{suffix}");
        }
        let (mut amount, mut exponent) = (magnitude, -9_i32);
        while amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        // Decimal formats print an exponent that is a multiple of three.
        while exponent.rem_euclid(3) != 0 {
            amount *= 10;
            exponent -= 1;
        }
        match SI.iter().find(|(_, e)| *e == exponent) {
            Some((suffix, _)) if self.format != Format::DecimalExponent || exponent == 0 => {
                format!("{sign}{amount}{suffix}")
            }
            _ => format!("{sign}{amount}e{exponent}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_print_canonically_for_their_format() {
        let cases: &[(&str, &str)] = &[
            ("100m", "100m"),
            ("0.1", "100m"),
            ("1", "1"),
            ("1000", "1k"),
            ("1000m", "1"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("512", "512"),
            ("100Ki", "100Ki"),
            ("1e3", "1e3"),
            ("0", "0"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("129M", "129M"),
            ("-5m", "-5m"),
        ];
        for (text, want) in cases {
            assert_eq!(Quantity::parse(text).map(Quantity::to_text).as_deref(), Some(*want), "{text}");
        }
        for bad in ["", "abc", "1.2.3", "1Xi", "1e"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn sums_keep_the_first_non_zero_format() {
        let q = |s: &str| Quantity::parse(s).expect("a quantity");
        assert_eq!((q("500m") + q("1")).to_text(), "1500m");
        assert_eq!((q("1Gi") + q("512Mi")).to_text(), "1536Mi");
        assert_eq!((Quantity::zero() + q("128Mi")).to_text(), "128Mi");
        assert_eq!((q("1") + q("1Ki")).to_text(), "1025");
        assert_eq!((q("1") - q("1")).to_text(), "0");
        assert!(q("1Gi") > q("1000Mi"));
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(Quantity::from_json(&serde_json::json!(2)).map(Quantity::to_text).as_deref(), Some("2"));
    }
}
