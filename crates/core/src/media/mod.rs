//! Real-time media over UDP (`[[media]]`, docs/models/media.md): sans-IO
//! sources that send RTP/UDP packets on a schedule (constant bit rate, a
//! voice call with talk spurts, a video call of frames split into packets)
//! and sinks that measure them as a receiver's playout buffer sees them:
//! one-way delay, RFC 3550 interarrival jitter, loss, late loss against a
//! fixed playout delay, and for voice the ITU-T G.107 E-model rating.
//!
//! A media packet is a [`Packet`] of kind [`Kind::Data`] whose flow id has
//! [`MEDIA_FLOW_BIT`] set (the stream's index below it): it crosses the same
//! links and queues as TCP, and the simulation dispatches it to the stream's
//! sink instead of a TCP receiver. Its `seq` is the stream's packet number,
//! `payload` the bytes above UDP (RTP header included for voice and video),
//! `header` the IP + UDP header (28 bytes).

mod config;

pub use config::{
    add_media, CbrConfig, Direction, MediaConfig, MediaKind, VideoConfig, VoiceConfig,
};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::analytic::emodel::{EModel, Rating};
use crate::metrics::histogram::Histogram;
use crate::packet::{FlowId, Kind, NodeId, Packet, IP_HEADER};
use crate::rng::Rng;
use crate::time::Time;

/// The bit of a [`FlowId`] that marks a media stream (TCP flows are capped
/// far below it, [`crate::net::limits::MAX_FLOWS`]).
pub const MEDIA_FLOW_BIT: u32 = 1 << 31;
/// UDP header bytes.
pub const UDP_HEADER: u16 = 8;
/// RTP fixed header bytes (RFC 3550 §5.1), counted as payload above UDP.
pub const RTP_HEADER: u32 = 12;
/// Most media streams a scenario may have.
pub const MAX_STREAMS: usize = 10_000;

/// The flow id of media stream `i`.
pub fn flow_id(i: usize) -> FlowId {
    FlowId(MEDIA_FLOW_BIT | i as u32)
}

/// The media stream a flow id names, if it names one.
#[inline]
pub fn stream_of(f: FlowId) -> Option<usize> {
    (f.0 & MEDIA_FLOW_BIT != 0).then_some((f.0 & !MEDIA_FLOW_BIT) as usize)
}

/// A narrowband voice codec: its frames, and its equipment impairment `Ie`
/// and packet-loss robustness `Bpl` from ITU-T G.113 (11/2007) Appendix I
/// (G.711 without concealment: G.107's default Bpl).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Codec {
    /// G.711 PCM, 64 kbit/s, no packet-loss concealment (Ie 0, Bpl 4.3).
    #[serde(rename = "g711")]
    G711,
    /// G.711 with packet-loss concealment (G.711 Appendix I): Ie 0, Bpl 25.1.
    #[serde(rename = "g711-plc")]
    G711Plc,
    /// G.729A (+VAD), 8 kbit/s, 10 ms frames, 5 ms look-ahead: Ie 11, Bpl 19.0.
    #[serde(rename = "g729a")]
    G729a,
    /// G.723.1 (+VAD), 6.3 kbit/s, 30 ms frames, 7.5 ms look-ahead: Ie 15, Bpl 16.1.
    #[serde(rename = "g723.1")]
    G7231,
}

