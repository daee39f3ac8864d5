//! Scenario files: parsing, `[params]` substitution, validation, building the
//! network, and running it.
//!
//! Everything a user can get wrong is caught here, at the edge, and reported
//! as one [`ScenarioError`] naming the key path, the value and what is allowed.

mod model;
pub mod params;
pub mod units;

pub use model::ScenarioFile;

use model::{
    AdaptiveSection, ByteSize, ChannelKind, ChannelSection, DirectionSection, FecScheme,
    FecSection, FloatOrWord, IntOrWord, LinkKind, LinkSection, LtSection, QueueKind, QueueSection,
    RateStepSection, TcpSection,
};

use crate::api::{RunOptions, RunOutput, Source};
use crate::aqm::{Aqm, DropTail, Limit, Queue, Red, RedConfig, Sbd, SbdConfig};
use crate::channel::ChannelConfig;
use crate::fec::{matched_repair, unit_erasure, RsCode, RS_MAX_N};
use crate::link::rlc::{BufferCounts, Epc, RateStep, RlcBearer, RlcConfig, RlcDirection};
use crate::link::Dir;
use crate::link::{FecConfig, FragmentErasure, Link, WiredConfig, WiredDirection, WiredLink};
use crate::net::{FlowSpec, LinkId, NetworkBuilder, Simulation};
use crate::packet::FlowId;
use crate::rng::Rng;
use crate::tcp::{App, Bin, CcKind, EstimatorSide, LtConfig, TcpConfig, Variant};
use crate::time::Time;

/// A scenario that cannot be run: where, what, and what is allowed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ScenarioError {
    /// Key path of the offending value, e.g. `links[2].ab.loss`.
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.into(),
        message: message.into(),
    }
}

/// A scenario ready to build: resolved parameters and the typed file.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Resolved `[params]` (after overrides), in file order.
    pub params: Vec<(String, toml::Value)>,
    /// The typed scenario.
    pub file: ScenarioFile,
}

/// Parse, substitute parameters and type-check a scenario.
pub fn load(src: Source, overrides: &[(String, String)]) -> Result<Loaded, ScenarioError> {
    let mut doc = match src {
        Source::Toml(text) => toml::from_str::<toml::Table>(&text).map_err(|e| {
            err(
                "scenario",
                format!("not valid TOML: {}", e.to_string().trim()),
            )
        })?,
        Source::Table(t) => t,
    };
    let params = params::resolve(&doc, overrides)?;
    params::substitute(&mut doc, &params)?;
    let file: ScenarioFile = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = inner.trim();
        // serde's untagged-enum message is unhelpful; say what is allowed.
        let msg = if inner.contains("did not match any variant of untagged enum ByteSize") {
            "expected a byte count: an integer (bytes) or a string with a unit such as \"64KiB\"".to_string()
        } else {
            inner.to_string()
        };
        err(if path == "." { "scenario".to_string() } else { path }, msg)
    })?;
    Ok(Loaded { params, file })
}

/// JSON Schema of scenario files, for editors.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(ScenarioFile)).unwrap_or_default()
}

fn time_at(path: &str, s: &str) -> Result<Time, ScenarioError> {
    units::time(s).map_err(|m| err(path, m))
}

fn prob(path: &str, p: f64) -> Result<f64, ScenarioError> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(err(
            path,
            format!("{p} is not a probability; allowed: 0 ≤ p ≤ 1"),
        ))
    }
}

fn int_in(path: &str, v: i64, lo: i64, hi: i64) -> Result<i64, ScenarioError> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(err(
            path,
            format!("{v} is out of range; allowed: {lo} to {hi}"),
        ))
    }
}

fn byte_size(path: &str, v: &ByteSize) -> Result<u64, ScenarioError> {
    match v {
        ByteSize::Int(i) if *i >= 0 => Ok(*i as u64),
        ByteSize::Int(i) => Err(err(
            path,
            format!("{i} is negative; allowed: a byte count ≥ 0"),
        )),
        ByteSize::Str(s) => units::bytes(s).map_err(|m| err(path, m)),
    }
}

/// Overlay `s` (at key path `path`) on `base`.
fn tcp_config(base: &TcpConfig, s: &TcpSection, path: &str) -> Result<TcpConfig, ScenarioError> {
    let mut c = base.clone();
    if let Some(v) = &s.variant {
        c.variant = match v.as_str() {
            "reno" => Variant::Reno,
            "newreno" => Variant::NewReno,
            "sack" => Variant::Sack,
            _ => {
                return Err(err(
                    format!("{path}.variant"),
                    format!("'{v}' is not a TCP variant; allowed: reno, newreno, sack"),
                ))
            }
        };
    }
    if let Some(v) = &s.cc {
        c.cc = match v.as_str() {
            "newreno" | "reno" => CcKind::NewReno,
            _ => {
                return Err(err(
                    format!("{path}.cc"),
                    format!("'{v}' is not a congestion control; allowed: newreno"),
                ))
            }
        };
    }
    if let Some(v) = s.mss {
        c.mss = int_in(&format!("{path}.mss"), v, 1, 65495)? as u32;
    }
    if let Some(v) = s.initial_window {
        c.initial_window = int_in(&format!("{path}.initial_window"), v, 1, 10)? as u32;
    }
    if let Some(v) = &s.rwnd {
        let p = format!("{path}.rwnd");
        let w = byte_size(&p, v)?;
        if w == 0 || w > 1 << 30 {
            return Err(err(
                p,
                format!("{w} bytes is out of range; allowed: 1 B to 1 GiB"),
            ));
        }
        c.rwnd = w;
    }
    if let Some(v) = s.ecn {
        c.ecn = v;
    }
    if let Some(v) = s.timestamps {
        c.timestamps = v;
        c.sack_blocks_max = if v { 3 } else { 4 };
    }
    if let Some(v) = s.delayed_ack {
        c.delayed_ack = v;
    }
    if let Some(v) = &s.delack_timeout {
        c.delack_timeout = time_at(&format!("{path}.delack_timeout"), v)?;
    }
    if let Some(v) = &s.min_rto {
        c.min_rto = time_at(&format!("{path}.min_rto"), v)?;
    }
    if let Some(v) = &s.max_rto {
        c.max_rto = time_at(&format!("{path}.max_rto"), v)?;
    }
    if let Some(v) = &s.initial_rto {
        c.initial_rto = time_at(&format!("{path}.initial_rto"), v)?;
    }
    if let Some(v) = s.dupack_threshold {
        c.dupack_threshold = int_in(&format!("{path}.dupack_threshold"), v, 1, 1000)? as u32;
    }
    if let Some(v) = s.handshake {
        c.handshake = v;
    }
    if let Some(v) = s.limited_transmit {
        c.limited_transmit = v;
    }
    if let Some(v) = s.prr {
        c.prr = v;
    }
    if s.mss.is_some() {
        c.lt.mss_max = c.mss;
    }
    if let Some(lt) = &s.lt {
        lt_config(&mut c.lt, lt, &format!("{path}.lt"))?;
    }
    if c.lt.any() {
        c.lt.validate()
            .map_err(|(key, m)| err(format!("{path}.lt.{key}"), m))?;
        if c.lt.mss_max > c.mss {
            return Err(err(
                format!("{path}.lt.mss_max"),
                format!(
                    "{} is above the TCP mss ({}); need mss_max <= mss",
                    c.lt.mss_max, c.mss
                ),
            ));
        }
        if c.variant != Variant::Sack {
            return Err(err(
                format!("{path}.lt"),
                "LT-TCP extends TCP-SACK; set variant = \"sack\"",
            ));
        }
        if c.lt.ecn_only && !c.ecn {
            return Err(err(
                format!("{path}.lt.ecn_only"),
                "needs ECN: set ecn = true (without it no congestion signal is left)",
            ));
        }
    }
    if c.min_rto.0 == 0 || c.min_rto > c.max_rto {
        return Err(err(
            format!("{path}.min_rto"),
            "must be positive and not above max_rto",
        ));
    }
    if c.initial_rto.0 == 0 {
        return Err(err(format!("{path}.initial_rto"), "must be positive"));
    }
    if c.mss as u64 > c.rwnd {
        return Err(err(
            format!("{path}.rwnd"),
            format!(
                "{} bytes is smaller than one segment (mss {})",
                c.rwnd, c.mss
            ),
        ));
    }
    Ok(c)
}

