//! The configuration of an RLC AM radio bearer (`kind = "rlc_am"`): the
//! protocol parameters (a preset and overrides), each direction's rate
//! schedule, AQM and channel, and the cross-layer adaptive MaxDAT.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::json;
use toml::Value;

use super::{BufferCounts, Epc, Feedback, RateStep, RlcBearer, RlcConfig, RlcDirection};
use crate::aqm::{Aqm, DropTail, Limit, QueueConfig};
use crate::channel::{Channel, ChannelConfig, Perfect};
use crate::config::units::{deserialize_unit, read_scalar, schema_impl, unit_schema, UnitValue};
use crate::config::{check_range, join, Bytes, ConfigError, Rate, Result};
use crate::link::check_schedule_times;
use crate::link::{pick, Dir, Feed, Link, LinkKind};
use crate::rng::Rng;
use crate::tcp::EstimatorSide;
use crate::time::Time;

/// A UMTS RLC AM radio bearer. Protocol keys (`preset` … `buffer_counts`,
/// `adaptive`) concern the bearer; `rate`, `rate_schedule`, `channel` and
/// `queue` apply to both directions unless `ab` / `ba` override them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlcLinkConfig {
    /// One end (the network side: RNC); a node name or a range.
    pub a: String,
    /// The other end (the mobile).
    pub b: String,
    /// Start from a documented preset: "seed000" (Table 1 of seed 000, the default).
    pub preset: Option<Preset>,
    /// PDU payload, e.g. `"320bit"` or 40 (bytes).
    pub pdu_payload: Option<PduSize>,
    /// AMD PDU header bytes (default 2).
    pub pdu_header: Option<PduSize>,
    /// Length indicator bytes, 1 or 2 (default 1).
    pub li: Option<PduSize>,
    /// Transmission time interval (default `"10ms"`).
    pub tti: Option<Time>,
    /// PDUs sent in the TTI starting at t arrive at t + delay (default `"25ms"`).
    pub delay: Option<Time>,
    /// Transmission window in PDUs, 1 to 2047 (default 1024).
    #[schemars(range(min = 1, max = 2047))]
    pub tx_window: Option<u32>,
    /// Transmissions per PDU before its SDU is discarded (MaxDAT, M_t): a
    /// number ≥ 1, "unlimited" (or "none"), or "adaptive" (seed 001 §III,
    /// needs `adaptive`). Default 10.
    pub max_dat: Option<MaxDat>,
    /// With max_dat = "adaptive": the cross-layer controller of MaxDAT.
    pub adaptive: Option<AdaptiveConfig>,
    /// Timer_Poll, or "off" (default `"60ms"`).
    pub poll_timer: Option<Timer>,
    /// Poll when this fraction of the window is outstanding (0 < x ≤ 1), or "off" (default 0.5).
    pub poll_window: Option<PollWindow>,
    /// Poll on the last PDU in the buffer (default true).
    pub poll_last_pdu: Option<bool>,
    /// Poll on the last retransmitted PDU (default true).
    pub poll_last_retx: Option<bool>,
    /// Timer_Status_Prohibit, or "off" (default `"60ms"`).
    pub status_prohibit: Option<Timer>,
    /// Send a STATUS when a gap is detected (default true).
    pub missing_pdu_detection: Option<bool>,
    /// Deliver SDUs in sequence (default true).
    pub in_order_delivery: Option<bool>,
    /// Timer_MRW (default `"60ms"`).
    pub mrw_timer: Option<Time>,
    /// How the sender learns which PDUs arrived: "status" (STATUS PDUs,
    /// default) or "ideal" (seed 001's model: every PDU's fate known without
    /// error at the next TTI, lost ones sent again then; needs delay ≤ tti;
    /// the poll and STATUS keys then have no effect).
    pub feedback: Option<Feedback>,
    /// Ignore NACKs older than a retransmission (Timer_EPC guard): "auto"
    /// (one round trip, default), a time, or "off".
    pub epc: Option<Epc>,
    /// SDU buffer limit, e.g. `"40p"` (default `"40p"`); the AQM's limit too.
    pub buffer: Option<Limit>,
    /// Which SDUs count toward `buffer` and the AQM's occupancy:
    /// "unacknowledged" (until fully acknowledged, default) or "unsent"
    /// (until their last PDU is first sent).
    pub buffer_counts: Option<BufferCounts>,
    /// RLC payload rate of both directions, e.g. `"384kbit"` (or `rate_schedule`).
    pub rate: Option<Rate>,
    /// Rate schedule (instead of `rate`): `[{ at = "0s", rate = "384kbit" },
    /// { at = "50s", rate = "128kbit" }]`.
    pub rate_schedule: Option<Vec<RateStepConfig>>,
    /// AQM parameters per rate, applied automatically at each rate change.
    pub aqm_table: Option<Vec<AqmTableEntry>>,
    /// Error process of both directions' PDUs (one slot per TTI).
    pub channel: Option<ChannelConfig>,
    /// The AQM of both directions' SDU buffers (its limit is `buffer`). Default drop-tail.
    pub queue: Option<QueueConfig>,
    /// Overrides for the a→b direction (downlink).
    pub ab: Option<RlcDirectionConfig>,
    /// Overrides for the b→a direction (uplink).
    pub ba: Option<RlcDirectionConfig>,
}

