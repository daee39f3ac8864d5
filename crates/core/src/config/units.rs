//! Values with units, read like `tc`: `"10Mbit"`, `"20ms"`, `"1500B"`,
//! `"500p"`. Ambiguous spellings are refused with a hint instead of guessed.
//!
//! Each type parses text ([`std::str::FromStr`]), deserializes from a file
//! with a message that names what is allowed, and has a JSON Schema whose
//! `pattern` accepts exactly the spellings the parser accepts (a value can
//! still be out of range: `"0Mbit"` matches the pattern of a rate).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserialize, Deserializer, Visitor};

use super::{quoted, to_serde, ConfigError};
use crate::time::Time;

/// A number as the unit parsers accept it: digits with an optional fraction
/// and exponent, no sign but `+` (negative values are refused by pattern and
/// parser alike).
const NUMBER: &str = r"\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?";

/// A JSON Schema from a JSON object.
pub fn schema(v: serde_json::Value) -> Schema {
    match v {
        serde_json::Value::Object(m) => m.into(),
        _ => true.into(),
    }
}

/// The number and the unit of `s` (`"1.5 Mbit"` → `(1.5, "Mbit")`).
fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    if s.starts_with('-') {
        return Err("is negative".into());
    }
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(s.len());
    // "1e3s" is fine, but a unit starting with 'e' would be swallowed; none of ours does.
    let (num, unit) = s.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| "is not a number with a unit".to_string())?;
    if !v.is_finite() {
        return Err("is too large".into());
    }
    Ok((v, unit.trim()))
}

/// A value read from text with a unit (and, for some types, a bare integer).
pub trait UnitValue: Sized {
    /// Schema name.
    const NAME: &'static str;
    /// What a valid value looks like, e.g. `a rate with a unit: bit, kbit, Mbit or Gbit (e.g. "10Mbit")`.
    const EXPECTING: &'static str;
    /// The `pattern` of the string form in the JSON Schema.
    fn pattern() -> String;
    /// Parse the string form; `Err` says what is wrong (after the value).
    fn from_text(s: &str) -> Result<Self, String>;
    /// A bare integer: refused unless the type takes one.
    fn from_int(_v: i64) -> Result<Self, String> {
        Err(format!("has no unit; write {}", Self::EXPECTING))
    }
    /// Whether [`UnitValue::from_int`] takes non-negative integers (for the schema).
    const TAKES_INT: bool = false;
}

struct UnitVisitor<T>(PhantomData<T>);

impl<'de, T: UnitValue> Visitor<'de> for UnitVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<T, E> {
        T::from_text(s).map_err(|m| to_serde(ConfigError::new("", quoted(s), m)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        T::from_int(v).map_err(|m| to_serde(ConfigError::new("", v.to_string(), m)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        let m = if T::TAKES_INT {
            format!("is not a whole number; write {}", T::EXPECTING)
        } else {
            format!("has no unit; write {}", T::EXPECTING)
        };
        Err(to_serde(ConfigError::new("", v.to_string(), m)))
    }
}

/// Deserialize a [`UnitValue`].
pub fn deserialize_unit<'de, T: UnitValue, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_any(UnitVisitor::<T>(PhantomData))
}

/// Deserialize a scalar (string, number or boolean) and read it with `read`,
/// whose error says what is wrong with the value and what is allowed. The
/// value is a [`toml::Value`], the scenario's own representation (as in
/// [`super::kind`]): a number arrives as written, `nan` and `inf` included.
pub fn read_scalar<'de, T, D: Deserializer<'de>>(
    d: D,
    read: impl FnOnce(&toml::Value) -> Result<T, String>,
) -> Result<T, D::Error> {
    let v = toml::Value::deserialize(d)?;
    read(&v).map_err(|m| to_serde(ConfigError::new("", v.to_string(), m)))
}

/// `JsonSchema` of a type from its name and a JSON schema literal.
macro_rules! schema_impl {
    ($t:ty, $name:literal, $schema:expr) => {
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                $name.into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $crate::config::units::schema($schema)
            }
        }
    };
}
pub(crate) use schema_impl;

