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
    /// The burst allowance's rules: "rfc8033" (RFC 8033 §4.4 and Linux
    /// `sch_pie`: the allowance only bypasses the early drop, the
    /// probability is updated every `tupdate`, and it is restored whenever
    /// the queue is quiet) or "ns3" (ns-3.44's `PieQueueDisc`: the
    /// probability is held at 0 while the allowance lasts, and the
    /// allowance is armed by the first arrival after 1.5 s of quiet).
    /// Default "rfc8033".
    #[serde(default)]
    pub burst_rule: BurstRule,
}

/// `queue = { kind = "pie", burst_rule = … }`: whose burst-allowance rules PIE follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BurstRule {
    /// RFC 8033 §4.2 and §4.4, Linux `sch_pie`: the probability runs every
    /// `tupdate` whatever the allowance, which only bypasses `drop_early`;
    /// the allowance starts at `max_burst` and is restored to it at every
    /// update that finds p = 0 and both delays below half the target.
    #[default]
    Rfc8033,
    /// ns-3.44's `PieQueueDisc` (`src/traffic-control/model/pie-queue-disc.cc`
    /// at tag ns-3.44): `CalculateP` sets p to 0 while the allowance is
    /// above 0 (lines 344–347); the allowance starts at 0 and is armed
    /// (`max_burst`) by the first arrival that finds the burst state
    /// NO_BURST (`DropEarly`, 273–277), which it reaches again only after
    /// `1.5 s / tupdate` consecutive quiet updates (p = 0, both delays below
    /// half the target, no allowance left; 423–453).
    Ns3,
}

/// ns-3.44's burst state (`BurstStateT`), with [`BurstRule::Ns3`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BurstState {
    /// `NO_BURST`: the next arrival arms the allowance.
    NoBurst,
    /// `IN_BURST_PROTECTING`: the allowance is armed (or being spent).
    Protecting,
    /// `IN_BURST`: spent; counting quiet updates towards NO_BURST.
    InBurst,
}

/// ns-3's `BURST_RESET_TIMEOUT`: quiet seconds before the allowance can be armed again.
const NS3_BURST_RESET_TIMEOUT_S: f64 = 1.5;

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
            burst_rule: BurstRule::Rfc8033,
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
        // Every update runs (the RFC's timer, caught up when the queue next sees
        // PIE): a run costs duration / tupdate updates, and "1ns" made a 2 s run
        // two billion of them (it never ended). One update per microsecond at
        // most is as many as a 10 Gbit/s link has packets.
        if self.tupdate < MIN_TUPDATE {
            return Err(ConfigError::new(
                "tupdate",
                format!("\"{}ns\"", self.tupdate.as_nanos()),
                "is below 1 µs; allowed: an update period of at least \"1us\" (RFC 8033: 15 ms)",
            ));
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

/// The shortest update period `tupdate` accepted (1 µs).
pub const MIN_TUPDATE: Time = Time::from_nanos(1_000);

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
    /// With [`BurstRule::Ns3`]: ns-3's burst state and its count of quiet updates.
    burst_state: BurstState,
    burst_reset: u32,
}

