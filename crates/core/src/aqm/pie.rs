//! PIE, Proportional Integral controller Enhanced (RFC 8033): drops (or
//! marks) arrivals with a probability that a PI controller updates every
//! `tupdate` from the queueing delay. See docs/models/pie.md.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Aqm, AqmConfig, DequeueVerdict, DropCause, Limit, QueueView, Verdict};
use crate::config::{ConfigError, Result};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// `queue = { kind = "pie", … }`: every key optional, defaults from RFC 8033
/// (ns-3 `PieQueueDisc` attribute on each key).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    /// Capacity: packets or bytes. Default `"1000p"` (Linux `sch_pie`; ns-3 `MaxSize` 25p).
    #[serde(default)]
    pub limit: Option<Limit>,
    /// QDELAY_REF, the target queueing delay, > 0 (ns-3 `QueueDelayReference`). Default "15ms".
    #[serde(default = "defaults::target")]
    pub target: Time,
    /// T_UPDATE, the period of the probability update, > 0 (ns-3 `Tupdate`). Default "15ms".
    #[serde(default = "defaults::tupdate")]
    pub tupdate: Time,
    /// α, Hz, ≥ 0 (ns-3 `A`). Default 0.125.
    #[serde(default = "defaults::alpha")]
    #[schemars(range(min = 0))]
    pub alpha: f64,
    /// β, Hz, ≥ 0 (ns-3 `B`). Default 1.25.
    #[serde(default = "defaults::beta")]
    #[schemars(range(min = 0))]
    pub beta: f64,
    /// MAX_BURST, the burst allowance (ns-3 `MaxBurstAllowance`). Default "150ms".
    #[serde(default = "defaults::max_burst")]
    pub max_burst: Time,
    /// Mark ECN-capable packets instead of dropping while the probability is at
    /// most `mark_ecn_threshold` (ns-3 `UseEcn`). Default false.
    #[serde(default)]
    pub ecn: bool,
    /// Highest drop probability at which ECN marks replace drops, in [0, 1]
    /// (ns-3 `MarkEcnThreshold`). Default 0.1.
    #[serde(default = "defaults::mark_ecn_threshold")]
    #[schemars(range(min = 0, max = 1))]
    pub mark_ecn_threshold: f64,
    /// De-randomization (RFC 8033 §5.1; ns-3 `UseDerandomization`). Default false.
    #[serde(default)]
    pub derandomize: bool,
    /// Cap the increase to 2 % per update above 10 % (§5.2; ns-3
    /// `UseCapDropAdjustment`). Default true.
    #[serde(default = "defaults::yes")]
    pub cap_drop_adjustment: bool,
    /// MEAN_PKTSIZE: no early drop while at most twice this waits (ns-3
    /// `MeanPktSize` 1000). Default 1500 bytes.
    #[serde(default = "defaults::mean_pkt_size")]
    #[schemars(range(min = 1))]
    pub mean_pkt_size: u32,
}

/// The defaults of [`PieConfig`] for keys not written.
mod defaults {
    use crate::time::Time;

    pub fn target() -> Time {
        Time::from_millis(15)
    }
    pub fn tupdate() -> Time {
        Time::from_millis(15)
    }
    pub fn alpha() -> f64 {
        0.125
    }
    pub fn beta() -> f64 {
        1.25
    }
    pub fn max_burst() -> Time {
        Time::from_millis(150)
    }
    pub fn mark_ecn_threshold() -> f64 {
        0.1
    }
    pub fn yes() -> bool {
        true
    }
    pub fn mean_pkt_size() -> u32 {
        1500
    }
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            limit: None,
            target: defaults::target(),
            tupdate: defaults::tupdate(),
            alpha: defaults::alpha(),
            beta: defaults::beta(),
            max_burst: defaults::max_burst(),
            ecn: false,
            mark_ecn_threshold: defaults::mark_ecn_threshold(),
            derandomize: false,
            cap_drop_adjustment: true,
            mean_pkt_size: defaults::mean_pkt_size(),
        }
    }
}