/// The JSON Schema of a [`UnitValue`].
pub fn unit_schema<T: UnitValue>() -> Schema {
    let text = serde_json::json!({
        "type": "string",
        "pattern": format!("^{}$", T::pattern()),
        "description": T::EXPECTING,
    });
    if T::TAKES_INT {
        schema(serde_json::json!({
            "anyOf": [{ "type": "integer", "minimum": 0 }, text],
            "description": T::EXPECTING,
        }))
    } else {
        schema(text)
    }
}

/// `Deserialize`, `JsonSchema` and `FromStr` of [`UnitValue`] types.
macro_rules! unit_impls {
    ($($t:ty),+) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize_unit(d)
            }
        }

        impl JsonSchema for $t {
            fn schema_name() -> Cow<'static, str> {
                <$t as UnitValue>::NAME.into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                unit_schema::<$t>()
            }
        }

        impl FromStr for $t {
            type Err = ConfigError;

            fn from_str(s: &str) -> Result<Self, ConfigError> {
                <$t as UnitValue>::from_text(s).map_err(|m| ConfigError::new("", quoted(s), m))
            }
        }
    )+};
}

unit_impls!(Rate, Time, Bytes, Limit);

// ---------------------------------------------------------------------------
// Rate
// ---------------------------------------------------------------------------

/// A rate in bit/s, written `"384kbit"`, `"10Mbit"`, `"1Gbit"`, `"9600bit"`;
/// from 1 bit/s to 10 Tbit/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    /// The largest rate, 10 Tbit/s.
    pub const MAX_BPS: u64 = 10_000_000_000_000;

    /// A rate of `bps` bit/s (1 to 10 Tbit/s).
    pub fn from_bps(bps: u64) -> Result<Rate, ConfigError> {
        if (1..=Self::MAX_BPS).contains(&bps) {
            Ok(Rate(bps))
        } else {
            Err(ConfigError::new(
                "",
                bps.to_string(),
                "bit/s is out of range; allowed: 1 bit/s to 10 Tbit/s",
            ))
        }
    }

    /// Bit/s.
    pub fn bps(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}bit", self.0)
    }
}

impl UnitValue for Rate {
    const NAME: &'static str = "Rate";
    const EXPECTING: &'static str = "a rate with a unit: bit, kbit, Mbit or Gbit (e.g. \"10Mbit\")";

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*([kKmMgG]?bit)\s*")
    }

    fn from_text(s: &str) -> Result<Rate, String> {
        let allowed = Self::EXPECTING;
        let (v, unit) = split_number(s).map_err(|m| format!("{m}; write {allowed}"))?;
        let mult = match unit {
            "bit" => 1.0,
            "kbit" | "Kbit" => 1e3,
            "mbit" | "Mbit" => 1e6,
            "gbit" | "Gbit" => 1e9,
            "bps" | "kbps" | "Kbps" | "mbps" | "Mbps" | "gbps" | "Gbps" => {
                return Err(format!(
                    "is ambiguous (tc reads 'kbps' as kilobytes per second); write {allowed}"
                ))
            }
            "" => return Err(format!("has no unit; write {allowed}")),
            _ => return Err(format!("has an unknown unit '{unit}'; write {allowed}")),
        };
        let bps = v * mult;
        if bps < 1.0 {
            return Err(format!("is below 1 bit/s; write {allowed}"));
        }
        if bps > Self::MAX_BPS as f64 {
            return Err("is above the largest supported rate (10 Tbit)".into());
        }
        Ok(Rate(bps.round() as u64))
    }
}

// ---------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------

impl UnitValue for Time {
    const NAME: &'static str = "Time";
    const EXPECTING: &'static str = "a time with a unit: ns, us, ms or s (e.g. \"20ms\")";

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*(ns|us|µs|ms|s)\s*")
    }

    fn from_text(s: &str) -> Result<Time, String> {
        let allowed = Self::EXPECTING;
        let (v, unit) = split_number(s).map_err(|m| format!("{m}; write {allowed}"))?;
        let mult = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "" => return Err(format!("has no unit; write {allowed}")),
            _ => return Err(format!("has an unknown unit '{unit}'; write {allowed}")),
        };
        let secs = v * mult;
        if secs > 1e9 {
            return Err("is too long (at most 1e9 s)".into());
        }
        Ok(Time::from_secs_f64(secs))
    }
}