/// Per-direction overrides of a bearer.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RlcDirectionConfig {
    /// RLC payload rate.
    pub rate: Option<Rate>,
    /// Rate schedule.
    pub rate_schedule: Option<Vec<RateStepConfig>>,
    /// Error process.
    pub channel: Option<ChannelConfig>,
    /// AQM of the SDU buffer.
    pub queue: Option<QueueConfig>,
}

/// One step of a rate schedule (an RRC reconfiguration).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateStepConfig {
    /// When the change is ordered, e.g. `"50s"` (the first step is at `"0s"`).
    pub at: Time,
    /// RLC payload rate from then on.
    pub rate: Rate,
    /// AQM taking over at this step (else the `aqm_table` entry for the rate, else unchanged).
    pub queue: Option<QueueConfig>,
}

/// AQM parameters to apply whenever the bearer runs at `rate`.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AqmTableEntry {
    /// The rate, e.g. `"384kbit"`.
    pub rate: Rate,
    /// The queue (AQM) at that rate; no `limit` (the bearer's `buffer` rules).
    pub queue: QueueConfig,
}

/// The cross-layer adaptive MaxDAT controller (seed 001 §III): MaxDAT of the
/// direction carrying `flow`'s data follows the target residual loss
/// `alpha · P_W`, with `P_W` from eq. (1).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveConfig {
    /// Accepted link loss as a fraction of the loss outside the link, 0 ≤ alpha ≤ 1.
    #[schemars(range(min = 0, max = 1))]
    pub alpha: f64,
    /// Where P_TCP is measured: "receiver" (the TCP receiver's loss-event
    /// detector; mobile as receiver, downlink adapts) or "sender" (fast
    /// retransmits and timeouts; mobile as sender, uplink adapts).
    pub estimator: EstimatorSide,
    /// SDUs in the moving window of the link loss estimate P_LL, 1 to 1000000. Default 100.
    #[schemars(range(min = 1, max = 1_000_000))]
    pub window: Option<u32>,
    /// Name of the TCP flow that feeds the controller (default: the scenario's only flow).
    pub flow: Option<String>,
}

/// A documented parameter set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Preset {
    /// Table 1 of Alcaraz & Cerdán (seed 000).
    #[default]
    #[serde(rename = "seed000")]
    Seed000,
}

/// The retransmission limit MaxDAT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxDat {
    /// At most this many transmissions per PDU (1 to 1000000).
    Limit(u32),
    /// No limit ("unlimited" or "none").
    Unlimited,
    /// Set by the cross-layer controller (`adaptive`).
    Adaptive,
}

/// A timer that can be switched off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer(pub Option<Time>);

/// A fraction of the transmission window, or off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PollWindow(pub Option<f64>);

/// A size in bytes that may also be written in whole bytes of bits (`"320bit"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PduSize(pub u32);

const MAX_DAT_WORDS: &str = "a number of transmissions ≥ 1, \"unlimited\" or \"adaptive\"";

impl<'de> Deserialize<'de> for MaxDat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_scalar(d, |v| {
            // A number written as text is what a string parameter (`max_dat =
            // "${max_dat}"` with default "none") gives for `--set max_dat=4`.
            let n = match v {
                Value::String(s) => match s.trim() {
                    "none" | "unlimited" => return Ok(MaxDat::Unlimited),
                    "adaptive" => return Ok(MaxDat::Adaptive),
                    t => t.parse::<i64>().ok(),
                },
                Value::Integer(n) => Some(*n),
                _ => None,
            };
            let n = n.ok_or_else(|| format!("is not allowed; write {MAX_DAT_WORDS}"))?;
            if (1..=1_000_000).contains(&n) {
                Ok(MaxDat::Limit(n as u32))
            } else {
                Err(format!(
                    "is out of range; write {MAX_DAT_WORDS} (at most 1000000)"
                ))
            }
        })
    }
}

