//! `resource.Quantity` as the quota and limit admission plugins and the quota controller need it: parsed exactly (in nano units), added,
//! subtracted, compared, rounded up to whole and milli units (`Value`, `MilliValue`), and written back as
//! `Quantity.String()` writes it, in the format of the text it was parsed from
//! (`KK/staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`). Values past about 10^28 are not
//! read (`None`), which no request of a test cluster comes near.

use std::cmp::Ordering;

use serde_json::Value;

/// How a quantity is written back: the format of its suffix (`Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `Ki` .. `Ei`.
    BinarySi,
    /// `n` .. `E`, or none.
    DecimalSi,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// A quantity: its value in nano units and its format.
#[derive(Clone, Copy, Debug)]
pub struct Quantity {
    nanos: i128,
    pub format: Format,
}

const NANO: i128 = 1_000_000_000;

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

/// `a / b` rounded away from zero, as a quantity finer than a nano unit is rounded.
fn div_away(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b == 0 {
        q
    } else {
        q + a.signum()
    }
}

impl Quantity {
    /// A whole number in `DecimalSI` (`resource.NewQuantity(n, DecimalSI)`).
    pub fn int(n: i64) -> Quantity {
        Quantity { nanos: i128::from(n) * NANO, format: Format::DecimalSi }
    }

    pub fn zero() -> Quantity {
        Quantity::int(0)
    }

    /// `resource.ParseQuantity`.
    pub fn parse(text: &str) -> Option<Quantity> {
        let (negative, unsigned) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let end = unsigned.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
        let digits = if negative { -digits } else { digits };
        let fraction_len = u32::try_from(fraction.len()).ok()?;
        let pow10 = |e: u32| 10_i128.checked_pow(e);
        const SI: &[(&str, i32)] =
            &[("n", -9), ("u", -6), ("m", -3), ("", 0), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];
        const BINARY: &[&str] = &["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
        let (nanos, format) = if let Some(i) = BINARY.iter().position(|b| *b == suffix) {
            let whole = digits.checked_mul(1024_i128.checked_pow(i as u32 + 1)?)?.checked_mul(NANO)?;
            (div_away(whole, pow10(fraction_len)?), Format::BinarySi)
        } else {
            let (exponent, format) = match SI.iter().find(|(s, _)| *s == suffix) {
                Some((_, e)) => (*e, Format::DecimalSi),
                None => {
                    let exponent = suffix.strip_prefix(['e', 'E'])?;
                    let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                        return None;
                    }
                    (exponent.parse::<i32>().ok()?, Format::DecimalExponent)
                }
            };
            let shift = exponent.checked_add(9)?.checked_sub(i32::try_from(fraction_len).ok()?)?;
            let nanos = if shift >= 0 {
                digits.checked_mul(pow10(shift as u32)?)?
            } else {
                div_away(digits, pow10(shift.unsigned_abs())?)
            };
            (nanos, format)
        };
        Some(Quantity { nanos, format })
    }

    /// A quantity as JSON holds it: a string, or a number (which `UnmarshalJSON` also reads).
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

    pub fn is_negative(self) -> bool {
        self.nanos < 0
    }

    /// `Value`: whole units, rounded up.
    pub fn value(self) -> i64 {
        clamp(ceil_div(self.nanos, NANO))
    }

    /// `MilliValue`: thousandths, rounded up.
    pub fn milli_value(self) -> i64 {
        clamp(ceil_div(self.nanos, 1_000_000))
    }

    /// `Quantity.String()`.
    pub fn to_text(self) -> String {
        if self.nanos == 0 {
            return "0".into();
        }
        let sign = if self.nanos < 0 { "-" } else { "" };
        let magnitude = self.nanos.unsigned_abs();
        // BinarySI is kept only for whole values of at least 1024 (`CanonicalizeBytes`).
        let binary = self.format == Format::BinarySi
            && magnitude >= 1024 * NANO as u128
            && magnitude.is_multiple_of(NANO as u128);
        if binary {
            let mut amount = magnitude / NANO as u128;
            let mut power = 0;
            while power < 6 && amount.is_multiple_of(1024) {
                amount /= 1024;
                power += 1;
            }
            return format!("{sign}{amount}{}", ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power]);
        }
        let (mut amount, mut exponent) = (magnitude, -9_i32);
        while amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        // DecimalSI and DecimalExponent write a multiple of three as the exponent.
        while exponent.rem_euclid(3) != 0 {
            amount *= 10;
            exponent -= 1;
        }
        let si = match exponent {
            -9 => Some("n"),
            -6 => Some("u"),
            -3 => Some("m"),
            0 => Some(""),
            3 => Some("k"),
            6 => Some("M"),
            9 => Some("G"),
            12 => Some("T"),
            15 => Some("P"),
            18 => Some("E"),
            _ => None,
        };
        match (self.format, si) {
            (Format::DecimalExponent, _) | (_, None) if exponent != 0 => format!("{sign}{amount}e{exponent}"),
            (_, Some(suffix)) => format!("{sign}{amount}{suffix}"),
            _ => format!("{sign}{amount}"),
        }
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a.div_euclid(b);
    if a.rem_euclid(b) == 0 {
        q
    } else {
        q + 1
    }
}

fn clamp(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// `Add`: the sum, in the left quantity's format, or in the other's when the left one is zero.
impl std::ops::Add for Quantity {
    type Output = Quantity;

    fn add(self, other: Quantity) -> Quantity {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Quantity { nanos: self.nanos.saturating_add(other.nanos), format }
    }
}

/// `Sub`: the difference, in the left quantity's format, or in the other's when the left one is zero.
impl std::ops::Sub for Quantity {
    type Output = Quantity;

    fn sub(self, other: Quantity) -> Quantity {
        let format = if self.nanos == 0 { other.format } else { self.format };
        Quantity { nanos: self.nanos.saturating_sub(other.nanos), format }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_add_and_print_as_upstreams() {
        let cases: &[(&str, &str)] = &[
            ("100m", "100m"),
            ("0.1", "100m"),
            ("1", "1"),
            ("1000", "1k"),
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
            ("1000m", "1"),
            ("-5m", "-5m"),
        ];
        for (text, want) in cases {
            assert_eq!(Quantity::parse(text).map(Quantity::to_text).as_deref(), Some(*want), "{text}");
        }
        let q = |s: &str| Quantity::parse(s).expect("a quantity");
        assert_eq!((q("500m") + q("1")).to_text(), "1500m");
        // A zero takes the format of what is added to it, as the quota's counted usage starts from zero.
        assert_eq!((Quantity::zero() + q("128Mi")).to_text(), "128Mi");
        assert_eq!((q("1") + q("1Ki")).to_text(), "1025");
        assert_eq!(q("100m").value(), 1);
        assert_eq!(q("1.5").milli_value(), 1500);
        assert!(q("1Gi") > q("1000Mi"));
        for bad in ["", "abc", "1.2.3", "1Xi", "1e"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
        assert_eq!((q("1Gi") + q("512Mi")).to_text(), "1536Mi");
        assert_eq!((q("1") - q("1")).to_text(), "0");
        assert_eq!(q("1"), q("1000m"));
        assert_eq!(Quantity::from_json(&serde_json::json!(2)).map(Quantity::to_text).as_deref(), Some("2"));
    }
}