// ---------------------------------------------------------------------------
// Bytes
// ---------------------------------------------------------------------------

/// A byte count: an integer, or `"1500B"`, `"64kB"` (1000), `"64KiB"` (1024),
/// `"1MB"`, `"1MiB"`, `"1GB"`, `"1GiB"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// The count.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl UnitValue for Bytes {
    const NAME: &'static str = "Bytes";
    const EXPECTING: &'static str =
        "a byte count: an integer, or a size with a unit: B, kB, KiB, MB, MiB, GB or GiB (e.g. \"64KiB\")";
    const TAKES_INT: bool = true;

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*(B|kB|KB|KiB|MB|MiB|GB|GiB)\s*")
    }

    fn from_text(s: &str) -> Result<Bytes, String> {
        let allowed = Self::EXPECTING;
        let (v, unit) = split_number(s).map_err(|m| format!("{m}; write {allowed}"))?;
        let mult = match unit {
            "B" => 1.0,
            "kB" | "KB" => 1e3,
            "KiB" => 1024.0,
            "MB" => 1e6,
            "MiB" => 1_048_576.0,
            "GB" => 1e9,
            "GiB" => 1_073_741_824.0,
            "" => return Err(format!("has no unit; write {allowed}")),
            "kb" | "Kb" | "mb" | "Mb" | "kbit" | "Mbit" | "bit" => {
                return Err(format!("is ambiguous or in bits; write {allowed}"))
            }
            _ => return Err(format!("has an unknown unit '{unit}'; write {allowed}")),
        };
        let b = v * mult;
        if b > 1e18 {
            return Err("is too large (at most 1e18 bytes)".into());
        }
        Ok(Bytes(b.round() as u64))
    }

    fn from_int(v: i64) -> Result<Bytes, String> {
        u64::try_from(v)
            .map(Bytes)
            .map_err(|_| "is negative; allowed: a byte count ≥ 0".into())
    }
}

// ---------------------------------------------------------------------------
// Queue limit
// ---------------------------------------------------------------------------

/// Queue capacity: `"100p"` (packets, also `"100pkt"`), a byte size
/// (`"150kB"`), or `"inf"` (unbounded: `Packets(u32::MAX)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets.
    Packets(u32),
    /// At most this many bytes (IP packet sizes).
    Bytes(u64),
}

impl Limit {
    /// The capacity in its own unit (packets or bytes).
    pub fn capacity(self) -> f64 {
        match self {
            Limit::Packets(n) => f64::from(n),
            Limit::Bytes(b) => b as f64,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Packets(u32::MAX) => write!(f, "inf"),
            Limit::Packets(n) => write!(f, "{n}p"),
            Limit::Bytes(b) => write!(f, "{b}B"),
        }
    }
}

impl UnitValue for Limit {
    const NAME: &'static str = "Limit";
    const EXPECTING: &'static str =
        "a queue limit: packets as \"100p\", bytes as \"150kB\" (B, kB, KiB, MB, MiB, GB, GiB), \
         or \"inf\" (unbounded)";

    fn pattern() -> String {
        format!(r"\s*(\+?[0-9]+\s*(p|pkt)|inf|{})\s*", Bytes::pattern())
    }