/// Overlay the `[tcp.lt]` table `s` (at `path`) on `c`.
fn lt_config(c: &mut LtConfig, s: &LtSection, path: &str) -> Result<(), ScenarioError> {
    for (v, field) in [
        (s.ecn_only, &mut c.ecn_only),
        (s.adaptive_mss, &mut c.adaptive_mss),
        (s.proactive_fec, &mut c.proactive_fec),
        (s.reactive_fec, &mut c.reactive_fec),
    ] {
        if let Some(v) = v {
            *field = v;
        }
    }
    if let Some(v) = &s.estimator {
        c.estimator = match v.as_str() {
            "sender" => EstimatorSide::Sender,
            "receiver" => EstimatorSide::Receiver,
            _ => {
                return Err(err(
                    format!("{path}.estimator"),
                    format!("'{v}' is not an estimator side; allowed: sender, receiver"),
                ))
            }
        };
    }
    // Range checks that need the raw value; the relations are checked by LtConfig::validate.
    if let Some(v) = s.g_min_segments {
        c.g_min_segments = int_in(&format!("{path}.g_min_segments"), v, 1, 254)? as u32;
    }
    if let Some(v) = s.mss_min {
        c.mss_min = int_in(&format!("{path}.mss_min"), v, 1, 65495)? as u32;
    }
    if let Some(v) = s.mss_max {
        c.mss_max = int_in(&format!("{path}.mss_max"), v, 1, 65495)? as u32;
    }
    if let Some(v) = s.block_max {
        c.block_max = int_in(&format!("{path}.block_max"), v, 2, 255)? as u16;
    }
    for (bins, key, dst) in [
        (&s.proactive_bins, "proactive_bins", &mut c.proactive_bins),
        (&s.reactive_bins, "reactive_bins", &mut c.reactive_bins),
    ] {
        if let Some(bins) = bins {
            let mut out = Vec::with_capacity(bins.len());
            for (i, &(upto, packets)) in bins.iter().enumerate() {
                let p = format!("{path}.{key}[{i}]");
                if !upto.is_finite() {
                    return Err(err(
                        p,
                        format!("upper bound {upto} is not a number in (0, 1]"),
                    ));
                }
                let packets = int_in(&p, packets, 0, 253)? as u16;
                out.push(Bin { upto, packets });
            }
            *dst = out;
        }
    }
    Ok(())
}

/// The queue limit of `q` (default 100 packets).
fn queue_limit(q: &QueueSection, path: &str) -> Result<Limit, ScenarioError> {
    match &q.limit {
        Some(s) => units::limit(s).map_err(|m| err(format!("{path}.limit"), m)),
        None => Ok(Limit::Packets(100)),
    }
}

/// The AQM policy of queue section `q` (at key path `path`) guarding a buffer
/// of `limit` in front of a link of `rate_bps`. Keys that belong to another
/// kind are refused.
fn build_aqm(
    q: &QueueSection,
    path: &str,
    rate_bps: u64,
    limit: Limit,
) -> Result<Box<dyn Aqm>, ScenarioError> {
    let given = [
        ("minth", q.minth.is_some()),
        ("maxth", q.maxth.is_some()),
        ("maxp", q.maxp.is_some()),
        ("wq", q.wq.is_some()),
        ("gentle", q.gentle.is_some()),
        ("ecn", q.ecn.is_some()),
        ("hard_drop", q.hard_drop.is_some()),
        ("instantaneous", q.instantaneous.is_some()),
        ("byte_mode", q.byte_mode.is_some()),
        ("mean_pkt_size", q.mean_pkt_size.is_some()),
        ("tr", q.tr.is_some()),
        ("alpha", q.alpha.is_some()),
    ];
    let (kind, allowed): (&str, &[&str]) = match q.kind {
        QueueKind::Droptail => ("droptail", &[]),
        QueueKind::Red => (
            "red",
            &[
                "minth",
                "maxth",
                "maxp",
                "wq",
                "gentle",
                "ecn",
                "hard_drop",
                "instantaneous",
                "byte_mode",
                "mean_pkt_size",
            ],
        ),
        QueueKind::Sbd => ("sbd", &["minth", "maxth", "tr", "alpha"]),
    };
    if let Some((k, _)) = given.iter().find(|(k, set)| *set && !allowed.contains(k)) {
        return Err(err(
            format!("{path}.{k}"),
            if allowed.is_empty() {
                format!("is not a key of a {kind} queue; a {kind} queue takes only `limit`")
            } else {
                format!(
                    "is not a key of a {kind} queue; its keys: limit, {}",
                    allowed.join(", ")
                )
            },
        ));
    }
    let cap = match limit {
        Limit::Packets(n) => f64::from(n),
        Limit::Bytes(b) => b as f64,
    };
    let need = |v: Option<f64>, k: &str| {
        v.ok_or_else(|| {
            err(
                format!("{path}.{k}"),
                format!("missing; a {kind} queue needs {k}"),
            )
        })
    };
    match q.kind {
        QueueKind::Droptail => Ok(Box::new(DropTail)),
        QueueKind::Red => {
            let d = RedConfig::default();
            let cfg = RedConfig {
                min_th: need(q.minth, "minth")?,
                max_th: need(q.maxth, "maxth")?,
                max_p: q.maxp.unwrap_or(d.max_p),
                wq: q.wq.unwrap_or(d.wq),
                gentle: q.gentle.unwrap_or(d.gentle),
                ecn: q.ecn.unwrap_or(d.ecn),
                hard_drop: q.hard_drop.unwrap_or(d.hard_drop),
                instantaneous: q.instantaneous.unwrap_or(d.instantaneous),
                byte_mode: q.byte_mode.unwrap_or(d.byte_mode),
                mean_pkt_size: q.mean_pkt_size.unwrap_or(d.mean_pkt_size),
                link_rate_bps: rate_bps,
            };
            cfg.check().map_err(|m| err(path, m))?;
            if cfg.min_th > cap {
                return Err(err(
                    format!("{path}.minth"),
                    format!("{} is above the queue limit {cap}", cfg.min_th),
                ));
            }
            Ok(Box::new(Red::new(cfg)))
        }
        QueueKind::Sbd => {
            let tr = q.tr.as_deref().ok_or_else(|| {
                err(
                    format!("{path}.tr"),
                    "missing; an sbd queue needs tr (reaction time, e.g. \"500ms\")",
                )
            })?;
            let cfg = SbdConfig {
                min_th: need(q.minth, "minth")?,
                max_th: need(q.maxth, "maxth")?,
                t_r: time_at(&format!("{path}.tr"), tr)?,
                alpha: need(q.alpha, "alpha")?,
            };
            cfg.check().map_err(|m| err(path, m))?;
            if cfg.max_th > cap {
                return Err(err(
                    format!("{path}.maxth"),
                    format!("{} is above the queue limit {cap}", cfg.max_th),
                ));
            }
            Ok(Box::new(Sbd::new(cfg)))
        }
    }
}