schema_impl!(
    MaxDat,
    "MaxDat",
    json!({
        "anyOf": [
            { "type": "integer", "minimum": 1, "maximum": 1_000_000 },
            { "enum": ["none", "unlimited", "adaptive"] },
            { "type": "string", "pattern": r"^\s*\+?[0-9]+\s*$" },
        ],
        "description": MAX_DAT_WORDS,
    })
);

impl<'de> Deserialize<'de> for Timer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_scalar(d, |v| match v {
            Value::String(s) if s.trim() == "off" => Ok(Timer(None)),
            Value::String(s) => match Time::from_text(s) {
                Ok(Time::ZERO) => Err("is zero; write a positive time, or \"off\"".into()),
                Ok(t) => Ok(Timer(Some(t))),
                Err(m) => Err(format!("{m}, or \"off\"")),
            },
            _ => Err(format!(
                "is not allowed; write {}, or \"off\"",
                Time::EXPECTING
            )),
        })
    }
}

schema_impl!(
    Timer,
    "Timer",
    json!({ "anyOf": [unit_schema::<Time>().to_value(), { "const": "off" }] })
);

impl<'de> Deserialize<'de> for PollWindow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_scalar(d, |v| match v {
            Value::String(s) if s == "off" => Ok(PollWindow(None)),
            Value::Integer(_) | Value::Float(_) => {
                match v.as_float().or(v.as_integer().map(|i| i as f64)) {
                    Some(x) if x > 0.0 && x <= 1.0 => Ok(PollWindow(Some(x))),
                    _ => Err(
                        "is out of range; allowed: a fraction of the window, 0 < x ≤ 1, or \"off\""
                            .into(),
                    ),
                }
            }
            _ => Err(
                "is not allowed; allowed: a fraction of the window, 0 < x ≤ 1, or \"off\"".into(),
            ),
        })
    }
}

schema_impl!(
    PollWindow,
    "PollWindow",
    json!({ "anyOf": [
        { "type": "number", "exclusiveMinimum": 0, "maximum": 1 },
        { "const": "off" },
    ] })
);

impl<'de> Deserialize<'de> for Epc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed =
            "is not allowed; write \"auto\" (one round trip), a time such as \"60ms\", or \"off\"";
        read_scalar(d, |v| match v {
            Value::String(s) => match s.trim() {
                "auto" => Ok(Epc::RoundTrip),
                "off" => Ok(Epc::Off),
                t => match Time::from_text(t) {
                    Ok(t) if t > Time::ZERO => Ok(Epc::Timer(t)),
                    _ => Err(allowed.into()),
                },
            },
            _ => Err(allowed.into()),
        })
    }
}

schema_impl!(
    Epc,
    "Epc",
    json!({ "anyOf": [unit_schema::<Time>().to_value(), { "enum": ["auto", "off"] }] })
);

impl UnitValue for PduSize {
    const NAME: &'static str = "PduSize";
    const EXPECTING: &'static str =
        "a size: bytes (40, \"40B\") or whole bytes of bits (\"320bit\")";
    const TAKES_INT: bool = true;

    fn pattern() -> String {
        format!(r"(\s*\+?[0-9]+\s*bit\s*|{})", Bytes::pattern())
    }

    fn from_text(s: &str) -> Result<PduSize, String> {
        let bytes = match s.trim().strip_suffix("bit") {
            Some(bits) => {
                let b: u64 = bits
                    .trim()
                    .parse()
                    .map_err(|_| format!("is not {}", Self::EXPECTING))?;
                if !b.is_multiple_of(8) {
                    return Err("is not a whole number of bytes".into());
                }
                b / 8
            }
            None => Bytes::from_text(s)?.get(),
        };
        u32::try_from(bytes)
            .map(PduSize)
            .map_err(|_| "is too large".into())
    }

    fn from_int(v: i64) -> Result<PduSize, String> {
        u32::try_from(v)
            .map(PduSize)
            .map_err(|_| "is out of range; allowed: 0 to 4294967295 bytes".into())
    }
}