    fn from_text(s: &str) -> Result<Limit, String> {
        let t = s.trim();
        if t == "inf" {
            // Unbounded: more packets than any run can hold.
            return Ok(Limit::Packets(u32::MAX));
        }
        if let Some(n) = t.strip_suffix('p').or_else(|| t.strip_suffix("pkt")) {
            let n: u64 = n
                .trim()
                .parse()
                .map_err(|_| format!("is not a queue limit; write {}", Self::EXPECTING))?;
            if n == 0 || n > u64::from(u32::MAX) {
                return Err(format!(
                    "is out of range; a queue holds between 1 and {} packets",
                    u32::MAX
                ));
            }
            return Ok(Limit::Packets(n as u32));
        }
        let b = Bytes::from_text(t).map_err(|m| format!("{m}; or packets as \"100p\""))?;
        if b.0 == 0 {
            return Err("is zero; a queue limit must be positive".into());
        }
        Ok(Limit::Bytes(b.0))
    }
}

// ---------------------------------------------------------------------------
// Probability
// ---------------------------------------------------------------------------

/// A probability, 0 ≤ p ≤ 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Probability(f64);

impl Probability {
    /// Zero.
    pub const ZERO: Probability = Probability(0.0);
    /// One.
    pub const ONE: Probability = Probability(1.0);

    /// `p` if it is a probability.
    pub fn new(p: f64) -> Result<Probability, ConfigError> {
        if (0.0..=1.0).contains(&p) {
            Ok(Probability(p))
        } else {
            Err(ConfigError::new(
                "",
                p.to_string(),
                "is not a probability; allowed: 0 ≤ p ≤ 1",
            ))
        }
    }

    /// The value.
    pub fn get(self) -> f64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = f64::deserialize(d)?;
        Probability::new(p).map_err(to_serde)
    }
}

impl JsonSchema for Probability {
    fn schema_name() -> Cow<'static, str> {
        "Probability".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schema(serde_json::json!({
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "a probability, 0 ≤ p ≤ 1",
        }))
    }
}

// ---------------------------------------------------------------------------
// Physical quantities of radio channels: dB, speed, frequency, length
// ---------------------------------------------------------------------------

/// A level in decibels, `"16dB"`, `"-3dB"` (negative allowed), within ±200 dB.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Decibel(f64);

/// A speed, `"100km/h"` or `"27.8m/s"`, 0 to 1000 km/h.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Speed(f64);

/// A frequency, `"2GHz"`, `"200kHz"`, `"0Hz"`, at most 1 THz.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Frequency(f64);

/// A length, `"2m"`, `"500mm"`, `"1.5km"`, at most 10 000 km.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Length(f64);

impl Decibel {
    /// The level in dB.
    pub fn db(self) -> f64 {
        self.0
    }
}

impl Speed {
    /// Metres per second.
    pub fn mps(self) -> f64 {
        self.0
    }
}

impl Frequency {
    /// Hertz.
    pub fn hz(self) -> f64 {
        self.0
    }
}

impl Length {
    /// Metres.
    pub fn meters(self) -> f64 {
        self.0
    }
}

/// `v` times the multiplier of `unit` in `units`, within `[0, max]`.
fn scaled(s: &str, units: &[(&str, f64)], max: f64, allowed: &str) -> Result<f64, String> {
    let (v, unit) = split_number(s).map_err(|m| format!("{m}; write {allowed}"))?;
    if unit.is_empty() {
        return Err(format!("has no unit; write {allowed}"));
    }
    let Some(&(_, mult)) = units.iter().find(|(u, _)| *u == unit) else {
        return Err(format!("has an unknown unit '{unit}'; write {allowed}"));
    };
    let x = v * mult;
    if x > max {
        return Err(format!("is too large; write {allowed}"));
    }
    Ok(x)
}

impl UnitValue for Decibel {
    const NAME: &'static str = "Decibel";
    const EXPECTING: &'static str = "a level in dB (e.g. \"16dB\", \"-3dB\")";

    fn pattern() -> String {
        format!(r"\s*-?{NUMBER}\s*dB\s*")
    }

    fn from_text(s: &str) -> Result<Decibel, String> {
        let t = s.trim();
        let (neg, rest) = t.strip_prefix('-').map_or((false, t), |r| (true, r));
        let v = scaled(rest, &[("dB", 1.0)], 200.0, Self::EXPECTING)?;
        Ok(Decibel(if neg { -v } else { v }))
    }
}