fn build_queue(
    q: &QueueSection,
    path: &str,
    rate_bps: u64,
    rng: Rng,
) -> Result<Queue, ScenarioError> {
    let limit = queue_limit(q, path)?;
    Ok(Queue::new(limit, build_aqm(q, path, rate_bps, limit)?, rng))
}

/// The channel of a link direction at key path `path`: `section`, or `loss`
/// as an i.i.d. channel, or none. `default_slot` is the link's own slot (a
/// radio link's TTI), if it has one. Returns the config and its slot length.
fn channel_config(
    section: Option<&ChannelSection>,
    loss: Option<f64>,
    path: &str,
    default_slot: Option<Time>,
) -> Result<(ChannelConfig, Time), ScenarioError> {
    let Some(c) = section else {
        let p = prob(&format!("{path}.loss"), loss.unwrap_or(0.0))?;
        let cfg = if p > 0.0 {
            ChannelConfig::Bernoulli { p }
        } else {
            ChannelConfig::Perfect
        };
        return Ok((cfg, default_slot.unwrap_or(Time::from_millis(1))));
    };
    let path = format!("{path}.channel");
    if loss.is_some() {
        return Err(err(&path, "give either `loss` or `channel`, not both"));
    }
    let given = [
        ("p", c.p.is_some()),
        ("p_good", c.p_good.is_some()),
        ("p_bad", c.p_bad.is_some()),
        ("g", c.g.is_some()),
        ("b", c.b.is_some()),
        ("fd_t", c.fd_t.is_some()),
        ("fer", c.fer.is_some()),
    ];
    let (kind, used, required): (&str, &[&str], &[&str]) = match c.kind {
        ChannelKind::Bernoulli => ("bernoulli", &["p"], &["p"]),
        ChannelKind::GilbertElliott => (
            "gilbert_elliott",
            &["p_good", "p_bad", "g", "b"],
            &["p_good", "p_bad", "g", "b"],
        ),
        ChannelKind::Rayleigh => (
            "rayleigh",
            &["fd_t", "fer", "p_good", "p_bad"],
            &["fd_t", "fer"],
        ),
    };
    for (k, set) in given {
        if set && !used.contains(&k) {
            return Err(err(
                format!("{path}.{k}"),
                format!(
                    "is not a parameter of a {kind} channel; its keys: {}",
                    used.join(", ")
                ),
            ));
        }
    }
    for k in required {
        if !given.iter().any(|(g, set)| g == k && *set) {
            return Err(err(
                format!("{path}.{k}"),
                format!("missing; a {kind} channel needs {}", required.join(", ")),
            ));
        }
    }
    let cfg = match c.kind {
        ChannelKind::Bernoulli => ChannelConfig::Bernoulli {
            p: c.p.unwrap_or(0.0),
        },
        ChannelKind::GilbertElliott => ChannelConfig::GilbertElliott {
            p_good: c.p_good.unwrap_or(0.0),
            p_bad: c.p_bad.unwrap_or(0.0),
            g: c.g.unwrap_or(0.0),
            b: c.b.unwrap_or(0.0),
        },
        ChannelKind::Rayleigh => ChannelConfig::Rayleigh {
            fd_t: c.fd_t.unwrap_or(0.0),
            fer: c.fer.unwrap_or(0.0),
            p_good: c.p_good.unwrap_or(0.0),
            p_bad: c.p_bad.unwrap_or(1.0),
        },
    };
    cfg.check().map_err(|m| err(&path, m))?;
    let slot = match (&c.slot, default_slot) {
        (Some(s), _) => {
            let t = time_at(&format!("{path}.slot"), s)?;
            if t.0 == 0 {
                return Err(err(format!("{path}.slot"), "must be positive"));
            }
            t
        }
        (None, Some(t)) => t,
        (None, None) if c.kind == ChannelKind::Bernoulli => Time::from_millis(1),
        (None, None) => {
            return Err(err(format!("{path}.slot"), format!("missing; a {kind} channel on a wired link needs its slot length, e.g. slot = \"10ms\"")))
        }
    };
    Ok((cfg, slot))
}

