//! The typed form of a scenario file (after `[params]` substitution).
//! Every struct refuses unknown keys; the JSON Schema is generated from these.

use schemars::JsonSchema;
use serde::Deserialize;

/// A number of bytes: an integer (bytes) or a string with a unit ("64KiB").
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ByteSize {
    /// Bytes.
    Int(i64),
    /// With a unit: B, kB, KiB, MB, MiB, GB, GiB.
    Str(String),
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Scenario name (shown in results).
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Simulated time, e.g. "100s".
    pub duration: String,
    /// Default run seed (the command line's --seed wins). Default 1.
    pub seed: Option<u64>,
    /// Named parameters with defaults, referred to elsewhere as "${name}".
    #[schemars(with = "std::collections::BTreeMap<String, serde_json::Value>")]
    pub params: Option<toml::Table>,
    /// TCP settings shared by all flows (each flow may override).
    #[serde(default)]
    pub tcp: TcpSection,
    /// Full-duplex links; node names may be ranges like "S{1..10}".
    #[serde(default)]
    pub links: Vec<LinkSection>,
    /// TCP flows.
    #[serde(default)]
    pub flows: Vec<FlowSection>,
}

/// Link model names.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// Point-to-point wire: queue, serialisation, delay, channel.
    #[default]
    Wired,
    /// UMTS RLC acknowledged-mode radio bearer (3GPP TS 25.322).
    RlcAm,
}

/// An integer, or a word such as "none".
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IntOrWord {
    /// A number.
    Int(i64),
    /// A word.
    Word(String),
}

/// A number, or a word such as "off".
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FloatOrWord {
    /// A number.
    Num(f64),
    /// A word.
    Word(String),
}

/// One step of a bearer's rate schedule (an RRC reconfiguration).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateStepSection {
    /// When the change is ordered, e.g. "50s" (the first step is at "0s").
    pub at: String,
    /// RLC payload rate from then on, e.g. "128kbit".
    pub rate: String,
    /// AQM taking over at this step (else the `aqm_table` entry for the rate, else unchanged).
    pub queue: Option<QueueSection>,
}

/// AQM parameters to apply whenever the bearer runs at `rate`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AqmTableEntry {
    /// The rate, e.g. "384kbit".
    pub rate: String,
    /// The queue (AQM) to use at that rate; its `limit` is ignored (the bearer's `buffer` rules).
    pub queue: QueueSection,
}

