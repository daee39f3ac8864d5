//! Link models: a duplex link between two nodes, each direction from the
//! queue in front of its transmitter to the far end of the wire (or radio).
//!
//! A link is a sans-IO state machine: packets are offered with
//! [`Link::enqueue`], the link says when it next needs waking with
//! [`Link::poll_timeout`], and packets that reach the far end (or are lost on
//! the way) are collected with [`Link::poll_deliver`]. The engine and, later,
//! the live emulator drive links through this trait only.

pub mod adaptive_arq;
pub mod fec;
pub mod frame_arq;
pub mod netem;
pub mod rlc;
pub mod trace;
pub(crate) mod wired;

pub use fec::{FecConfig, FecStats, FragmentErasure, LinkFecConfig};
pub use frame_arq::FrameArqLinkConfig;
pub use rlc::config::RlcLinkConfig;
pub use wired::{
    RateChange, WiredConfig, WiredDirection, WiredDirectionConfig, WiredLink, WiredLinkConfig,
    WiredRateStep,
};

use crate::aqm::{Causes, DropCause, Occupancy};
use crate::config::kind::tagged_enum;
use crate::config::Result;
use crate::packet::{pool, FlowId, Packet};
use crate::tcp::EstimatorSide;
use crate::time::Time;

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

tagged_enum! {
    /// A full-duplex link between nodes `a` and `b` (`[[links]]`): a wired
    /// link unless `kind` says otherwise. Keys at the link's level apply to
    /// both directions; `ab` (a→b) and `ba` (b→a) override them per direction.
    pub enum LinkConfig: dyn LinkKind, "link", tag "kind", default "wired" {
        /// Point-to-point wire: queue, serialisation, delay, channel, FEC.
        Wired(WiredLinkConfig) = "wired",
        /// UMTS RLC acknowledged-mode radio bearer (3GPP TS 25.322).
        RlcAm(RlcLinkConfig) = "rlc_am",
        /// Seed 004's WIPEMU frame-level radio link: adaptive M-QAM from a
        /// predicted fading channel, link ARQ, bit errors carried up.
        FrameArq(FrameArqLinkConfig) = "frame_arq",
    }
}

/// Where a scenario's files are read from, and those already read.
#[derive(Debug, Default)]
pub struct Files {
    /// The directory relative paths start from (the scenario file's);
    /// `None`: the current directory.
    pub base: Option<std::path::PathBuf>,
    /// Traces read so far, by resolved path.
    pub traces: std::collections::HashMap<std::path::PathBuf, std::sync::Arc<trace::Trace>>,
}

/// A cross-layer feed a link asks for (seed 001 §III): the end-to-end loss
/// rate of a TCP flow whose data crosses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feed<'a> {
    /// Key path of the table that asks, relative to the link (`adaptive`).
    pub path: &'static str,
    /// The flow's name; `None`: the scenario's only flow.
    pub flow: Option<&'a str>,
    /// Where the loss rate is measured.
    pub side: EstimatorSide,
}

/// A setting of one direction of a link: the direction's own (in table
/// `key`), else the link's; with the key path where it is written.
pub(crate) fn pick<'a, T>(
    own: &'a Option<T>,
    link: &'a Option<T>,
    key: &str,
    name: &str,
) -> (Option<&'a T>, String) {
    match own {
        Some(v) => (Some(v), crate::config::join(key, name)),
        None => (link.as_ref(), name.to_string()),
    }
}

/// Check that the times of a rate schedule start at `"0s"` and never go
/// back; `steps` gives each step's time and key path (`rate_schedule[2]`).
pub(crate) fn check_schedule_times<'a>(
    steps: impl IntoIterator<Item = (Time, &'a str)>,
) -> Result<()> {
    let mut prev = Time::ZERO;
    for (i, (at, path)) in steps.into_iter().enumerate() {
        if (i == 0 && at != Time::ZERO) || at < prev {
            let why = if i == 0 {
                "the first step of a rate schedule is at \"0s\""
            } else {
                "goes back in time; steps must be in time order"
            };
            return Err(crate::config::ConfigError::new(
                crate::config::join(path, "at"),
                format!("\"{at}\""),
                why,
            ));
        }
        prev = at;
    }
    Ok(())
}

