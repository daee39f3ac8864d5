//! Random Early Detection (Floyd & Jacobson 1993), with the "gentle" variant,
//! ECN marking (RFC 3168), byte mode and an instantaneous-queue mode.
//!
//! The algorithm is the one of Figure 2 of the paper:
//!
//! * On every arrival the average queue size is updated,
//!   `avg ← (1−wq)·avg + wq·q`. If the queue has been idle since `idle_since`
//!   the average is first decayed as if `m = (now − idle_since)/s` small packets
//!   had been transmitted meanwhile, `avg ← (1−wq)^m·avg`, with
//!   `s = mean_pkt_size·8 / link_rate_bps` (m is fractional here).
//! * `count` starts at −1. For `min_th ≤ avg < max_th`: `count += 1`,
//!   `pb = max_p·(avg−min_th)/(max_th−min_th)` (× size/mean_pkt_size in byte
//!   mode), `pa = pb/(1−count·pb)` (1 once `count·pb ≥ 1`); with probability
//!   `pa` the packet is marked (ECN) or dropped early and `count = 0`.
//! * Gentle: for `max_th ≤ avg < 2·max_th`,
//!   `pb = max_p + (1−max_p)(avg−max_th)/max_th`, with the same spacing.
//! * At or above `2·max_th` (gentle) or `max_th` (not gentle) every packet is
//!   acted on (forced): dropped if `hard_drop` or the packet is not ECN-capable,
//!   otherwise marked.
//! * Below `min_th`: `count = −1`, accept.
//!
//! Note on spacing: with `count` reset to 0 after an action (as in the paper's
//! Figure 2, ns-2 and ns-3), the n-th arrival after an action is acted on with
//! probability `pb/(1−n·pb)`, so the gap between actions is uniform on
//! `1..=⌈1/pb⌉−1`, mean ≈ `1/(2·pb)`; only the first action after `avg` rises
//! above `min_th` (count from −1) sees `pa = pb` first.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_threshold, Aqm, AqmConfig, DropCause, Limit, QueueView, Verdict};
use crate::config::{ConfigError, Result};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::Time;

/// A RED queue: its capacity and the RED parameters (`kind = "red"`).
/// Thresholds are in the queue's unit: packets for a packet limit, bytes for
/// a byte limit (see [`QueueView::occupancy`]).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Capacity: packets `"100p"` or bytes `"150kB"`. Default `"100p"`.
    #[serde(default)]
    pub limit: Option<Limit>,
    /// Lower threshold on the average queue size: no early action below it
    /// (`minth`, required; at most the limit).
    #[serde(rename = "minth")]
    pub min_th: f64,
    /// Upper threshold: the early-action probability reaches `max_p` here
    /// (`maxth`, required; above `minth`).
    #[serde(rename = "maxth")]
    pub max_th: f64,
    /// Early-action probability at `max_th` (ns-3: 1/LInterm), in (0, 1]. Default 0.02.
    #[serde(rename = "maxp", default = "defaults::max_p")]
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub max_p: f64,
    /// Weight of the exponentially weighted moving average, in (0, 1]. Default 0.002.
    #[serde(default = "defaults::wq")]
    #[schemars(range(max = 1), extend("exclusiveMinimum" = 0))]
    pub wq: f64,
    /// Gentle RED: ramp the probability from `max_p` to 1 between `max_th` and
    /// `2·max_th` instead of jumping to forced action at `max_th`. Default true.
    #[serde(default = "defaults::yes")]
    pub gentle: bool,
    /// Mark ECN-capable packets (set CE) instead of dropping them early. Default false.
    #[serde(default)]
    pub ecn: bool,
    /// In the forced region drop even ECN-capable packets (ns-3 `UseHardDrop`). Default true.
    #[serde(default = "defaults::yes")]
    pub hard_drop: bool,
    /// Act on the instantaneous queue size instead of the average. Default false.
    #[serde(default)]
    pub instantaneous: bool,
    /// Scale `pb` by packet size / `mean_pkt_size` (byte mode). Default false.
    #[serde(default)]
    pub byte_mode: bool,
    /// Mean packet size in bytes (idle-time correction and byte mode), ≥ 1. Default 500.
    #[serde(default = "defaults::mean_pkt_size")]
    #[schemars(range(min = 1))]
    pub mean_pkt_size: u32,
    /// Link rate in bit/s, for the idle-time correction (set from the link).
    #[serde(skip, default = "defaults::link_rate_bps")]
    pub link_rate_bps: u64,
    /// Idle-time correction of the average: `"fractional"` decays it as if
    /// `m = idle/s` packets had left (m fractional, Floyd & Jacobson); `"ns2"`
    /// as ns-2's `red.cc` does, `m = int(ptc · idle)` (whole packets).
    /// Default `"fractional"`.
    #[serde(default)]
    pub idle: IdleDecay,
    /// ns-2's `red.cc` decision rules (as seed 003 ran RED): no early or
    /// forced action while the queue holds at most one packet; the first
    /// arrival after the average rises above `minth` sets `count = 1` and
    /// passes; `count` counts every arrival; and the `wait_` spacing
    /// `pa = pb/(2 − count·pb)`, 0 while `count·pb < 1`, 1 from
    /// `count·pb ≥ 2`. Default false (Floyd & Jacobson's Figure 2).
    #[serde(default)]
    pub ns2: bool,
    /// Under the ns-2 rules (`ns2 = true`), what resets `count` besides an
    /// early action: `"ns2"` — a forced action and an arrival that finds the
    /// queue full too (ns-2's `red.cc` with `ns1_compat_` off); `"ns3"` —
    /// nothing else (ns-3.44's `RedQueueDisc`, see [`CountReset::Ns3`]).
    /// Default `"ns2"`.
    #[serde(default)]
    pub count_reset: CountReset,
    /// Discard the oldest waiting packet instead of the arrival (for a radio
    /// bearer's buffer: the first SDU whose transmission has not started, as
    /// Slope Based Discard does), in the early and the forced region; an
    /// arrival at an empty queue is itself discarded. ECN marks still go to
    /// the arrival. Default false.
    #[serde(default)]
    pub drop_front: bool,
}

