//! The end-of-run summary of a [`Simulation`], typed. Every field is defined in
//! `docs/metrics.md`; the JSON form ([`Summary::to_json`]) has exactly these
//! keys, objects that do not apply (`lt`, `fec`, `rlc`) left out.

use std::collections::BTreeMap;

use serde::Serialize;

use super::account::{Accounts, FlowAccount, LinkAccount};
use super::{NetLink, Simulation};
use crate::link::{ArqStats, Dir, FecStats};
use crate::metrics::histogram::Histogram;
use crate::tcp::SenderStats;
use crate::time::Time;

/// Everything a run reports: the scenario, the seed, the resolved parameters
/// and the network's own summary.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The scenario's `name` (empty if it has none).
    pub scenario: String,
    /// The run seed.
    pub seed: u64,
    /// The resolved `[params]` (after `--set` overrides).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Flows, links and queues.
    #[serde(flatten)]
    pub network: NetworkSummary,
}

impl Summary {
    /// The summary as a JSON value (objects with sorted keys, as the CLI prints it).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// What the network measured over a run.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkSummary {
    /// Simulated time the run reached, seconds.
    pub sim_time_s: f64,
    /// Events processed.
    pub events: u64,
    /// Packet-hops: packets handed over at the far end of a link direction,
    /// summed over every direction (a packet crossing three links counts
    /// three; packets lost on the way count only the links they crossed).
    /// The unit of work of a packet-level simulator, so runs with different
    /// event counts compare fairly (`hops_per_s` in the binding's summary).
    pub hops: u64,
    /// All flows together.
    pub aggregate: AggregateSummary,
    /// One entry per flow, in flow order.
    pub flows: Vec<FlowSummary>,
    /// One entry per link direction (`a->b`, then `b->a`), in link order.
    pub links: Vec<LinkSummary>,
    /// One entry per link direction's queue, in the order of `links`.
    pub queues: Vec<QueueSummary>,
    /// `[monitor]`'s measurements, when the scenario has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor: Option<super::monitor::MonitorSummary>,
    /// One entry per media stream (`[[media]]`), when the scenario has any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::media::MediaSummary>,
    /// `[[workloads]]`' flow completion times, when the scenario has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workloads: Option<crate::workload::WorkloadsSummary>,
}

/// One-way TCP-layer delay and jitter statistics (`null` when nothing was
/// measured), the quantiles ns-3's FlowMonitor users read from its histograms.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DelaySummary {
    /// Mean, seconds.
    pub delay_mean_s: Option<f64>,
    /// Median, seconds.
    pub delay_p50_s: Option<f64>,
    /// 90th percentile, seconds.
    pub delay_p90_s: Option<f64>,
    /// 95th percentile, seconds.
    pub delay_p95_s: Option<f64>,
    /// 99th percentile, seconds.
    pub delay_p99_s: Option<f64>,
    /// 99.9th percentile, seconds.
    pub delay_p999_s: Option<f64>,
    /// Largest, seconds.
    pub delay_max_s: Option<f64>,
    /// Mean jitter (FlowMonitor's `jitterSum` / (received packets − 1)), seconds.
    pub jitter_mean_s: Option<f64>,
    /// Median jitter, seconds.
    pub jitter_p50_s: Option<f64>,
    /// 90th percentile of the jitter, seconds.
    pub jitter_p90_s: Option<f64>,
    /// 99th percentile of the jitter, seconds.
    pub jitter_p99_s: Option<f64>,
    /// 99.9th percentile of the jitter, seconds.
    pub jitter_p999_s: Option<f64>,
}

impl DelaySummary {
    fn of(h: &Histogram, jitter: &Histogram) -> DelaySummary {
        let s = |ns: u64| Some(ns as f64 * 1e-9);
        let mut out = DelaySummary::default();
        if h.count() > 0 {
            out.delay_mean_s = Some(h.mean() * 1e-9);
            out.delay_p50_s = s(h.quantile(0.5));
            out.delay_p90_s = s(h.quantile(0.9));
            out.delay_p95_s = s(h.quantile(0.95));
            out.delay_p99_s = s(h.quantile(0.99));
            out.delay_p999_s = s(h.quantile(0.999));
            out.delay_max_s = s(h.max());
        }
        if jitter.count() > 0 {
            out.jitter_mean_s = Some(jitter.mean() * 1e-9);
            out.jitter_p50_s = s(jitter.quantile(0.5));
            out.jitter_p90_s = s(jitter.quantile(0.9));
            out.jitter_p99_s = s(jitter.quantile(0.99));
            out.jitter_p999_s = s(jitter.quantile(0.999));
        }
        out
    }
}