/// What every link kind's configuration provides (one implementation per
/// model: `wired.rs`, `rlc/config.rs`).
pub trait LinkKind: std::fmt::Debug {
    /// The two ends as written (node names or ranges such as `"S{1..10}"`).
    fn ends(&self) -> (&str, &str);
    /// Check the configuration; paths are relative to the link's table.
    fn validate(&self) -> Result<()>;
    /// The link between nodes `a` and `b` (its `Dir::AB` runs a → b), its
    /// random streams drawn from `seed` and the direction names `a->b`, `b->a`.
    fn build(&self, a: &str, b: &str, seed: u64) -> Result<Box<dyn Link>>;
    /// Read the files the configuration names (trace files), once, before
    /// [`validate`](Self::validate); paths relative to the link's table.
    fn load_files(&mut self, files: &mut Files) -> Result<()> {
        let _ = files;
        Ok(())
    }
    /// The files the configuration names, as written (trace files).
    fn file_names(&self) -> Vec<&str> {
        Vec::new()
    }
    /// The cross-layer feed this link needs, if any.
    fn feed(&self) -> Option<Feed<'_>> {
        None
    }
    /// Check that direction `dir`, which the feed's flow `flow` crosses, can use it.
    fn check_feed(&self, dir: Dir, flow: &str) -> Result<()> {
        let _ = (dir, flow);
        Ok(())
    }
}

/// What comes out of the far end of a link: the packet by value (`P =
/// Packet`, what link models hand over) or in its box (`P = Box<Packet>`,
/// [`Link::poll_deliver_boxed`]: the network's hot path, no 120-byte copies).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Delivery<P = Packet> {
    /// The packet arrived intact.
    Arrived(P),
    /// The packet was transmitted but lost on the way.
    Lost(P, DropCause),
}

impl Delivery {
    /// The same delivery with its packet in a box from the [`pool`].
    #[inline]
    pub fn boxed(self) -> Delivery<Box<Packet>> {
        match self {
            Delivery::Arrived(p) => Delivery::Arrived(pool::boxed(p)),
            Delivery::Lost(p, c) => Delivery::Lost(pool::boxed(p), c),
        }
    }
}

impl Delivery<Box<Packet>> {
    /// The same delivery with its packet by value (the box back to the [`pool`]).
    #[inline]
    pub fn unboxed(self) -> Delivery {
        match self {
            Delivery::Arrived(p) => Delivery::Arrived(pool::unboxed(p)),
            Delivery::Lost(p, c) => Delivery::Lost(pool::unboxed(p), c),
        }
    }
}

/// One answer of [`Link::poll_deliver_or_timeout`]: a delivery (its
/// direction, the packet in its box and what the link knows of the next
/// pass), or, once nothing more is due, the link's next wake-up.
pub type WakePass = std::result::Result<(Dir, Delivery<Box<Packet>>, Then), Option<Time>>;

/// What a link knows, right after a delivery of a wake-up pass
/// ([`Link::poll_deliver_or_timeout`]), of the next pass at the same instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// Not known: the caller polls again.
    Poll,
    /// Nothing more is due now: if nothing touches the link before, the next
    /// pass would deliver nothing and answer this wake-up (`None`: none).
    Idle(Option<Time>),
}

/// Where a packet held inside a link direction is (the "in transit" part of
/// the packet account, `docs/metrics.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Waiting in the buffer in front of the transmitter.
    Queue,
    /// On the wire or the air: transmitted (or being transmitted), not yet at the far end.
    Wire,
    /// Held by a link-layer ARQ: waiting for (re)transmission or for its
    /// acknowledgement, after it left the buffer.
    Arq,
    /// Held in a netem stage (delay, jitter, rate, reordering).
    Netem,
    /// Partly received: the far end reassembles or reorders it.
    Reassembly,
    /// Its fate (delivered or lost) is decided; not yet handed over.
    Settled,
    /// Taken by a transmitter that will never send again (a trace played
    /// once has ended).
    Stuck,
}

impl Place {
    /// Every place, in the order of [`Place::index`].
    pub const ALL: [Place; 7] = [
        Place::Queue,
        Place::Wire,
        Place::Arq,
        Place::Netem,
        Place::Reassembly,
        Place::Settled,
        Place::Stuck,
    ];

    /// Stable lower-case name used in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Place::Queue => "queue",
            Place::Wire => "wire",
            Place::Arq => "arq",
            Place::Netem => "netem",
            Place::Reassembly => "reassembly",
            Place::Settled => "settled",
            Place::Stuck => "stuck",
        }
    }

    /// Position in [`Place::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A link direction's own account of the packets offered to it, from its
/// model's counters (`docs/metrics.md`, "The packet account"). With the
/// packets it holds ([`Link::for_each_held`]) it closes:
/// `offered = queue_dropped + departed + held in the queue`, and
/// `departed + copies = delivered + lost + held after the queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Account {
    /// Packets offered to the direction ([`Link::enqueue`]).
    pub offered: u64,
    /// Packets the buffer discarded (at arrival or at dequeue), by cause.
    pub queue_dropped: Causes,
    /// Packets that left the buffer for transmission (each once).
    pub departed: u64,
    /// Copies the link made of packets (netem `duplicate`).
    pub copies: u64,
    /// Packets handed over at the far end.
    pub delivered: u64,
    /// Packets lost after they left the buffer, by cause.
    pub lost: Causes,
}