/// Keys of a `[[links]]` entry that only a radio bearer takes.
fn rlc_keys_given(l: &LinkSection) -> Vec<&'static str> {
    [
        ("preset", l.preset.is_some()),
        ("pdu_payload", l.pdu_payload.is_some()),
        ("pdu_header", l.pdu_header.is_some()),
        ("li", l.li.is_some()),
        ("tti", l.tti.is_some()),
        ("tx_window", l.tx_window.is_some()),
        ("max_dat", l.max_dat.is_some()),
        ("adaptive", l.adaptive.is_some()),
        ("poll_timer", l.poll_timer.is_some()),
        ("poll_window", l.poll_window.is_some()),
        ("poll_last_pdu", l.poll_last_pdu.is_some()),
        ("poll_last_retx", l.poll_last_retx.is_some()),
        ("status_prohibit", l.status_prohibit.is_some()),
        ("missing_pdu_detection", l.missing_pdu_detection.is_some()),
        ("in_order_delivery", l.in_order_delivery.is_some()),
        ("mrw_timer", l.mrw_timer.is_some()),
        ("epc", l.epc.is_some()),
        ("buffer", l.buffer.is_some()),
        ("buffer_counts", l.buffer_counts.is_some()),
        ("rate_schedule", l.rate_schedule.is_some()),
        ("aqm_table", l.aqm_table.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect()
}

/// A size in bytes that may also be written in bits ("320bit").
fn bytes_or_bits(path: &str, v: &ByteSize) -> Result<u64, ScenarioError> {
    if let ByteSize::Str(s) = v {
        if let Some(bits) = s.trim().strip_suffix("bit") {
            let b: u64 = bits.trim().parse().map_err(|_| {
                err(
                    path,
                    format!("'{s}' is not a size; write bytes (\"40B\") or bits (\"320bit\")"),
                )
            })?;
            if !b.is_multiple_of(8) {
                return Err(err(path, format!("'{s}' is not a whole number of bytes")));
            }
            return Ok(b / 8);
        }
    }
    byte_size(path, v)
}

/// An optional timer: a time, or "off".
fn timer_or_off(path: &str, s: &str) -> Result<Option<Time>, ScenarioError> {
    if s.trim() == "off" {
        return Ok(None);
    }
    let t = time_at(path, s)?;
    if t.0 == 0 {
        return Err(err(path, "must be positive, or \"off\""));
    }
    Ok(Some(t))
}

/// The RLC configuration of a `kind = "rlc_am"` link entry at `p`.
fn rlc_config(l: &LinkSection, p: &str) -> Result<RlcConfig, ScenarioError> {
    let mut c = match l.preset.as_deref() {
        None | Some("seed000") => RlcConfig::seed000(),
        Some(other) => {
            return Err(err(
                format!("{p}.preset"),
                format!("'{other}' is not a preset; allowed: seed000"),
            ))
        }
    };
    if let Some(v) = &l.pdu_payload {
        c.pdu_payload_bytes = bytes_or_bits(&format!("{p}.pdu_payload"), v)? as u32;
    }
    if let Some(v) = &l.pdu_header {
        c.header_bytes = bytes_or_bits(&format!("{p}.pdu_header"), v)? as u32;
    }
    if let Some(v) = &l.li {
        c.li_bytes = bytes_or_bits(&format!("{p}.li"), v)? as u32;
    }
    if let Some(v) = &l.tti {
        c.tti = time_at(&format!("{p}.tti"), v)?;
    }
    if let Some(v) = &l.delay {
        c.one_way_delay = time_at(&format!("{p}.delay"), v)?;
    }
    if let Some(v) = l.tx_window {
        c.tx_window = int_in(&format!("{p}.tx_window"), v, 1, 2047)? as u32;
    }
    let mut adaptive = false;
    if let Some(v) = &l.max_dat {
        c.max_dat = match v {
            IntOrWord::Int(n) => Some(int_in(&format!("{p}.max_dat"), *n, 1, 1_000_000)? as u32),
            IntOrWord::Word(w) if w == "none" || w == "unlimited" => None,
            IntOrWord::Word(w) if w == "adaptive" => {
                adaptive = true;
                None
            }
            // A number written as text: what a string parameter (`max_dat =
            // "${max_dat}"` with default "none") gives for `--set max_dat=4`.
            IntOrWord::Word(w) if w.trim().parse::<i64>().is_ok() => {
                let n = w.trim().parse::<i64>().unwrap_or_default();
                Some(int_in(&format!("{p}.max_dat"), n, 1, 1_000_000)? as u32)
            }
            IntOrWord::Word(w) => {
                return Err(err(
                    format!("{p}.max_dat"),
                    format!(
                        "'{w}' is not allowed; write a number of transmissions ≥ 1, \"unlimited\" or \"adaptive\""
                    ),
                ))
            }
        };
    }
    match (&l.adaptive, adaptive) {
        (Some(_), false) => {
            return Err(err(
                format!("{p}.adaptive"),
                "is only used with max_dat = \"adaptive\"; set it or remove this table",
            ))
        }
        (None, true) => {
            return Err(err(
                format!("{p}.adaptive"),
                "missing; max_dat = \"adaptive\" needs adaptive = { alpha = …, estimator = \"receiver\" | \"sender\" }",
            ))
        }
        (Some(a), true) => {
            let ap = format!("{p}.adaptive");
            let alpha = a.alpha.ok_or_else(|| {
                err(
                    format!("{ap}.alpha"),
                    "missing; the accepted link loss as a fraction of the wired loss, 0 ≤ alpha ≤ 1",
                )
            })?;
            if !(0.0..=1.0).contains(&alpha) {
                return Err(err(
                    format!("{ap}.alpha"),
                    format!("{alpha} is out of range; allowed: 0 ≤ alpha ≤ 1"),
                ));
            }
            c.adaptive_alpha = Some(alpha);
            adaptive_side(a, &ap)?;
            if let Some(w) = a.window {
                c.sdu_loss_window = int_in(&format!("{ap}.window"), w, 1, 1_000_000)? as u32;
            }
        }
        (None, false) => {}
    }
    if let Some(v) = &l.poll_timer {
        c.poll_timer = timer_or_off(&format!("{p}.poll_timer"), v)?;
    }
    if let Some(v) = &l.poll_window {
        c.poll_window = match v {
            FloatOrWord::Num(x) if *x > 0.0 && *x <= 1.0 => Some(*x),
            FloatOrWord::Word(w) if w == "off" => None,
            _ => {
                return Err(err(
                    format!("{p}.poll_window"),
                    "allowed: a fraction of the window, 0 < x ≤ 1, or \"off\"",
                ))
            }
        };
    }
    if let Some(v) = l.poll_last_pdu {
        c.poll_last_pdu = v;
    }
    if let Some(v) = l.poll_last_retx {
        c.poll_last_retx = v;
    }
    if let Some(v) = &l.status_prohibit {
        c.status_prohibit = timer_or_off(&format!("{p}.status_prohibit"), v)?;
    }
    if let Some(v) = l.missing_pdu_detection {
        c.missing_pdu_detection = v;
    }
    if let Some(v) = l.in_order_delivery {
        c.in_order_delivery = v;
    }
    if let Some(v) = &l.mrw_timer {
        c.mrw_timer = time_at(&format!("{p}.mrw_timer"), v)?;
    }
    if let Some(v) = &l.epc {
        c.epc = match v.trim() {
            "auto" => Epc::RoundTrip,
            "off" => Epc::Off,
            _ => match timer_or_off(&format!("{p}.epc"), v) {
                Ok(Some(t)) => Epc::Timer(t),
                _ => return Err(err(format!("{p}.epc"), format!("'{v}' is not allowed; write \"auto\" (one round trip), a time such as \"60ms\", or \"off\""))),
            },
        };
    }
    if let Some(v) = &l.buffer {
        c.buffer_limit = units::limit(v).map_err(|m| err(format!("{p}.buffer"), m))?;
    }
    if let Some(v) = &l.buffer_counts {
        c.buffer_counts = match v.trim() {
            "unacknowledged" => BufferCounts::Unacknowledged,
            "unsent" => BufferCounts::Unsent,
            _ => {
                return Err(err(
                    format!("{p}.buffer_counts"),
                    format!(
                        "'{v}' is not allowed; write \"unacknowledged\" (default) or \"unsent\""
                    ),
                ))
            }
        };
    }
    c.check().map_err(|m| err(p, m))?;
    Ok(c)
}

/// The estimator side of an `adaptive` table at `ap`.
fn adaptive_side(a: &AdaptiveSection, ap: &str) -> Result<EstimatorSide, ScenarioError> {
    match a.estimator.as_deref().map(str::trim) {
        Some("receiver") => Ok(EstimatorSide::Receiver),
        Some("sender") => Ok(EstimatorSide::Sender),
        Some(other) => Err(err(
            format!("{ap}.estimator"),
            format!("'{other}' is not allowed; write \"receiver\" or \"sender\""),
        )),
        None => Err(err(
            format!("{ap}.estimator"),
            "missing; where P_TCP is measured: \"receiver\" or \"sender\"",
        )),
    }
}

/// Connect the adaptive MaxDAT of link `id` (entry `l` at key path `p`) to
/// its flow, and check the direction the flow's data crosses has a
/// Gilbert–Elliott channel (the analytic model needs one).
fn wire_adaptive(
    net: &mut NetworkBuilder,
    l: &LinkSection,
    p: &str,
    id: LinkId,
    flows: &[String],
) -> Result<(), ScenarioError> {
    let Some(a) = &l.adaptive else { return Ok(()) };
    let ap = format!("{p}.adaptive");
    let side = adaptive_side(a, &ap)?;
    let shown = || {
        let v: Vec<&str> = flows.iter().take(12).map(|s| s.as_str()).collect();
        format!(
            "{}{}",
            v.join(", "),
            if flows.len() > 12 { ", …" } else { "" }
        )
    };
    let flow = match &a.flow {
        Some(name) => flows.iter().position(|f| f == name).ok_or_else(|| {
            err(
                format!("{ap}.flow"),
                format!("'{name}' is not a flow; flows: {}", shown()),
            )
        })?,
        None if flows.len() == 1 => 0,
        None => {
            return Err(err(
                format!("{ap}.flow"),
                format!(
                "missing; the scenario has {} flows, name the one that feeds the controller: {}",
                flows.len(),
                shown()
            ),
            ))
        }
    };
    let dir = net
        .cross_layer(id, FlowId(flow as u32), side)
        .map_err(|m| err(format!("{ap}.flow"), m))?;
    let key = if dir == Dir::AB { "ab" } else { "ba" };
    let d = merge_dir(l, if dir == Dir::AB { &l.ab } else { &l.ba });
    let got = match d.channel.as_ref().map(|c| c.kind) {
        Some(ChannelKind::GilbertElliott) => return Ok(()),
        None => "no channel",
        Some(ChannelKind::Bernoulli) => "a bernoulli channel",
        Some(ChannelKind::Rayleigh) => "a rayleigh channel",
    };
    Err(err(
        format!("{p}.{key}.channel"),
        format!(
            "max_dat = \"adaptive\" needs a gilbert_elliott channel on the direction carrying flow '{}' ({key}); got {got}",
            flows[flow]
        ),
    ))
}

/// Build a `kind = "rlc_am"` link between `x` and `y`.
fn build_rlc(
    l: &LinkSection,
    p: &str,
    x: &str,
    y: &str,
    seed: u64,
) -> Result<Box<dyn Link>, ScenarioError> {
    if let Some(k) = [
        ("overhead", l.overhead.is_some()),
        ("loss", l.loss.is_some()),
    ]
    .iter()
    .find(|(_, set)| *set)
    {
        return Err(err(
            format!("{p}.{}", k.0),
            "is not a key of an rlc_am link (use `channel` for radio errors)",
        ));
    }
    let cfg = rlc_config(l, p)?;
    let limit = cfg.buffer_limit;
    let mut table = Vec::new();
    for (i, e) in l.aqm_table.iter().flatten().enumerate() {
        let ep = format!("{p}.aqm_table[{i}]");
        let rate = units::rate(&e.rate).map_err(|m| err(format!("{ep}.rate"), m))?;
        if e.queue.limit.is_some() {
            return Err(err(
                format!("{ep}.queue.limit"),
                "is set by the bearer's `buffer`; remove it",
            ));
        }
        build_aqm(&e.queue, &format!("{ep}.queue"), rate, limit)?; // validate now
        table.push((rate, e.queue.clone(), ep));
    }
    let mut halves = Vec::with_capacity(2);
    for (from, to, dir, key) in [(x, y, &l.ab, "ab"), (y, x, &l.ba, "ba")] {
        if let Some(d) = dir {
            if d.loss.is_some() || d.overhead.is_some() {
                return Err(err(
                    format!("{p}.{key}"),
                    "`loss` and `overhead` are not keys of an rlc_am link",
                ));
            }
        }
        let d = merge_dir(l, dir);
        let dp = format!("{p}.{key}");
        let name = format!("{from}->{to}");
        let steps: Vec<RateStepSection> = match (&d.rate_schedule, &d.rate) {
            (Some(_), Some(_)) => {
                return Err(err(&dp, "give either `rate` or `rate_schedule`, not both"))
            }
            (Some(s), None) => s.clone(),
            (None, Some(r)) => vec![RateStepSection {
                at: "0s".into(),
                rate: r.clone(),
                queue: None,
            }],
            (None, None) => {
                return Err(err(
                    format!("{p}.rate"),
                    "missing; a radio bearer needs `rate` or `rate_schedule`",
                ))
            }
        };
        let queue_at = |rate: u64,
                        own: &Option<QueueSection>,
                        path: &str|
         -> Result<Option<Box<dyn Aqm>>, ScenarioError> {
            if let Some(q) = own {
                if q.limit.is_some() {
                    return Err(err(
                        format!("{path}.queue.limit"),
                        "is set by the bearer's `buffer`; remove it",
                    ));
                }
                return build_aqm(q, &format!("{path}.queue"), rate, limit).map(Some);
            }
            match table.iter().find(|(r, _, _)| *r == rate) {
                Some((_, q, ep)) => build_aqm(q, &format!("{ep}.queue"), rate, limit).map(Some),
                None => Ok(None),
            }
        };
        let mut schedule = Vec::with_capacity(steps.len());
        let mut prev = Time::ZERO;
        for (i, st) in steps.iter().enumerate() {
            let sp = format!("{dp}.rate_schedule[{i}]");
            let at = time_at(&format!("{sp}.at"), &st.at)?;
            if i == 0 && at != Time::ZERO {
                return Err(err(
                    format!("{sp}.at"),
                    "the first step of a rate schedule is at \"0s\"",
                ));
            }
            if at < prev {
                return Err(err(
                    format!("{sp}.at"),
                    format!("'{}' goes back in time; steps must be in time order", st.at),
                ));
            }
            prev = at;
            let rate = units::rate(&st.rate).map_err(|m| err(format!("{sp}.rate"), m))?;
            if cfg.pdus_per_tti(rate) == 0 {
                return Err(err(
                    format!("{sp}.rate"),
                    format!(
                        "at {} one {}-byte PDU payload does not fit in a {} TTI",
                        st.rate, cfg.pdu_payload_bytes, cfg.tti
                    ),
                ));
            }
            schedule.push(RateStep {
                at,
                rate_bps: rate,
                aqm: queue_at(rate, &st.queue, &sp)?,
            });
        }
        // The initial AQM: the first step's own or table entry, else the link's `queue`, else drop-tail.
        let first_rate = schedule[0].rate_bps;
        let initial = match schedule[0].aqm.take() {
            Some(a) => a,
            None => match &d.queue {
                Some(q) => {
                    if q.limit.is_some() {
                        return Err(err(
                            format!("{dp}.queue.limit"),
                            "is set by the bearer's `buffer`; remove it",
                        ));
                    }
                    build_aqm(q, &format!("{dp}.queue"), first_rate, limit)?
                }
                None => Box::new(DropTail),
            },
        };
        let (channel, slot) = channel_config(d.channel.as_ref(), None, &dp, Some(cfg.tti))?;
        halves.push(RlcDirection {
            schedule,
            aqm: initial,
            channel: channel.build(slot, Rng::stream(seed, &format!("link:{name}"))),
            rng: Rng::stream(seed, &format!("queue:{name}")),
        });
    }
    let (Some(ba), Some(ab)) = (halves.pop(), halves.pop()) else {
        unreachable!("two directions were built");
    };
    let bearer = RlcBearer::new(cfg, ab, ba).map_err(|m| err(p, m))?;
    Ok(Box::new(bearer))
}

/// The link-level FEC of a wired direction `d` (key path `path` = `….fec`),
/// whose channel is `channel` and propagation delay `delay`.
fn fec_config(
    f: &FecSection,
    path: &str,
    d: &DirectionSection,
    channel: &ChannelConfig,
    delay: Time,
) -> Result<FecConfig, ScenarioError> {
    let hybrid = f.scheme == FecScheme::Hybrid;
    if !hybrid {
        for (k, set) in [
            ("persistence", f.persistence.is_some()),
            ("feedback_delay", f.feedback_delay.is_some()),
            ("in_order", f.in_order.is_some()),
        ] {
            if set {
                return Err(err(
                    format!("{path}.{k}"),
                    "is a key of scheme = \"hybrid\"; ll-fec never retransmits",
                ));
            }
        }
    }
    let fragment_header = match &f.fragment_header {
        Some(v) => {
            let p = format!("{path}.fragment_header");
            let b = byte_size(&p, v)?;
            if b > 65_535 {
                return Err(err(p, format!("{b} bytes; allowed: 0 to 65535")));
            }
            b as u32
        }
        None => 0,
    };
    let per_size = match &f.per_size {
        Some(v) => {
            let p = format!("{path}.per_size");
            let b = byte_size(&p, v)?;
            if !(1..=65_535).contains(&b) {
                return Err(err(p, format!("{b} bytes; allowed: 1 to 65535")));
            }
            b as u32
        }
        None => 500,
    };
    // How `loss` maps to fragments.
    let per_unit = match f.loss_unit.as_deref() {
        None | Some("packet") => true,
        Some("fragment") => false,
        Some(o) => {
            return Err(err(
                format!("{path}.loss_unit"),
                format!("'{o}' is not a loss unit; allowed: packet, fragment"),
            ))
        }
    };
    if d.channel.is_some() && f.loss_unit.is_some() {
        return Err(err(
            format!("{path}.loss_unit"),
            "applies to `loss`; with a `channel` every fragment is one channel unit",
        ));
    }
    let link_per = match (d.channel.is_some(), channel) {
        (false, ChannelConfig::Bernoulli { p }) => *p,
        _ => 0.0,
    };
    // Fragment erasure probability at packet erasure rate `per` for k data fragments.
    let frag_q = |per: f64, k: u32| {
        if per_unit {
            unit_erasure(per, per_size, per_size.div_ceil(k) + fragment_header)
        } else {
            per
        }
    };
    let (n, k) = match &f.matched_per {
        None => {
            let (n, k) = match (f.n, f.k, hybrid) {
                (Some(n), Some(k), _) => (n, k),
                (None, None, true) => (10, 9),
                (None, _, _) => {
                    return Err(err(
                        format!("{path}.n"),
                        "missing; give n and k, or matched_per with one of them",
                    ))
                }
                (_, None, _) => {
                    return Err(err(
                        format!("{path}.k"),
                        "missing; give n and k, or matched_per with one of them",
                    ))
                }
            };
            let key = if (2..=i64::from(RS_MAX_N)).contains(&n) {
                "k"
            } else {
                "n"
            };
            let c = RsCode::new(n, k).map_err(|m| err(format!("{path}.{key}"), m))?;
            (c.n(), c.k())
        }
        Some(m) => {
            let mp = format!("{path}.matched_per");
            let (per, from_channel) = match m {
                FloatOrWord::Num(v) if (0.0..1.0).contains(v) => (*v, false),
                FloatOrWord::Num(v) => {
                    return Err(err(
                        mp,
                        format!(
                            "{v} is outside the matching domain; allowed: 0 ≤ per < 1, or \"link\""
                        ),
                    ))
                }
                FloatOrWord::Word(w) if w == "link" => match (d.channel.is_some(), channel) {
                    (false, _) => (link_per, false),
                    (true, c) => (
                        c.build(Time::from_millis(1), Rng::stream(0, "m"))
                            .mean_error_rate(),
                        true,
                    ),
                },
                FloatOrWord::Word(w) => {
                    return Err(err(
                        mp,
                        format!(
                        "'{w}' is not allowed; write a packet erasure rate 0 ≤ per < 1 or \"link\""
                    ),
                    ))
                }
            };
            if from_channel && per >= 1.0 {
                return Err(err(
                    mp,
                    "the link's channel loses every unit; nothing to match",
                ));
            }
            if per >= 1.0 {
                return Err(err(mp, "the link's `loss` is 1; allowed: 0 ≤ per < 1"));
            }
            // With a channel, its mean unit error rate is already per fragment.
            let q_of = |k: u32| if from_channel { per } else { frag_q(per, k) };
            match (f.n, f.k) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        format!("{path}.n"),
                        "with matched_per give k (n is chosen) or n (k is chosen), not both",
                    ))
                }
                (None, None) => {
                    return Err(err(
                        format!("{path}.k"),
                        "missing; matched_per needs k (n is chosen) or n (k is chosen)",
                    ))
                }
                (None, Some(k)) => {
                    let k = int_in(&format!("{path}.k"), k, 1, i64::from(RS_MAX_N) - 1)? as u32;
                    let q = q_of(k);
                    let n = matched_repair(k, q).map(|r| u64::from(k) + u64::from(r));
                    match n {
                        Some(n) if n <= u64::from(RS_MAX_N) => (n as u32, k),
                        _ => {
                            return Err(err(
                                mp,
                                format!(
                                    "per {per} (fragment erasure {q:.4}) needs more than {RS_MAX_N} fragments with k = {k}; lower k or the erasure rate"
                                ),
                            ))
                        }
                    }
                }
                (Some(n), None) => {
                    let n = int_in(&format!("{path}.n"), n, 2, i64::from(RS_MAX_N))? as u32;
                    let best = (1..=n).rev().find(|&k| {
                        matched_repair(k, q_of(k))
                            .is_some_and(|r| u64::from(k) + u64::from(r) <= u64::from(n))
                    });
                    match best {
                        Some(k) => (n, k),
                        None => {
                            return Err(err(
                                mp,
                                format!("per {per} cannot be matched with n = {n} fragments; raise n or lower the erasure rate"),
                            ))
                        }
                    }
                }
            }
        }
    };
    let persistence = match f.persistence {
        Some(v) => int_in(&format!("{path}.persistence"), v, 0, 255)? as u32,
        None if hybrid => 3,
        None => 0,
    };
    let feedback_delay = match &f.feedback_delay {
        Some(s) => time_at(&format!("{path}.feedback_delay"), s)?,
        None => delay,
    };
    let erasure = if per_unit && d.channel.is_none() {
        FragmentErasure::Packet {
            per: link_per,
            packet_bytes: per_size,
        }
    } else {
        FragmentErasure::Channel
    };
    let cfg = FecConfig {
        n,
        k,
        fragment_header,
        persistence,
        feedback_delay,
        in_order: f.in_order.unwrap_or(true),
        erasure,
    };
    cfg.check().map_err(|m| err(path, m))?;
    Ok(cfg)
}