/// What one flow, or all flows together, achieved.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TcpTotals {
    /// Goodput, bit/s.
    pub goodput_bps: f64,
    /// Delay of the data packets.
    #[serde(flatten)]
    pub delay: DelaySummary,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Timeout episodes (back-to-back timeouts count once).
    pub timeout_episodes: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Bytes delivered in order to the receiving application(s).
    pub delivered_bytes: u64,
    /// IP bytes the sender(s) put on the wire, bit/s.
    pub throughput_bps: f64,
}

/// All flows together.
#[derive(Clone, Debug, Serialize)]
pub struct AggregateSummary {
    /// The totals.
    #[serde(flatten)]
    pub totals: TcpTotals,
    /// LT-TCP totals, when any flow runs LT-TCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lt: Option<AggregateLt>,
}

/// LT-TCP totals over all flows.
#[derive(Clone, Debug, Serialize)]
pub struct AggregateLt {
    /// Proactive repair bytes, % of the bytes sent.
    pub proactive_overhead_pct: f64,
    /// Reactive repair bytes, % of the bytes sent.
    pub reactive_overhead_pct: f64,
    /// FEC blocks the receivers rebuilt.
    pub blocks_rebuilt: u64,
}

/// One TCP flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    /// Index of the flow.
    pub id: usize,
    /// Name of the flow.
    pub name: String,
    /// Sender node.
    pub from: String,
    /// Receiver node.
    pub to: String,
    /// What the flow achieved.
    #[serde(flatten)]
    pub totals: TcpTotals,
    /// Window reductions on ECN echoes.
    pub ecn_reductions: u64,
    /// Segments sent.
    pub segments_sent: u64,
    /// LT-TCP counters, when the flow runs LT-TCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lt: Option<FlowLt>,
    /// When a finite transfer completed, seconds (`null`: not completed or bulk).
    pub completed_s: Option<f64>,
    /// How long the receive window, the congestion control and the sender
    /// itself limited the sending (RFC 4898 `SndLimTime*`).
    pub send_limits: crate::tcp::SendLimits,
    /// The sender's RTT estimator at the end of the run (RFC 6298's SRTT,
    /// RTTVAR and RTO, or the chosen estimator's).
    pub rtt: crate::tcp::RttSummary,
    /// Segments that arrived with bit errors (seed 004's frame link), when any did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrupted: Option<FlowCorruption>,
    /// The flow's closed packet account (simulated runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<FlowAccount>,
}

/// Segments with bit errors at one flow's receiver.
#[derive(Clone, Debug, Serialize)]
pub struct FlowCorruption {
    /// Discarded (a failed checksum; TCP-L: a header hit).
    pub discarded: u64,
    /// Accepted with payload errors (TCP-L).
    pub accepted: u64,
    /// Residual bit error rate of the delivered data: payload bits in error
    /// over payload bits delivered.
    pub residual_ber: f64,
}

/// LT-TCP counters of one flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowLt {
    /// FEC blocks sent.
    pub fec_blocks: u64,
    /// Proactive repair packets sent.
    pub repairs_proactive: u64,
    /// Reactive repair packets sent.
    pub repairs_reactive: u64,
    /// Proactive repair bytes, % of the bytes sent.
    pub proactive_overhead_pct: f64,
    /// Reactive repair bytes, % of the bytes sent.
    pub reactive_overhead_pct: f64,
    /// Blocks the receiver rebuilt from repairs.
    pub blocks_rebuilt: u64,
    /// Bytes the receiver rebuilt from repairs.
    pub bytes_rebuilt: u64,
    /// Repair packets received.
    pub repairs_received: u64,
    /// Losses to which the sender did not respond (ECN-only congestion response).
    pub loss_responses_skipped: u64,
    /// The sender's last erasure-rate estimate.
    pub erasure_estimate: f64,
    /// The sender's segment payload at the end.
    pub mss: u64,
}

