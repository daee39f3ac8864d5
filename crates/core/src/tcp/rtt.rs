//! RFC 6298 retransmission-timeout estimator.

use crate::time::Time;

/// SRTT / RTTVAR / RTO per RFC 6298, with exponential back-off.
///
/// Integer nanoseconds throughout: `RTTVAR ← (3·RTTVAR + |SRTT − R|) / 4`,
/// `SRTT ← (7·SRTT + R) / 8`, `RTO = SRTT + max(G, 4·RTTVAR)` clamped to
/// `[min_rto, max_rto]`. Each expiry doubles the RTO (capped at `max_rto`);
/// the back-off is kept until the next RTT sample (RFC 6298 §5.7 / Karn).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    latest: Option<Time>,
    base_rto: Time,
    backoff: u32,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
}

impl RttEstimator {
    /// A fresh estimator: RTO = `initial_rto` (capped at `max_rto`) until the first sample.
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Time::ZERO,
            latest: None,
            base_rto: initial_rto.min(max_rto),
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
        }
    }

    /// Take an RTT measurement `r` (RFC 6298 §2.2–2.4); clears the back-off.
    pub fn sample(&mut self, r: Time) {
        self.latest = Some(r);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(srtt) => {
                let diff = srtt.0.abs_diff(r.0);
                self.rttvar = Time((3 * self.rttvar.0 + diff) / 4);
                self.srtt = Some(Time((7 * srtt.0 + r.0) / 8));
            }
        }
        let srtt = self.srtt.unwrap_or(r);
        let var = Time(self.rttvar.0.saturating_mul(4)).max(self.granularity);
        self.base_rto = (srtt + var).max(self.min_rto).min(self.max_rto);
        self.backoff = 0;
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5), capped at `max_rto`.
    pub fn backoff(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// Current RTO, back-off included.
    pub fn rto(&self) -> Time {
        let shift = self.backoff.min(40);
        Time(self.base_rto.0.saturating_mul(1u64 << shift)).min(self.max_rto)
    }

    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    /// RTT variation.
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }

    /// Most recent sample.
    pub fn latest(&self) -> Option<Time> {
        self.latest
    }

    /// Number of doublings currently applied.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn est() -> RttEstimator {
        RttEstimator::new(ms(1000), ms(200), ms(60_000), ms(1))
    }

    #[test]
    fn initial_rto_before_sample() {
        let e = est();
        assert_eq!(e.rto(), ms(1000));
        assert_eq!(e.srtt(), None);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_var() {
        let mut e = est();
        e.sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        // 100 + 4·50 = 300 ms
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn subsequent_samples_follow_ewma() {
        let mut e = est();
        e.sample(ms(100));
        e.sample(ms(200));
        // RTTVAR = 3/4·50 + 1/4·|100−200| = 37.5 + 25 = 62.5 ms
        assert_eq!(e.rttvar(), Time::from_micros(62_500));
        // SRTT = 7/8·100 + 1/8·200 = 112.5 ms
        assert_eq!(e.srtt(), Some(Time::from_micros(112_500)));
        // RTO = 112.5 + 250 = 362.5 ms
        assert_eq!(e.rto(), Time::from_micros(362_500));
    }

    #[test]
    fn clamps_and_granularity() {
        let mut e = RttEstimator::new(ms(1000), ms(1000), ms(60_000), ms(1));
        e.sample(ms(10));
        assert_eq!(e.rto(), ms(1000), "min_rto");
        // Constant samples: RTTVAR decays below G/4, so G dominates.
        let mut e = RttEstimator::new(ms(1000), Time::ZERO, ms(60_000), ms(5));
        for _ in 0..100 {
            e.sample(ms(10));
        }
        assert_eq!(e.srtt(), Some(ms(10)));
        assert_eq!(e.rto(), ms(15));
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(2000), ms(1));
        e.sample(ms(5000));
        assert_eq!(e.rto(), ms(2000), "max_rto");
    }

    #[test]
    fn backoff_doubles_caps_and_clears_on_sample() {
        let mut e = RttEstimator::new(ms(1000), ms(1000), ms(5000), ms(1));
        let mut seen = vec![e.rto()];
        for _ in 0..5 {
            e.backoff();
            seen.push(e.rto());
        }
        assert_eq!(
            seen,
            vec![ms(1000), ms(2000), ms(4000), ms(5000), ms(5000), ms(5000)]
        );
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(1000));
        assert_eq!(e.backoff_count(), 0);
    }
}