/// Counters every link direction reports (the queue has its own).
/// `repr(C)`: the per-packet counters first, in declaration order.
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct LinkStats {
    /// Packets whose transmission started.
    pub tx_packets: u64,
    /// IP bytes whose transmission started.
    pub tx_bytes: u64,
    /// Packets that arrived at the far end.
    pub rx_packets: u64,
    /// IP bytes that arrived at the far end.
    pub rx_bytes: u64,
    /// Packets lost in transit.
    pub lost: u64,
    /// The same, by cause.
    pub lost_by: Causes,
    /// Link-level FEC / ARQ counters, on directions that use it.
    pub fec: Option<FecStats>,
    /// netem counters, on directions with impairments.
    pub netem: Option<netem::NetemStats>,
}

/// Link-layer ARQ measurements of one direction (links with ARQ only).
/// Serialized, it is the common part of the summary's `links[].rlc` object.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ArqStats {
    /// The ARQ protocol (`"rlc"`): names the summary object.
    #[serde(skip)]
    pub protocol: &'static str,
    /// The protocol's own counters by name (PDUs sent, retransmitted, …).
    #[serde(skip)]
    pub counters: Vec<(&'static str, u64)>,
    /// SDUs whose acknowledgement completed at the transmitter.
    pub sdus_acked: u64,
    /// SDUs discarded at the retransmission limit (MaxDAT, `M_t`).
    pub sdus_discarded: u64,
    /// IP bytes of the SDUs delivered at the far end.
    #[serde(skip)]
    pub delivered_bytes: u64,
    /// Bytes transmitted on this direction's channel (every PDU).
    #[serde(skip)]
    pub air_bytes: u64,
    /// Current retransmission limit (`None`: unlimited).
    pub max_dat: Option<u32>,
    /// Time-average of the limit over the time it was finite (`None` if never).
    pub max_dat_mean: Option<f64>,
    /// Fraction of the time the limit was unlimited.
    pub max_dat_unlimited_fraction: f64,
    /// Times the limit changed.
    pub max_dat_changes: u64,
    /// Current residual-loss estimate `P_LL` (moving window), if any SDU completed.
    pub p_ll: Option<f64>,
    /// Last end-to-end loss rate `P_TCP` received (adaptive ARQ only).
    pub p_tcp: Option<f64>,
    /// Last target `P̂_LL = α·P_W` (adaptive ARQ only).
    pub target: Option<f64>,
}

impl ArqStats {
    /// Residual SDU loss: discarded / (acknowledged + discarded).
    pub fn residual_sdu_loss(&self) -> Option<f64> {
        let n = self.sdus_acked + self.sdus_discarded;
        (n > 0).then(|| self.sdus_discarded as f64 / n as f64)
    }

    /// Energy efficiency: bytes delivered / bytes transmitted on the air.
    pub fn efficiency(&self) -> Option<f64> {
        (self.air_bytes > 0).then(|| self.delivered_bytes as f64 / self.air_bytes as f64)
    }
}

/// A direction of a duplex link between ends `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    /// From `a` to `b`.
    AB,
    /// From `b` to `a`.
    BA,
}

impl Dir {
    /// Both directions, `AB` first.
    pub const BOTH: [Dir; 2] = [Dir::AB, Dir::BA];

    /// 0 for `AB`, 1 for `BA`.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction with this index (0 or 1).
    #[inline]
    pub fn from_index(i: usize) -> Dir {
        if i == 0 {
            Dir::AB
        } else {
            Dir::BA
        }
    }

    /// The other direction.
    #[inline]
    pub fn reverse(self) -> Dir {
        match self {
            Dir::AB => Dir::BA,
            Dir::BA => Dir::AB,
        }
    }
}