impl Pie {
    /// PIE with `cfg`, idle; updates run at 0, tupdate, 2·tupdate, ….
    pub fn new(cfg: PieConfig) -> Pie {
        Pie {
            // ns-3's `m_burstAllowance` starts at 0 (armed by the first arrival).
            burst_allowance: match cfg.burst_rule {
                BurstRule::Rfc8033 => cfg.max_burst,
                BurstRule::Ns3 => Time::ZERO,
            },
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
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

    /// One `calculate_drop_prob` (RFC 8033 §4.2, with §5.2's scaling), or
    /// ns-3.44's `CalculateP` with [`BurstRule::Ns3`].
    fn update(&mut self) {
        let ns3 = self.cfg.burst_rule == BurstRule::Ns3;
        if ns3 && self.burst_allowance > Time::ZERO {
            // ns-3.44 (pie-queue-disc.cc 344–347): no probability while
            // the allowance lasts.
            self.drop_prob = 0.0;
        } else {
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
        }
        // Exponential decay while the queue stays empty.
        if self.qdelay == Time::ZERO && self.qdelay_old == Time::ZERO {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        // §4.4 burst allowance.
        self.burst_allowance = self.burst_allowance.saturating_sub(self.cfg.tupdate);
        let half = Time(self.cfg.target.0 / 2);
        let quiet = self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half;
        if !ns3 {
            if quiet {
                self.burst_allowance = self.cfg.max_burst;
            }
        } else if quiet && self.burst_allowance == Time::ZERO {
            // ns-3.44 (423–453): the allowance spent and the queue quiet,
            // PROTECTING → IN_BURST, then NO_BURST after more than
            // 1.5 s / tupdate such updates in a row.
            // ns-3's `Time::GetSeconds` divides the nanoseconds by 1e9 (1.5 s /
            // 15 ms is then exactly 100).
            let tupdate_s = self.cfg.tupdate.as_nanos() as f64 / 1e9;
            let limit = (NS3_BURST_RESET_TIMEOUT_S / tupdate_s) as u32;
            match self.burst_state {
                BurstState::Protecting => {
                    self.burst_state = BurstState::InBurst;
                    self.burst_reset = 0;
                }
                BurstState::InBurst => {
                    self.burst_reset += 1;
                    if self.burst_reset > limit {
                        self.burst_reset = 0;
                        self.burst_state = BurstState::NoBurst;
                    }
                }
                BurstState::NoBurst => {}
            }
        } else if self.burst_state == BurstState::InBurst {
            self.burst_reset = 0;
        }
        self.qdelay_old = self.qdelay;
    }

    /// RFC 8033 §4.1 `drop_early`.
    fn drop_early(&mut self, q: &QueueView, rng: &mut Rng) -> bool {
        if self.burst_allowance > Time::ZERO {
            return false;
        }
        if self.cfg.burst_rule == BurstRule::Ns3 && self.burst_state == BurstState::NoBurst {
            // ns-3.44 `DropEarly` (273–277): the first arrival after a
            // quiet spell arms the allowance, and is itself still tested.
            self.burst_state = BurstState::Protecting;
            self.burst_allowance = self.cfg.max_burst;
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
        let full = match q.limit {
            Limit::Packets(n) => q.packets >= n,
            Limit::Bytes(b) => q.bytes + u64::from(pkt.size()) > b,
        };
        if self.cfg.burst_rule == BurstRule::Ns3 && full {
            // ns-3.44's `DoEnqueue` drops an arrival that does not fit
            // before `DropEarly`, which it never reaches (the allowance is
            // not armed by it).
            return Verdict::Accept;
        }
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

    /// ns-3.44's burst rule against RFC 8033's, from the same start: a
    /// standing 30-ms queue behind an arrival at 0. RFC 8033 raises p from
    /// the first update (the allowance only bypasses the drop); ns-3 holds
    /// p at 0 for the 150-ms allowance the arrival armed after the update
    /// at 0 (the 10 updates at 15, …, 150 ms find it above 0), then runs
    /// the same controller from p = 0 at 165 ms.
    #[test]
    fn ns3_burst_rule_holds_p_at_zero_while_the_allowance_lasts() {
        let pkt = Packet {
            payload: 1460,
            header: 40,
            ..Packet::default()
        };
        let q = QueueView {
            packets: 20,
            bytes: 30_000,
            limit: Limit::Packets(1000),
        };
        let ns3_cfg = PieConfig {
            burst_rule: BurstRule::Ns3,
            ..PieConfig::default()
        };
        let mut rng = Rng::stream(1, "pie");
        let mut rfc = Pie::new(PieConfig::default());
        let mut ns3 = Pie::new(ns3_cfg);
        assert_eq!(ns3.burst_allowance, Time::ZERO, "ns-3 starts unarmed");
        for pie in [&mut rfc, &mut ns3] {
            assert_eq!(pie.on_arrival(ms(0), &q, &pkt, &mut rng), Verdict::Accept);
            pie.qdelay = ms(30);
        }
        assert_eq!(ns3.burst_allowance, ms(150), "the first arrival armed it");
        assert_eq!(ns3.burst_state, BurstState::Protecting);
        rfc.catch_up(ms(160));
        ns3.catch_up(ms(160));
        assert!(rfc.drop_prob() > 0.0);
        assert_eq!(ns3.drop_prob(), 0.0, "held while the allowance lasts");
        assert_eq!(ns3.burst_allowance, Time::ZERO);
        ns3.catch_up(ms(165));
        let first = 0.125 * 0.015 / 2048.0; // α·(30 − 15 ms), β·0 (old = 30 ms), /2048
        assert!(
            (ns3.drop_prob() - first).abs() < 1e-15,
            "{}",
            ns3.drop_prob()
        );
    }

    /// ns-3.44 arms the allowance again only after the queue has been quiet
    /// for more than 1.5 s / tupdate = 100 updates (IN_BURST → NO_BURST at
    /// the 101st), where RFC 8033 restores it at the first quiet update.
    #[test]
    fn ns3_burst_rule_rearms_after_a_quiet_1_5_s() {
        let pkt = Packet {
            payload: 1460,
            header: 40,
            ..Packet::default()
        };
        let q = QueueView {
            packets: 0,
            bytes: 0,
            limit: Limit::Packets(1000),
        };
        let mut rng = Rng::stream(1, "pie");
        let mut pie = Pie::new(PieConfig {
            burst_rule: BurstRule::Ns3,
            ..PieConfig::default()
        });
        pie.on_arrival(ms(0), &q, &pkt, &mut rng);
        // Updates at 0..=135 ms spend the allowance; the one at 150 ms
        // finds it spent and the queue quiet: PROTECTING → IN_BURST.
        pie.catch_up(ms(150));
        assert_eq!(pie.burst_state, BurstState::InBurst);
        // 100 more quiet updates (165 … 1650 ms) count up to the limit.
        pie.catch_up(ms(1650));
        assert_eq!(
            (pie.burst_state, pie.burst_reset),
            (BurstState::InBurst, 100)
        );
        pie.on_arrival(ms(1651), &q, &pkt, &mut rng);
        assert_eq!(pie.burst_allowance, Time::ZERO, "not armed yet");
        pie.catch_up(ms(1665));
        assert_eq!(pie.burst_state, BurstState::NoBurst);
        pie.on_arrival(ms(1666), &q, &pkt, &mut rng);
        assert_eq!(pie.burst_allowance, ms(150), "armed by the next arrival");
        // A delay above half the target restarts the count in IN_BURST.
        let mut busy = Pie::new(PieConfig {
            burst_rule: BurstRule::Ns3,
            ..PieConfig::default()
        });
        busy.on_arrival(ms(0), &q, &pkt, &mut rng);
        busy.catch_up(ms(600));
        assert!(busy.burst_reset > 0);
        busy.qdelay = ms(10);
        busy.catch_up(ms(615));
        assert_eq!(
            (busy.burst_state, busy.burst_reset),
            (BurstState::InBurst, 0)
        );
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
        // "1ns" passed and the run never ended (issue 33 soak).
        assert_eq!(
            bad(PieConfig {
                tupdate: Time::from_nanos(999),
                ..PieConfig::default()
            }),
            "tupdate"
        );
        assert!(PieConfig {
            tupdate: MIN_TUPDATE,
            ..PieConfig::default()
        }
        .validate_under(Limit::Packets(10))
        .is_ok());
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