impl UnitValue for Speed {
    const NAME: &'static str = "Speed";
    const EXPECTING: &'static str = "a speed with a unit: km/h or m/s (e.g. \"100km/h\")";

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*(km/h|m/s)\s*")
    }

    fn from_text(s: &str) -> Result<Speed, String> {
        scaled(
            s,
            &[("km/h", 1.0 / 3.6), ("m/s", 1.0)],
            1000.0 / 3.6,
            Self::EXPECTING,
        )
        .map(Speed)
    }
}

impl UnitValue for Frequency {
    const NAME: &'static str = "Frequency";
    const EXPECTING: &'static str = "a frequency with a unit: Hz, kHz, MHz or GHz (e.g. \"2GHz\")";

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*(Hz|kHz|MHz|GHz)\s*")
    }

    fn from_text(s: &str) -> Result<Frequency, String> {
        let units = [("Hz", 1.0), ("kHz", 1e3), ("MHz", 1e6), ("GHz", 1e9)];
        scaled(s, &units, 1e12, Self::EXPECTING).map(Frequency)
    }
}

impl UnitValue for Length {
    const NAME: &'static str = "Length";
    const EXPECTING: &'static str = "a length with a unit: mm, m or km (e.g. \"2m\")";

    fn pattern() -> String {
        format!(r"\s*{NUMBER}\s*(mm|m|km)\s*")
    }

    fn from_text(s: &str) -> Result<Length, String> {
        scaled(
            s,
            &[("mm", 1e-3), ("m", 1.0), ("km", 1e3)],
            1e7,
            Self::EXPECTING,
        )
        .map(Length)
    }
}