/// A full-duplex link between nodes `a` and `b`. Keys at this level apply to
/// both directions; `ab` (a→b) and `ba` (b→a) override them per direction.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSection {
    /// One end (a node name or a range "S{1..10}").
    pub a: String,
    /// The other end.
    pub b: String,
    /// "wired" (default) or "rlc_am" (UMTS RLC acknowledged-mode radio bearer).
    pub kind: Option<LinkKind>,
    /// rlc_am: start from a documented preset ("seed000": Table 1 of seed 000).
    pub preset: Option<String>,
    /// rlc_am: PDU payload, e.g. "320bit" or 40 (bytes).
    pub pdu_payload: Option<ByteSize>,
    /// rlc_am: AMD PDU header bytes (default 2).
    pub pdu_header: Option<ByteSize>,
    /// rlc_am: length indicator bytes (default 1).
    pub li: Option<ByteSize>,
    /// rlc_am: transmission time interval (default "10ms").
    pub tti: Option<String>,
    /// rlc_am: transmission window in PDUs (default 1024).
    pub tx_window: Option<i64>,
    /// rlc_am: transmissions per PDU before its SDU is discarded (MaxDAT, M_t): a number ≥ 1, "unlimited" (or "none"), or "adaptive" (seed 001 §III, needs `adaptive`). Default 10.
    pub max_dat: Option<IntOrWord>,
    /// rlc_am with max_dat = "adaptive": the cross-layer controller of MaxDAT.
    pub adaptive: Option<AdaptiveSection>,
    /// rlc_am: Timer_Poll, or "off" (default "60ms").
    pub poll_timer: Option<String>,
    /// rlc_am: poll when this fraction of the window is outstanding, or "off" (default 0.5).
    pub poll_window: Option<FloatOrWord>,
    /// rlc_am: poll on the last PDU in the buffer (default true).
    pub poll_last_pdu: Option<bool>,
    /// rlc_am: poll on the last retransmitted PDU (default true).
    pub poll_last_retx: Option<bool>,
    /// rlc_am: Timer_Status_Prohibit, or "off" (default "60ms").
    pub status_prohibit: Option<String>,
    /// rlc_am: send a STATUS when a gap is detected (default true).
    pub missing_pdu_detection: Option<bool>,
    /// rlc_am: deliver SDUs in sequence (default true).
    pub in_order_delivery: Option<bool>,
    /// rlc_am: Timer_MRW (default "60ms").
    pub mrw_timer: Option<String>,
    /// rlc_am: ignore NACKs older than a retransmission (Timer_EPC guard): "auto" (one round trip, default), a time, or "off".
    pub epc: Option<String>,
    /// rlc_am: SDU buffer limit, e.g. "40p" (default "40p").
    pub buffer: Option<String>,
    /// rlc_am: which SDUs count toward `buffer` and the AQM's occupancy: "unacknowledged" (until fully acknowledged, default) or "unsent" (until their last PDU is first sent).
    pub buffer_counts: Option<String>,
    /// rlc_am: rate schedule (instead of `rate`): [{ at = "0s", rate = "384kbit" }, { at = "50s", rate = "128kbit" }].
    pub rate_schedule: Option<Vec<RateStepSection>>,
    /// rlc_am: AQM parameters per rate, applied automatically at each rate change.
    pub aqm_table: Option<Vec<AqmTableEntry>>,
    /// Rate, e.g. "10Mbit".
    pub rate: Option<String>,
    /// One-way propagation delay, e.g. "20ms". Default "0s".
    pub delay: Option<String>,
    /// Independent random loss probability of each packet, 0..1. Default 0.
    pub loss: Option<f64>,
    /// Link-layer framing bytes per packet (time on the wire only), e.g. "2B" for PPP. Default 0.
    pub overhead: Option<ByteSize>,
    /// Error process deciding which packets are lost in transit (instead of `loss`).
    pub channel: Option<ChannelSection>,
    /// Queue in front of the transmitter. Default drop-tail, 100 packets.
    pub queue: Option<QueueSection>,
    /// Link-level FEC or hybrid FEC/ARQ (wired links; docs/models/ll-fec.md).
    pub fec: Option<FecSection>,
    /// Overrides for the a→b direction.
    pub ab: Option<DirectionSection>,
    /// Overrides for the b→a direction.
    pub ba: Option<DirectionSection>,
}

/// The cross-layer adaptive MaxDAT controller of an RLC link (seed 001 §III):
/// MaxDAT of the direction carrying `flow`'s data follows the target residual
/// loss `alpha · P_W`, with `P_W` from eq. (1).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveSection {
    /// Accepted link loss as a fraction of the loss outside the link, 0 ≤ alpha ≤ 1 (required).
    pub alpha: Option<f64>,
    /// Where P_TCP is measured: "receiver" (the TCP receiver's loss-event detector; mobile as receiver, downlink adapts) or "sender" (fast retransmits and timeouts; mobile as sender, uplink adapts). Required.
    pub estimator: Option<String>,
    /// SDUs in the moving window of the link loss estimate P_LL, ≥ 1. Default 100.
    pub window: Option<i64>,
    /// Name of the TCP flow that feeds the controller (default: the scenario's only flow).
    pub flow: Option<String>,
}

/// Per-direction overrides of a link.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirectionSection {
    /// Rate, e.g. "10Mbit".
    pub rate: Option<String>,
    /// rlc_am: rate schedule of this direction.
    pub rate_schedule: Option<Vec<RateStepSection>>,
    /// One-way propagation delay.
    pub delay: Option<String>,
    /// Random loss probability, 0..1.
    pub loss: Option<f64>,
    /// Link-layer framing bytes per packet.
    pub overhead: Option<ByteSize>,
    /// Error process (instead of `loss`).
    pub channel: Option<ChannelSection>,
    /// Queue.
    pub queue: Option<QueueSection>,
    /// Link-level FEC or hybrid FEC/ARQ.
    pub fec: Option<FecSection>,
}

/// Link-level FEC schemes.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
pub enum FecScheme {
    /// Pure FEC: n fragments per packet, k of them data; no retransmission.
    #[serde(rename = "ll-fec")]
    LlFec,
    /// FEC plus ARQ of the whole packet (Barakat & Al Fawal): default n = 10, k = 9, persistence 3.
    #[serde(rename = "hybrid")]
    Hybrid,
}