impl<'de> Deserialize<'de> for PduSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_unit(d)
    }
}

schema_impl!(PduSize, "PduSize", unit_schema::<PduSize>().to_value());

impl fmt::Display for MaxDat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxDat::Limit(n) => write!(f, "{n}"),
            MaxDat::Unlimited => f.write_str("unlimited"),
            MaxDat::Adaptive => f.write_str("adaptive"),
        }
    }
}

// ---------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------

impl RlcLinkConfig {
    /// A bearer between `a` and `b` at `rate` both ways, seed 000's Table 1
    /// otherwise.
    pub fn new(a: impl Into<String>, b: impl Into<String>, rate: Rate) -> Self {
        RlcLinkConfig {
            a: a.into(),
            b: b.into(),
            rate: Some(rate),
            ..RlcLinkConfig::default()
        }
    }

    /// The protocol parameters: the preset with the keys given.
    pub fn protocol(&self) -> Result<RlcConfig> {
        let mut c = match self.preset.unwrap_or_default() {
            Preset::Seed000 => RlcConfig::seed000(),
        };
        let set = |v: Option<PduSize>, dst: &mut u32| {
            if let Some(PduSize(b)) = v {
                *dst = b;
            }
        };
        set(self.pdu_payload, &mut c.pdu_payload_bytes);
        set(self.pdu_header, &mut c.header_bytes);
        // Without `li`: 7-bit length indicators (1 byte) for PDUs of at most
        // 126 bytes, 15-bit ones (2 bytes) above (TS 25.322 §9.2.2.8).
        c.li_bytes = if c.pdu_bytes() > 126 { 2 } else { 1 };
        set(self.li, &mut c.li_bytes);
        c.tti = self.tti.unwrap_or(c.tti);
        c.one_way_delay = self.delay.unwrap_or(c.one_way_delay);
        if let Some(w) = self.tx_window {
            check_range("tx_window", w, 1, 2047)?;
            c.tx_window = w;
        }
        c.max_dat = match self.max_dat {
            None => c.max_dat,
            Some(MaxDat::Limit(n)) => Some(n),
            Some(MaxDat::Unlimited | MaxDat::Adaptive) => None,
        };
        let adaptive = self.max_dat == Some(MaxDat::Adaptive);
        match (&self.adaptive, adaptive) {
            (Some(_), false) => {
                return Err(ConfigError::at_key(
                    "adaptive",
                    "is only used with max_dat = \"adaptive\"; set it or remove this table",
                ))
            }
            (None, true) => {
                return Err(ConfigError::at_key(
                    "adaptive",
                    "missing; max_dat = \"adaptive\" needs adaptive = { alpha = …, estimator = \"receiver\" | \"sender\" }",
                ))
            }
            (Some(a), true) => {
                if !(0.0..=1.0).contains(&a.alpha) {
                    return Err(ConfigError::new(
                        "adaptive.alpha",
                        a.alpha.to_string(),
                        "is out of range; allowed: 0 ≤ alpha ≤ 1",
                    ));
                }
                c.adaptive_alpha = Some(a.alpha);
                if let Some(w) = a.window {
                    check_range("adaptive.window", w, 1, 1_000_000)?;
                    c.sdu_loss_window = w;
                }
            }
            (None, false) => {}
        }
        if let Some(Timer(t)) = self.poll_timer {
            c.poll_timer = t;
        }
        if let Some(PollWindow(w)) = self.poll_window {
            c.poll_window = w;
        }
        c.poll_last_pdu = self.poll_last_pdu.unwrap_or(c.poll_last_pdu);
        c.poll_last_retx = self.poll_last_retx.unwrap_or(c.poll_last_retx);
        if let Some(Timer(t)) = self.status_prohibit {
            c.status_prohibit = t;
        }
        c.missing_pdu_detection = self
            .missing_pdu_detection
            .unwrap_or(c.missing_pdu_detection);
        c.in_order_delivery = self.in_order_delivery.unwrap_or(c.in_order_delivery);
        c.mrw_timer = self.mrw_timer.unwrap_or(c.mrw_timer);
        c.epc = self.epc.unwrap_or(c.epc);
        c.buffer_limit = self.buffer.unwrap_or(c.buffer_limit);
        c.buffer_counts = self.buffer_counts.unwrap_or(c.buffer_counts);
        c.feedback = self.feedback.unwrap_or(c.feedback);
        if c.feedback == Feedback::Ideal {
            // No polls and no gap-triggered STATUS: the sender already knows.
            c.poll_timer = None;
            c.poll_window = None;
            c.poll_last_pdu = false;
            c.poll_last_retx = false;
            c.missing_pdu_detection = false;
        }
        c.check().map_err(|m| ConfigError::at_key("", m))?;
        Ok(c)
    }