unit_impls!(Decibel, Speed, Frequency, Length);

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(s: &str) -> Result<u64, String> {
        Rate::from_text(s).map(Rate::bps)
    }

    #[test]
    fn rates() {
        assert_eq!(rate("384kbit"), Ok(384_000));
        assert_eq!(rate("10Mbit"), Ok(10_000_000));
        assert_eq!(rate("1.5Mbit"), Ok(1_500_000));
        assert!(rate("10Mbps").unwrap_err().contains("ambiguous"));
        assert!(rate("10").unwrap_err().contains("no unit"));
        assert!(rate("-1Mbit").is_err());
        assert!(rate("fast").is_err());
        let e = "10Mbps".parse::<Rate>().unwrap_err();
        assert!(e.to_string().starts_with("\"10Mbps\" is ambiguous"), "{e}");
    }

    #[test]
    fn times() {
        let time = Time::from_text;
        assert_eq!(time("20ms"), Ok(Time::from_millis(20)));
        assert_eq!(time("1.5s"), Ok(Time::from_millis(1500)));
        assert_eq!(time("0s"), Ok(Time::ZERO));
        assert!(time("-1s").is_err());
        assert!(time("-0s").is_err());
        assert!(time("5").is_err());
        assert!(time("5 min").is_err());
    }

    #[test]
    fn sizes_and_limits() {
        assert_eq!(Bytes::from_text("64KiB"), Ok(Bytes(65536)));
        assert_eq!(Bytes::from_text("1500B"), Ok(Bytes(1500)));
        assert_eq!(Limit::from_text("500p"), Ok(Limit::Packets(500)));
        assert_eq!(Limit::from_text("150kB"), Ok(Limit::Bytes(150_000)));
        assert!(Limit::from_text("0p").is_err());
        assert!(Limit::from_text("100").is_err());
        assert_eq!(Limit::from_text("inf"), Ok(Limit::Packets(u32::MAX)));
        assert_eq!(Limit::Packets(u32::MAX).to_string(), "inf");
    }

    /// `T`'s schema pattern accepts a string iff its parser does, except for
    /// `range`: strings of the right form whose value is out of range.
    fn pattern_agrees<T: UnitValue>(good: &[&str], bad: &[&str], range: &[&str]) {
        let re = regex::Regex::new(&format!("^{}$", T::pattern())).unwrap();
        for s in good {
            assert!(re.is_match(s), "{}: pattern refuses {s:?}", T::NAME);
            assert!(T::from_text(s).is_ok(), "{}: parser refuses {s:?}", T::NAME);
        }
        for s in bad {
            assert!(!re.is_match(s), "{}: pattern accepts {s:?}", T::NAME);
            assert!(
                T::from_text(s).is_err(),
                "{}: parser accepts {s:?}",
                T::NAME
            );
        }
        for s in range {
            assert!(re.is_match(s), "{}: pattern refuses {s:?}", T::NAME);
            assert!(
                T::from_text(s).is_err(),
                "{}: parser accepts {s:?}",
                T::NAME
            );
        }
    }

    /// Spellings every unit refuses.
    const NOT_NUMBERS: &[&str] = &[
        "", "x", "-1", "--1", "1e", "1.2.3", "inf", "NaN", "1 e3", ".", "+",
    ];

    #[test]
    fn schema_patterns_agree_with_the_parsers() {
        let with = |unit: &str| -> Vec<String> {
            NOT_NUMBERS.iter().map(|n| format!("{n}{unit}")).collect()
        };
        let bad_rates: Vec<String> = with("Mbit");
        let mut bad: Vec<&str> = bad_rates.iter().map(String::as_str).collect();
        bad.extend([
            "10", "10Mbps", "10kbps", "10 Mb", "10MBit", "Mbit", "10Mbit/s", "-5kbit",
        ]);
        pattern_agrees::<Rate>(
            &[
                "384kbit", "10Mbit", "1.5Mbit", " 2 Gbit ", "9600bit", "1e3kbit", "+5Mbit",
                ".5Mbit", "1.Mbit", "10Kbit", "1E-3Gbit",
            ],
            &bad,
            &[
                "0Mbit",
                "0.5bit",
                "20Tbit".replace('T', "000G").as_str(),
                "1e400Mbit",
            ],
        );
        let bad_times: Vec<String> = with("ms");
        let mut bad: Vec<&str> = bad_times.iter().map(String::as_str).collect();
        bad.extend(["50", "5 min", "5sec", "5m", "-0s", "1h", "ms"]);
        pattern_agrees::<Time>(
            &[
                "20ms", "1.5s", "0s", "250us", "250µs", "100ns", " 3 s", "1e-3s", "+2ms",
            ],
            &bad,
            &["2e9s"],
        );
        let bad_sizes: Vec<String> = with("B");
        let mut bad: Vec<&str> = bad_sizes.iter().map(String::as_str).collect();
        bad.extend(["64", "64kb", "64Kb", "1Mbit", "64kib", "64 bytes", "B"]);
        pattern_agrees::<Bytes>(
            &[
                "1500B", "64kB", "64KB", "64KiB", "1MB", "1MiB", "1GB", "1GiB", "0B", " 1.5 kB",
            ],
            &bad,
            &["2e18GB"],
        );
        pattern_agrees::<Limit>(
            &[
                "100p", "100pkt", " 5 p ", "150kB", "1MiB", "+7p", "inf", " inf ",
            ],
            &[
                "100",
                "p",
                "1.5p",
                "-1p",
                "100 packets",
                "10Mbit",
                "x",
                "infinite",
                "-inf",
            ],
            &["0p", "0B", "4294967296p"],
        );
    }

    #[test]
    fn deserialize_with_messages() {
        let e = crate::config::deserialize::<Rate, _>(serde_json::json!("2Mbps")).unwrap_err();
        assert_eq!(e.value, "\"2Mbps\"");
        assert!(e.allowed.contains("ambiguous"), "{e}");
        let e = crate::config::deserialize::<Time, _>(serde_json::json!(50)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "50 has no unit; write a time with a unit: ns, us, ms or s (e.g. \"20ms\")"
        );
        let b: Bytes = crate::config::deserialize(serde_json::json!(1500)).unwrap();
        assert_eq!(b, Bytes(1500));
        let e = crate::config::deserialize::<Probability, _>(serde_json::json!(1.5)).unwrap_err();
        assert!(e.allowed.contains("0 ≤ p ≤ 1"), "{e}");
    }
}
