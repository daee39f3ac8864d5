//! RFC 6298 retransmission-timeout estimator.

use crate::time::Time;

/// SRTT / RTTVAR / RTO per RFC 6298, with exponential back-off.
///
/// Integer nanoseconds throughout: `RTTVAR ← (3·RTTVAR + |SRTT − R|) / 4`,
/// `SRTT ← (7·SRTT + R) / 8`, `RTO = SRTT + max(G, 4·RTTVAR)` clamped to
/// `[min_rto, max_rto]`. Each expiry doubles the RTO (capped at `max_rto`);
/// the back-off is kept until the next RTT sample (RFC 6298 §5.7 / Karn).
///
/// With a coarse clock ([`RttEstimator::ns2`]) it is ns-2's `TcpAgent`
/// estimator instead (see [`Ns2Clock`]).
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
    ns2: Option<Ns2Clock>,
    /// The smoothed RTT of the exact samples (RFC 6298's EWMA), whatever
    /// clock the timer runs on: what pacing and rate-based controls use.
    exact: Option<Time>,
}

/// ns-2's retransmission timer (`tcp.cc`, `TcpAgent::rtt_update`,
/// `rtt_timeout`, `rtt_backoff`): RTT samples in whole ticks of
/// `tcpTick_` (the ticks a segment spans, or a timestamp echo rounded);
/// `t_srtt` and `t_rttvar` in ticks with 3 and 2 fractional bits;
/// RTO = (srtt + 4·rttvar) in whole ticks, clamped below by `minrto_`
/// before the back-off (`rfc2988_`), above by `maxrto_`, and to at least
/// two ticks; the back-off doubles to 64 (with `rfc2988_`, on while
/// the timeout is below `maxrto_`) and past 8 clears srtt, so the next
/// sample starts afresh. One timed segment per RTT is the
/// sender's part ([`super::sender`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Clock {
    tick: Time,
    /// ns-2's `rfc2988_ = false` (its default before 2006): `minrto_`
    /// bounds the backed-off timeout, not the base RTO.
    min_after_backoff: bool,
    /// 8 × srtt in ticks (0: no sample since the start or the last clearing).
    t_srtt: i64,
    /// 4 × rttvar in ticks.
    t_rttvar: i64,
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
            ns2: None,
            exact: None,
        }
    }

    /// ns-2's estimator with clock tick `tick` (> 0): RTO `initial_rto`
    /// (`rtxcur_init_`) until the first sample; `min_after_backoff` is
    /// ns-2's `rfc2988_ = false`.
    pub fn ns2(
        initial_rto: Time,
        min_rto: Time,
        max_rto: Time,
        tick: Time,
        min_after_backoff: bool,
    ) -> Self {
        let mut e = RttEstimator::new(initial_rto, min_rto, max_rto, tick);
        e.ns2 = Some(Ns2Clock {
            tick: Time(tick.0.max(1)),
            min_after_backoff,
            t_srtt: 0,
            t_rttvar: 0,
        });
        e
    }

    /// Take an RTT measurement `r` (RFC 6298 §2.2–2.4); clears the back-off.
    /// With ns-2's clock `r` is rounded to whole ticks, as ns-2 does for
    /// timestamp echoes (`ts_option_`).
    pub fn sample(&mut self, r: Time) {
        self.smooth_exact(r);
        if let Some(tick) = self.ns2.map(|c| c.tick.0) {
            self.latest = Some(r);
            self.ns2_update(((r.0 + tick / 2) / tick).max(1) as i64);
            return;
        }
        self.rfc6298_update(r);
    }

    /// The RTT of a segment sent at `sent` and acknowledged at `now`. With
    /// ns-2's clock (no timestamps) it is the number of clock ticks between
    /// the two instants, at least one (`rtt_update`: `(tao + tickoff) /
    /// tcp_tick_` with the send time's offset into its tick) — ns-2 adds a
    /// random `boot_time_` to the clock; linklab's flows start at random
    /// times (`start_jitter`), which randomises the phase the same way.
    /// Otherwise the same as [`RttEstimator::sample`].
    pub fn sample_between(&mut self, sent: Time, now: Time) {
        let r = now.saturating_sub(sent);
        self.smooth_exact(r);
        if let Some(tick) = self.ns2.map(|c| c.tick.0) {
            self.latest = Some(r);
            let ticks = (now.0 / tick).saturating_sub(sent.0 / tick);
            self.ns2_update(ticks.max(1) as i64);
            return;
        }
        self.rfc6298_update(r);
    }

    /// Fold the exact sample `r` into [`RttEstimator::smoothed`].
    fn smooth_exact(&mut self, r: Time) {
        self.exact = Some(match self.exact {
            None => r,
            Some(s) => Time((7 * s.0 + r.0) / 8),
        });
    }

    /// ns-2's `rtt_update` with a sample of `t_rtt` ticks; clears the back-off.
    fn ns2_update(&mut self, t_rtt: i64) {
        if let Some(c) = self.ns2.as_mut() {
            let tick = c.tick.0;
            if c.t_srtt != 0 {
                let mut delta = t_rtt - (c.t_srtt >> 3);
                c.t_srtt += delta;
                if c.t_srtt <= 0 {
                    c.t_srtt = 1;
                }
                delta = delta.abs() - (c.t_rttvar >> 2);
                c.t_rttvar += delta;
                if c.t_rttvar <= 0 {
                    c.t_rttvar = 1;
                }
            } else {
                c.t_srtt = t_rtt << 3;
                c.t_rttvar = t_rtt << 1;
            }
            // rttvar_exp_ = 2: (srtt + 4·rttvar) in ticks.
            let ticks = ((c.t_rttvar << 3) + c.t_srtt) >> 3;
            self.srtt = Some(Time((c.t_srtt as u64 * tick) >> 3));
            self.rttvar = Time((c.t_rttvar as u64 * tick) >> 2);
            self.base_rto = Time(ticks as u64 * tick);
            self.backoff = 0;
        }
    }

    /// RFC 6298 §2.2–2.4 with sample `r`; clears the back-off.
    fn rfc6298_update(&mut self, r: Time) {
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
        if let Some(min_after_backoff) = self.ns2.map(|c| c.min_after_backoff) {
            // tcp.cc `rtt_backoff`: double up to 64, and with `rfc2988_`
            // further while the timeout is below `maxrto_`.
            let rfc2988 = !min_after_backoff;
            if self.backoff < 6 || (rfc2988 && self.backoff < 40 && self.rto() < self.max_rto) {
                self.backoff += 1;
            }
            if let (true, Some(c)) = (self.backoff > 3, self.ns2.as_mut()) {
                c.t_srtt = 0;
            }
            return;
        }
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// End the back-off without a sample (ns-2's `t_backoff_ = 1` on a
    /// partial ACK in SACK recovery).
    pub fn clear_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Current RTO, back-off included.
    pub fn rto(&self) -> Time {
        if let Some(c) = &self.ns2 {
            let scaled = |b: Time| Time(b.0.saturating_mul(1u64 << self.backoff));
            let t = if c.min_after_backoff {
                scaled(self.base_rto).max(self.min_rto)
            } else {
                scaled(self.base_rto.max(self.min_rto))
            };
            return t.min(self.max_rto).max(Time(2 * c.tick.0));
        }
        let shift = self.backoff.min(40);
        Time(self.base_rto.0.saturating_mul(1u64 << shift)).min(self.max_rto)
    }

    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    /// The smoothed RTT of the exact samples (RFC 6298 §2.3's EWMA). It is
    /// [`RttEstimator::srtt`] except under ns-2's clock, whose `srtt` is in
    /// whole ticks for the timer's sake: pacing, BBR and RACK-TLP time
    /// packets from this one (issue 33, finding F7).
    pub fn smoothed(&self) -> Option<Time> {
        self.exact
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

    /// F7 (issue 33): under ns-2's clock srtt is whole ticks (the timer's),
    /// but the smoothed RTT pacing uses is the exact one; without the clock
    /// the two are the same.
    #[test]
    fn smoothed_is_exact_under_a_tick() {
        let mut ns2 = RttEstimator::ns2(ms(3000), ms(200), ms(60_000), ms(300), false);
        let mut plain = est();
        for r in [40, 41, 40, 43] {
            ns2.sample_between(ms(1000), ms(1000 + r));
            plain.sample(ms(r));
        }
        assert!(ns2.srtt().unwrap() >= ms(300), "{:?}", ns2.srtt());
        let exact = ns2.smoothed().unwrap();
        assert!(exact > ms(40) && exact < ms(42), "{exact:?}");
        assert_eq!(plain.smoothed(), plain.srtt());
        assert_eq!(plain.smoothed(), Some(exact));
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
    fn ns2_clock_rounds_to_ticks_and_backs_off_as_ns2() {
        // tcpTick_ 0.1 s, minrto_ 0.2 s: a 340 ms sample is 3 ticks (rounded).
        let mut e = RttEstimator::ns2(ms(3000), ms(200), ms(64_000), ms(100), false);
        assert_eq!(e.rto(), ms(3000), "rtxcur_init_ before a sample");
        e.sample(ms(340));
        // srtt = 3 ticks, rttvar = 1.5 ticks: RTO = (3 + 4·1.5) = 9 ticks.
        assert_eq!(e.srtt(), Some(ms(300)));
        assert_eq!(e.rto(), ms(900));
        e.sample(ms(310));
        // delta = 0: t_srtt stays 24; t_rttvar = 6 - (6 >> 2) = 5.
        assert_eq!(e.rto(), ms(800), "whole ticks: (24 + (5 << 3)) >> 3 = 8");
        // The back-off doubles and clears srtt past 8; with rfc2988_ it goes
        // on past 64 while the timeout is below maxrto_ (0.8 s x 64 = 51.2 s
        // < 64 s: once more, to 128, and the timeout is capped at 64 s).
        let before = e.rto();
        e.backoff();
        assert_eq!(e.rto(), Time(before.0 * 2));
        for _ in 0..10 {
            e.backoff();
        }
        assert_eq!(e.backoff_count(), 7, "past 64 while below maxrto_");
        assert_eq!(e.rto(), ms(64_000));
        e.sample(ms(1000));
        assert_eq!(
            e.srtt(),
            Some(ms(1000)),
            "srtt was cleared: the sample starts afresh"
        );
        assert_eq!(e.backoff_count(), 0);
        // rfc2988_ = false: minrto_ bounds the backed-off value (0.6 s, 1 s
        // minimum: 1, 1.2, 2.4 s) instead of being backed off (1, 2, 4 s).
        let mut old = RttEstimator::ns2(ms(6000), ms(1000), ms(64_000), ms(100), true);
        old.sample(ms(200));
        let mut seen = vec![old.rto()];
        for _ in 0..2 {
            old.backoff();
            seen.push(old.rto());
        }
        assert_eq!(seen, vec![ms(1000), ms(1200), ms(2400)]);
        // Without rfc2988_ the back-off stops at 64 (0.6 s x 64 = 38.4 s).
        for _ in 0..10 {
            old.backoff();
        }
        assert_eq!((old.backoff_count(), old.rto()), (6, ms(38_400)));
    }

    #[test]
    fn ns2_clock_counts_the_ticks_between_send_and_ack() {
        // tcpTick_ 0.1 s: a segment's RTT is the number of tick boundaries it
        // spans, at least one (ns-2's `rtt_update` without timestamps).
        let first = |sent: u64, now: u64| {
            let mut e = RttEstimator::ns2(ms(3000), ms(200), ms(64_000), ms(100), false);
            e.sample_between(ms(sent), ms(now));
            (e.srtt(), e.latest())
        };
        // 250 ms from 40 ms: boundaries at 100, 200 -> 2 ticks (rounding: 3).
        assert_eq!(first(40, 290), (Some(ms(200)), Some(ms(250))));
        // 250 ms from 90 ms: boundaries at 100, 200, 300 -> 3 ticks.
        assert_eq!(first(90, 340).0, Some(ms(300)));
        // Within one tick: at least one.
        assert_eq!(first(110, 150).0, Some(ms(100)));
        // Timestamp echoes are rounded instead (`ts_option_`).
        let mut e = RttEstimator::ns2(ms(3000), ms(200), ms(64_000), ms(100), false);
        e.sample(ms(250));
        assert_eq!(e.srtt(), Some(ms(300)));
        // Without ns-2's clock both are the plain RFC 6298 sample.
        let mut a = est();
        let mut b = est();
        a.sample(ms(250));
        b.sample_between(ms(40), ms(290));
        assert_eq!((a.srtt(), a.rto()), (b.srtt(), b.rto()));
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
