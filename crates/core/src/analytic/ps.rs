//! M/G/1 processor sharing: the anchor of flow-completion times under
//! open-loop Poisson arrivals (`linklab model ps`, docs/models/workloads.md).
//!
//! Flows arrive as a Poisson process and share a link of capacity C equally
//! (egalitarian processor sharing, the fluid ideal of TCP's fair share). With
//! load ρ = λ E[X] / C < 1, a flow of size x takes on average
//! E[T(x)] = x / (C (1 − ρ)) — for any size distribution (the M/G/1-PS
//! insensitivity; Kleinrock, *Queueing Systems* vol. 2, 1976, §4.4) — so its
//! slowdown E[T(x)] / (x / C) is 1 / (1 − ρ) for every size, and the mean
//! number of flows in progress is ρ / (1 − ρ).

/// The inputs of the M/G/1-PS model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ps {
    /// Load ρ, in (0, 1).
    pub load: f64,
    /// Capacity C, bit/s.
    pub capacity_bps: f64,
}

/// Largest capacity accepted, bit/s (10 Tbit/s).
pub const MAX_CAPACITY_BPS: f64 = 1e13;

impl Ps {
    /// `Err((name, why))` unless 0 < load < 1 and 0 < capacity ≤ [`MAX_CAPACITY_BPS`].
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(self.load > 0.0 && self.load < 1.0) {
            return Err((
                "load",
                format!(
                    "{} is out of range; allowed: above 0 and below 1 (a stable queue)",
                    self.load
                ),
            ));
        }
        if !(self.capacity_bps > 0.0 && self.capacity_bps <= MAX_CAPACITY_BPS) {
            return Err((
                "capacity",
                format!(
                    "{} bit/s is out of range; allowed: above 0, at most {MAX_CAPACITY_BPS:e} bit/s",
                    self.capacity_bps
                ),
            ));
        }
        Ok(())
    }

    /// The slowdown of every size, 1 / (1 − ρ).
    pub fn slowdown(&self) -> f64 {
        1.0 / (1.0 - self.load)
    }

    /// Mean flows in progress, ρ / (1 − ρ).
    pub fn mean_in_system(&self) -> f64 {
        self.load / (1.0 - self.load)
    }

    /// A flow of `bytes` alone: x / C, seconds.
    pub fn alone(&self, bytes: f64) -> f64 {
        bytes * 8.0 / self.capacity_bps
    }

    /// Its mean completion time under the load: x / (C (1 − ρ)), seconds.
    pub fn mean_time(&self, bytes: f64) -> f64 {
        self.alone(bytes) * self.slowdown()
    }

    /// The arrival rate that makes load ρ with mean size `mean_bytes`:
    /// λ = ρ C / (8 E[X]), flows per second.
    pub fn arrival_rate(&self, mean_bytes: f64) -> f64 {
        self.load * self.capacity_bps / (8.0 * mean_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        let m = Ps {
            load: 0.5,
            capacity_bps: 10e6,
        };
        m.check().unwrap();
        // 1 MB over 10 Mbit/s: 0.8 s alone, 1.6 s at half load.
        assert!((m.alone(1e6) - 0.8).abs() < 1e-12);
        assert!((m.mean_time(1e6) - 1.6).abs() < 1e-12);
        assert_eq!(m.slowdown(), 2.0);
        assert_eq!(m.mean_in_system(), 1.0);
        assert!((m.arrival_rate(1e6) - 0.625).abs() < 1e-12);
        let m = Ps { load: 0.8, ..m };
        assert!((m.slowdown() - 5.0).abs() < 1e-12);
    }

    #[test]
    fn bounds() {
        let m = Ps {
            load: 1.0,
            capacity_bps: 1e6,
        };
        assert_eq!(m.check().unwrap_err().0, "load");
        let m = Ps {
            load: 0.5,
            capacity_bps: f64::NAN,
        };
        assert_eq!(m.check().unwrap_err().0, "capacity");
    }
}
