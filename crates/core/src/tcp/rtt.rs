//! Retransmission-timeout estimators: RFC 6298's, ns-2's coarse clock and
//! Linux's.

use crate::time::Time;

/// SRTT / RTTVAR / RTO per RFC 6298, with exponential back-off.
///
/// Integer nanoseconds throughout: `RTTVAR ← (3·RTTVAR + |SRTT − R|) / 4`,
/// `SRTT ← (7·SRTT + R) / 8`, `RTO = SRTT + max(G, 4·RTTVAR)` clamped to
/// `[min_rto, max_rto]`. Each expiry doubles the RTO (capped at `max_rto`);
/// the back-off is kept until the next RTT sample (RFC 6298 §5.7 / Karn).
///
/// With a coarse clock ([`RttEstimator::ns2`]) it is ns-2's `TcpAgent`
/// estimator instead (see [`Ns2Clock`]); with [`RttEstimator::linux`],
/// Linux's (see [`LinuxVar`]).
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
    linux: Option<LinuxVar>,
    /// The sender's `(snd_una, snd_nxt)` at the next sample (Linux's
    /// estimator marks its round trips by them).
    seq: (u64, u64),
    /// The smoothed RTT of the exact samples (RFC 6298's EWMA), whatever
    /// clock the timer runs on: what pacing and rate-based controls use.
    exact: Option<Time>,
    /// The least value `exact` has taken (ns-3's `m_minRtt`).
    min_exact: Option<Time>,
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

