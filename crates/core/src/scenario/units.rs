//! Values with units, read like `tc`: `"10Mbit"`, `"20ms"`, `"1500B"`, `"500p"`.
//! Ambiguous spellings are refused with a hint instead of guessed.

use crate::aqm::Limit;
use crate::time::Time;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(s.len());
    // "1e3s" is fine, but a unit starting with 'e' would be swallowed; none of ours does.
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, unit.trim()))
}

/// A rate in bit/s: `"384kbit"`, `"10Mbit"`, `"1Gbit"`, `"9600bit"`.
pub fn rate(s: &str) -> Result<u64, String> {
    let allowed = "a rate with a unit: bit, kbit, Mbit or Gbit (e.g. \"10Mbit\")";
    let (v, unit) = split_number(s).ok_or_else(|| format!("'{s}' is not {allowed}"))?;
    let mult = match unit {
        "bit" => 1.0,
        "kbit" | "Kbit" => 1e3,
        "mbit" | "Mbit" => 1e6,
        "gbit" | "Gbit" => 1e9,
        "bps" | "kbps" | "Kbps" | "mbps" | "Mbps" | "gbps" | "Gbps" => {
            return Err(format!(
                "'{s}' is ambiguous (tc reads 'kbps' as kilobytes per second); write {allowed}"
            ))
        }
        "" => return Err(format!("'{s}' has no unit; write {allowed}")),
        _ => {
            return Err(format!(
                "'{s}' has an unknown unit '{unit}'; write {allowed}"
            ))
        }
    };
    let bps = v * mult;
    if bps < 1.0 {
        return Err(format!("'{s}' must be at least 1 bit/s; write {allowed}"));
    }
    if bps > 1e13 {
        return Err(format!(
            "'{s}' is above the largest supported rate (10 Tbit)"
        ));
    }
    Ok(bps.round() as u64)
}

/// A duration: `"20ms"`, `"1.5s"`, `"250us"`, `"100ns"`.
pub fn time(s: &str) -> Result<Time, String> {
    let allowed = "a time with a unit: ns, us, ms or s (e.g. \"20ms\")";
    let (v, unit) = split_number(s).ok_or_else(|| format!("'{s}' is not {allowed}"))?;
    let mult = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "" => return Err(format!("'{s}' has no unit; write {allowed}")),
        _ => {
            return Err(format!(
                "'{s}' has an unknown unit '{unit}'; write {allowed}"
            ))
        }
    };
    if v < 0.0 {
        return Err(format!("'{s}' is negative; write {allowed}"));
    }
    let secs = v * mult;
    if secs > 1e9 {
        return Err(format!("'{s}' is too long (at most 1e9 s)"));
    }
    Ok(Time::from_secs_f64(secs))
}

/// A byte count: `"1500B"`, `"64kB"` (1000), `"64KiB"` (1024), `"1MB"`, `"1MiB"`.
pub fn bytes(s: &str) -> Result<u64, String> {
    let allowed = "a size with a unit: B, kB, KiB, MB, MiB, GB or GiB (e.g. \"64KiB\")";
    let (v, unit) = split_number(s).ok_or_else(|| format!("'{s}' is not {allowed}"))?;
    let mult = match unit {
        "B" => 1.0,
        "kB" | "KB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1_048_576.0,
        "GB" => 1e9,
        "GiB" => 1_073_741_824.0,
        "" => return Err(format!("'{s}' has no unit; write {allowed}")),
        "kb" | "Kb" | "mb" | "Mb" | "kbit" | "Mbit" | "bit" => {
            return Err(format!("'{s}' is ambiguous or in bits; write {allowed}"))
        }
        _ => {
            return Err(format!(
                "'{s}' has an unknown unit '{unit}'; write {allowed}"
            ))
        }
    };
    if v < 0.0 {
        return Err(format!("'{s}' is negative; write {allowed}"));
    }
    Ok((v * mult).round() as u64)
}

/// A queue limit: `"100p"` (packets) or a byte size (`"150kB"`).
pub fn limit(s: &str) -> Result<Limit, String> {
    let t = s.trim();
    if let Some(n) = t.strip_suffix('p').or_else(|| t.strip_suffix("pkt")) {
        let n: u64 = n.trim().parse().map_err(|_| {
            format!("'{s}' is not a queue limit; write packets as \"100p\" or bytes as \"150kB\"")
        })?;
        if n == 0 || n > u64::from(u32::MAX) {
            return Err(format!(
                "'{s}': a queue holds between 1 and {} packets",
                u32::MAX
            ));
        }
        return Ok(Limit::Packets(n as u32));
    }
    let b = bytes(t).map_err(|e| format!("{e}; or packets as \"100p\""))?;
    if b == 0 {
        return Err(format!("'{s}': a queue limit must be positive"));
    }
    Ok(Limit::Bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate("384kbit"), Ok(384_000));
        assert_eq!(rate("10Mbit"), Ok(10_000_000));
        assert_eq!(rate("1.5Mbit"), Ok(1_500_000));
        assert!(rate("10Mbps").unwrap_err().contains("ambiguous"));
        assert!(rate("10").unwrap_err().contains("no unit"));
        assert!(rate("-1Mbit").is_err());
        assert!(rate("fast").is_err());
    }

    #[test]
    fn times() {
        assert_eq!(time("20ms"), Ok(Time::from_millis(20)));
        assert_eq!(time("1.5s"), Ok(Time::from_millis(1500)));
        assert_eq!(time("0s"), Ok(Time::ZERO));
        assert!(time("-1s").is_err());
        assert!(time("5").is_err());
        assert!(time("5 min").is_err());
    }

    #[test]
    fn sizes_and_limits() {
        assert_eq!(bytes("64KiB"), Ok(65536));
        assert_eq!(bytes("1500B"), Ok(1500));
        assert_eq!(limit("500p"), Ok(Limit::Packets(500)));
        assert_eq!(limit("150kB"), Ok(Limit::Bytes(150_000)));
        assert!(limit("0p").is_err());
        assert!(limit("100").is_err());
    }
}