fn merge_dir(link: &LinkSection, dir: &Option<DirectionSection>) -> DirectionSection {
    let d = dir.clone().unwrap_or_default();
    DirectionSection {
        rate: d.rate.or_else(|| link.rate.clone()),
        delay: d.delay.or_else(|| link.delay.clone()),
        loss: d.loss.or(link.loss),
        overhead: d.overhead.or_else(|| link.overhead.clone()),
        channel: d.channel.or_else(|| link.channel.clone()),
        rate_schedule: d.rate_schedule.or_else(|| link.rate_schedule.clone()),
        queue: d.queue.or_else(|| link.queue.clone()),
        fec: d.fec.or_else(|| link.fec.clone()),
    }
}

/// Pair up two expanded name lists: zip equal lengths, broadcast a single name.
fn pairs(
    a: Vec<String>,
    b: Vec<String>,
    path: &str,
) -> Result<Vec<(String, String)>, ScenarioError> {
    match (a.len(), b.len()) {
        (x, y) if x == y => Ok(a.into_iter().zip(b).collect()),
        (1, _) => Ok(b.into_iter().map(|y| (a[0].clone(), y)).collect()),
        (_, 1) => Ok(a.into_iter().map(|x| (x, b[0].clone())).collect()),
        (x, y) => Err(err(path, format!("ranges of different lengths ({x} and {y}); use equal lengths or a single name on one side"))),
    }
}