impl Codec {
    /// Every codec's scenario name.
    pub const NAMES: &'static [&'static str] = &["g711", "g711-plc", "g729a", "g723.1"];

    /// The scenario name.
    pub fn name(self) -> &'static str {
        match self {
            Codec::G711 => "g711",
            Codec::G711Plc => "g711-plc",
            Codec::G729a => "g729a",
            Codec::G7231 => "g723.1",
        }
    }

    /// Frame duration (G.711: 10 ms blocks of samples).
    pub fn frame(self) -> Time {
        match self {
            Codec::G711 | Codec::G711Plc | Codec::G729a => Time::from_millis(10),
            Codec::G7231 => Time::from_millis(30),
        }
    }

    /// Bytes of one frame.
    pub fn frame_bytes(self) -> u32 {
        match self {
            Codec::G711 | Codec::G711Plc => 80,
            Codec::G729a => 10,
            Codec::G7231 => 24,
        }
    }

    /// Algorithmic look-ahead (the codec's Recommendation; G.114 lists it).
    pub fn lookahead(self) -> Time {
        match self {
            Codec::G711 | Codec::G711Plc => Time::ZERO,
            Codec::G729a => Time::from_millis(5),
            Codec::G7231 => Time::from_micros(7_500),
        }
    }

    /// The usual packet interval: 20 ms (30 ms for G.723.1).
    pub fn default_interval(self) -> Time {
        match self {
            Codec::G7231 => Time::from_millis(30),
            _ => Time::from_millis(20),
        }
    }

    /// Equipment impairment factor Ie (G.113 Appendix I).
    pub fn ie(self) -> f64 {
        match self {
            Codec::G711 | Codec::G711Plc => 0.0,
            Codec::G729a => 11.0,
            Codec::G7231 => 15.0,
        }
    }

    /// Packet-loss robustness factor Bpl (G.113 Appendix I; random loss).
    pub fn bpl(self) -> f64 {
        match self {
            Codec::G711 => 4.3,
            Codec::G711Plc => 25.1,
            Codec::G729a => 19.0,
            Codec::G7231 => 16.1,
        }
    }
}

/// What a source sends, resolved from its configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    /// One packet of `payload` bytes every `interval`.
    Cbr {
        /// Bytes above UDP.
        payload: u32,
        /// Packet interval (> 0).
        interval: Time,
    },
    /// Voice: a packet of `payload` bytes every `interval` during talk
    /// spurts; exponential spurts and silences of these means (`None`:
    /// talking all the time).
    Voice {
        /// The codec.
        codec: Codec,
        /// Bytes above UDP (frames + RTP header).
        payload: u32,
        /// Packet interval.
        interval: Time,
        /// Mean talk spurt and mean silence, if the source is on/off.
        spurts: Option<(Time, Time)>,
    },
    /// Video: `fps` frames a second, frame sizes of mean `mean_bytes`
    /// (log-normal of coefficient of variation `cv`; every `gop`-th frame a
    /// key frame `key_scale` times larger), split into packets of at most
    /// `max_payload` bytes above RTP.
    Video {
        /// Frames per second.
        fps: u32,
        /// Mean frame size in bytes, key frames included.
        mean_bytes: f64,
        /// Coefficient of variation of the frame size (0: fixed).
        cv: f64,
        /// Key frame period in frames (0: none).
        gop: u32,
        /// Key frame size relative to the other frames.
        key_scale: f64,
        /// Largest frame bytes per packet.
        max_payload: u32,
    },
}

impl Pattern {
    /// The kind name.
    pub fn kind(&self) -> &'static str {
        match self {
            Pattern::Cbr { .. } => "cbr",
            Pattern::Voice { .. } => "voice",
            Pattern::Video { .. } => "video",
        }
    }
}

/// One media stream to create.
#[derive(Clone, Debug)]
pub struct MediaSpec {
    /// Display name.
    pub name: String,
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// What it sends.
    pub pattern: Pattern,
    /// First packet (or first talk spurt, first frame).
    pub start: Time,
    /// No packet at or after this time (`None`: until the end).
    pub stop: Option<Time>,
    /// Fixed playout delay: a packet whose one-way delay exceeds it is late.
    pub playout: Time,
    /// The random stream of the source (talk spurts, frame sizes).
    pub rng: Rng,
}