/// Link-level FEC on a wired link direction (docs/models/ll-fec.md).
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FecSection {
    /// "ll-fec" or "hybrid".
    pub scheme: FecScheme,
    /// Fragments per packet, data + repair (2..=255). Hybrid default 10.
    pub n: Option<i64>,
    /// Data fragments per packet (1 ≤ k < n). Hybrid default 9.
    pub k: Option<i64>,
    /// Choose the redundancy to match this packet erasure rate (0 ≤ per < 1), or "link" for the
    /// direction's own `loss` / channel mean; give `k` (n is chosen) or `n` (k is chosen), not both.
    pub matched_per: Option<FloatOrWord>,
    /// How `loss` applies to fragments: "packet" (default: `loss` is the erasure rate of a
    /// `per_size` packet, converted for independent bit errors) or "fragment" (each fragment
    /// erased with probability `loss`).
    pub loss_unit: Option<String>,
    /// Packet size to which `loss` refers when loss_unit = "packet". Default 500 B.
    pub per_size: Option<ByteSize>,
    /// Header bytes added to each fragment. Default 0.
    pub fragment_header: Option<ByteSize>,
    /// hybrid: retransmissions of a packet whose block did not decode (0..=255). Default 3.
    pub persistence: Option<i64>,
    /// hybrid: from the last fragment of a failed attempt to the retransmission's earliest start.
    /// Default: the direction's propagation delay.
    pub feedback_delay: Option<String>,
    /// hybrid: deliver packets to IP in order of first transmission. Default true.
    pub in_order: Option<bool>,
}

/// Queue discipline names.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    /// Drop-tail FIFO.
    #[default]
    Droptail,
    /// Random Early Detection (Floyd & Jacobson 1993).
    Red,
    /// Slope Based Discard (seed 000 §3).
    Sbd,
}

/// A queue. RED keys are refused for drop-tail.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueSection {
    /// "droptail" (default), "red" or "sbd".
    #[serde(default)]
    pub kind: QueueKind,
    /// Capacity: packets "100p" or bytes "150kB". Default "100p".
    pub limit: Option<String>,
    /// RED / SBD minimum threshold (packets, or bytes for a byte limit).
    pub minth: Option<f64>,
    /// RED / SBD maximum threshold.
    pub maxth: Option<f64>,
    /// RED maximum early-drop probability, 0 < maxp ≤ 1. Default 0.02.
    pub maxp: Option<f64>,
    /// RED EWMA weight, 0 < wq ≤ 1. Default 0.002.
    pub wq: Option<f64>,
    /// RED gentle mode. Default true.
    pub gentle: Option<bool>,
    /// Mark ECN-capable packets instead of dropping them early. Default false.
    pub ecn: Option<bool>,
    /// Drop (never mark) in the forced region. Default true (as ns-3).
    pub hard_drop: Option<bool>,
    /// Act on the instantaneous queue size instead of the average. Default false.
    pub instantaneous: Option<bool>,
    /// Scale the drop probability by packet size. Default false.
    pub byte_mode: Option<bool>,
    /// Mean packet size in bytes (idle-time correction, byte mode). Default 500.
    pub mean_pkt_size: Option<u32>,
    /// SBD reaction time T_r, e.g. "500ms".
    pub tr: Option<String>,
    /// SBD slope-measuring occupancy interval α (packets, or bytes for a byte limit).
    pub alpha: Option<f64>,
}

/// TCP settings (all optional; defaults in docs/models/tcp.md).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSection {
    /// Loss recovery: "reno", "newreno" or "sack". Default "newreno".
    pub variant: Option<String>,
    /// Congestion control: "newreno". Default "newreno".
    pub cc: Option<String>,
    /// Payload bytes per full segment, 1..=65495. Default 1448.
    pub mss: Option<i64>,
    /// Initial window in segments, 1..=10. Default 1.
    pub initial_window: Option<i64>,
    /// Receiver window: bytes or a size ("64KiB"). Default 65535.
    pub rwnd: Option<ByteSize>,
    /// ECN (RFC 3168). Default false.
    pub ecn: Option<bool>,
    /// Timestamps option (RFC 7323): 12 header bytes, RTT from echoes. Default false.
    pub timestamps: Option<bool>,
    /// Delayed ACKs (every 2nd segment or the delayed-ACK timeout). Default false.
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout. Default "200ms".
    pub delack_timeout: Option<String>,
    /// Minimum RTO. Default "1s" (RFC 6298).
    pub min_rto: Option<String>,
    /// Maximum RTO. Default "60s".
    pub max_rto: Option<String>,
    /// RTO before the first RTT sample. Default "1s".
    pub initial_rto: Option<String>,
    /// Duplicate-ACK threshold for fast retransmit. Default 3.
    pub dupack_threshold: Option<i64>,
    /// SYN/SYN-ACK handshake before data. Default true.
    pub handshake: Option<bool>,
    /// Limited transmit (RFC 3042). Default true.
    pub limited_transmit: Option<bool>,
    /// Proportional Rate Reduction (RFC 6937) in SACK recovery. Default false.
    pub prr: Option<bool>,
    /// LT-TCP building blocks (seed 002); every switch defaults to off.
    pub lt: Option<LtSection>,
}