/// How RED decays its average over an idle period (`idle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IdleDecay {
    /// `(1 − wq)^m` with `m = idle / s` (fractional).
    #[default]
    Fractional,
    /// ns-2: `m = int(idle / s)`, whole packets only.
    Ns2,
}

/// Under the ns-2 rules, the events that reset RED's `count` besides an early
/// action (`count_reset`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CountReset {
    /// ns-2's `red.cc`: a forced drop (`avg` in the forced region, or an
    /// arrival that finds the queue full) resets `count` too, unless
    /// `ns1_compat_`.
    #[default]
    Ns2,
    /// ns-3.44's `RedQueueDisc` (`src/traffic-control/model/red-queue-disc.cc`,
    /// `DoEnqueue`): `m_count` is reset by an early action (`DropEarly`) and
    /// set to 1 at the first crossing only; a forced action resets it only
    /// with `Ns1Compat` (off by default: ns-2's condition inverted), and an
    /// arrival refused by the full internal queue leaves it (the limit is the
    /// internal queue's, after RED's decision). So while the queue overflows
    /// `count` keeps growing and marks go on.
    Ns3,
}

/// The defaults of [`RedConfig`] for keys not written.
mod defaults {
    use super::RedConfig;

    pub fn max_p() -> f64 {
        RedConfig::default().max_p
    }
    pub fn wq() -> f64 {
        RedConfig::default().wq
    }
    pub fn yes() -> bool {
        true
    }
    pub fn mean_pkt_size() -> u32 {
        RedConfig::default().mean_pkt_size
    }
    pub fn link_rate_bps() -> u64 {
        RedConfig::default().link_rate_bps
    }
}

impl Default for RedConfig {
    /// ns-3 `RedQueueDisc` defaults.
    fn default() -> Self {
        RedConfig {
            limit: None,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            wq: 0.002,
            gentle: true,
            ecn: false,
            hard_drop: true,
            instantaneous: false,
            byte_mode: false,
            mean_pkt_size: 500,
            link_rate_bps: 1_500_000,
            idle: IdleDecay::Fractional,
            ns2: false,
            count_reset: CountReset::Ns2,
            drop_front: false,
        }
    }
}

impl RedConfig {
    /// RED with thresholds `min_th` and `max_th`, the other parameters at
    /// their defaults (ns-3's).
    pub fn new(min_th: f64, max_th: f64) -> Self {
        RedConfig {
            min_th,
            max_th,
            ..RedConfig::default()
        }
    }

    /// Check the parameters; the error's path is the offending key.
    pub fn validate(&self) -> Result<()> {
        self.validate_under(self.limit.unwrap_or(super::QueueConfig::DEFAULT_LIMIT))
    }

    /// Threshold at and above which every packet is acted on.
    fn forced_th(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }
}

/// The probability `pa` that RED acts on an arriving packet of `pkt_size`
/// bytes, given the average queue size `avg` and `count` (already incremented
/// for this arrival: the number of arrivals since the last action, counting
/// from −1 when `avg` last rose above `min_th`).
///
/// 0 below `min_th`, 1 in the forced region; in between `pb/(1−count·pb)`, or 1
/// once `count·pb ≥ 1`.
pub fn drop_probability(cfg: &RedConfig, avg: f64, count: i64, pkt_size: u32) -> f64 {
    if avg < cfg.min_th {
        return 0.0;
    }
    if avg >= cfg.forced_th() {
        return 1.0;
    }
    let mut pb = if avg < cfg.max_th {
        cfg.max_p * (avg - cfg.min_th) / (cfg.max_th - cfg.min_th)
    } else {
        // Gentle region.
        cfg.max_p + (1.0 - cfg.max_p) * (avg - cfg.max_th) / cfg.max_th
    };
    if cfg.byte_mode {
        pb *= f64::from(pkt_size) / f64::from(cfg.mean_pkt_size.max(1));
    }
    if pb <= 0.0 {
        return 0.0;
    }
    let c = count as f64 * pb;
    if c >= 1.0 {
        1.0
    } else {
        (pb / (1.0 - c)).min(1.0)
    }
}

/// ns-2's early-drop probability (`calculate_p_new` then `modify_p` with
/// `wait_`): `pb` as [`drop_probability`], then 0 while `count·pb < 1`,
/// `pb/(2 − count·pb)` while `count·pb < 2`, else 1; byte mode scales after.
pub fn ns2_drop_probability(cfg: &RedConfig, avg: f64, count: i64, pkt_size: u32) -> f64 {
    let mut p = if cfg.gentle && avg >= cfg.max_th {
        cfg.max_p + (1.0 - cfg.max_p) * (avg - cfg.max_th) / cfg.max_th
    } else {
        cfg.max_p * (avg - cfg.min_th) / (cfg.max_th - cfg.min_th)
    }
    .min(1.0);
    let c = count as f64 * p;
    p = if c < 1.0 {
        0.0
    } else if c < 2.0 {
        p / (2.0 - c)
    } else {
        1.0
    };
    if cfg.byte_mode && p < 1.0 {
        p *= f64::from(pkt_size) / f64::from(cfg.mean_pkt_size.max(1));
    }
    p.min(1.0)
}

/// RED state.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    avg: f64,
    count: i64,
    /// ns-2's `old`: the average was above `minth` (with more than one
    /// packet queued) at the previous arrival.
    old: bool,
    idle: bool,
    idle_since: Time,
    /// Transmission time of a `mean_pkt_size` packet, seconds.
    s: f64,
    /// The last idle decay computed: (`m`, `(1 - wq)^m`); the same `m` gives
    /// the same bits either way.
    decay_memo: (f64, f64),
    /// `(1 - wq)^m` for the whole `m` below [`DECAY_TABLE`], each computed by
    /// `powf` on its first use (NaN until then).
    /// Under ns-2's decay `m` is a whole number of packet times and takes
    /// few values (the ns-2 LT-TCP set-up at PER 0.1: 95 357 decays, 110
    /// values, 99.4 % of them below 64), so nearly every idle decay is a
    /// lookup instead of a `powf` call (issue 38).
    decay_table: [f64; DECAY_TABLE],
}

/// How many whole `m` the idle-decay table holds.
const DECAY_TABLE: usize = 64;

impl AqmConfig for RedConfig {
    fn limit(&self) -> Option<Limit> {
        self.limit
    }