/// One link direction.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    /// `from->to`.
    pub name: String,
    /// Nominal rate at the end of the run, bit/s.
    pub rate_bps: u64,
    /// IP bytes transmitted, bit/s.
    pub throughput_bps: f64,
    /// Packets whose transmission started.
    pub tx_packets: u64,
    /// IP bytes whose transmission started.
    pub tx_bytes: u64,
    /// Packets that arrived at the far end.
    pub rx_packets: u64,
    /// Packets lost in transit.
    pub lost: u64,
    /// Link-level FEC counters, on directions with FEC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fec: Option<FecSummary>,
    /// netem counters, on directions with impairments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netem: Option<crate::link::netem::NetemStats>,
    /// Link-layer ARQ measurements, keyed by protocol (`rlc`), on links with ARQ.
    #[serde(flatten)]
    pub arq: BTreeMap<&'static str, ArqSummary>,
    /// The direction's closed packet account (simulated runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<LinkAccount>,
}

/// Link-level FEC counters of a direction.
#[derive(Clone, Debug, Serialize)]
pub struct FecSummary {
    /// Fragments sent.
    pub fragments_sent: u64,
    /// Repair fragments sent.
    pub repair_fragments_sent: u64,
    /// Fragments erased.
    pub fragments_erased: u64,
    /// Repair fragments / fragments sent.
    pub overhead: f64,
    /// Link-level retransmissions.
    pub retransmissions: u64,
    /// Packets decoded at the first attempt despite erasures.
    pub recovered_by_fec: u64,
    /// Packets decoded at a retransmission.
    pub recovered_by_arq: u64,
    /// Packets lost after every attempt.
    pub lost_after_persistence: u64,
}

impl From<&FecStats> for FecSummary {
    fn from(f: &FecStats) -> FecSummary {
        FecSummary {
            fragments_sent: f.fragments_sent,
            repair_fragments_sent: f.repair_fragments_sent,
            fragments_erased: f.fragments_erased,
            overhead: f.overhead(),
            retransmissions: f.retransmissions,
            recovered_by_fec: f.recovered_by_fec,
            recovered_by_arq: f.recovered_by_arq,
            lost_after_persistence: f.lost_after_persistence,
        }
    }
}

/// Link-layer ARQ measurements of a direction: the protocol's own counters,
/// the fields every ARQ reports, and two ratios.
#[derive(Clone, Debug, Serialize)]
pub struct ArqSummary {
    /// The protocol's counters by name (those not among the common fields).
    #[serde(flatten)]
    pub counters: BTreeMap<&'static str, u64>,
    /// The common fields (`sdus_acked`, `max_dat`, `p_ll`, …).
    #[serde(flatten)]
    pub stats: ArqStats,
    /// discarded / (acknowledged + discarded).
    pub residual_sdu_loss: Option<f64>,
    /// Bytes delivered / bytes on the air.
    pub efficiency: Option<f64>,
    /// Bytes sent on the channel (every PDU, headers, padding and control
    /// included), bit/s, where the protocol counts them (RLC); the link's
    /// `throughput_bps` counts IP bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub air_bps: Option<f64>,
}

impl ArqSummary {
    /// The summary of `a` over a run of `secs` seconds.
    fn of(a: ArqStats, secs: f64) -> ArqSummary {
        // The common fields win over counters of the same name.
        let common = ["sdus_acked", "sdus_discarded"];
        ArqSummary {
            counters: a
                .counters
                .iter()
                .filter(|(k, _)| !common.contains(k))
                .copied()
                .collect(),
            residual_sdu_loss: a.residual_sdu_loss(),
            efficiency: a.efficiency(),
            air_bps: (a.air_bytes > 0).then(|| bps(a.air_bytes, secs)),
            stats: a,
        }
    }
}

/// One link direction's queue.
#[derive(Clone, Debug, Serialize)]
pub struct QueueSummary {
    /// The link direction, `from->to`.
    pub link: String,
    /// Queue discipline at the end of the run.
    pub kind: &'static str,
    /// Packets offered.
    pub arrivals: u64,
    /// Drops by cause.
    pub drops: Drops,
    /// Packets marked CE.
    pub ecn_marks: u64,
    /// Time-average occupancy, packets.
    pub mean_packets: f64,
    /// Time-average occupancy, bytes.
    pub mean_bytes: f64,
    /// Largest occupancy, packets.
    pub max_packets: u32,
}

/// Drops of a queue by cause.
#[derive(Clone, Debug, Serialize)]
pub struct Drops {
    /// The queue was full.
    pub overflow: u64,
    /// Early AQM drops.
    pub aqm_early: u64,
    /// Forced AQM drops.
    pub aqm_forced: u64,
    /// Discarded by the link's ARQ.
    pub link_arq: u64,
}