/// Linux's variation term (`tcp_rtt_estimator` in net/ipv4/tcp_input.c,
/// `__tcp_set_rto` in include/net/tcp.h), in nanoseconds where Linux has
/// microseconds: `mdev` is 4 × the mean deviation, smoothed with gain 1/4
/// (1/32 for a rise while the RTT falls, Linux's Eifel-like damping);
/// `mdev_max` is its largest value in the current round trip, never below
/// `min_rto`; `rttvar` jumps up to `mdev_max` at once and decays toward
/// it by a quarter of the difference once per round trip, when `snd_una`
/// passes `rtt_seq` (`snd_nxt` when the round trip began); RTO = SRTT +
/// rttvar, capped at `max_rto`. The first sample R gives SRTT = R, mdev =
/// 2R and rttvar = max(2R, min_rto): RTO = max(3R, R + min_rto).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxVar {
    mdev: i64,
    mdev_max: i64,
    rttvar: i64,
    rtt_seq: u64,
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
            linux: None,
            seq: (0, 0),
            exact: None,
            min_exact: None,
        }
    }

    /// Linux's estimator ([`LinuxVar`]): RTO = `initial_rto` until the
    /// first sample, then SRTT + rttvar with rttvar ≥ `min_rto`, at most
    /// `max_rto`. Feed it the sender's sequence numbers
    /// ([`RttEstimator::set_sequence`]) before each sample.
    pub fn linux(initial_rto: Time, min_rto: Time, max_rto: Time) -> Self {
        let mut e = RttEstimator::new(initial_rto, min_rto, max_rto, Time::ZERO);
        e.linux = Some(LinuxVar {
            mdev: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
        });
        e
    }

    /// The sender's `snd_una` and `snd_nxt` (one past the highest byte
    /// sent) as of the next sample: Linux's estimator restarts its
    /// per-round-trip maximum when `snd_una` passes the `snd_nxt` of the
    /// previous restart. The other estimators ignore them.
    pub fn set_sequence(&mut self, snd_una: u64, snd_nxt: u64) {
        self.seq = (snd_una, snd_nxt);
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
        let s = match self.exact {
            None => r,
            Some(s) => Time((7 * s.0 + r.0) / 8),
        };
        self.exact = Some(s);
        self.min_exact = Some(self.min_exact.map_or(s, |m| m.min(s)));
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

    /// RFC 6298 §2.2–2.4 with sample `r` (or Linux's rule, when it is the
    /// estimator); clears the back-off.
    fn rfc6298_update(&mut self, r: Time) {
        self.latest = Some(r);
        if self.linux.is_some() {
            self.linux_update(r);
            return;
        }
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

    /// `tcp_rtt_estimator` and `tcp_set_rto` with sample `r`; clears the back-off.
    fn linux_update(&mut self, r: Time) {
        let (snd_una, snd_nxt) = self.seq;
        let min = i64::try_from(self.min_rto.0).unwrap_or(i64::MAX);
        let m = i64::try_from(r.0).unwrap_or(i64::MAX);
        let Some(v) = self.linux.as_mut() else {
            return;
        };
        let srtt = match self.srtt {
            None => {
                v.mdev = m.saturating_mul(2);
                v.rttvar = v.mdev.max(min);
                v.mdev_max = v.rttvar;
                v.rtt_seq = snd_nxt;
                r
            }
            Some(srtt) => {
                let err = m - i64::try_from(srtt.0).unwrap_or(i64::MAX);
                let mut d = err.abs() - v.mdev / 4;
                if err < 0 && d > 0 {
                    // The RTT fell: a rise of the deviation counts 1/8 as much.
                    d /= 8;
                }
                v.mdev += d;
                if v.mdev > v.mdev_max {
                    v.mdev_max = v.mdev;
                    v.rttvar = v.rttvar.max(v.mdev_max);
                }
                if snd_una > v.rtt_seq {
                    // A round trip ended: decay toward its largest deviation.
                    if v.mdev_max < v.rttvar {
                        v.rttvar -= (v.rttvar - v.mdev_max) / 4;
                    }
                    v.rtt_seq = snd_nxt;
                    v.mdev_max = min;
                }
                Time((7 * srtt.0 + r.0) / 8)
            }
        };
        self.srtt = Some(srtt);
        self.rttvar = Time(v.rttvar.max(0) as u64);
        self.base_rto = (srtt + self.rttvar).min(self.max_rto);
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

    /// The least smoothed RTT so far ([`RttEstimator::smoothed`] after
    /// each sample): ns-3's `m_minRtt` (`EstimateRtt`: `min(m_srtt,
    /// m_minRtt)`, tcp-socket-base.cc line 3804 at ns-3.44), which screens
    /// its rate samples.
    pub fn min_smoothed(&self) -> Option<Time> {
        self.min_exact
    }

    /// RTT variation: RFC 6298's RTTVAR, or Linux's `rttvar` (the whole
    /// term added to SRTT, ≥ `min_rto`).
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

    fn linux() -> RttEstimator {
        RttEstimator::linux(ms(1000), ms(200), ms(120_000))
    }

    /// Linux's RTO is SRTT + rttvar with rttvar ≥ min_rto: with a steady RTT
    /// (a standing queue) RFC 6298's 4·RTTVAR decays to nothing and its RTO
    /// to SRTT (floored at min_rto only below 200 ms), while Linux's stays
    /// SRTT + 200 ms (issue 33, finding `early-rto`).
    #[test]
    fn linux_keeps_min_rto_above_srtt() {
        let (mut rfc, mut lin) = (est(), linux());
        assert_eq!(lin.rto(), ms(1000), "initial RTO before a sample");
        // First sample 450 ms: srtt 450, mdev 900, rttvar = max(900, 200):
        // RTO = 3 × 450 ms, as RFC 6298's 450 + 4·225.
        lin.set_sequence(0, 10_000);
        lin.sample(ms(450));
        rfc.sample(ms(450));
        assert_eq!((lin.srtt(), lin.rto()), (Some(ms(450)), ms(1350)));
        assert_eq!(rfc.rto(), ms(1350));
        // A steady 450 ms, one sample per round trip (snd_una passes the
        // snd_nxt of the round trip's start each time).
        for k in 1..200u64 {
            lin.set_sequence(k * 10_000 + 1, (k + 1) * 10_000);
            lin.sample(ms(450));
            rfc.sample(ms(450));
        }
        assert_eq!(rfc.rto(), Time::from_micros(451_000), "SRTT + G");
        assert_eq!(lin.srtt(), Some(ms(450)));
        // rttvar decays toward min_rto by a quarter of the distance per round
        // trip (in whole nanoseconds: it stops within 3 ns), never below.
        let excess = lin.rttvar().saturating_sub(ms(200));
        assert!(
            lin.rttvar() >= ms(200) && excess < Time(4),
            "{:?}",
            lin.rttvar()
        );
        assert_eq!(lin.rto(), ms(650) + excess);
        // A short RTT: RTO = RTT + 200 ms where RFC 6298 floors at 200 ms.
        let (mut rfc, mut lin) = (est(), linux());
        for k in 0..200u64 {
            lin.set_sequence(k * 10 + 1, (k + 1) * 10);
            lin.sample(ms(10));
            rfc.sample(ms(10));
        }
        assert_eq!((rfc.rto(), lin.rto()), (ms(200), ms(210)));
    }

    /// Linux's rttvar rises at once with the per-round-trip maximum of mdev
    /// and falls only at the end of a round trip (snd_una past `rtt_seq`),
    /// by a quarter of its distance to that maximum; a fall of the RTT raises
    /// mdev at 1/8 of the gain (`tcp_rtt_estimator`).
    #[test]
    fn linux_rttvar_moves_once_per_round_trip() {
        let mut e = linux();
        e.set_sequence(0, 1000);
        e.sample(ms(100)); // srtt 100, mdev 200, rttvar = mdev_max = 200, rtt_seq 1000
        e.set_sequence(500, 2000);
        e.sample(ms(300)); // err +200: mdev = 200 + (200 − 50) = 350 = mdev_max = rttvar
        assert_eq!(e.srtt(), Some(Time::from_micros(125_000)));
        assert_eq!(e.rttvar(), ms(350));
        assert_eq!(e.rto(), Time::from_micros(475_000));
        // Same round trip (snd_una 900 ≤ rtt_seq 1000): mdev falls, rttvar stays.
        e.set_sequence(900, 2000);
        e.sample(ms(125)); // err 0: mdev = 350 − 87.5 = 262.5
        assert_eq!(e.rttvar(), ms(350));
        // The round trip ends (snd_una 1500 > 1000): mdev 262.5 − 65.625 =
        // 196.875 is below mdev_max (350), which equals rttvar: no decay; the
        // maximum restarts at min_rto (200) and rtt_seq at 3000.
        e.set_sequence(1500, 3000);
        e.sample(ms(125));
        assert_eq!(e.rttvar(), ms(350));
        // The next round trip's largest mdev stays below 200: at its end
        // rttvar decays by (350 − 200)/4 = 37.5 ms.
        e.set_sequence(2000, 4000);
        e.sample(ms(125));
        assert_eq!(e.rttvar(), ms(350));
        e.set_sequence(3500, 5000);
        e.sample(ms(125));
        assert_eq!(e.rttvar(), Time::from_micros(312_500));
        // A falling RTT: |err| − mdev/4 > 0 counts 1/8 (Linux's Eifel-like rule).
        let mut f = linux();
        f.set_sequence(0, 1000);
        f.sample(ms(400)); // mdev 800
        f.sample(ms(40)); // err −360: 360 − 200 = 160, /8 = 20: mdev 820
        assert_eq!(f.rttvar(), ms(820));
        // The back-off doubles as RFC 6298's and a sample clears it.
        let before = f.rto();
        f.backoff();
        assert_eq!(f.rto(), Time(2 * before.0));
        f.sample(ms(40));
        assert_eq!(f.backoff_count(), 0);
    }

    proptest::proptest! {
        /// Whatever the samples and however the round trips fall, Linux's
        /// RTO is SRTT + rttvar with rttvar ≥ min_rto, capped at max_rto.
        #[test]
        fn linux_rto_is_at_least_srtt_plus_min_rto(
            samples in proptest::collection::vec((1u64..3000, 0u64..3), 1..80),
            min_ms in 1u64..1000,
        ) {
            let mut e = RttEstimator::linux(ms(1000), ms(min_ms), ms(60_000));
            let (mut una, mut nxt) = (0u64, 0u64);
            for (r, step) in samples {
                una += step * 1000;
                nxt = nxt.max(una) + 1000;
                e.set_sequence(una, nxt);
                e.sample(ms(r));
                let srtt = e.srtt().unwrap();
                proptest::prop_assert!(e.rttvar() >= ms(min_ms));
                proptest::prop_assert_eq!(e.rto(), (srtt + e.rttvar()).min(ms(60_000)));
            }
        }
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