/// A duplex link: both directions in one model, so that protocols whose two
/// directions interact (a radio bearer whose acknowledgements ride the
/// reverse channel) are one state machine. Independent directions (a wired
/// link) simply hold two halves.
pub trait Link: std::fmt::Debug + Send {
    /// Offer `pkt` to direction `dir` at `now`. Returns the packet discarded
    /// because of this arrival, if any (the arrival itself, or an older one
    /// for a front-dropping AQM), by value: no allocation on the drop path.
    fn enqueue(&mut self, now: Time, dir: Dir, pkt: Packet) -> Option<(Packet, DropCause)>;
    /// The next instant the link needs [`Link::poll_deliver`] to be called.
    fn poll_timeout(&self) -> Option<Time>;
    /// The next instant direction `dir` alone needs [`Link::poll_deliver`],
    /// asked right after a packet was offered to it, by a caller whose
    /// wake-up for this link already covers the other direction (which the
    /// offer did not touch). By default the whole link's
    /// [`Link::poll_timeout`]: right for any link; a link whose directions
    /// are independent (a wired link) answers for `dir` alone, which saves
    /// polling the other half on every packet-hop.
    fn poll_timeout_after_enqueue(&self, dir: Dir) -> Option<Time> {
        let _ = dir;
        self.poll_timeout()
    }
    /// The next packet that has reached the far end of either direction by `now`.
    fn poll_deliver(&mut self, now: Time) -> Option<(Dir, Delivery)>;
    /// [`Link::enqueue`] with the packet in its box, as the network moves
    /// packets from hop to hop. By default the box is opened (back to the
    /// [`pool`]) and the packet offered by value; a link that stores boxes
    /// (a wired link) keeps this one, and a packet crosses it without being
    /// copied.
    fn enqueue_boxed(
        &mut self,
        now: Time,
        dir: Dir,
        pkt: Box<Packet>,
    ) -> Option<(Box<Packet>, DropCause)> {
        self.enqueue(now, dir, pool::unboxed(pkt))
            .map(|(p, c)| (pool::boxed(p), c))
    }
    /// [`Link::poll_deliver`] with the packet in a box. By default the
    /// delivery's packet is boxed from the [`pool`]; a link that stores
    /// boxes hands over the one it holds.
    fn poll_deliver_boxed(&mut self, now: Time) -> Option<(Dir, Delivery<Box<Packet>>)> {
        self.poll_deliver(now).map(|(d, x)| (d, x.boxed()))
    }
    /// One pass of a wake-up: [`Link::poll_deliver_boxed`], or, once
    /// nothing more is due by `now`, the link's next wake-up
    /// ([`Link::poll_timeout`]) from the same look at its directions. By
    /// default the two calls; a wired link reads a plain direction's next
    /// arrival while it checks that nothing is due there.
    ///
    /// With a delivery comes [`Then`]: what the next pass at `now` would
    /// answer if nothing touches the link in between ([`Then::Poll`]: not
    /// known, make that pass). By default [`Then::Poll`]; a wired link whose
    /// two plain directions have nothing more due says
    /// [`Then::Idle`] with its next wake-up, which saves the caller the
    /// second pass per packet-hop.
    fn poll_deliver_or_timeout(&mut self, now: Time) -> WakePass {
        match self.poll_deliver_boxed(now) {
            Some((d, x)) => Ok((d, x, Then::Poll)),
            None => Err(self.poll_timeout()),
        }
    }
    /// Occupancy and counters of direction `dir`'s buffer.
    fn occupancy(&self, dir: Dir) -> &Occupancy;
    /// Mutable occupancy (tracing, end-of-run accounting).
    fn occupancy_mut(&mut self, dir: Dir) -> &mut Occupancy;
    /// Name of direction `dir`'s queue discipline (`droptail`, `red`, …).
    fn queue_kind(&self, dir: Dir) -> &'static str;
    /// Counters of direction `dir`.
    fn stats(&self, dir: Dir) -> &LinkStats;
    /// Nominal rate of direction `dir` in bit/s.
    fn rate_bps(&self, dir: Dir) -> u64;
    /// Packets inside the link (both directions): queued or on the way.
    fn in_transit(&self) -> usize;
    /// Copies of packets the link made (netem `duplicate`), for the packet
    /// balance (default: none).
    fn duplicated(&self) -> u64 {
        0
    }
    /// Direction `dir`'s packet account from the model's own counters.
    fn account(&self, dir: Dir) -> Account;
    /// Visit every packet the link holds, with its direction and where it
    /// is: each packet once, [`Link::in_transit`] of them in all. Meant for
    /// the end of a run (it may walk every buffer).
    fn for_each_held(&self, f: &mut dyn FnMut(Dir, Place, &Packet));
    /// Visit the copies the link made of packets (netem `duplicate`), by
    /// direction, flow and leg (whether they were ACKs): `(dir, flow, ack,
    /// copies)`, adding up to each direction's [`Account::copies`]. Default: none.
    fn for_each_copies(&self, f: &mut dyn FnMut(Dir, FlowId, bool, u64)) {
        let _ = f;
    }
    /// Cross-layer input (seed 001 §III): `p_tcp` is the end-to-end loss
    /// event rate now measured by a TCP flow whose data crosses direction
    /// `dir`. A link with adaptive ARQ persistence re-evaluates its
    /// retransmission limit; others ignore it (the default).
    fn on_e2e_loss_rate(&mut self, now: Time, dir: Dir, p_tcp: f64) {
        let _ = (now, dir, p_tcp);
    }
    /// ARQ measurements of direction `dir` up to `now`, for links with
    /// link-layer ARQ (default: none).
    fn arq_stats(&self, dir: Dir, now: Time) -> Option<ArqStats> {
        let _ = (dir, now);
        None
    }
}