fn bps(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

/// Percentage `part / whole` (0 when `whole` is 0).
fn pct(part: u64, whole: u64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Counters of one or more flows.
#[derive(Default)]
struct Counts {
    delivered: u64,
    wire: u64,
    timeouts: u64,
    episodes: u64,
    fast_retransmits: u64,
    retransmits: u64,
}

impl Counts {
    /// Add a flow whose sender reports `st` and whose receiver got `delivered` bytes.
    fn add(&mut self, st: &SenderStats, delivered: u64) {
        self.delivered += delivered;
        self.wire += st.wire_bytes;
        self.timeouts += st.timeouts;
        self.episodes += st.timeout_episodes;
        self.fast_retransmits += st.fast_retransmits;
        self.retransmits += st.retransmits;
    }

    /// The totals over `secs` seconds, with the delays in `delay`.
    fn totals(&self, delay: &Histogram, jitter: &Histogram, secs: f64) -> TcpTotals {
        TcpTotals {
            goodput_bps: bps(self.delivered, secs),
            delay: DelaySummary::of(delay, jitter),
            timeouts: self.timeouts,
            timeout_episodes: self.episodes,
            fast_retransmits: self.fast_retransmits,
            retransmits: self.retransmits,
            delivered_bytes: self.delivered,
            throughput_bps: bps(self.wire, secs),
        }
    }
}

impl Simulation {
    /// Close the books and build the summary (see `docs/metrics.md`), with
    /// the packet accounts if they close ([`Simulation::close_accounts`];
    /// [`crate::api::Run::finish`] fails the run when they do not).
    pub fn summary(&mut self) -> NetworkSummary {
        let accounts = self.close_accounts().ok();
        self.summary_with(accounts)
    }

    /// The summary with these `accounts` (from [`Simulation::close_accounts`]).
    pub fn summary_with(&mut self, accounts: Option<Accounts>) -> NetworkSummary {
        let end = self.end;
        let (mut links, queues) = link_summaries(&mut self.links, end);
        let (mut flows, aggregate) = self.flow_summaries();
        let mut media: Vec<crate::media::MediaSummary> = self
            .media
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let inside = accounts.as_ref().map_or(0, |a| a.media_pending[i]);
                let (from, to) = (
                    &self.nodes[m.spec.src.0 as usize],
                    &self.nodes[m.spec.dst.0 as usize],
                );
                m.summary(i, from, to, inside, self.end)
            })
            .collect();
        if let Some(a) = accounts {
            for (m, acc) in media.iter_mut().zip(a.media) {
                m.account = Some(acc);
            }
            for (l, acc) in links.iter_mut().zip(a.links) {
                l.account = Some(acc);
            }
            for (f, acc) in flows.iter_mut().zip(a.flows) {
                f.account = Some(acc);
            }
        }
        let monitor = self.monitor.as_ref().map(|m| {
            let busy = std::iter::once(&m.shared)
                .chain(&m.links)
                .map(|&c| {
                    self.links[c / 2]
                        .model
                        .occupancy(Dir::from_index(c % 2))
                        .busy_changes()
                        .to_vec()
                })
                .collect();
            super::monitor::summarize(m, busy, end)
        });
        let workloads = self.workloads_summary();
        NetworkSummary {
            sim_time_s: end.as_secs_f64(),
            events: self.events(),
            hops: self.hops(),
            aggregate,
            flows,
            links,
            queues,
            monitor,
            media,
            workloads,
        }
    }

    /// Each flow's summary, and all flows together.
    fn flow_summaries(&self) -> (Vec<FlowSummary>, AggregateSummary) {
        let secs = self.end.as_secs_f64();
        let (mut all, mut all_jitter) = (Histogram::new(), Histogram::new());
        let mut sums = Counts::default();
        let (mut payload, mut pro, mut rea, mut rebuilt) = (0u64, 0u64, 0u64, 0u64);
        let mut lt_any = false;
        let mut flows = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows[..self.static_flows].iter().enumerate() {
            let st = f.sender.stats();
            let mut own = Counts::default();
            own.add(st, f.receiver.delivered());
            sums.add(st, f.receiver.delivered());
            all.merge(&f.metrics.delay);
            all_jitter.merge(&f.metrics.jitter);
            let sent = st.bytes_sent + st.repair_bytes_proactive + st.repair_bytes_reactive;
            payload += sent;
            let lt = f.sender.lt_config().any().then(|| {
                lt_any = true;
                let rs = f.receiver.stats();
                pro += st.repair_bytes_proactive;
                rea += st.repair_bytes_reactive;
                rebuilt += rs.blocks_rebuilt;
                FlowLt {
                    fec_blocks: st.fec_blocks,
                    repairs_proactive: st.repairs_proactive,
                    repairs_reactive: st.repairs_reactive,
                    proactive_overhead_pct: pct(st.repair_bytes_proactive, sent),
                    reactive_overhead_pct: pct(st.repair_bytes_reactive, sent),
                    blocks_rebuilt: rs.blocks_rebuilt,
                    bytes_rebuilt: rs.bytes_rebuilt,
                    repairs_received: rs.repairs_received,
                    loss_responses_skipped: st.loss_responses_skipped,
                    erasure_estimate: f.sender.erasure_estimate(),
                    mss: f.sender.mss(),
                }
            });
            flows.push(FlowSummary {
                id: i,
                name: f.spec.name.clone(),
                from: self.nodes[f.spec.src.0 as usize].clone(),
                to: self.nodes[f.spec.dst.0 as usize].clone(),
                totals: own.totals(&f.metrics.delay, &f.metrics.jitter, secs),
                ecn_reductions: st.ecn_reductions,
                segments_sent: st.segments_sent,
                lt,
                completed_s: st.completed_at.map(|t| t.as_secs_f64()),
                send_limits: f.sender.send_limits(self.end),
                rtt: f.sender.rtt_summary(),
                corrupted: {
                    let rs = f.receiver.stats();
                    (rs.corrupt_discarded + rs.corrupt_accepted > 0).then(|| FlowCorruption {
                        discarded: rs.corrupt_discarded,
                        accepted: rs.corrupt_accepted,
                        residual_ber: rs.corrupt_bits as f64
                            / (f.receiver.delivered() as f64 * 8.0).max(1.0),
                    })
                },
                account: None,
            });
        }
        let aggregate = AggregateSummary {
            totals: sums.totals(&all, &all_jitter, secs),
            lt: lt_any.then(|| AggregateLt {
                proactive_overhead_pct: pct(pro, payload),
                reactive_overhead_pct: pct(rea, payload),
                blocks_rebuilt: rebuilt,
            }),
        };
        (flows, aggregate)
    }
}