impl AqmConfig for PieConfig {
    fn limit(&self) -> Option<Limit> {
        self.limit
    }

    fn default_limit(&self) -> Limit {
        Limit::Packets(1000)
    }

    fn validate_under(&self, _limit: Limit) -> Result<()> {
        for (key, t) in [("target", self.target), ("tupdate", self.tupdate)] {
            if t == Time::ZERO {
                return Err(ConfigError::new(
                    key,
                    "\"0s\"",
                    "is zero; it must be positive",
                ));
            }
        }
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ConfigError::new(
                    key,
                    v.to_string(),
                    "is out of range; allowed: a finite number ≥ 0",
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.mark_ecn_threshold) {
            return Err(ConfigError::new(
                "mark_ecn_threshold",
                self.mark_ecn_threshold.to_string(),
                "is out of range; allowed: 0 to 1",
            ));
        }
        Ok(())
    }

    fn build(&self, _rate_bps: u64) -> Box<dyn Aqm> {
        Box::new(Pie::new(self.clone()))
    }
}

/// PIE's state (RFC 8033 §4).
#[derive(Clone, Debug)]
pub struct Pie {
    cfg: PieConfig,
    drop_prob: f64,
    /// The queueing delay at the last update (`qdelay_old`).
    qdelay_old: Time,
    /// The current queueing delay: the sojourn of the last packet dequeued.
    qdelay: Time,
    burst_allowance: Time,
    /// De-randomization accumulator.
    accu_prob: f64,
    /// The next update instant.
    next_update: Time,
}

impl Pie {
    /// PIE with `cfg`, idle; updates run at 0, tupdate, 2·tupdate, ….
    pub fn new(cfg: PieConfig) -> Pie {
        Pie {
            burst_allowance: cfg.max_burst,
            cfg,
            drop_prob: 0.0,
            qdelay_old: Time::ZERO,
            qdelay: Time::ZERO,
            accu_prob: 0.0,
            next_update: Time::ZERO,
        }
    }

    /// The drop probability now.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// Run every periodic update due by `now` (RFC 8033 §4.2 and §5.2): the
    /// timer of the RFC, evaluated when the queue next sees PIE.
    fn catch_up(&mut self, now: Time) {
        while self.next_update <= now {
            self.update();
            self.next_update += self.cfg.tupdate;
        }
    }

    /// One `calculate_drop_prob` (RFC 8033 §4.2, with §5.2's scaling).
    fn update(&mut self) {
        let ref_s = self.cfg.target.as_secs_f64();
        let q = self.qdelay.as_secs_f64();
        let old = self.qdelay_old.as_secs_f64();
        let mut p = self.cfg.alpha * (q - ref_s) + self.cfg.beta * (q - old);
        // §5.2: small increments while the probability is small.
        let scale = [
            (0.000_001, 2048.0),
            (0.000_01, 512.0),
            (0.000_1, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ]
        .into_iter()
        .find(|&(bound, _)| self.drop_prob < bound)
        .map_or(1.0, |(_, s)| s);
        p /= scale;
        if self.cfg.cap_drop_adjustment && self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        // Exponential decay while the queue stays empty.
        if self.qdelay == Time::ZERO && self.qdelay_old == Time::ZERO {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4 burst allowance.
        self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.tupdate);
        let half = Time(self.cfg.target.0 / 2);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = self.cfg.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// RFC 8033 §4.1 `drop_early`.
    fn drop_early(&mut self, q: &QueueView, rng: &mut Rng) -> bool {
        if self.burst_allowance > Time::ZERO {
            return false;
        }
        let half = Time(self.cfg.target.0 / 2);
        if self.qdelay_old < half && self.drop_prob < 0.2 {
            return false;
        }
        if q.bytes <= 2 * u64::from(self.cfg.mean_pkt_size) {
            return false;
        }
        if self.cfg.derandomize {
            // §5.1: drops no sooner than after 0.85/p and no later than 8.5/p packets.
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                self.accu_prob = 0.0;
                return true;
            }
        }
        let drop = rng.uniform() < self.drop_prob;
        if drop {
            self.accu_prob = 0.0;
        }
        drop
    }
}

impl Aqm for Pie {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn on_tick(&mut self, now: Time, _q: &QueueView) {
        self.catch_up(now);
    }