/// Build the simulation of a loaded scenario with run seed `seed`.
pub fn build(loaded: &Loaded, seed: u64) -> Result<(Simulation, Time), ScenarioError> {
    let f = &loaded.file;
    let duration = time_at("duration", &f.duration)?;
    if duration.0 == 0 {
        return Err(err("duration", "must be positive"));
    }
    let mut net = NetworkBuilder::new();
    let mut seen_dirs = std::collections::HashSet::new();
    let mut adaptive_links = Vec::new();
    for (i, l) in f.links.iter().enumerate() {
        let p = format!("links[{i}]");
        let a = params::expand(&l.a, &format!("{p}.a"))?;
        let b = params::expand(&l.b, &format!("{p}.b"))?;
        for (x, y) in pairs(a, b, &p)? {
            if x == y {
                return Err(err(
                    &p,
                    format!("a link joins two different nodes, got '{x}' twice"),
                ));
            }
            if l.kind.unwrap_or_default() == LinkKind::RlcAm {
                for (from, to) in [(&x, &y), (&y, &x)] {
                    if !seen_dirs.insert((from.clone(), to.clone())) {
                        return Err(err(&p, format!("link {from}->{to} is defined twice")));
                    }
                }
                for (key, fec) in [
                    ("fec", l.fec.is_some()),
                    ("ab.fec", l.ab.as_ref().is_some_and(|d| d.fec.is_some())),
                    ("ba.fec", l.ba.as_ref().is_some_and(|d| d.fec.is_some())),
                ] {
                    if fec {
                        return Err(err(
                            format!("{p}.{key}"),
                            "link-level FEC is a wired-link option; a radio bearer has its own ARQ",
                        ));
                    }
                }
                let model = build_rlc(l, &p, &x, &y, seed)?;
                let (na, nb) = (net.node(&x), net.node(&y));
                let id = net.link(na, nb, model);
                if l.adaptive.is_some() {
                    adaptive_links.push((i, p.clone(), id));
                }
                continue;
            }
            if let Some(k) = rlc_keys_given(l).first() {
                return Err(err(
                    format!("{p}.{k}"),
                    "is a radio-bearer key; set kind = \"rlc_am\" or remove it",
                ));
            }
            for (key, d) in [("ab", &l.ab), ("ba", &l.ba)] {
                if d.as_ref().is_some_and(|d| d.rate_schedule.is_some()) {
                    return Err(err(
                        format!("{p}.{key}.rate_schedule"),
                        "is a radio-bearer key; set kind = \"rlc_am\" or remove it",
                    ));
                }
            }
            let mut halves = Vec::with_capacity(2);
            for (from, to, dir, key) in [(&x, &y, &l.ab, "ab"), (&y, &x, &l.ba, "ba")] {
                if !seen_dirs.insert((from.clone(), to.clone())) {
                    return Err(err(&p, format!("link {from}->{to} is defined twice")));
                }
                let d = merge_dir(l, dir);
                let dp = format!("{p}.{key}");
                let rate = d
                    .rate
                    .as_deref()
                    .ok_or_else(|| {
                        err(
                            format!("{p}.rate"),
                            "missing; every link direction needs a rate, e.g. rate = \"10Mbit\"",
                        )
                    })
                    .and_then(|s| units::rate(s).map_err(|m| err(format!("{dp}.rate"), m)))?;
                let delay = match &d.delay {
                    Some(s) => time_at(&format!("{dp}.delay"), s)?,
                    None => Time::ZERO,
                };
                let (channel, slot) = channel_config(d.channel.as_ref(), d.loss, &dp, None)?;
                let overhead = match &d.overhead {
                    Some(v) => {
                        let b = byte_size(&format!("{dp}.overhead"), v)?;
                        if b > 65_535 {
                            return Err(err(
                                format!("{dp}.overhead"),
                                format!("{b} bytes is too much; allowed: 0 to 65535 bytes"),
                            ));
                        }
                        b as u32
                    }
                    None => 0,
                };
                let name = format!("{from}->{to}");
                let queue = build_queue(
                    &d.queue.clone().unwrap_or_default(),
                    &format!("{dp}.queue"),
                    rate,
                    Rng::stream(seed, &format!("queue:{name}")),
                )?;
                let wcfg = WiredConfig {
                    rate_bps: rate,
                    delay,
                    overhead_bytes: overhead,
                };
                let fec = match &d.fec {
                    Some(fs) => Some(fec_config(fs, &format!("{dp}.fec"), &d, &channel, delay)?),
                    None => None,
                };
                let channel = match &fec {
                    // The converted rate replaces the packet-level channel.
                    Some(FecConfig {
                        erasure: FragmentErasure::Packet { .. },
                        ..
                    }) => ChannelConfig::Perfect,
                    _ => channel,
                };
                let channel = channel.build(slot, Rng::stream(seed, &format!("link:{name}")));
                halves.push(match fec {
                    Some(fc) => WiredDirection::with_fec(
                        wcfg,
                        queue,
                        channel,
                        fc,
                        Rng::stream(seed, &format!("fec:{name}")),
                    ),
                    None => WiredDirection::new(wcfg, queue, channel),
                });
            }
            let (Some(ba), Some(ab)) = (halves.pop(), halves.pop()) else {
                unreachable!("two directions were built");
            };
            let (na, nb) = (net.node(&x), net.node(&y));
            net.link(na, nb, Box::new(WiredLink::new(ab, ba)));
        }
    }
    let base = tcp_config(&TcpConfig::default(), &f.tcp, "tcp")?;
    let mut flow_paths = Vec::new();
    let mut flow_names = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, fl) in f.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        let tcp = match &fl.tcp {
            Some(t) => tcp_config(&base, t, &format!("{p}.tcp"))?,
            None => base.clone(),
        };
        let count = int_in(&format!("{p}.count"), fl.count.unwrap_or(1), 1, 100_000)?;
        let start = match &fl.start {
            Some(s) => time_at(&format!("{p}.start"), s)?,
            None => Time::ZERO,
        };
        let jitter = match &fl.start_jitter {
            Some(s) => time_at(&format!("{p}.start_jitter"), s)?,
            None => Time::ZERO,
        };
        let stop = match &fl.stop {
            Some(s) => {
                let t = time_at(&format!("{p}.stop"), s)?;
                if t <= start {
                    return Err(err(
                        format!("{p}.stop"),
                        format!("'{s}' is not after the start ({start})"),
                    ));
                }
                Some(t)
            }
            None => None,
        };
        let app = match &fl.bytes {
            Some(b) => {
                let n = byte_size(&format!("{p}.bytes"), b)?;
                if n == 0 {
                    return Err(err(
                        format!("{p}.bytes"),
                        "a finite transfer needs at least 1 byte",
                    ));
                }
                App::Bytes(n)
            }
            None => App::Bulk,
        };
        let from = params::expand(&fl.from, &format!("{p}.from"))?;
        let to = params::expand(&fl.to, &format!("{p}.to"))?;
        for (x, y) in pairs(from, to, &p)? {
            for (key, name) in [("from", &x), ("to", &y)] {
                if net.find(name).is_none() {
                    return Err(err(
                        format!("{p}.{key}"),
                        format!("'{name}' is not a node of any link"),
                    ));
                }
            }
            for k in 0..count {
                let base_name = fl.name.clone().unwrap_or_else(|| format!("{x}->{y}"));
                let mut name = if count > 1 {
                    format!("{base_name}#{k}")
                } else {
                    base_name.clone()
                };
                let mut dup = 1;
                while names.contains(&name) {
                    dup += 1;
                    name = format!("{base_name}#{dup}");
                }
                names.insert(name.clone());
                let idx = flow_paths.len();
                let start = if jitter.0 > 0 {
                    let u = Rng::stream(seed, &format!("flow:{idx}:start")).uniform();
                    start + Time((u * jitter.0 as f64) as u64)
                } else {
                    start
                };
                let (src, dst) = (
                    net.find(&x).unwrap_or_default(),
                    net.find(&y).unwrap_or_default(),
                );
                flow_names.push(name.clone());
                net.flow(FlowSpec {
                    name,
                    src,
                    dst,
                    tcp: tcp.clone(),
                    app,
                    start,
                    stop,
                });
                flow_paths.push(p.clone());
            }
        }
    }
    for (i, p, id) in &adaptive_links {
        wire_adaptive(&mut net, &f.links[*i], p, *id, &flow_names)?;
    }
    let sim = net
        .build()
        .map_err(|(i, m)| err(flow_paths.get(i).cloned().unwrap_or_default(), m))?;
    Ok((sim, duration))
}