    /// The AQM tables' entries, checked against the bearer's buffer.
    fn aqm_table(&self, cfg: &RlcConfig) -> Result<Vec<(Rate, &QueueConfig, String)>> {
        let mut table = Vec::new();
        for (i, e) in self.aqm_table.iter().flatten().enumerate() {
            let path = format!("aqm_table[{i}].queue");
            bearer_aqm(&e.queue, e.rate.bps(), cfg, &path, false)?;
            table.push((e.rate, &e.queue, path));
        }
        Ok(table)
    }

    /// Direction `key`'s rate schedule, AQM and channel.
    fn direction(
        &self,
        key: &'static str,
        cfg: &RlcConfig,
        table: &[(Rate, &QueueConfig, String)],
        name: &str,
        seed: u64,
    ) -> Result<RlcDirection> {
        let none = RlcDirectionConfig::default();
        let own = self.overrides(key).unwrap_or(&none);
        let mut schedule = self.schedule(own, key, cfg, table)?;
        // The initial AQM: the first step's, else the direction's `queue`, else drop-tail.
        let (queue, qp) = pick(&own.queue, &self.queue, key, "queue");
        let fq = queue.and_then(|q| q.model().flow_queues());
        if fq.is_some() && (schedule.iter().any(|s| s.aqm.is_some()) || !table.is_empty()) {
            return Err(ConfigError::at_key(
                join(&qp, "kind"),
                "\"fq_codel\" schedules the buffer for the whole run; an aqm_table or a \
                 rate step's queue cannot replace it (give them another kind, or drop them)",
            ));
        }
        let aqm = match (schedule[0].aqm.take(), queue) {
            (Some(a), _) => a,
            (None, Some(q)) => bearer_aqm(q, schedule[0].rate_bps, cfg, &qp, true)?,
            (None, None) => Box::new(DropTail),
        };
        let (channel, cp) = pick(&own.channel, &self.channel, key, "channel");
        let channel: Box<dyn Channel> = match channel {
            Some(c) => c
                .build(Some(cfg.tti), Rng::stream(seed, &format!("link:{name}")))
                .map_err(|e| e.at(&cp))?,
            None => Box::new(Perfect),
        };
        Ok(RlcDirection {
            schedule,
            aqm,
            channel,
            rng: Rng::stream(seed, &format!("queue:{name}")),
            fq,
        })
    }