/// A media source: sends packets at the times its pattern says (sans-IO:
/// `poll_timeout`, `poll_transmit(now)`).
#[derive(Debug)]
pub struct MediaSource {
    pattern: Pattern,
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    stop: Option<Time>,
    rng: Rng,
    /// Start of the schedule the next tick is counted from.
    epoch: Time,
    /// Ticks since `epoch`.
    tick: u64,
    /// When the next packet (or frame) is due; `None`: done.
    next: Option<Time>,
    /// End of the current talk spurt (voice on/off).
    spurt_end: Time,
    /// Packets of the current video frame not yet handed out: (count, bytes of the last).
    burst: (u32, u32),
    seq: u64,
    header: u16,
    sent_bytes: u64,
    /// Video: the current frame's tag (frame number << 32 | its packets),
    /// carried in every packet's `ack`; 0 for other kinds.
    frame_tag: u64,
    /// Video: frames sent.
    frames: u64,
}

impl MediaSource {
    /// A source for stream `index` of `spec`.
    pub fn new(index: usize, spec: &MediaSpec) -> MediaSource {
        let mut s = MediaSource {
            pattern: spec.pattern.clone(),
            flow: flow_id(index),
            src: spec.src,
            dst: spec.dst,
            stop: spec.stop,
            rng: spec.rng.clone(),
            epoch: spec.start,
            tick: 0,
            next: Some(spec.start),
            spurt_end: Time::MAX,
            burst: (0, 0),
            seq: 0,
            header: IP_HEADER + UDP_HEADER,
            sent_bytes: 0,
            frame_tag: 0,
            frames: 0,
        };
        if let Pattern::Voice {
            spurts: Some((talk, _)),
            ..
        } = s.pattern
        {
            s.spurt_end = spec.start + s.exp(talk);
        }
        s.check_stop();
        s
    }

    /// An exponential duration of mean `mean`, at least 1 ns.
    fn exp(&mut self, mean: Time) -> Time {
        let u = self.rng.uniform();
        let d = -(mean.as_nanos() as f64) * (1.0 - u).ln();
        Time::from_nanos((d.round() as u64).max(1))
    }

    fn check_stop(&mut self) {
        if let (Some(n), Some(stop)) = (self.next, self.stop) {
            if n >= stop {
                self.next = None;
            }
        }
    }