/// Load, build and run a scenario.
pub fn run(src: Source, opts: &RunOptions) -> Result<RunOutput, ScenarioError> {
    Ok(start(src, opts)?.finish())
}

/// A scenario loaded and built, with its traces and captures switched on,
/// ready to run: in one go ([`Run::finish`]) or in slices ([`Run::advance`])
/// with traces and captures drained in between, so that a front can stream
/// them to disk in bounded memory. Both give the same results.
pub struct Run {
    sim: Simulation,
    duration: Time,
    name: String,
    seed: u64,
    params: serde_json::Map<String, serde_json::Value>,
}

impl Run {
    /// Run on for about `max_events` more events (whole instants); true once
    /// the scenario's duration is reached.
    pub fn advance(&mut self, max_events: u64) -> bool {
        self.sim.run_for(self.duration, max_events)
    }

    /// The trace rows and pcap bytes ready since the last call (see
    /// [`Simulation::drain_traces`], [`Simulation::take_captures`]).
    pub fn drain(&mut self) -> (Vec<crate::api::Table>, Vec<(String, Vec<u8>)>) {
        (self.sim.drain_traces(), self.sim.take_captures())
    }

    /// Run to the end; the summary and the traces and captures not yet taken.
    pub fn finish(mut self) -> RunOutput {
        self.sim.run(self.duration);
        let mut summary = self.sim.summary();
        if let serde_json::Value::Object(m) = &mut summary {
            m.insert("scenario".into(), serde_json::json!(self.name));
            m.insert("seed".into(), serde_json::json!(self.seed));
            m.insert("params".into(), serde_json::Value::Object(self.params));
        }
        RunOutput {
            summary,
            traces: self.sim.take_traces(),
            pcaps: self.sim.take_captures(),
        }
    }
}

