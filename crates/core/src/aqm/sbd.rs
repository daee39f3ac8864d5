//! Slope Based Discard (Alcaraz & Cerdán, "Performance Evaluation of AQM
//! Schemes in Rate-Varying 3G Links", §3): a deterministic AQM for the
//! downlink RLC buffer that drops when the buffer *filling rate* exceeds a
//! critical rate that shrinks as the occupancy approaches `maxth`.
//!
//! Occupancy `BO` is in the unit of the buffer limit (SDUs = packets for a
//! packet limit, bytes for a byte limit; see [`QueueView::occupancy`]).
//!
//! * When `BO ≥ minth − α` and no timer runs, a *measuring interval* starts:
//!   `th_n = BO + α`, critical rate `r_c = (maxth − th_n)/T_r` (eq. 1) and
//!   timer `C_n = α/r_c = α·T_r/(maxth − th_n)`.
//! * An arrival that brings `BO` to `th_n` before `C_n` expires means the
//!   filling rate exceeded `r_c`: SBD answers [`Verdict::DropFront`] (discard
//!   the first packet whose transmission has not started), stops `C_n` and
//!   starts the reaction timer `T_r`, during which it neither monitors nor
//!   drops.
//! * When `C_n` or `T_r` expires, a new measuring interval starts if
//!   `BO ≥ minth − α`; otherwise SBD goes idle until an arrival brings `BO` to
//!   `minth − α`.
//!
//! Decisions on the points the paper leaves open:
//!
//! * On an arrival `BO` counts the arrival ("update BO" comes first in the
//!   pseudocode); at a timer expiry `BO` is the occupancy at that moment.
//! * Timers run from the instant they are started and are resolved at the
//!   first [`Aqm::on_tick`] or [`Aqm::on_arrival`] at or after their expiry
//!   (the RLC ticks every 10 ms TTI; a plain `Queue` ticks before each
//!   arrival). The new interval starts at that resolution instant. An arrival
//!   exactly at the expiry instant finds the timer expired (the threshold must
//!   be reached *before* the expiry).
//! * If `BO + α ≥ maxth` then `r_c ≤ 0`: any growth is critical. `th_n` is
//!   clamped to `maxth` (so that it stays reachable in a buffer of `maxth`
//!   SDUs) and `C_n` is infinite (the limit of `α·T_r/(maxth − th_n)`): the
//!   interval ends only when `BO` reaches `maxth`, with a drop.
//! * `C_n` and `T_r` never run together; `maxth` is not a hard limit of SBD
//!   (packets beyond the buffer limit are the buffer's overflow drops).

use schemars::JsonSchema;
use serde::Deserialize;

use super::{check_threshold, Aqm, AqmConfig, DropCause, Limit, QueueView, Verdict};
use crate::config::{ConfigError, Result};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::Time;

/// An SBD queue: its capacity and the SBD parameters (`kind = "sbd"`, all
/// required). Thresholds and `alpha` are in the buffer's unit (SDUs =
/// packets for a packet limit, bytes for a byte limit).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SbdConfig {
    /// Capacity: packets `"100p"` or bytes `"150kB"`. Default `"100p"`.
    #[serde(default)]
    pub limit: Option<Limit>,
    /// `minth`: monitoring starts once the occupancy reaches `minth − alpha`,
    /// so no packet is dropped below `minth`.
    #[serde(rename = "minth")]
    pub min_th: f64,
    /// `maxth`: the occupancy the critical rate is computed against (the
    /// buffer size in the paper); above `minth`, at most the limit.
    #[serde(rename = "maxth")]
    pub max_th: f64,
    /// `T_r` (`tr`, e.g. `"500ms"`, > 0): estimated reaction time of the TCP
    /// sources; also the period during which SBD stays inactive after a drop.
    #[serde(rename = "tr")]
    pub t_r: Time,
    /// `α` (> 0): occupancy increment over which the filling slope is measured.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub alpha: f64,
}

impl Default for SbdConfig {
    /// The paper's Table 3 setting for a 384 kbit/s bearer: minth 20 SDUs,
    /// maxth 40 SDUs (the buffer size), `T_r` 200 ms, α 5 SDUs.
    fn default() -> Self {
        SbdConfig {
            limit: None,
            min_th: 20.0,
            max_th: 40.0,
            t_r: Time::from_millis(200),
            alpha: 5.0,
        }
    }
}