    /// Direction `key`'s rate schedule (one step for a constant `rate`), each
    /// step with its AQM if it has one.
    fn schedule(
        &self,
        own: &RlcDirectionConfig,
        key: &'static str,
        cfg: &RlcConfig,
        table: &[(Rate, &QueueConfig, String)],
    ) -> Result<Vec<RateStep>> {
        // `rate` and `rate_schedule` are one setting, as on a wired link: a
        // direction that gives either replaces the link's (finding F2).
        let (rate, rp, steps, sp) = if own.rate.is_some() || own.rate_schedule.is_some() {
            let (r, rp) = pick(&own.rate, &None, key, "rate");
            let (s, sp) = pick(&own.rate_schedule, &None, key, "rate_schedule");
            (r, rp, s, sp)
        } else {
            let (r, rp) = pick(&None, &self.rate, key, "rate");
            let (s, sp) = pick(&None, &self.rate_schedule, key, "rate_schedule");
            (r, rp, s, sp)
        };
        let steps: Vec<(RateStepConfig, String)> = match (steps, rate) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::at_key(
                    key,
                    "give either `rate` or `rate_schedule`, not both",
                ))
            }
            (Some(s), None) => s
                .iter()
                .enumerate()
                .map(|(i, st)| (st.clone(), format!("{sp}[{i}]")))
                .collect(),
            (None, Some(r)) => vec![(
                RateStepConfig {
                    at: Time::ZERO,
                    rate: *r,
                    queue: None,
                },
                String::new(),
            )],
            (None, None) => {
                return Err(ConfigError::at_key(
                    "rate",
                    "missing; a radio bearer needs `rate` or `rate_schedule`",
                ))
            }
        };
        check_schedule_times(steps.iter().map(|(st, path)| (st.at, path.as_str())))?;
        let mut schedule = Vec::with_capacity(steps.len());
        for (st, path) in &steps {
            if cfg.pdus_per_tti(st.rate.bps()) == 0 {
                return Err(ConfigError::new(
                    if path.is_empty() {
                        rp.clone()
                    } else {
                        join(path, "rate")
                    },
                    format!("\"{}\"", st.rate),
                    format!(
                        "is too slow: one {}-byte PDU payload does not fit in a {} TTI",
                        cfg.pdu_payload_bytes, cfg.tti
                    ),
                ));
            }
            // The step's own AQM, else the table's entry for its rate.
            let bps = st.rate.bps();
            let aqm = match (&st.queue, table.iter().find(|(r, _, _)| *r == st.rate)) {
                (Some(q), _) => Some(bearer_aqm(q, bps, cfg, &join(path, "queue"), false)?),
                (None, Some((_, q, p))) => Some(bearer_aqm(q, bps, cfg, p, false)?),
                (None, None) => None,
            };
            schedule.push(RateStep {
                at: st.at,
                rate_bps: bps,
                aqm,
            });
        }
        Ok(schedule)
    }

    fn overrides(&self, key: &str) -> Option<&RlcDirectionConfig> {
        match key {
            "ab" => self.ab.as_ref(),
            _ => self.ba.as_ref(),
        }
    }

    fn bearer(&self, a: &str, b: &str, seed: u64) -> Result<RlcBearer> {
        let cfg = self.protocol()?;
        let table = self.aqm_table(&cfg)?;
        let ab = self.direction("ab", &cfg, &table, &format!("{a}->{b}"), seed)?;
        let ba = self.direction("ba", &cfg, &table, &format!("{b}->{a}"), seed)?;
        RlcBearer::new(cfg, ab, ba).map_err(|m| ConfigError::at_key("", m))
    }
}

/// The AQM `q` (at `path`) of a bearer's buffer at `rate_bps`: its limit is
/// the buffer's. Flow queues (FQ-CoDel) only for the `whole_run` queue.
fn bearer_aqm(
    q: &QueueConfig,
    rate_bps: u64,
    cfg: &RlcConfig,
    path: &str,
    whole_run: bool,
) -> Result<Box<dyn Aqm>> {
    if q.model().limit().is_some() {
        return Err(ConfigError::at_key(
            join(path, "limit"),
            "is set by the bearer's `buffer`; remove it",
        ));
    }
    if !whole_run && q.model().flow_queues().is_some() {
        return Err(ConfigError::new(
            join(path, "kind"),
            crate::config::quoted(q.kind()),
            "schedules the buffer for the whole run: give it as the bearer's (or a \
             direction's) `queue`; allowed in an aqm_table or a rate step: \"droptail\", \
             \"red\", \"sbd\", \"codel\" or \"pie\"",
        ));
    }
    q.aqm(rate_bps, cfg.buffer_limit).map_err(|e| e.at(path))
}

impl LinkKind for RlcLinkConfig {
    fn ends(&self) -> (&str, &str) {
        (&self.a, &self.b)
    }

    fn validate(&self) -> Result<()> {
        self.bearer("a", "b", 0).map(|_| ())
    }

    fn build(&self, a: &str, b: &str, seed: u64) -> Result<Box<dyn Link>> {
        Ok(Box::new(self.bearer(a, b, seed)?))
    }

    fn feed(&self) -> Option<Feed<'_>> {
        self.adaptive.as_ref().map(|a| Feed {
            path: "adaptive",
            flow: a.flow.as_deref(),
            side: a.estimator,
        })
    }

    fn check_feed(&self, dir: Dir, flow: &str) -> Result<()> {
        let key = if dir == Dir::AB { "ab" } else { "ba" };
        let channel = self
            .overrides(key)
            .and_then(|d| d.channel.as_ref())
            .or(self.channel.as_ref());
        let got = match channel {
            Some(ChannelConfig::GilbertElliott(_)) => return Ok(()),
            Some(c) => format!("a {} channel", c.kind()),
            None => "no channel".into(),
        };
        Err(ConfigError::at_key(
            join(key, "channel"),
            format!(
                "max_dat = \"adaptive\" needs a gilbert_elliott channel on the direction carrying flow '{flow}' ({key}); got {got}"
            ),
        ))
    }
}