/// LT-TCP (Tickoo et al.): each building block is a switch; see docs/models/lt-tcp.md.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LtSection {
    /// Congestion response to ECN marks only, not to loss (timeouts remain). Default false.
    pub ecn_only: Option<bool>,
    /// Adaptive MSS: at least g_min_segments per window within [mss_min, mss_max]. Default false.
    pub adaptive_mss: Option<bool>,
    /// Proactive FEC (PHASE 1): P = f(E) repair packets per window. Default false.
    pub proactive_fec: Option<bool>,
    /// Reactive FEC (PHASE 2): R = g(E) repair packets per duplicate ACK. Default false.
    pub reactive_fec: Option<bool>,
    /// Erasure estimate at the "sender" (from ACK/SACK, default) or the "receiver" (echoed in ACKs).
    pub estimator: Option<String>,
    /// G: minimum segments per window, 1..=254. Default 10.
    pub g_min_segments: Option<i64>,
    /// Smallest segment payload, bytes. Default 100.
    pub mss_min: Option<i64>,
    /// Largest segment payload, bytes. Default the TCP mss.
    pub mss_max: Option<i64>,
    /// f(E): [[upto, packets], ...], increasing upper bounds ending at 1 (bin i covers [upto(i-1), upto(i))).
    pub proactive_bins: Option<Vec<(f64, i64)>>,
    /// g(E): [[upto, packets], ...] repair packets per duplicate ACK, same form.
    pub reactive_bins: Option<Vec<(f64, i64)>>,
    /// Longest FEC block n (data + all repairs) of the shortened RS code, 2..=255. Default 255.
    pub block_max: Option<i64>,
}

/// One or more TCP flows from `from` to `to`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSection {
    /// Sender node (or a range, zipped with `to`).
    pub from: String,
    /// Receiver node (or a range).
    pub to: String,
    /// Name prefix. Default "FROM->TO".
    pub name: Option<String>,
    /// Parallel flows per (from, to) pair. Default 1.
    pub count: Option<i64>,
    /// Application start. Default "0s".
    pub start: Option<String>,
    /// Each flow starts at a uniform random time in [start, start + start_jitter).
    pub start_jitter: Option<String>,
    /// Application stops offering new data (retransmissions go on).
    pub stop: Option<String>,
    /// Finite transfer of this many bytes; absent = greedy bulk transfer.
    pub bytes: Option<ByteSize>,
    /// TCP overrides for these flows.
    pub tcp: Option<TcpSection>,
}

/// Channel model names.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// Independent errors with probability `p`.
    Bernoulli,
    /// Two-state Markov chain per slot (`g`, `b` = probabilities of staying
    /// GOOD / BAD), unit errors `p_good` / `p_bad` given the state.
    GilbertElliott,
    /// Correlated Rayleigh fading sampled per slot (`fd_t`), in error below the
    /// fading margin set from the target frame error ratio `fer`.
    Rayleigh,
}

/// A channel error process. Keys not used by the chosen kind are refused.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChannelSection {
    /// "bernoulli", "gilbert_elliott" or "rayleigh".
    pub kind: ChannelKind,
    /// Bernoulli: unit error probability.
    pub p: Option<f64>,
    /// Gilbert–Elliott / Rayleigh: unit error probability in the good state (Rayleigh default 0).
    pub p_good: Option<f64>,
    /// Gilbert–Elliott / Rayleigh: unit error probability in the bad state (Rayleigh default 1).
    pub p_bad: Option<f64>,
    /// Gilbert–Elliott: probability of staying GOOD for one slot.
    pub g: Option<f64>,
    /// Gilbert–Elliott: probability of staying BAD for one slot.
    pub b: Option<f64>,
    /// Rayleigh: normalised Doppler frequency f_d·T (> 0).
    pub fd_t: Option<f64>,
    /// Rayleigh: target frame error ratio, 0 < fer < 1 (sets the fading margin).
    pub fer: Option<f64>,
    /// Slot (frame) length of the channel process, e.g. "10ms". Required on wired
    /// links for gilbert_elliott and rayleigh; radio links use their TTI.
    pub slot: Option<String>,
}