impl AqmConfig for SbdConfig {
    fn limit(&self) -> Option<Limit> {
        self.limit
    }

    fn validate_under(&self, limit: Limit) -> Result<()> {
        check_threshold("minth", self.min_th, None)?;
        check_threshold("maxth", self.max_th, Some(limit))?;
        if self.min_th >= self.max_th {
            return Err(ConfigError::new(
                "minth",
                self.min_th.to_string(),
                format!("is not below maxth ({}); need minth < maxth", self.max_th),
            ));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(ConfigError::new(
                "alpha",
                self.alpha.to_string(),
                "is out of range; allowed: a finite number > 0",
            ));
        }
        if self.t_r == Time::ZERO {
            return Err(ConfigError::new(
                "tr",
                "\"0s\"",
                "is zero; the reaction time must be positive",
            ));
        }
        Ok(())
    }

    fn build(&self, _rate_bps: u64) -> Box<dyn Aqm> {
        Box::new(Sbd::new(self.clone()))
    }
}

impl SbdConfig {
    /// Check the parameters; the error's path is the offending key.
    pub fn validate(&self) -> Result<()> {
        self.validate_under(self.limit.unwrap_or(super::QueueConfig::DEFAULT_LIMIT))
    }

    /// Occupancy at and above which SBD monitors: `minth − α`.
    pub fn monitor_th(&self) -> f64 {
        self.min_th - self.alpha
    }

    /// Critical filling rate `r_c = (maxth − th_n)/T_r` (eq. 1), in buffer
    /// units per second; ≤ 0 when `th_n ≥ maxth`.
    pub fn critical_rate(&self, th_n: f64) -> f64 {
        (self.max_th - th_n) / self.t_r.as_secs_f64()
    }

    /// Measuring interval `C_n = α/r_c = α·T_r/(maxth − th_n)`, rounded to the
    /// nearest nanosecond (at least 1 ns); `None` (never expires) when
    /// `r_c ≤ 0`, i.e. `th_n ≥ maxth`.
    pub fn measuring_interval(&self, th_n: f64) -> Option<Time> {
        let room = self.max_th - th_n;
        if room <= 0.0 {
            return None;
        }
        let ns = (self.alpha * self.t_r.as_nanos() as f64 / room).round();
        // `as` saturates: an astronomically long interval becomes "never".
        Some(Time::from_nanos((ns as u64).max(1)))
    }
}

/// Which of SBD's timers runs (they are mutually exclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Neither timer runs: `BO` was below `minth − α` when last evaluated.
    Idle,
    /// Measuring timer `C_n` runs until `expiry` (`Time::MAX`: never) with
    /// threshold `th`.
    Measuring { th: f64, expiry: Time },
    /// Reaction timer `T_r` runs until `until`: no monitoring, no drops.
    Reacting { until: Time },
}

/// Slope Based Discard state.
#[derive(Clone, Debug)]
pub struct Sbd {
    cfg: SbdConfig,
    state: State,
    drops: u64,
}