    /// When the source next wants to send.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.seq
    }

    /// IP bytes sent so far.
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes
    }

    /// Video: frames sent so far, and how many of them were sent after
    /// `after` (their deadline may not have come by the end of the run).
    pub fn frames(&self, after: Time) -> (u64, u64) {
        let Pattern::Video { fps, .. } = self.pattern else {
            return (0, 0);
        };
        let mut late = 0;
        for k in (0..self.tick).rev() {
            if self.at(k, 1_000_000_000, u128::from(fps)) <= after {
                break;
            }
            late += 1;
        }
        (self.frames, late.min(self.frames))
    }

    /// The schedule's tick `k` from the epoch: `epoch + k · period`
    /// (computed from the epoch, so no rounding accumulates).
    fn at(&self, k: u64, period_ns: u128, per: u128) -> Time {
        let off = (u128::from(k) * period_ns / per).min(u128::from(u64::MAX));
        self.epoch + Time::from_nanos(off as u64)
    }

    fn packet(&mut self, now: Time, payload: u32) -> Packet {
        let p = Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            kind: Kind::Data,
            seq: self.seq,
            ack: self.frame_tag,
            payload,
            header: self.header,
            sent_at: now,
            ..Packet::default()
        };
        self.seq += 1;
        self.sent_bytes += u64::from(p.size());
        p
    }

    /// The next packet due at `now`, if any.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.burst.0 > 0 {
            return Some(self.next_of_burst(now));
        }
        self.next.filter(|&t| t <= now)?;
        match self.pattern.clone() {
            Pattern::Cbr { payload, interval } => {
                self.tick += 1;
                self.next = Some(self.at(self.tick, u128::from(interval.as_nanos()), 1));
                self.check_stop();
                Some(self.packet(now, payload))
            }
            Pattern::Voice {
                payload,
                interval,
                spurts,
                ..
            } => {
                self.tick += 1;
                let mut next = self.at(self.tick, u128::from(interval.as_nanos()), 1);
                if let Some((talk, silence)) = spurts {
                    // The spurt ends: silence, then the next spurt starts a
                    // new packet schedule (a spurt sends at least one packet).
                    // (A silence shorter than what is left of the packet
                    // interval still waits for the interval.)
                    while next >= self.spurt_end {
                        let start = (self.spurt_end + self.exp(silence)).max(next);
                        self.spurt_end = start + self.exp(talk);
                        self.epoch = start;
                        self.tick = 0;
                        next = start;
                    }
                }
                self.next = Some(next);
                self.check_stop();
                Some(self.packet(now, payload))
            }
            Pattern::Video {
                fps,
                mean_bytes,
                cv,
                gop,
                key_scale,
                max_payload,
            } => {
                let key = gop > 0 && self.tick.is_multiple_of(u64::from(gop));
                // The non-key frames' mean so that the mean over a GOP is `mean_bytes`.
                let base = if gop > 0 {
                    mean_bytes * f64::from(gop) / (f64::from(gop) - 1.0 + key_scale)
                } else {
                    mean_bytes
                };
                let scale = if key { key_scale } else { 1.0 };
                let bytes = (base * scale * self.lognormal(cv)).round().max(1.0) as u64;
                let per = u64::from(max_payload);
                let n = bytes.div_ceil(per).min(u64::from(u32::MAX)) as u32;
                let last = (bytes - u64::from(n - 1) * per) as u32;
                self.burst = (n, last);
                self.frame_tag = (self.tick << 32) | u64::from(n);
                self.frames += 1;
                self.tick += 1;
                self.next = Some(self.at(self.tick, 1_000_000_000, u128::from(fps)));
                self.check_stop();
                Some(self.next_of_burst(now))
            }
        }
    }

    /// A log-normal factor of mean 1 and coefficient of variation `cv`.
    fn lognormal(&mut self, cv: f64) -> f64 {
        if cv <= 0.0 {
            return 1.0;
        }
        let s2 = (1.0 + cv * cv).ln();
        (self.rng.normal() * s2.sqrt() - s2 / 2.0).exp()
    }

    fn next_of_burst(&mut self, now: Time) -> Packet {
        let Pattern::Video { max_payload, .. } = self.pattern else {
            unreachable!("only video sends bursts")
        };
        self.burst.0 -= 1;
        let frame = if self.burst.0 == 0 {
            self.burst.1
        } else {
            max_payload
        };
        self.packet(now, frame + RTP_HEADER)
    }
}

/// A media sink: what a receiver with a fixed playout delay sees of a
/// stream.
#[derive(Debug)]
pub struct MediaSink {
    playout: Time,
    delay: Histogram,
    received: u64,
    received_bytes: u64,
    duplicates: u64,
    late: u64,
    corrupted: u64,
    /// Video: frames with packets still missing, by frame number:
    /// (packets received, packets in the frame, sent at, last arrival).
    partial: std::collections::BTreeMap<u64, (u32, u32, Time, Time)>,
    /// Video: delay of every complete frame (its last packet's arrival − its send time).
    frame_delay: Histogram,
    /// Video: complete frames whose delay was within the playout delay.
    frames_played: u64,
    /// Video: send times of the played frames sent within the playout delay
    /// of the latest arrival (older ones are due by any end of the run).
    recent_played: std::collections::VecDeque<Time>,
    /// One bit per packet number seen.
    seen: Vec<u64>,
    /// RFC 3550 §6.4.1 interarrival jitter J, ns.
    jitter: f64,
    /// Relative transit time of the previous packet, ns.
    last_transit: Option<i128>,
}

impl MediaSink {
    /// A sink whose playout deadline is `playout` after a packet was sent.
    pub fn new(playout: Time) -> MediaSink {
        MediaSink {
            playout,
            delay: Histogram::new(),
            received: 0,
            received_bytes: 0,
            duplicates: 0,
            late: 0,
            corrupted: 0,
            partial: std::collections::BTreeMap::new(),
            frame_delay: Histogram::new(),
            frames_played: 0,
            recent_played: std::collections::VecDeque::new(),
            seen: Vec::new(),
            jitter: 0.0,
            last_transit: None,
        }
    }