    fn validate_under(&self, limit: Limit) -> Result<()> {
        check_threshold("minth", self.min_th, Some(limit))?;
        check_threshold("maxth", self.max_th, None)?;
        if self.min_th >= self.max_th {
            return Err(ConfigError::new(
                "minth",
                self.min_th.to_string(),
                format!("is not below maxth ({}); need minth < maxth", self.max_th),
            ));
        }
        for (key, v) in [("maxp", self.max_p), ("wq", self.wq)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new(
                    key,
                    v.to_string(),
                    "is out of range; allowed: 0 < x ≤ 1",
                ));
            }
        }
        if self.mean_pkt_size == 0 {
            return Err(ConfigError::new(
                "mean_pkt_size",
                "0",
                "is out of range; allowed: ≥ 1 byte",
            ));
        }
        if self.count_reset == CountReset::Ns3 && !self.ns2 {
            return Err(ConfigError::new(
                "count_reset",
                "ns3",
                "applies to ns-2's decision rules only; set ns2 = true (or count_reset = \"ns2\")",
            ));
        }
        if self.link_rate_bps == 0 {
            return Err(ConfigError::at_key("", "the link rate must be positive"));
        }
        Ok(())
    }

    fn build(&self, rate_bps: u64) -> Box<dyn Aqm> {
        Box::new(Red::new(RedConfig {
            link_rate_bps: rate_bps,
            ..self.clone()
        }))
    }
}

impl Red {
    /// A RED policy with parameters `cfg` (assumed to pass [`RedConfig::validate`]).
    pub fn new(cfg: RedConfig) -> Red {
        let s = f64::from(cfg.mean_pkt_size) * 8.0 / (cfg.link_rate_bps.max(1) as f64);
        Red {
            cfg,
            avg: 0.0,
            count: -1,
            old: false,
            idle: true,
            idle_since: Time::ZERO,
            s,
            decay_memo: (0.0, 1.0),
            decay_table: [f64::NAN; DECAY_TABLE],
        }
    }