    fn on_arrival(&mut self, now: Time, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict {
        self.catch_up(now);
        if !self.drop_early(q, rng) {
            return Verdict::Accept;
        }
        if self.cfg.ecn && pkt.ecn != Ecn::NotEct && self.drop_prob <= self.cfg.mark_ecn_threshold {
            Verdict::Mark
        } else {
            Verdict::Drop(DropCause::AqmEarly)
        }
    }

    fn wants_sojourn(&self) -> bool {
        true
    }

    /// Timestamps give the queueing delay (RFC 8033 §5.3, ns-3's default):
    /// the sojourn of the packet leaving, or 0 when it leaves the queue
    /// empty (Linux `pie_process_dequeue`: `if (backlog == 0) qdelay = 0`;
    /// ns-3 `DoDequeue`: `if (GetNBytes () == 0) m_qDelay = 0`). Without
    /// the reset the last sojourn stood for the delay of an empty queue
    /// through every idle period and the updates kept raising the
    /// probability toward 1 (docs/models/pie.md, Validation).
    fn on_dequeue(
        &mut self,
        now: Time,
        sojourn: Time,
        q: &QueueView,
        _pkt: &Packet,
    ) -> DequeueVerdict {
        self.catch_up(now);
        self.qdelay = if q.bytes == 0 { Time::ZERO } else { sojourn };
        DequeueVerdict::Deliver
    }

    fn on_empty(&mut self, now: Time) {
        self.catch_up(now);
        self.qdelay = Time::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time::from_millis(v)
    }

    /// RFC 8033 §4.2 by hand: from p = 0 with qdelay 30 ms (old 0):
    /// α·(0.030 − 0.015) + β·0.030 = 0.001875 + 0.0375 = 0.039375, scaled
    /// by 1/2048 (p < 10⁻⁶) = 1.922607e-5; next update with the same 30 ms:
    /// α·0.015 = 0.001875, p now < 10⁻⁴ → /128 = 1.4648e-5, total 3.3875e-5.
    #[test]
    fn rfc8033_probability_updates_by_hand() {
        let mut pie = Pie::new(PieConfig::default());
        pie.qdelay = ms(30);
        pie.update();
        assert!(
            (pie.drop_prob() - 0.039375 / 2048.0).abs() < 1e-15,
            "{}",
            pie.drop_prob()
        );
        pie.update();
        let expect = 0.039375 / 2048.0 + 0.001875 / 128.0;
        assert!(
            (pie.drop_prob() - expect).abs() < 1e-15,
            "{}",
            pie.drop_prob()
        );
    }

    /// Above 10 %, an increase is capped at 2 % per update (§5.2).
    #[test]
    fn rfc8033_cap_above_ten_percent() {
        let mut pie = Pie::new(PieConfig::default());
        pie.drop_prob = 0.5;
        pie.qdelay_old = ms(15);
        pie.qdelay = ms(200);
        pie.update();
        assert!((pie.drop_prob() - 0.52).abs() < 1e-12);
        let mut uncapped = Pie::new(PieConfig {
            cap_drop_adjustment: false,
            ..PieConfig::default()
        });
        uncapped.drop_prob = 0.5;
        uncapped.qdelay_old = ms(15);
        uncapped.qdelay = ms(200);
        uncapped.update();
        assert!(uncapped.drop_prob() > 0.7);
    }

    /// An empty queue decays the probability by 2 % per update; the burst
    /// allowance counts down by tupdate and is restored when all is quiet.
    #[test]
    fn decay_and_burst_allowance() {
        let mut pie = Pie::new(PieConfig::default());
        pie.drop_prob = 0.01;
        pie.update();
        // α·(0 − 0.015) = −0.001875, halved (p < 0.1), then ×0.98.
        let expect = (0.01 - 0.001875 / 2.0) * 0.98;
        assert!(
            (pie.drop_prob() - expect).abs() < 1e-15,
            "{}",
            pie.drop_prob()
        );
        let mut b = Pie::new(PieConfig::default());
        assert_eq!(b.burst_allowance, ms(150));
        b.qdelay = ms(20);
        b.update();
        assert_eq!(b.burst_allowance, ms(135));
        for _ in 0..20 {
            b.update();
        }
        assert_eq!(b.burst_allowance, Time::ZERO);
    }

    /// Updates run on the tupdate grid however the queue is visited.
    #[test]
    fn updates_follow_the_timer_grid() {
        let mut pie = Pie::new(PieConfig::default());
        pie.catch_up(ms(44));
        assert_eq!(pie.next_update, ms(45), "updates at 0, 15, 30 ms");
        pie.catch_up(ms(45));
        assert_eq!(pie.next_update, ms(60));
    }

    /// The dequeue that leaves the queue empty sets the delay to 0 (Linux
    /// `pie_process_dequeue`, ns-3 `DoDequeue`), so an idle queue lets the
    /// probability decay. The minimal case of the trace-link collapse
    /// (docs/models/pie.md, Validation): a standing queue of 30 ms for
    /// 300 ms, then the queue drains and the link idles for 2 s. With the
    /// last sojourn kept as the delay of the empty queue, every update of
    /// the idle time raised the probability (to 1 within the 2 s) and the
    /// next arrivals were dropped as soon as 3 packets waited.
    #[test]
    fn an_emptied_queue_has_no_delay() {
        let pkt = Packet {
            payload: 1460,
            header: 40,
            ..Packet::default()
        };
        let waiting = QueueView {
            packets: 20,
            bytes: 30_000,
            limit: Limit::Packets(1000),
        };
        let empty = QueueView {
            packets: 0,
            bytes: 0,
            ..waiting
        };
        let mut pie = Pie::new(PieConfig::default());
        for t in 0..300 {
            pie.on_dequeue(ms(t), ms(30), &waiting, &pkt);
        }
        pie.on_dequeue(ms(300), ms(30), &empty, &pkt);
        assert_eq!(pie.qdelay, Time::ZERO, "the dequeue emptied the queue");
        let busy = pie.drop_prob();
        assert!(busy > 0.0);
        pie.catch_up(ms(2300));
        assert!(
            pie.drop_prob() < busy / 10.0,
            "2 s of an empty queue took p from {busy} to {}",
            pie.drop_prob()
        );
        assert_eq!(pie.burst_allowance, PieConfig::default().max_burst);
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |c: PieConfig| c.validate_under(Limit::Packets(10)).unwrap_err().path;
        assert_eq!(
            bad(PieConfig {
                tupdate: Time::ZERO,
                ..PieConfig::default()
            }),
            "tupdate"
        );
        assert_eq!(
            bad(PieConfig {
                mark_ecn_threshold: 2.0,
                ..PieConfig::default()
            }),
            "mark_ecn_threshold"
        );
        assert_eq!(
            bad(PieConfig {
                alpha: -1.0,
                ..PieConfig::default()
            }),
            "alpha"
        );
    }

    proptest::proptest! {
        /// The probability stays in [0, 1] under any sequence of delays.
        #[test]
        fn probability_is_a_probability(delays in proptest::collection::vec(0u64..2000, 1..400)) {
            let mut pie = Pie::new(PieConfig::default());
            for d in delays {
                pie.qdelay = ms(d);
                pie.update();
                proptest::prop_assert!((0.0..=1.0).contains(&pie.drop_prob()));
            }
        }
    }
}