    /// Packet `p` arrived at `now`. Copies of a packet already received
    /// count as duplicates and nothing else; a packet with bit errors fails
    /// the UDP checksum and is discarded (counted, then lost).
    pub fn on_packet(&mut self, now: Time, p: &Packet) {
        if p.corrupt != 0 {
            self.corrupted += 1;
            return;
        }
        let (w, b) = ((p.seq / 64) as usize, p.seq % 64);
        if w >= self.seen.len() {
            self.seen.resize(w + 1, 0);
        }
        if self.seen[w] & (1 << b) != 0 {
            self.duplicates += 1;
            return;
        }
        self.seen[w] |= 1 << b;
        self.received += 1;
        self.received_bytes += u64::from(p.size());
        let d = now.saturating_sub(p.sent_at);
        self.delay.record(d.as_nanos());
        if d > self.playout {
            self.late += 1;
        }
        self.on_transit(i128::from(now.as_nanos()) - i128::from(p.sent_at.as_nanos()));
        let need = (p.ack & 0xffff_ffff) as u32;
        if need > 0 {
            self.on_frame_packet(now, p.ack >> 32, need, p.sent_at);
        }
    }

    /// A video packet of frame `frame` (of `need` packets, sent at `sent`)
    /// arrived at `now`: the frame is complete when all have.
    fn on_frame_packet(&mut self, now: Time, frame: u64, need: u32, sent: Time) {
        let e = self.partial.entry(frame).or_insert((0, need, sent, now));
        e.0 += 1;
        e.3 = e.3.max(now);
        if e.0 >= e.1 {
            let (_, _, sent, last) = *e;
            self.partial.remove(&frame);
            let d = last.saturating_sub(sent);
            self.frame_delay.record(d.as_nanos());
            if d <= self.playout {
                self.frames_played += 1;
                self.recent_played.push_back(sent);
            }
            let horizon = now.saturating_sub(self.playout);
            while self.recent_played.front().is_some_and(|&t| t < horizon) {
                self.recent_played.pop_front();
            }
        }
    }

    /// RFC 3550 §6.4.1: with `D` the difference of the relative transit
    /// times of this packet and the one received before it (in order of
    /// arrival), `J += (|D| − J) / 16`.
    fn on_transit(&mut self, transit: i128) {
        if let Some(prev) = self.last_transit.replace(transit) {
            let d = (transit - prev).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
    }

    /// Whether packet number `seq` was received (intact) already.
    pub fn has_received(&self, seq: u64) -> bool {
        self.seen
            .get((seq / 64) as usize)
            .is_some_and(|w| w & (1 << (seq % 64)) != 0)
    }

    /// Distinct packets received.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// The interarrival jitter J now, ns.
    pub fn jitter_ns(&self) -> f64 {
        self.jitter
    }

    /// The one-way delays of the packets received.
    pub fn delay(&self) -> &Histogram {
        &self.delay
    }
}

/// One media stream of a run: source and sink.
#[derive(Debug)]
pub struct Stream {
    /// What was asked for.
    pub spec: MediaSpec,
    /// The sender.
    pub source: MediaSource,
    /// The receiver.
    pub sink: MediaSink,
}

impl Stream {
    /// Stream `index` of `spec`.
    pub fn new(index: usize, spec: MediaSpec) -> Stream {
        Stream {
            source: MediaSource::new(index, &spec),
            sink: MediaSink::new(spec.playout),
            spec,
        }
    }