    /// The queue size RED last acted on: the average (or, in instantaneous
    /// mode, the queue size seen by the last arrival).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The parameters.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    fn update_avg(&mut self, now: Time, q: f64) {
        if self.cfg.instantaneous {
            self.avg = q;
            return;
        }
        let w = self.cfg.wq;
        if self.idle {
            let idle_for = secs_f64(now.saturating_sub(self.idle_since));
            let mut m = idle_for / self.s;
            if self.cfg.idle == IdleDecay::Ns2 {
                m = floor_nonnegative(m);
            }
            self.avg *= self.decay(m);
        }
        self.avg = (1.0 - w) * self.avg + w * q;
    }

    /// `(1 - wq)^m`: from [`Red::decay_memo`] when `m` repeats, else from
    /// [`Red::decay_table`] for a whole `m` below [`DECAY_TABLE`]; the bits
    /// of `powf` always.
    #[inline]
    fn decay(&mut self, m: f64) -> f64 {
        let w = self.cfg.wq;
        let (last, factor) = self.decay_memo;
        if m == last {
            return factor;
        }
        // `m` is never negative; below the table's end the signed cast
        // truncates exactly, so `m as i32 == m` holds for the whole `m` the
        // table serves (one instruction, where `as usize` of an `f64` is a
        // dozen on x86-64).
        // (A negative `m`, which cannot occur, would fail the index's bounds
        // check, never read a wrong entry.)
        let whole = m < DECAY_TABLE as f64 && f64::from(m as i32) == m;
        let factor = if whole {
            let i = m as i32 as usize;
            if self.decay_table[i].is_nan() {
                self.decay_table[i] = (1.0 - w).powf(m);
            }
            self.decay_table[i]
        } else {
            (1.0 - w).powf(m)
        };
        self.decay_memo = (m, factor);
        factor
    }

    /// ns-2's decision on an arrival (`ns2`), the average already updated.
    fn ns2_decide(&mut self, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict {
        let verdict = self.ns2_verdict(q, pkt, rng);
        // An arrival that finds the queue full is a forced drop in ns-2 (the
        // queue drops it here, as overflow): it resets `count` too — not in
        // ns-3.44 (`count_reset = "ns3"`).
        let full = match q.limit {
            Limit::Packets(n) => q.packets >= n,
            Limit::Bytes(b) => q.bytes + u64::from(pkt.size()) > b,
        };
        if full && self.cfg.count_reset == CountReset::Ns2 {
            self.count = 0;
        }
        verdict
    }

    fn ns2_verdict(&mut self, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict {
        let avg = self.avg;
        self.count = self.count.max(0) + 1;
        if avg < self.cfg.min_th || q.packets <= 1 {
            self.old = false;
            return Verdict::Accept;
        }
        if avg >= self.cfg.forced_th() {
            if self.cfg.count_reset == CountReset::Ns2 {
                self.count = 0;
            }
            return self.act(pkt, DropCause::AqmForced);
        }
        if !self.old {
            self.old = true;
            self.count = 1;
            return Verdict::Accept;
        }
        if rng.bernoulli(ns2_drop_probability(&self.cfg, avg, self.count, pkt.size())) {
            self.count = 0;
            return self.act(pkt, DropCause::AqmEarly);
        }
        Verdict::Accept
    }

    fn act(&self, pkt: &Packet, cause: DropCause) -> Verdict {
        let ect = pkt.ecn != Ecn::NotEct;
        if self.cfg.ecn && ect && !(cause == DropCause::AqmForced && self.cfg.hard_drop) {
            Verdict::Mark
        } else if self.cfg.drop_front {
            Verdict::DropFront(cause)
        } else {
            Verdict::Drop(cause)
        }
    }
}

/// [`Time::as_secs_f64`], the same bits, through a signed conversion (one
/// instruction on x86-64, where the unsigned one is six) for an idle period:
/// below 2^63 ns (292 years) both conversions round the same integer. (A
/// range check here cost 0.2 % of the ns-2 set-up's instructions.)
#[inline]
fn secs_f64(t: Time) -> f64 {
    debug_assert!(i64::try_from(t.0).is_ok(), "an idle period of 292 years");
    (t.0 as i64) as f64 * 1e-9
}

/// `m.floor()` for a finite `m >= 0` without the libm call (the build's
/// target has no `roundsd`): below 2^52 the truncating cast is the floor,
/// and from 2^52 up every `f64` is a whole number already.
#[inline]
fn floor_nonnegative(m: f64) -> f64 {
    debug_assert!(m >= 0.0, "idle periods are not negative: {m}");
    const WHOLE: f64 = 4_503_599_627_370_496.0; // 2^52
    if m < WHOLE {
        // Signed: one `cvttsd2si` and one `cvtsi2sd`; the unsigned casts
        // cost about 25 instructions on this target, the same value below 2^52.
        (m as i64) as f64
    } else {
        m
    }
}

impl Aqm for Red {
    fn name(&self) -> &'static str {
        "red"
    }

    fn on_arrival(&mut self, now: Time, q: &QueueView, pkt: &Packet, rng: &mut Rng) -> Verdict {
        self.update_avg(now, q.occupancy());
        self.idle = false;
        let avg = self.avg;
        let verdict = if self.cfg.ns2 {
            self.ns2_decide(q, pkt, rng)
        } else if avg < self.cfg.min_th {
            self.count = -1;
            Verdict::Accept
        } else if avg >= self.cfg.forced_th() {
            self.count = 0;
            self.act(pkt, DropCause::AqmForced)
        } else {
            self.count += 1;
            let pa = drop_probability(&self.cfg, avg, self.count, pkt.size());
            if rng.bernoulli(pa) {
                self.count = 0;
                self.act(pkt, DropCause::AqmEarly)
            } else {
                Verdict::Accept
            }
        };
        // A drop into an empty queue leaves it empty: the idle period goes on,
        // with the average already decayed up to `now`.
        if matches!(verdict, Verdict::Drop(_) | Verdict::DropFront(_)) && q.packets == 0 {
            self.idle = true;
            self.idle_since = now;
        }
        verdict
    }

    fn on_departure(&mut self, now: Time, q: &QueueView) {
        if q.packets == 0 {
            self.idle = true;
            self.idle_since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{Limit, Queue};

    fn pkt(size: u32, ecn: Ecn) -> Packet {
        Packet {
            payload: size - 40,
            header: 40,
            ecn,
            ..Packet::default()
        }
    }

    fn view(packets: u32) -> QueueView {
        QueueView {
            packets,
            bytes: u64::from(packets) * 1000,
            limit: Limit::Packets(1000),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn ns2_rules_guard_the_first_crossing_and_short_queues() {
        let cfg = RedConfig {
            instantaneous: true,
            gentle: false,
            ns2: true,
            max_p: 0.1,
            ..RedConfig::new(5.0, 15.0)
        };
        let mut red = Red::new(cfg.clone());
        let mut rng = Rng::stream(1, "red");
        let p = pkt(500, Ecn::NotEct);
        // Above maxth but one packet queued: never acted on.
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(1), &p, &mut rng),
            Verdict::Accept
        );
        // The first arrival above minth passes and sets count = 1.
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(10), &p, &mut rng),
            Verdict::Accept
        );
        assert_eq!(red.count, 1);
        // In the forced region with a queue: forced drop, count reset.
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(20), &p, &mut rng),
            Verdict::Drop(DropCause::AqmForced)
        );
        assert_eq!(red.count, 0);
        // Falling below minth re-arms the first-crossing rule.
        red.on_arrival(Time::ZERO, &view(2), &p, &mut rng);
        assert!(!red.old);
        // An arrival finding the queue full resets count (below minth here).
        red.on_arrival(Time::ZERO, &view(2), &p, &mut rng);
        assert_eq!(red.count, 2);
        let full = QueueView {
            packets: 3,
            bytes: 3000,
            limit: Limit::Packets(3),
        };
        red.on_arrival(Time::ZERO, &full, &p, &mut rng);
        assert_eq!(red.count, 0);
        // wait_ spacing: pb = 0.05 at avg 10; no action while count·pb < 1.
        assert_eq!(ns2_drop_probability(&cfg, 10.0, 10, 500), 0.0);
        assert!(close(ns2_drop_probability(&cfg, 10.0, 30, 500), 0.05 / 0.5));
        assert_eq!(ns2_drop_probability(&cfg, 10.0, 40, 500), 1.0);
        // So at a steady average the gaps between early drops are 20 to 39.
        let mut red = Red::new(cfg);
        let mut gaps = Vec::new();
        let mut since = 0;
        for _ in 0..20_000 {
            since += 1;
            if red.on_arrival(Time::ZERO, &view(10), &p, &mut rng) != Verdict::Accept {
                gaps.push(since);
                since = 0;
            }
        }
        let (lo, hi) = (
            gaps[1..].iter().min().unwrap(),
            gaps[1..].iter().max().unwrap(),
        );
        assert!(*lo >= 20 && *hi <= 40, "gaps {lo}..{hi}");
    }

    /// ns-3.44's `RedQueueDisc` (`count_reset = "ns3"`): neither an arrival
    /// that finds the queue full nor a forced action resets `count`; ns-2's
    /// rules reset it at both. While the queue overflows at a steady average
    /// in the gentle region, ns-2's rules therefore never act (every other
    /// arrival is refused and `count` never reaches `1/pb`), ns-3's do.
    #[test]
    fn ns3_count_reset_keeps_count_through_overflow_and_forced_drops() {
        let base = RedConfig {
            instantaneous: true,
            ns2: true,
            ecn: true,
            ..RedConfig::new(5.0, 15.0)
        };
        let ns3 = RedConfig {
            count_reset: CountReset::Ns3,
            ..base.clone()
        };
        let p = pkt(500, Ecn::Ect0);
        let full = QueueView {
            packets: 20,
            bytes: 10_000,
            limit: Limit::Packets(20),
        };
        let room = QueueView {
            packets: 19,
            bytes: 9_500,
            limit: Limit::Packets(20),
        };
        for (cfg, after_full) in [(&base, 0), (&ns3, 3)] {
            let mut red = Red::new(cfg.clone());
            let mut rng = Rng::stream(1, "red");
            // The first crossing sets count = 1; then count 2 (pb·count < 1 at
            // avg 19: pb = 0.02 + 0.98·4/15 ≈ 0.28, so no action yet).
            red.on_arrival(Time::ZERO, &room, &p, &mut rng);
            red.on_arrival(Time::ZERO, &room, &p, &mut rng);
            assert_eq!(red.count, 2);
            red.on_arrival(Time::ZERO, &full, &p, &mut rng);
            assert_eq!(red.count, after_full, "{:?}", cfg.count_reset);
            // Forced region (avg ≥ 2·maxth): acted on; count reset by ns-2 only.
            let forced = QueueView {
                packets: 30,
                bytes: 15_000,
                limit: Limit::Packets(40),
            };
            let mut red = Red::new(cfg.clone());
            red.on_arrival(Time::ZERO, &room, &p, &mut rng);
            red.on_arrival(Time::ZERO, &room, &p, &mut rng);
            assert_eq!(
                red.on_arrival(Time::ZERO, &forced, &pkt(500, Ecn::NotEct), &mut rng),
                Verdict::Drop(DropCause::AqmForced)
            );
            assert_eq!(red.count, if after_full == 0 { 0 } else { 3 });
        }
        // Alternating full / not full at avg 19 (every other arrival refused,
        // as in a slow-start overflow): ns-2's rules never mark, ns-3's do.
        let marks = |cfg: &RedConfig| {
            let mut red = Red::new(cfg.clone());
            let mut rng = Rng::stream(7, "red");
            (0..2_000)
                .filter(|i| {
                    let v = if i % 2 == 0 { &room } else { &full };
                    red.on_arrival(Time::ZERO, v, &p, &mut rng) == Verdict::Mark
                })
                .count()
        };
        assert_eq!(marks(&base), 0);
        let m = marks(&ns3);
        // With count growing by one an arrival, pa = pb/(2 − count·pb) from
        // count 4 (count·pb ≥ 1): an action every 4–7 arrivals, 2 000/7 at least.
        assert!(m > 2_000 / 7, "ns-3 rules marked {m}");
        // count_reset = "ns3" belongs to the ns-2 rules.
        let bad = RedConfig {
            ns2: false,
            ..ns3.clone()
        };
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("count_reset") && e.contains("ns2 = true"), "{e}");
        assert!(ns3.validate().is_ok());
    }

    #[test]
    fn defaults_match_ns3_and_check() {
        let c = RedConfig::default();
        assert_eq!(c.wq, 0.002);
        assert_eq!(c.max_p, 0.02);
        assert_eq!((c.min_th, c.max_th), (5.0, 15.0));
        assert!(c.gentle && c.hard_drop && !c.ecn && !c.instantaneous && !c.byte_mode);
        assert_eq!(c.mean_pkt_size, 500);
        assert_eq!(c.link_rate_bps, 1_500_000);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn check_rejects_bad_configs() {
        let base = RedConfig::default();
        let bad = [
            RedConfig {
                min_th: 15.0,
                ..base.clone()
            },
            RedConfig {
                min_th: -1.0,
                ..base.clone()
            },
            RedConfig {
                max_p: 0.0,
                ..base.clone()
            },
            RedConfig {
                max_p: 1.5,
                ..base.clone()
            },
            RedConfig {
                wq: 0.0,
                ..base.clone()
            },
            RedConfig {
                wq: 2.0,
                ..base.clone()
            },
            RedConfig {
                wq: f64::NAN,
                ..base.clone()
            },
            RedConfig {
                mean_pkt_size: 0,
                ..base.clone()
            },
            RedConfig {
                link_rate_bps: 0,
                ..base.clone()
            },
        ];
        for c in bad {
            let e = c.validate().unwrap_err();
            assert!(!e.allowed.is_empty(), "{e}");
        }
        assert!(base.validate().is_ok());
        assert!(RedConfig {
            max_p: 1.0,
            wq: 1.0,
            ..base
        }
        .validate()
        .is_ok());
    }

    #[test]
    fn drop_probability_formula() {
        let cfg = RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle: true,
            ..RedConfig::default()
        };
        // Below min_th / forced region.
        assert_eq!(drop_probability(&cfg, 4.99, 0, 500), 0.0);
        assert_eq!(drop_probability(&cfg, 30.0, 0, 500), 1.0);
        assert_eq!(drop_probability(&cfg, 100.0, 0, 500), 1.0);
        // Linear region, count 0: pa = pb.
        assert!(close(drop_probability(&cfg, 5.0, 0, 500), 0.0));
        assert!(close(drop_probability(&cfg, 10.0, 0, 500), 0.05));
        assert!(close(drop_probability(&cfg, 12.5, 0, 500), 0.075));
        // Count spacing: pa = pb / (1 - count pb).
        assert!(close(drop_probability(&cfg, 10.0, 4, 500), 0.05 / 0.8));
        assert!(close(drop_probability(&cfg, 10.0, 19, 500), 0.05 / 0.05));
        assert_eq!(drop_probability(&cfg, 10.0, 20, 500), 1.0);
        assert_eq!(drop_probability(&cfg, 10.0, 1000, 500), 1.0);
        // Gentle region: pb = max_p + (1 - max_p)(avg - max_th)/max_th.
        assert!(close(drop_probability(&cfg, 15.0, 0, 500), 0.1));
        assert!(close(drop_probability(&cfg, 22.5, 0, 500), 0.1 + 0.9 * 0.5));
        assert_eq!(drop_probability(&cfg, 22.5, 1, 500), 1.0);
        assert!(close(drop_probability(&cfg, 27.0, 0, 500), 0.1 + 0.9 * 0.8));
        // Not gentle: forced from max_th.
        let hard = RedConfig {
            gentle: false,
            ..cfg.clone()
        };
        assert_eq!(drop_probability(&hard, 15.0, 0, 500), 1.0);
        assert!(close(drop_probability(&hard, 14.0, 0, 500), 0.09));
        // Byte mode scales pb by size / mean before the spacing.
        let bytes = RedConfig {
            byte_mode: true,
            mean_pkt_size: 1000,
            ..cfg
        };
        assert!(close(drop_probability(&bytes, 10.0, 0, 500), 0.025));
        assert!(close(drop_probability(&bytes, 10.0, 0, 1500), 0.075));
        assert!(close(drop_probability(&bytes, 10.0, 2, 1500), 0.075 / 0.85));
    }

    /// Hold a packet queue at `hold` packets with wq = 1 and return the gaps
    /// (in arrivals) between early drops, after the first drop.
    fn gaps_at(hold: u32, max_p: f64, arrivals: usize) -> (Vec<usize>, Queue) {
        let cfg = RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p,
            wq: 1.0,
            gentle: false,
            ..RedConfig::default()
        };
        let mut q = Queue::new(
            Limit::Packets(100),
            Box::new(Red::new(cfg)),
            Rng::stream(42, "red-spacing"),
        );
        let mut t = Time::ZERO;
        while q.len() < hold as usize {
            let _ = q.enqueue(t, pkt(1000, Ecn::NotEct));
        }
        let mut gaps = Vec::new();
        let mut since: Option<usize> = None;
        for _ in 0..arrivals {
            t += Time::from_micros(10);
            match q.enqueue(t, pkt(1000, Ecn::NotEct)) {
                None => {
                    q.dequeue(t);
                    if let Some(s) = since.as_mut() {
                        *s += 1;
                    }
                }
                Some((_, c)) => {
                    assert_eq!(c, DropCause::AqmEarly);
                    if let Some(s) = since {
                        gaps.push(s + 1);
                    }
                    since = Some(0);
                }
            }
            assert_eq!(q.len(), hold as usize);
        }
        (gaps, q)
    }

    #[test]
    fn count_spacing_matches_expectation() {
        // q = 10 with min 5, max 15, max_p 0.1: pb = 0.05. The n-th arrival
        // after a drop is dropped with pa = pb/(1 - n pb): gaps uniform on 1..=19.
        let (gaps, q) = gaps_at(10, 0.1, 400_000);
        let pb: f64 = 0.05;
        let mut expect_mean = 0.0;
        let mut survive = 1.0;
        let mut n = 1;
        let mut pmf = Vec::new();
        loop {
            let pa = drop_probability(
                &RedConfig {
                    max_p: 0.1,
                    gentle: false,
                    ..RedConfig::default()
                },
                10.0,
                n,
                1000,
            );
            pmf.push(survive * pa);
            expect_mean += n as f64 * survive * pa;
            survive *= 1.0 - pa;
            if pa >= 1.0 || survive < 1e-12 {
                break;
            }
            n += 1;
        }
        assert!(pmf.len() >= 19);
        assert!(pmf[..19].iter().all(|p| (p - pb / (1.0 - pb)).abs() < 1e-9));
        assert!(pmf[19..].iter().sum::<f64>() < 1e-9);
        assert!((expect_mean - 10.0).abs() < 1e-9);

        let mean = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        assert!(
            (mean - expect_mean).abs() / expect_mean < 0.02,
            "mean gap {mean}"
        );
        // Within 5% of the paper's (1/pb + 1)/2 = 10.5 too.
        assert!((mean - 10.5).abs() / 10.5 < 0.06, "mean gap {mean}");
        // Uniform: every gap in 1..=19, each value within 10% of 1/19.
        assert!(gaps.iter().all(|&g| (1..=19).contains(&g)));
        for v in 1..=19 {
            let f = gaps.iter().filter(|&&g| g == v).count() as f64 / gaps.len() as f64;
            assert!((f * 19.0 - 1.0).abs() < 0.1, "gap {v}: freq {f}");
        }
        let rate = q.stats().drops_aqm_early as f64 / q.stats().arrivals as f64;
        assert!((rate - 0.1).abs() < 0.003, "early drop rate {rate}");
    }

    #[test]
    fn count_spacing_at_low_probability() {
        // q = 6: pb = 0.02 * 1/10 = 0.002; gaps uniform on 1..=499, mean 250.
        let (gaps, _) = gaps_at(6, 0.02, 1_000_000);
        let mean = gaps.iter().sum::<usize>() as f64 / gaps.len() as f64;
        assert!((mean - 250.0).abs() / 250.0 < 0.04, "mean gap {mean}");
        assert!(gaps.iter().all(|&g| g <= 499));
    }

    #[test]
    fn ecn_marks_ect_and_drops_not_ect() {
        let cfg = RedConfig {
            wq: 1.0,
            ecn: true,
            max_p: 1.0,
            gentle: false,
            ..RedConfig::default()
        };
        let mut rng = Rng::stream(1, "ecn");
        // avg = 14: pb = 0.9, and count 1 makes pa = 1 on the second arrival.
        let (mut marks, mut drops) = (0, 0);
        for e in [Ecn::Ect0, Ecn::NotEct] {
            let mut red = Red::new(cfg.clone());
            for _ in 0..1000 {
                let q = QueueView {
                    packets: 14,
                    bytes: 0,
                    limit: Limit::Packets(100),
                };
                match red.on_arrival(Time::ZERO, &q, &pkt(500, e), &mut rng) {
                    Verdict::Mark => {
                        assert_eq!(e, Ecn::Ect0);
                        marks += 1
                    }
                    Verdict::Drop(DropCause::AqmEarly) => {
                        assert_eq!(e, Ecn::NotEct);
                        drops += 1
                    }
                    Verdict::Accept => {}
                    v => panic!("unexpected {v:?}"),
                }
            }
        }
        assert!(marks > 600 && drops > 600, "{marks} {drops}");
        // Through a queue: marked packets are kept with CE.
        let mut q = Queue::new(
            Limit::Packets(100),
            Box::new(Red::new(cfg)),
            Rng::stream(1, "q"),
        );
        for _ in 0..30 {
            let _ = q.enqueue(Time::ZERO, pkt(500, Ecn::Ect0));
        }
        assert!(q.stats().ecn_marks > 0);
        assert_eq!(q.stats().drops_aqm_early, 0);
        let mut ce = 0;
        while let Some(p) = q.dequeue(Time::ZERO) {
            ce += usize::from(p.ecn == Ecn::Ce);
        }
        assert_eq!(ce as u64, q.stats().ecn_marks);
    }

    #[test]
    fn instantaneous_uses_queue_size() {
        let cfg = RedConfig {
            instantaneous: true,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg.clone());
        let mut rng = Rng::stream(1, "inst");
        red.on_arrival(Time::ZERO, &view(12), &pkt(500, Ecn::NotEct), &mut rng);
        assert_eq!(red.avg(), 12.0);
        red.on_arrival(Time::ZERO, &view(3), &pkt(500, Ecn::NotEct), &mut rng);
        assert_eq!(red.avg(), 3.0);
        // Forced at 2 max_th on the instantaneous size, even from a cold start.
        let mut red = Red::new(cfg);
        let v = red.on_arrival(Time::ZERO, &view(30), &pkt(500, Ecn::NotEct), &mut rng);
        assert_eq!(v, Verdict::Drop(DropCause::AqmForced));
        // The EWMA would barely have moved.
        let mut ewma = Red::new(RedConfig::default());
        ewma.on_arrival(Time::ZERO, &view(30), &pkt(500, Ecn::NotEct), &mut rng);
        assert!(close(ewma.avg(), 0.002 * 30.0));
    }

    #[test]
    fn byte_limit_uses_bytes() {
        let cfg = RedConfig {
            instantaneous: true,
            min_th: 5000.0,
            max_th: 15000.0,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg);
        let q = QueueView {
            packets: 3,
            bytes: 4500,
            limit: Limit::Bytes(100_000),
        };
        red.on_arrival(
            Time::ZERO,
            &q,
            &pkt(500, Ecn::NotEct),
            &mut Rng::stream(1, "b"),
        );
        assert_eq!(red.avg(), 4500.0);
    }

    #[test]
    fn ewma_update() {
        let cfg = RedConfig {
            wq: 0.25,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg);
        let mut rng = Rng::stream(1, "ewma");
        let p = pkt(500, Ecn::NotEct);
        red.on_arrival(Time::ZERO, &view(0), &p, &mut rng);
        assert_eq!(red.avg(), 0.0);
        red.on_arrival(Time::ZERO, &view(4), &p, &mut rng);
        assert!(close(red.avg(), 1.0));
        red.on_arrival(Time::ZERO, &view(8), &p, &mut rng);
        assert!(close(red.avg(), 0.75 + 2.0));
    }

    /// RED with wq = 0.1 at 1 Mbit/s (s = 4 ms) and `idle`: the average after
    /// one arrival at 1 s (a0 = 1.0), the queue draining 1 ms later and the
    /// next arrival to the empty queue 41 ms after that: (a0, new average).
    fn average_after_idle(idle: IdleDecay) -> (f64, f64) {
        let mut red = Red::new(RedConfig {
            wq: 0.1,
            link_rate_bps: 1_000_000,
            idle,
            ..RedConfig::default()
        });
        let mut rng = Rng::stream(1, "idle");
        let p = pkt(500, Ecn::NotEct);
        let t0 = Time::from_secs(1);
        red.on_arrival(t0, &view(10), &p, &mut rng);
        let a0 = red.avg();
        red.on_departure(t0 + Time::from_millis(1), &view(0));
        red.on_arrival(t0 + Time::from_millis(42), &view(0), &p, &mut rng);
        (a0, red.avg())
    }

    #[test]
    fn idle_time_decays_average() {
        // m = 41 ms / 4 ms = 10.25 packets' worth of decay, then the update.
        let (a0, avg) = average_after_idle(IdleDecay::Fractional);
        assert!(close(a0, 1.0));
        let expect = 0.9 * (0.9f64.powf(10.25) * a0);
        assert!((avg - expect).abs() < 1e-12, "{avg} vs {expect}");
        // No decay without an idle period: a non-empty departure does not count.
        let mut red2 = Red::new(RedConfig {
            wq: 0.1,
            link_rate_bps: 1_000_000,
            ..RedConfig::default()
        });
        let mut rng = Rng::stream(1, "idle");
        let p = pkt(500, Ecn::NotEct);
        let t0 = Time::from_secs(1);
        red2.on_arrival(t0, &view(10), &p, &mut rng);
        red2.on_departure(t0 + Time::from_millis(1), &view(3));
        red2.on_arrival(t0 + Time::from_millis(42), &view(0), &p, &mut rng);
        assert!(close(red2.avg(), 0.9));
    }

    /// ns-2's `red.cc`: `m = int(ptc · idle)`, whole packets — the same
    /// 41 ms idle period counts as m = 10 instead of 10.25.
    #[test]
    fn ns2_idle_decay_counts_whole_packets() {
        let (a0, avg) = average_after_idle(IdleDecay::Ns2);
        let expect = 0.9 * (0.9f64.powi(10) * a0);
        assert!((avg - expect).abs() < 1e-12, "{avg} vs {expect}");
    }

    #[test]
    fn forced_drops_above_max_th_not_gentle() {
        let cfg = RedConfig {
            wq: 1.0,
            gentle: false,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg);
        let mut rng = Rng::stream(1, "f");
        for qlen in [15, 16, 29, 50] {
            let v = red.on_arrival(Time::ZERO, &view(qlen), &pkt(500, Ecn::NotEct), &mut rng);
            assert_eq!(v, Verdict::Drop(DropCause::AqmForced), "q = {qlen}");
        }
        let v = red.on_arrival(Time::ZERO, &view(4), &pkt(500, Ecn::NotEct), &mut rng);
        assert_eq!(v, Verdict::Accept);
    }

    #[test]
    fn forced_drops_above_twice_max_th_gentle() {
        let cfg = RedConfig {
            wq: 1.0,
            gentle: true,
            ..RedConfig::default()
        };
        let mut rng = Rng::stream(1, "g");
        // Between max_th and 2 max_th: probabilistic (early), never forced.
        let mut red = Red::new(cfg.clone());
        let (mut early, mut accepted) = (0, 0);
        for _ in 0..2000 {
            match red.on_arrival(Time::ZERO, &view(20), &pkt(500, Ecn::NotEct), &mut rng) {
                Verdict::Drop(DropCause::AqmEarly) => early += 1,
                Verdict::Accept => accepted += 1,
                v => panic!("unexpected {v:?}"),
            }
        }
        // pb = 0.02 + 0.98 / 3 = 0.3467: gaps uniform on 1..=2, mean 1.5.
        let rate = f64::from(early) / 2000.0;
        assert!(
            (rate - 1.0 / 1.5).abs() < 0.05,
            "{rate} ({accepted} accepted)"
        );
        for qlen in [30, 31, 100] {
            let v = red.on_arrival(Time::ZERO, &view(qlen), &pkt(500, Ecn::NotEct), &mut rng);
            assert_eq!(v, Verdict::Drop(DropCause::AqmForced), "q = {qlen}");
        }
    }

    #[test]
    fn hard_drop_false_marks_ect_in_forced_region() {
        let mut rng = Rng::stream(1, "h");
        let soft = RedConfig {
            wq: 1.0,
            ecn: true,
            hard_drop: false,
            ..RedConfig::default()
        };
        let mut red = Red::new(soft.clone());
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(40), &pkt(500, Ecn::Ect0), &mut rng),
            Verdict::Mark
        );
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(40), &pkt(500, Ecn::NotEct), &mut rng),
            Verdict::Drop(DropCause::AqmForced)
        );
        // hard_drop = true drops ECT packets there.
        let mut red = Red::new(RedConfig {
            hard_drop: true,
            ..soft.clone()
        });
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(40), &pkt(500, Ecn::Ect0), &mut rng),
            Verdict::Drop(DropCause::AqmForced)
        );
        // Without ECN every forced action is a drop.
        let mut red = Red::new(RedConfig { ecn: false, ..soft });
        assert_eq!(
            red.on_arrival(Time::ZERO, &view(40), &pkt(500, Ecn::Ect0), &mut rng),
            Verdict::Drop(DropCause::AqmForced)
        );
    }

    #[test]
    fn below_min_th_accepts_and_resets_count() {
        let cfg = RedConfig {
            wq: 1.0,
            max_p: 1.0,
            ..RedConfig::default()
        };
        let mut red = Red::new(cfg);
        let mut rng = Rng::stream(1, "m");
        for _ in 0..100 {
            let v = red.on_arrival(Time::ZERO, &view(4), &pkt(500, Ecn::NotEct), &mut rng);
            assert_eq!(v, Verdict::Accept);
        }
        assert_eq!(red.count, -1);
    }

    /// `drop_front`: a drop decision discards the oldest waiting packet and
    /// keeps the arrival (the queue's front drop); a mark still marks the
    /// arrival; at an empty queue the arrival itself goes.
    #[test]
    fn drop_front_discards_the_oldest_packet_instead_of_the_arrival() {
        let front = |ecn: bool| RedConfig {
            limit: Some(Limit::Packets(10)),
            instantaneous: true,
            gentle: false,
            max_p: 1.0,
            ecn,
            drop_front: true,
            ..RedConfig::new(1.0, 2.0)
        };
        // Three packets wait (forced region: above maxth 2): the arrival stays,
        // the first one goes.
        let mut q = Queue::new(
            Limit::Packets(10),
            Box::new(Red::new(front(false))),
            Rng::stream(1, "q"),
        );
        for seq in 0..3 {
            let mut p = pkt(500, Ecn::NotEct);
            p.seq = seq;
            q.enqueue(Time::ZERO, p);
        }
        let mut p = pkt(500, Ecn::NotEct);
        p.seq = 9;
        let (gone, cause) = q.enqueue(Time::ZERO, p).expect("a discard");
        assert_eq!((gone.seq, cause), (1, DropCause::AqmForced));
        let left: Vec<u64> = std::iter::from_fn(|| q.dequeue(Time::ZERO))
            .map(|p| p.seq)
            .collect();
        assert_eq!(left, vec![2, 9]);
        // The first early decision (between the thresholds): with ECN a mark of
        // the arrival, whatever `drop_front` says; without, a front drop.
        let first = |ecn: bool| {
            let mut red = Red::new(RedConfig {
                max_th: 8.0,
                ..front(ecn)
            });
            let mut rng = Rng::stream(1, "m");
            let e = if ecn { Ecn::Ect0 } else { Ecn::NotEct };
            (0..1000)
                .map(|_| red.on_arrival(Time::ZERO, &view(5), &pkt(500, e), &mut rng))
                .find(|v| *v != Verdict::Accept)
        };
        assert_eq!(first(true), Some(Verdict::Mark));
        assert_eq!(first(false), Some(Verdict::DropFront(DropCause::AqmEarly)));
    }

    /// `floor_nonnegative` is `f64::floor` bit for bit over the values an
    /// idle period gives (0, fractions, whole numbers, and the range from
    /// 2^52 up where every `f64` is whole).
    #[test]
    fn floor_nonnegative_is_floor() {
        let big = 4_503_599_627_370_496.0; // 2^52
        for m in [
            0.0,
            0.25,
            0.999_999_999_999,
            1.0,
            10.25,
            12_345.678,
            big - 0.5,
            big,
            big + 2.0,
            1e300,
            f64::INFINITY,
        ] {
            assert_eq!(floor_nonnegative(m).to_bits(), m.floor().to_bits(), "{m}");
        }
    }

    /// `secs_f64` is `Time::as_secs_f64` bit for bit, over small and large
    /// periods up to the signed conversion's end.
    #[test]
    fn secs_f64_is_as_secs_f64() {
        let top = i64::MAX as u64;
        for ns in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            123_456_789_012,
            (1 << 53) + 1,
            top - 1,
            top,
        ] {
            let t = Time(ns);
            assert_eq!(secs_f64(t).to_bits(), t.as_secs_f64().to_bits(), "{ns}");
        }
    }

    /// The decay memo returns `powf`'s own bits: for a repeated `m`, for a
    /// new one after it, and for `m = 0` (the memo's initial entry).
    #[test]
    fn decay_memo_gives_powf_bits() {
        for w in [0.002, 0.5] {
            let mut red = Red::new(RedConfig {
                wq: w,
                ..RedConfig::default()
            });
            let ms = [
                0.0, 3.0, 3.0, 10.25, 3.0, 0.0, 0.0, 63.0, 64.0, 64.0, 1e9, 0.5, 62.75, 63.5, 65.0,
                -0.0, 4e9, 1e300,
            ];
            // ... then every whole m of the table, twice (computed, then looked up).
            let whole = (0..DECAY_TABLE + 2)
                .chain(0..DECAY_TABLE + 2)
                .map(|i| i as f64);
            for m in ms.into_iter().chain(whole) {
                assert_eq!(
                    red.decay(m).to_bits(),
                    (1.0 - w).powf(m).to_bits(),
                    "w {w} m {m}"
                );
            }
        }
    }
}