/// Load and build a scenario, ready to [`Run::advance`] or [`Run::finish`].
pub fn start(src: Source, opts: &RunOptions) -> Result<Run, ScenarioError> {
    let loaded = load(src, &opts.params)?;
    let seed = opts.seed.or(loaded.file.seed).unwrap_or(1);
    let (mut sim, duration) = build(&loaded, seed)?;
    if opts.trace {
        sim.enable_traces();
    }
    for spec in &opts.pcap_links {
        let dirs: Vec<String> = if let Some((a, b)) = spec.split_once("->") {
            vec![format!("{a}->{b}")]
        } else if let Some((a, b)) = spec.split_once('-') {
            vec![format!("{a}->{b}"), format!("{b}->{a}")]
        } else {
            vec![]
        };
        if dirs.is_empty() || !dirs.iter().all(|d| sim.link_names().contains(d)) {
            let names = sim.link_names();
            let shown: Vec<&str> = names.iter().take(12).map(|s| s.as_str()).collect();
            return Err(err(
                "--pcap",
                format!(
                    "'{spec}' is not a link; write A->B for one direction or A-B for both (links: {}{})",
                    shown.join(", "),
                    if names.len() > 12 { ", …" } else { "" }
                ),
            ));
        }
        for d in dirs {
            sim.capture(&d);
        }
    }
    let params = loaded
        .params
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
        .collect();
    Ok(Run {
        sim,
        duration,
        name: loaded.file.name.clone().unwrap_or_default(),
        seed,
        params,
    })
}