/// Close the books of `links` at `end` (their queues' time averages) and
/// summarise each link direction and its queue: the `links` and `queues` of
/// a [`NetworkSummary`]. The simulator and the live emulator share it.
pub fn link_summaries(links: &mut [NetLink], end: Time) -> (Vec<LinkSummary>, Vec<QueueSummary>) {
    for l in links.iter_mut() {
        for d in Dir::BOTH {
            l.model.occupancy_mut(d).finish(end);
        }
    }
    let secs = end.as_secs_f64();
    let mean = |area: u128| {
        if end.0 > 0 {
            area as f64 / end.0 as f64
        } else {
            0.0
        }
    };
    let mut summaries = Vec::with_capacity(2 * links.len());
    let mut queues = Vec::with_capacity(2 * links.len());
    for l in links.iter() {
        for d in Dir::BOTH {
            let name = &l.names[d.index()];
            let s = l.model.stats(d);
            summaries.push(LinkSummary {
                name: name.clone(),
                rate_bps: l.model.rate_bps(d),
                throughput_bps: bps(s.tx_bytes, secs),
                tx_packets: s.tx_packets,
                tx_bytes: s.tx_bytes,
                rx_packets: s.rx_packets,
                lost: s.lost,
                fec: s.fec.as_ref().map(FecSummary::from),
                netem: s.netem.clone(),
                arq: l
                    .model
                    .arq_stats(d, end)
                    .map(|a| (a.protocol, ArqSummary::of(a, secs)))
                    .into_iter()
                    .collect(),
                account: None,
            });
            let qs = l.model.occupancy(d).stats();
            queues.push(QueueSummary {
                link: name.clone(),
                kind: l.model.queue_kind(d),
                arrivals: qs.arrivals,
                drops: Drops {
                    overflow: qs.drops_overflow,
                    aqm_early: qs.drops_aqm_early,
                    aqm_forced: qs.drops_aqm_forced,
                    link_arq: qs.drops_link_arq,
                },
                ecn_marks: qs.ecn_marks,
                mean_packets: mean(qs.area_packets),
                mean_bytes: mean(qs.area_bytes),
                max_packets: qs.max_packets,
            });
        }
    }
    (summaries, queues)
}

impl NetworkSummary {
    /// The network summary as a JSON value.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