    /// The stream's summary; `in_flight` distinct packets not received were
    /// still inside links at the end (not counted lost), `from`/`to` the
    /// node names.
    pub fn summary(
        &self,
        id: usize,
        from: &str,
        to: &str,
        in_flight: u64,
        end: Time,
    ) -> MediaSummary {
        let sent = self.source.sent();
        let (sink, h) = (&self.sink, &self.sink.delay);
        let settled = sent.saturating_sub(in_flight);
        let lost = settled.saturating_sub(sink.received);
        let pct = |n: u64| {
            if settled > 0 {
                100.0 * n as f64 / settled as f64
            } else {
                0.0
            }
        };
        let s = |ns: u64| (h.count() > 0).then_some(ns as f64 * 1e-9);
        let emodel = match self.spec.pattern {
            // Nothing settled (sent and arrived or lost): nothing to rate.
            Pattern::Voice { .. } if settled == 0 => None,
            Pattern::Voice {
                codec, interval, ..
            } => {
                let ta = interval + codec.lookahead() + self.spec.playout;
                let ppl = pct(lost + sink.late);
                let m = EModel::voip(ta.as_secs_f64() * 1e3, codec.ie(), codec.bpl(), ppl);
                Some(EModelSummary::of(&m, m.rate()))
            }
            _ => None,
        };
        MediaSummary {
            id,
            name: self.spec.name.clone(),
            kind: self.spec.pattern.kind(),
            codec: match self.spec.pattern {
                Pattern::Voice { codec, .. } => Some(codec.name()),
                _ => None,
            },
            from: from.to_string(),
            to: to.to_string(),
            sent,
            sent_bytes: self.source.sent_bytes(),
            received: sink.received,
            received_bytes: sink.received_bytes,
            duplicates: sink.duplicates,
            corrupted: sink.corrupted,
            lost,
            in_flight,
            late: sink.late,
            loss_pct: pct(lost),
            late_pct: pct(sink.late),
            playout_s: self.spec.playout.as_secs_f64(),
            delay_mean_s: (h.count() > 0).then(|| h.mean() * 1e-9),
            delay_p50_s: s(h.quantile(0.5)),
            delay_p90_s: s(h.quantile(0.9)),
            delay_p99_s: s(h.quantile(0.99)),
            delay_p999_s: s(h.quantile(0.999)),
            delay_max_s: s(h.max()),
            jitter_s: (sink.received > 1).then_some(sink.jitter * 1e-9),
            video: matches!(self.spec.pattern, Pattern::Video { .. }).then(|| {
                let (frames, pending) = self.source.frames(end.saturating_sub(self.spec.playout));
                let f = &sink.frame_delay;
                let fs = |ns: u64| (f.count() > 0).then_some(ns as f64 * 1e-9);
                // Frames sent in the last playout delay of the run are left
                // out of the share, played or not.
                let cut = end.saturating_sub(self.spec.playout);
                let played_late = sink.recent_played.iter().filter(|&&t| t > cut).count() as u64;
                let (due, played_due) = (frames - pending, sink.frames_played - played_late);
                VideoSummary {
                    frames,
                    frames_complete: f.count(),
                    frames_played: sink.frames_played,
                    frames_played_pct: if due > 0 {
                        100.0 * played_due as f64 / due as f64
                    } else {
                        0.0
                    },
                    frame_delay_p50_s: fs(f.quantile(0.5)),
                    frame_delay_p99_s: fs(f.quantile(0.99)),
                    frame_delay_max_s: fs(f.max()),
                }
            }),
            emodel,
            account: None,
        }
    }
}

/// The E-model rating of a voice stream (G.107 with T = Ta, Tr = 2 Ta,
/// every other input at its default).
#[derive(Clone, Debug, Serialize)]
pub struct EModelSummary {
    /// Mouth-to-ear delay Ta: packet interval + codec look-ahead + playout delay, ms.
    pub ta_ms: f64,
    /// Packet loss the decoder sees, network and late: Ppl, %.
    pub ppl_pct: f64,
    /// The codec's Ie.
    pub ie: f64,
    /// The codec's Bpl.
    pub bpl: f64,
    /// Effective equipment impairment Ie,eff.
    pub ie_eff: f64,
    /// Delay impairment Id.
    pub id: f64,
    /// The rating R.
    pub r: f64,
    /// MOS (G.107 Annex B).
    pub mos: f64,
}

impl EModelSummary {
    fn of(m: &EModel, r: Rating) -> EModelSummary {
        EModelSummary {
            ta_ms: m.ta,
            ppl_pct: m.ppl,
            ie: m.ie,
            bpl: m.bpl,
            ie_eff: r.ie_eff,
            id: r.id,
            r: r.r,
            mos: r.mos,
        }
    }
}

/// A video stream's frames as a receiver with a fixed playout delay plays
/// them: a frame is complete when all its packets arrived, played when it
/// was complete within the playout delay of its sending.
#[derive(Clone, Debug, Serialize)]
pub struct VideoSummary {
    /// Frames sent.
    pub frames: u64,
    /// Frames all of whose packets arrived.
    pub frames_complete: u64,
    /// Complete frames whose last packet arrived within the playout delay.
    pub frames_played: u64,
    /// Of the frames sent at least a playout delay before the end of the
    /// run, the share played, %.
    pub frames_played_pct: f64,
    /// Median frame delay (last packet's arrival − the frame's sending) of
    /// the complete frames, seconds.
    pub frame_delay_p50_s: Option<f64>,
    /// Its 99th percentile, seconds.
    pub frame_delay_p99_s: Option<f64>,
    /// Its largest, seconds.
    pub frame_delay_max_s: Option<f64>,
}

/// One media stream's results (the summary's `media[]`, docs/metrics.md).
#[derive(Clone, Debug, Serialize)]
pub struct MediaSummary {
    /// Index of the stream.
    pub id: usize,
    /// Name.
    pub name: String,
    /// `cbr`, `voice` or `video`.
    pub kind: &'static str,
    /// The voice codec (`null` for other kinds).
    pub codec: Option<&'static str>,
    /// Sender node.
    pub from: String,
    /// Receiver node.
    pub to: String,
    /// Packets sent.
    pub sent: u64,
    /// IP bytes sent.
    pub sent_bytes: u64,
    /// Distinct packets received.
    pub received: u64,
    /// IP bytes of the distinct packets received.
    pub received_bytes: u64,
    /// Copies of packets already received (netem `duplicate`).
    pub duplicates: u64,
    /// Packets discarded at the receiver for bit errors (a failed UDP
    /// checksum; netem `corrupt`, frame links); part of `lost`.
    pub corrupted: u64,
    /// Packets lost: sent − in flight − received (dropped in the network,
    /// or corrupted).
    pub lost: u64,
    /// Distinct packets still inside links at the end and not received
    /// (neither lost nor received): a packet and its netem copy both in
    /// flight count once, a copy of a packet already received not at all.
    pub in_flight: u64,
    /// Packets received after their playout deadline (sent + playout).
    pub late: u64,
    /// `lost` over the packets sent and not in flight, %.
    pub loss_pct: f64,
    /// `late` over the same, %.
    pub late_pct: f64,
    /// The playout delay, seconds.
    pub playout_s: f64,
    /// Mean one-way delay of the received packets, seconds.
    pub delay_mean_s: Option<f64>,
    /// Median one-way delay, seconds.
    pub delay_p50_s: Option<f64>,
    /// 90th percentile, seconds.
    pub delay_p90_s: Option<f64>,
    /// 99th percentile, seconds.
    pub delay_p99_s: Option<f64>,
    /// 99.9th percentile, seconds.
    pub delay_p999_s: Option<f64>,
    /// Largest, seconds.
    pub delay_max_s: Option<f64>,
    /// RFC 3550 interarrival jitter J at the end of the run, seconds.
    pub jitter_s: Option<f64>,
    /// Frame-level results (video only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoSummary>,
    /// The E-model rating (voice only, once a packet was sent and settled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emodel: Option<EModelSummary>,
    /// The stream's closed packet account (simulated runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<crate::net::account::LegAccount>,
}

#[cfg(test)]
mod net_tests;
#[cfg(test)]
mod tests;