impl Sbd {
    /// An SBD policy with parameters `cfg` (assumed to pass [`SbdConfig::validate`]).
    pub fn new(cfg: SbdConfig) -> Sbd {
        Sbd {
            cfg,
            state: State::Idle,
            drops: 0,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &SbdConfig {
        &self.cfg
    }

    /// Threshold `th_n` of the running measuring interval, if `C_n` runs.
    pub fn th_n(&self) -> Option<f64> {
        match self.state {
            State::Measuring { th, .. } => Some(th),
            _ => None,
        }
    }

    /// Expiry instant of the running measuring timer `C_n`, if it runs
    /// (`Time::MAX` when `r_c ≤ 0`: it never expires).
    pub fn c_n_expiry(&self) -> Option<Time> {
        match self.state {
            State::Measuring { expiry, .. } => Some(expiry),
            _ => None,
        }
    }

    /// Expiry instant of the running reaction timer `T_r`, if it runs.
    pub fn reacting_until(&self) -> Option<Time> {
        match self.state {
            State::Reacting { until } => Some(until),
            _ => None,
        }
    }

    /// Number of drops SBD has decided so far.
    pub fn drops(&self) -> u64 {
        self.drops
    }

    /// Start a measuring interval at `now` with occupancy `bo`.
    fn start_measuring(&mut self, now: Time, bo: f64) {
        let th = (bo + self.cfg.alpha).min(self.cfg.max_th);
        let expiry = match self.cfg.measuring_interval(th) {
            Some(c_n) => now + c_n,
            None => Time::MAX,
        };
        self.state = State::Measuring { th, expiry };
    }

    /// Resolve a timer that expired at or before `now`, with occupancy `bo`.
    fn expire(&mut self, now: Time, bo: f64) {
        let expired = match self.state {
            State::Idle => false,
            State::Measuring { expiry, .. } => now >= expiry,
            State::Reacting { until } => now >= until,
        };
        if !expired {
            return;
        }
        if bo >= self.cfg.monitor_th() {
            self.start_measuring(now, bo);
        } else {
            self.state = State::Idle;
        }
    }
}

/// The size of `pkt` in the unit of `limit`.
fn arrival_units(limit: Limit, pkt: &Packet) -> f64 {
    match limit {
        Limit::Packets(_) => 1.0,
        Limit::Bytes(_) => f64::from(pkt.size()),
    }
}

impl Aqm for Sbd {
    fn name(&self) -> &'static str {
        "sbd"
    }

    fn on_arrival(&mut self, now: Time, q: &QueueView, pkt: &Packet, _rng: &mut Rng) -> Verdict {
        // A timer that expired since the last tick is resolved first, with the
        // occupancy the arrival finds.
        self.expire(now, q.occupancy());
        // "update BO": the arrival counts.
        let bo = q.occupancy() + arrival_units(q.limit, pkt);
        match self.state {
            State::Measuring { th, .. } if bo >= th => {
                self.state = State::Reacting {
                    until: now + self.cfg.t_r,
                };
                self.drops += 1;
                Verdict::DropFront(DropCause::AqmEarly)
            }
            State::Measuring { .. } | State::Reacting { .. } => Verdict::Accept,
            State::Idle => {
                if bo >= self.cfg.monitor_th() {
                    self.start_measuring(now, bo);
                }
                Verdict::Accept
            }
        }
    }

    fn on_tick(&mut self, now: Time, q: &QueueView) {
        self.expire(now, q.occupancy());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Queue;
    use crate::rng::Rng;
    use proptest::prelude::*;

    const ACCEPT: Verdict = Verdict::Accept;
    const DROP: Verdict = Verdict::DropFront(DropCause::AqmEarly);

    fn ms(m: u64) -> Time {
        Time::from_millis(m)
    }

    fn pkt(size: u32) -> Packet {
        Packet {
            payload: size - 40,
            header: 40,
            ..Packet::default()
        }
    }

    fn view(packets: u32) -> QueueView {
        QueueView {
            packets,
            bytes: u64::from(packets) * 1500,
            limit: Limit::Packets(40),
        }
    }

    /// minth 20, maxth 40, α 5 SDUs, T_r 1 s (the Fig. 4-style example).
    fn cfg() -> SbdConfig {
        SbdConfig {
            min_th: 20.0,
            max_th: 40.0,
            t_r: Time::from_secs(1),
            alpha: 5.0,
            limit: None,
        }
    }

    /// An arrival at `t` that brings the occupancy to `bo` SDUs.
    fn arrive(s: &mut Sbd, t: Time, bo: u32) -> Verdict {
        let mut rng = Rng::stream(1, "sbd");
        s.on_arrival(t, &view(bo - 1), &pkt(1500), &mut rng)
    }

    #[test]
    fn fig4_interval_numbers() {
        let c = cfg();
        // BO = 20 ⇒ th_n = 25, r_c = (40 − 25)/1 s = 15 SDU/s, C_n = 5/15 s.
        assert_eq!(c.critical_rate(25.0), 15.0);
        assert_eq!(c.measuring_interval(25.0), Some(Time(333_333_333)));
        // BO = minth − α = 15 ⇒ th_n = 20, r_c = 20 SDU/s, C_n = 250 ms.
        assert_eq!(c.critical_rate(20.0), 20.0);
        assert_eq!(c.measuring_interval(20.0), Some(ms(250)));
        // th_n = 39 ⇒ r_c = 1 SDU/s, C_n = 5 s; th_n ≥ maxth ⇒ never.
        assert_eq!(c.measuring_interval(39.0), Some(Time::from_secs(5)));
        assert_eq!(c.measuring_interval(40.0), None);
        assert!(c.critical_rate(41.0) < 0.0);

        let mut s = Sbd::new(c);
        // An arrival finding 19 SDUs (BO = 20 with it) while idle at 1 s.
        assert_eq!(arrive(&mut s, ms(1000), 20), ACCEPT);
        assert_eq!(s.th_n(), Some(25.0));
        assert_eq!(s.c_n_expiry(), Some(Time(1_333_333_333)));
        assert_eq!(s.reacting_until(), None);
        assert_eq!(s.name(), "sbd");
    }

    #[test]
    fn fast_rise_drops_once_then_rests_for_tr() {
        let mut s = Sbd::new(cfg());
        // BO 15 at t = 0: th_n = 20, C_n = 250 ms.
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT);
        assert_eq!((s.th_n(), s.c_n_expiry()), (Some(20.0), Some(ms(250))));
        // One SDU every 10 ms (100 SDU/s ≫ r_c = 20 SDU/s): 16..19 pass,
        // the arrival at 50 ms reaches th_n = 20 and the front is dropped.
        for (i, bo) in (16..20).enumerate() {
            assert_eq!(arrive(&mut s, ms(10 * (i as u64 + 1)), bo), ACCEPT);
        }
        assert_eq!(arrive(&mut s, ms(50), 20), DROP);
        assert_eq!(s.th_n(), None);
        assert_eq!(s.reacting_until(), Some(ms(1050)));
        // The buffer keeps growing (front drop: 20 − 1 + 1 each arrival …),
        // ticks every 10 ms: no drop during T_r.
        let mut bo = 19;
        let mut drops = 0;
        let mut t = 60;
        while t < 1050 {
            s.on_tick(ms(t), &view(bo));
            if bo < 39 {
                bo += 1;
            }
            if arrive(&mut s, ms(t), bo) != ACCEPT {
                drops += 1;
            }
            t += 10;
        }
        assert_eq!(drops, 0);
        assert_eq!(s.drops(), 1);
        assert_eq!(s.reacting_until(), Some(ms(1050)));
        // At 1050 ms T_r expires with BO = 39 ≥ 15: monitoring restarts,
        // th_n = 44 clamped to maxth = 40, C_n never expires.
        s.on_tick(ms(1050), &view(39));
        assert_eq!(s.reacting_until(), None);
        assert_eq!((s.th_n(), s.c_n_expiry()), (Some(40.0), Some(Time::MAX)));
        // Reaching 40 drops again.
        assert_eq!(arrive(&mut s, ms(1060), 40), DROP);
        assert_eq!(s.drops(), 2);
    }

    #[test]
    fn threshold_reached_after_expiry_does_not_drop() {
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT); // th 20, C_n 250 ms
        for (t, bo) in [(50, 16), (100, 17), (150, 18), (200, 19)] {
            assert_eq!(arrive(&mut s, ms(t), bo), ACCEPT);
        }
        // th_n = 20 is reached at 260 ms, after C_n expired (no tick in
        // between): resolved lazily with the pre-arrival BO = 19, so
        // th_n = 24, r_c = 16 SDU/s, C_n = 312.5 ms from 260 ms.
        assert_eq!(arrive(&mut s, ms(260), 20), ACCEPT);
        assert_eq!(s.th_n(), Some(24.0));
        assert_eq!(s.c_n_expiry(), Some(Time::from_micros(572_500)));
        // Arriving exactly at the expiry instant: the timer has expired.
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT);
        assert_eq!(arrive(&mut s, ms(250), 20), ACCEPT);
        assert_eq!(s.th_n(), Some(24.0));
        assert_eq!(s.drops(), 0);
    }

    #[test]
    fn slow_rise_never_drops() {
        // 5 SDU/s from 15 to 30 SDUs with TTI ticks: every interval
        // (C_n from 250 ms at th_n 20 to 556 ms at th_n 31) sees at most
        // +3 SDUs of the +5 needed.
        let mut s = Sbd::new(cfg());
        let mut bo = 14;
        for tick in 0..=300u64 {
            let t = ms(10 * tick);
            s.on_tick(t, &view(bo));
            if tick % 20 == 0 && bo < 30 {
                bo += 1;
                assert_eq!(arrive(&mut s, t, bo), ACCEPT, "at {t}");
            }
        }
        assert_eq!(s.drops(), 0);
        assert!(s.th_n().is_some());
    }

    #[test]
    fn nothing_happens_below_minth_minus_alpha() {
        let mut s = Sbd::new(cfg());
        // Fast bursts up to BO = 14 < minth − α = 15, ticks in between.
        for round in 0..5u64 {
            for bo in 1..=14 {
                let t = ms(100 * round + bo as u64);
                s.on_tick(t, &view(bo - 1));
                assert_eq!(arrive(&mut s, t, bo), ACCEPT);
                assert_eq!((s.th_n(), s.reacting_until()), (None, None));
            }
        }
        assert_eq!(s.drops(), 0);
        // The arrival reaching 15 starts an interval.
        assert_eq!(arrive(&mut s, ms(600), 15), ACCEPT);
        assert_eq!(s.th_n(), Some(20.0));
    }

    #[test]
    fn tr_expiry_goes_idle_when_bo_is_low() {
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT);
        assert_eq!(arrive(&mut s, ms(1), 20), DROP);
        assert_eq!(s.reacting_until(), Some(ms(1001)));
        s.on_tick(ms(1000), &view(10));
        assert_eq!(s.reacting_until(), Some(ms(1001)));
        // Expired with BO = 14 < 15: both timers off.
        s.on_tick(ms(1010), &view(14));
        assert_eq!(
            (s.th_n(), s.c_n_expiry(), s.reacting_until()),
            (None, None, None)
        );
        // Ticks keep it idle; the next arrival at BO 15 restarts monitoring.
        s.on_tick(ms(1020), &view(14));
        assert_eq!(s.th_n(), None);
        assert_eq!(arrive(&mut s, ms(1025), 15), ACCEPT);
        assert_eq!(s.th_n(), Some(20.0));
        assert_eq!(s.c_n_expiry(), Some(ms(1275)));
    }

    #[test]
    fn tr_expiry_restarts_monitoring_when_bo_is_high() {
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT);
        assert_eq!(arrive(&mut s, ms(1), 20), DROP);
        // Resolved lazily by an arrival at 1.2 s finding 20 SDUs: th_n = 25,
        // C_n = 333.333333 ms from 1.2 s; the arrival (BO 21) does not drop.
        assert_eq!(arrive(&mut s, ms(1200), 21), ACCEPT);
        assert_eq!(s.th_n(), Some(25.0));
        assert_eq!(s.c_n_expiry(), Some(Time(1_533_333_333)));
        // A fast rise to 25 within C_n drops.
        for (t, bo) in [(1210, 22), (1220, 23), (1230, 24)] {
            assert_eq!(arrive(&mut s, ms(t), bo), ACCEPT);
        }
        assert_eq!(arrive(&mut s, ms(1240), 25), DROP);
        assert_eq!(s.reacting_until(), Some(ms(2240)));
    }

    #[test]
    fn tti_ticks_resolve_at_first_tick_at_or_after_expiry() {
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 20), ACCEPT); // C_n expires 333.33 ms
        let mut t = 10;
        while t <= 330 {
            s.on_tick(ms(t), &view(21));
            assert_eq!(s.c_n_expiry(), Some(Time(333_333_333)));
            t += 10;
        }
        // Tick at 340 ms: BO 21 ⇒ th_n 26, C_n = 5·1 s/14 = 357.142857 ms.
        s.on_tick(ms(340), &view(21));
        assert_eq!(s.th_n(), Some(26.0));
        assert_eq!(s.c_n_expiry(), Some(ms(340) + Time(357_142_857)));
        // A tick exactly at the expiry instant resolves it.
        let mut s = Sbd::new(SbdConfig {
            t_r: Time::from_millis(400),
            ..cfg()
        });
        assert_eq!(arrive(&mut s, ms(0), 15), ACCEPT); // C_n = 5·0.4 s/20 = 100 ms
        assert_eq!(s.c_n_expiry(), Some(ms(100)));
        s.on_tick(ms(90), &view(15));
        assert_eq!(s.th_n(), Some(20.0));
        s.on_tick(ms(100), &view(16));
        // th_n = 21, C_n = 5·0.4 s/19 = 105.263158 ms.
        assert_eq!(s.th_n(), Some(21.0));
        assert_eq!(s.c_n_expiry(), Some(ms(100) + Time(105_263_158)));
    }

    #[test]
    fn th_n_at_or_above_maxth_is_clamped_and_never_expires() {
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 36), ACCEPT);
        assert_eq!((s.th_n(), s.c_n_expiry()), (Some(40.0), Some(Time::MAX)));
        s.on_tick(Time::from_secs(100), &view(30));
        assert_eq!(s.th_n(), Some(40.0));
        assert_eq!(arrive(&mut s, Time::from_secs(100), 39), ACCEPT);
        assert_eq!(arrive(&mut s, Time::from_secs(101), 40), DROP);
        // BO + α = 35 + 5 = maxth exactly: r_c = 0, same treatment.
        let mut s = Sbd::new(cfg());
        assert_eq!(arrive(&mut s, ms(0), 35), ACCEPT);
        assert_eq!((s.th_n(), s.c_n_expiry()), (Some(40.0), Some(Time::MAX)));
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let c = SbdConfig {
            min_th: 30_000.0,
            max_th: 60_000.0,
            t_r: Time::from_secs(1),
            alpha: 7_500.0,
            limit: None,
        };
        let mut s = Sbd::new(c);
        let mut rng = Rng::stream(1, "sbd");
        let v = |bytes| QueueView {
            packets: 0,
            bytes,
            limit: Limit::Bytes(60_000),
        };
        // 21 000 + 1500 = 22 500 = minth − α: th_n = 30 000,
        // C_n = 7500·1 s/30 000 = 250 ms.
        assert_eq!(
            s.on_arrival(ms(0), &v(21_000), &pkt(1500), &mut rng),
            ACCEPT
        );
        assert_eq!((s.th_n(), s.c_n_expiry()), (Some(30_000.0), Some(ms(250))));
        assert_eq!(
            s.on_arrival(ms(1), &v(28_499), &pkt(1500), &mut rng),
            ACCEPT
        );
        assert_eq!(s.on_arrival(ms(2), &v(28_500), &pkt(1500), &mut rng), DROP);
    }

    #[test]
    fn check_rejects_bad_configs() {
        let base = cfg();
        assert_eq!(base.validate(), Ok(()));
        assert_eq!(SbdConfig::default().validate(), Ok(()));
        let bad = [
            (
                SbdConfig {
                    min_th: 40.0,
                    ..base.clone()
                },
                "minth: 40 is not below maxth (40)",
            ),
            (
                SbdConfig {
                    min_th: 45.0,
                    ..base.clone()
                },
                "is not below maxth",
            ),
            (
                SbdConfig {
                    alpha: 0.0,
                    ..base.clone()
                },
                "alpha: 0 is out of range",
            ),
            (
                SbdConfig {
                    alpha: -5.0,
                    ..base.clone()
                },
                "alpha: -5 is out of range",
            ),
            (
                SbdConfig {
                    alpha: f64::NAN,
                    ..base.clone()
                },
                "alpha: NaN is out of range",
            ),
            (
                SbdConfig {
                    t_r: Time::ZERO,
                    ..base.clone()
                },
                "tr: \"0s\" is zero",
            ),
            (
                SbdConfig {
                    min_th: -1.0,
                    ..base.clone()
                },
                "minth: -1 is not a threshold",
            ),
            (
                SbdConfig {
                    max_th: f64::NAN,
                    ..base.clone()
                },
                "maxth: NaN is not a threshold",
            ),
            (
                SbdConfig {
                    min_th: f64::INFINITY,
                    ..base.clone()
                },
                "minth: inf is not a threshold",
            ),
        ];
        for (c, msg) in bad {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(msg), "{e}");
        }
        // minth ≤ α (monitoring from an empty buffer) is legal.
        assert!(SbdConfig {
            min_th: 5.0,
            ..base
        }
        .validate()
        .is_ok());
    }

    #[test]
    fn queue_discards_the_front_packet() {
        let mut q = Queue::new(
            Limit::Packets(40),
            Box::new(Sbd::new(cfg())),
            Rng::stream(1, "q"),
        );
        assert_eq!(q.kind(), "sbd");
        // uid k arrives at k ms; uid 14 brings BO to 15 (th_n 20, C_n 250 ms),
        // uid 19 brings it to 20: the head (uid 0) is discarded instead.
        for uid in 0..19 {
            let p = Packet { uid, ..pkt(1500) };
            assert!(q.enqueue(ms(uid), p).is_none(), "uid {uid}");
        }
        let (dropped, cause) = q
            .enqueue(
                ms(19),
                Packet {
                    uid: 19,
                    ..pkt(1500)
                },
            )
            .unwrap();
        assert_eq!((dropped.uid, cause), (0, DropCause::AqmEarly));
        assert_eq!(q.len(), 19);
        assert_eq!(q.stats().drops_aqm_early, 1);
        // T_r = 1 s: twenty more arrivals within it are accepted.
        for uid in 20..40 {
            assert!(q.enqueue(ms(uid), Packet { uid, ..pkt(1500) }).is_none());
        }
        assert_eq!(q.dequeue(ms(40)).map(|p| p.uid), Some(1));
        assert_eq!(q.stats().drops_overflow, 0);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Arrive(u64),
        Depart(u64),
        Tick(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..30_000).prop_map(Op::Arrive),
            2 => (0u64..30_000).prop_map(Op::Depart),
            1 => (0u64..30_000).prop_map(Op::Tick),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Random arrivals, departures and ticks (gaps 0–30 ms) into a
        /// 40-SDU buffer: SBD never drops twice within T_r, never drops
        /// below minth (hence never below minth − α), and its two timers
        /// never run together.
        #[test]
        fn drops_spaced_by_tr_and_above_minth(
            min_th in 0u32..35,
            alpha in 1u32..8,
            t_r_ms in 1u64..2000,
            ops in proptest::collection::vec(op(), 1..600),
        ) {
            let c = SbdConfig {
                min_th: f64::from(min_th),
                max_th: 40.0,
                t_r: ms(t_r_ms),
                alpha: f64::from(alpha),
                limit: None,
            };
            prop_assume!(c.validate().is_ok());
            let mut s = Sbd::new(c.clone());
            let mut rng = Rng::stream(1, "sbd");
            let mut now = Time::ZERO;
            let mut bo: u32 = 0;
            let mut last_drop: Option<Time> = None;
            for o in ops {
                match o {
                    Op::Arrive(dt) => {
                        now += Time::from_micros(dt);
                        let v = s.on_arrival(now, &view(bo), &pkt(1500), &mut rng);
                        match v {
                            Verdict::DropFront(DropCause::AqmEarly) => {
                                prop_assert!(f64::from(bo + 1) >= c.min_th);
                                prop_assert!(f64::from(bo + 1) >= c.min_th - c.alpha);
                                if let Some(t) = last_drop {
                                    prop_assert!(now - t >= c.t_r, "{} then {}", t, now);
                                }
                                last_drop = Some(now);
                                prop_assert_eq!(s.reacting_until(), Some(now + c.t_r));
                                // Front dropped, arrival kept (BO unchanged),
                                // unless the buffer is full.
                            }
                            Verdict::Accept => {
                                if bo < 40 {
                                    bo += 1;
                                }
                            }
                            other => prop_assert!(false, "unexpected {:?}", other),
                        }
                    }
                    Op::Depart(dt) => {
                        now += Time::from_micros(dt);
                        bo = bo.saturating_sub(1);
                        s.on_departure(now, &view(bo));
                    }
                    Op::Tick(dt) => {
                        now += Time::from_micros(dt);
                        s.on_tick(now, &view(bo));
                    }
                }
                prop_assert!(s.th_n().is_none() || s.reacting_until().is_none());
                if let Some(th) = s.th_n() {
                    prop_assert!(th >= c.min_th && th <= c.max_th);
                }
            }
        }
    }
}
