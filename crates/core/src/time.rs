//! Simulated time: integer nanoseconds since the start of a run.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant or a duration in simulated time, in integer nanoseconds.
///
/// One type serves both roles (as `u64` nanoseconds would); arithmetic saturates
/// at [`Time::MAX`], which also stands for "never".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    /// Time zero.
    pub const ZERO: Time = Time(0);
    /// The largest representable time; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Time {
        Time(us * 1_000)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    /// From fractional seconds, rounded to the nearest nanosecond (negative → 0).
    pub fn from_secs_f64(s: f64) -> Time {
        if s <= 0.0 {
            Time(0)
        } else {
            Time((s * 1e9).round() as u64)
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// `self - other`, or zero if `other` is later.
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
    /// Time to serialise `bytes` at `rate_bps` bits per second (rounded up to whole ns).
    pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
        debug_assert!(rate_bps > 0);
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let r = rate_bps as u128;
        Time(bits.div_ceil(r) as u64)
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        debug_assert!(self.0 >= rhs.0, "negative time difference");
        Time(self.0 - rhs.0)
    }
}

/// The largest unit that shows the time exactly, as a scenario writes it
/// (`"100ms"`, `"1.5s"` is `"1500ms"`, `"2s"`, `"0s"`); parses back to the
/// same value.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        match () {
            _ if ns.is_multiple_of(1_000_000_000) => write!(f, "{}s", ns / 1_000_000_000),
            _ if ns.is_multiple_of(1_000_000) => write!(f, "{}ms", ns / 1_000_000),
            _ if ns.is_multiple_of(1_000) => write!(f, "{}us", ns / 1_000),
            _ => write!(f, "{ns}ns"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_uses_the_largest_exact_unit_and_parses_back() {
        let shown: Vec<String> = [0, 2_000_000_000, 100_000_000, 1_500_000_000, 250_000, 7]
            .into_iter()
            .map(|ns| Time(ns).to_string())
            .collect();
        assert_eq!(shown, ["0s", "2s", "100ms", "1500ms", "250us", "7ns"]);
        for ns in [0u64, 1, 999, 1_000, 123_456_789, 3_600_000_000_000] {
            assert_eq!(Time(ns).to_string().parse::<Time>().unwrap(), Time(ns));
        }
    }

    #[test]
    fn tx_time_rounds_up() {
        // 500 bytes at 10 Mbit/s = 400 us exactly.
        assert_eq!(Time::tx_time(500, 10_000_000), Time::from_micros(400));
        // 1 byte at 3 bit/s = 8/3 s, rounded up.
        assert_eq!(Time::tx_time(1, 3).0, 2_666_666_667);
    }

    #[test]
    fn saturating_add_is_never() {
        assert_eq!(Time::MAX + Time::from_secs(1), Time::MAX);
    }
}
