//! Per-segment record of outstanding data and the SACK scoreboard (RFC 6675).
//!
//! The per-ACK work is proportional to what the ACK changes, not to the
//! window (finding F9, docs/checking.md): the pipe's terms are kept counts,
//! the hole and IsLost marks advance watermarks, and SACKed runs are skipped
//! through per-segment hints. [`Scoreboard::visited`] counts the segments the
//! searches look at, so that tests can bound it.

use std::cell::Cell;
use std::collections::VecDeque;

use super::rate::TxState;
use crate::time::Time;

/// One transmitted segment. Boundaries never change: a retransmission resends
/// exactly the same bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First byte.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// First transmission time.
    pub first_sent: Time,
    /// Latest transmission time.
    pub last_sent: Time,
    /// Transmissions so far (1 = never retransmitted).
    pub tx_count: u32,
    /// Selectively acknowledged (set only by the [`Scoreboard`]).
    pub sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, or forced at recovery entry).
    pub lost: bool,
    /// Transmission order stamp of the latest transmission (sender-wide
    /// counter shared with LT-TCP repair packets; 0 if unused).
    pub order: u64,
    /// Was ever seen as a SACK hole: unSACKed below a SACKed segment (sticky).
    pub hole: bool,
    /// Was ever SACKed (sticky; survives the RTO's clearing of SACK marks).
    pub ever_sacked: bool,
    /// Delivery-rate snapshot of the latest transmission (rate sampling only).
    pub tx: TxState,
    /// While SACKed: a position (in [`Scoreboard`]'s absolute numbering)
    /// above this one up to which every segment is SACKed — a hint for
    /// skipping SACKed runs (segments are unSACKed only all at once).
    sacked_to: u64,
}

impl Segment {
    /// One past the last byte.
    #[inline]
    pub fn end(&self) -> u64 {
        self.seq + u64::from(self.len)
    }

    /// A fresh segment `[seq, seq + len)` first sent at `now` (not yet counted as transmitted).
    pub fn new(seq: u64, len: u32, now: Time) -> Segment {
        Segment {
            seq,
            len,
            first_sent: now,
            last_sent: now,
            tx_count: 0,
            sacked: false,
            lost: false,
            order: 0,
            hole: false,
            ever_sacked: false,
            tx: TxState::default(),
            sacked_to: 0,
        }
    }

    /// Known to have been erased at least once: seen as a SACK hole, or
    /// retransmitted without ever having been SACKed (LT-TCP's sender-side
    /// erasure count).
    pub fn erased(&self) -> bool {
        self.hole || (self.tx_count > 1 && !self.ever_sacked)
    }
}

/// Segments covering `[snd_una, snd_max)`, oldest first.
///
/// Segments are contiguous byte ranges of any size (LT-TCP's adaptive MSS
/// changes the size from one block to the next); a sequence number maps to
/// its segment by binary search, and nothing is hashed or allocated per packet.
/// `mss` is the sender MSS used by RFC 6675's byte rule in [`mark_lost`](Self::mark_lost).
///
/// Kept counts (checked against a full recount in debug builds): the bytes
/// marked lost and not SACKed, the SACKed retransmissions
/// [`count_sacked_retransmissions`](Self::count_sacked_retransmissions) names,
/// the number of segments marked lost, the sequence of the highest SACKed
/// segment, and a cursor over the unSACKed bytes below `HighRxt`.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    segs: VecDeque<Segment>,
    mss: u64,
    sacked: usize,
    sacked_bytes: u64,
    /// Highest transmission order stamp of any segment cumulatively ACKed or SACKed.
    acked_order: u64,
    /// Segments cumulatively ACKed so far, and how many of them were [`Segment::erased`].
    /// `popped` is also the absolute number of the oldest segment.
    popped: u64,
    popped_erased: u64,
    /// Bytes ever marked lost (a counter: deltas are the losses an ACK found).
    lost_total: u64,
    /// [`TcpConfig::sacked_rtx_in_pipe`]: a segment retransmitted at or after
    /// this time (the last timeout) stays in [`pipe`](Self::pipe) once
    /// SACKed; `None`, RFC 6675's pipe.
    ///
    /// [`TcpConfig::sacked_rtx_in_pipe`]: super::TcpConfig::sacked_rtx_in_pipe
    sacked_rtx_since: Option<Time>,
    /// Bytes of segments marked lost and not SACKed.
    lost_unsacked_bytes: u64,
    /// Segments marked lost (SACKed or not).
    lost_count: usize,
    /// Bytes of SACKed segments that `sacked_rtx_since` keeps in the pipe.
    sacked_rtx_bytes: u64,
    /// `seq` of the highest SACKed segment (meaningful while `sacked > 0`).
    top_sacked: u64,
    /// Every unSACKed segment below this sequence is marked `hole`.
    hole_mark: u64,
    /// Every unSACKed segment below this sequence is marked `lost`.
    lost_mark: u64,
    /// The pipe's cursor: the unSACKed bytes of the segments below `.0`.
    rxt_cursor: Cell<(u64, u64)>,
    /// Segments looked at by the searches (see [`visited`](Self::visited)).
    visited: Cell<u64>,
}

impl Scoreboard {
    /// An empty scoreboard; `mss` is the sender MSS (see [`set_mss`](Self::set_mss)).
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            mss: u64::from(mss.max(1)),
            sacked: 0,
            sacked_bytes: 0,
            acked_order: 0,
            popped: 0,
            popped_erased: 0,
            lost_total: 0,
            sacked_rtx_since: None,
            lost_unsacked_bytes: 0,
            lost_count: 0,
            sacked_rtx_bytes: 0,
            top_sacked: 0,
            hole_mark: 0,
            lost_mark: 0,
            rxt_cursor: Cell::new((0, 0)),
            visited: Cell::new(0),
        }
    }

    /// Segments looked at so far by the scoreboard's searches (the pipe's
    /// cursor, the hole and IsLost marking, NextSeg's look-ups, the SACK
    /// blocks' walk): a cost counter for tests that bound the per-ACK work.
    pub fn visited(&self) -> u64 {
        self.visited.get()
    }

    #[inline]
    fn visit(&self, n: u64) {
        self.visited.set(self.visited.get() + n);
    }

    /// Whether `s` is a SACKed retransmission that the pipe counts.
    #[inline]
    fn counts_sacked_rtx(&self, s: &Segment) -> bool {
        s.sacked
            && self
                .sacked_rtx_since
                .is_some_and(|t| s.tx_count > 1 && s.last_sent >= t)
    }

    /// ns-3.44's pipe (`TcpTxBuffer::BytesInFlight` = sent − SACKed − lost +
    /// retransmitted, tcp-tx-buffer.cc 1055–1073 at ns-3.44): `Update`
    /// (771–864) marks a retransmitted segment SACKed without clearing its
    /// `m_retrans` flag, so it is still counted until the cumulative ACK
    /// removes it (`RemoveFromCounts`) or a timeout clears every flag
    /// (`SetSentListLost`). From now on, a SACKed segment retransmitted at or
    /// after `since` (the last timeout; `Time::ZERO` before any) counts in
    /// [`pipe`](Self::pipe); `None`: RFC 6675's pipe (and Linux's
    /// `tcp_sacktag_one`, which takes a SACKed retransmission out of
    /// `retrans_out`).
    pub fn count_sacked_retransmissions(&mut self, since: Option<Time>) {
        self.sacked_rtx_since = since;
        // Once per timeout: a full recount.
        self.visit(self.segs.len() as u64);
        self.sacked_rtx_bytes = self
            .segs
            .iter()
            .filter(|s| self.counts_sacked_rtx(s))
            .map(|s| u64::from(s.len))
            .sum();
    }

    /// Change the sender MSS used by the IsLost byte rule.
    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
    }

    /// Record a new segment at the top (its `seq` must be the previous end).
    pub fn push(&mut self, mut seg: Segment) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.seq));
        debug_assert!(seg.len > 0);
        // A new segment is neither SACKed nor marked (the sender's own).
        debug_assert!(!seg.sacked && !seg.lost);
        seg.sacked = false;
        seg.lost = false;
        let (at, below) = self.rxt_cursor.get();
        if seg.seq < at {
            self.rxt_cursor.set((at, below + u64::from(seg.len)));
        }
        self.segs.push_back(seg);
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// Whether no segment is outstanding.
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Segment by index (0 = oldest).
    pub fn get(&self, idx: usize) -> Option<&Segment> {
        self.segs.get(idx)
    }

    /// Change segment `idx` through `f` (a transmission: `tx_count`,
    /// `last_sent`, `order`, `tx`; a loss mark set or cleared), keeping the
    /// scoreboard's counts. `f` must not change `seq`, `len` or `sacked`.
    pub fn update<R>(&mut self, idx: usize, f: impl FnOnce(&mut Segment) -> R) -> Option<R> {
        let old = *self.segs.get(idx)?;
        let old_rtx = self.counts_sacked_rtx(&old);
        let seg = self.segs.get_mut(idx)?;
        let r = f(seg);
        let new = *seg;
        debug_assert!(new.seq == old.seq && new.len == old.len && new.sacked == old.sacked);
        let len = u64::from(new.len);
        if old.lost != new.lost {
            if new.lost {
                self.lost_count += 1;
                if !new.sacked {
                    self.lost_unsacked_bytes += len;
                }
            } else {
                self.lost_count -= 1;
                if !new.sacked {
                    self.lost_unsacked_bytes -= len;
                    self.lost_mark = self.lost_mark.min(new.seq);
                }
            }
        }
        let new_rtx = self.counts_sacked_rtx(&new);
        if old_rtx != new_rtx {
            if new_rtx {
                self.sacked_rtx_bytes += len;
            } else {
                self.sacked_rtx_bytes -= len;
            }
        }
        Some(r)
    }

    /// Oldest segment.
    pub fn front(&self) -> Option<&Segment> {
        self.segs.front()
    }

    /// Iterate oldest first (each segment yielded counts as visited).
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segs.iter().inspect(|_| self.visit(1))
    }

    /// Index of the segment containing byte `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        let first = self.segs.front()?;
        if seq < first.seq {
            return None;
        }
        // The segments tile the sequence space and nearly all have the
        // oldest one's length: try the index that length gives, checked,
        // before the binary search (the same answer: one segment holds `seq`).
        let guess = ((seq - first.seq) / u64::from(first.len.max(1))) as usize;
        if let Some(s) = self.segs.get(guess) {
            if s.seq <= seq && seq < s.end() {
                return Some(guess);
            }
        }
        let idx = self.segs.partition_point(|s| s.end() <= seq);
        let s = self.segs.get(idx)?;
        debug_assert!(s.seq <= seq && seq < s.end());
        Some(idx)
    }

    /// Index of the first segment starting at or above `seq` (`len()` if none).
    fn first_at_or_above(&self, seq: u64) -> usize {
        // As in `index_of`: the index the oldest segment's length gives, if
        // it is the first at or above `seq` (the previous one starts below).
        if let Some(first) = self.segs.front() {
            if seq <= first.seq {
                return 0;
            }
            let guess = (seq - first.seq).div_ceil(u64::from(first.len.max(1))) as usize;
            if let Some(s) = self.segs.get(guess) {
                if s.seq >= seq && self.segs[guess - 1].seq < seq {
                    return guess;
                }
            }
        }
        self.segs.partition_point(|s| s.seq < seq)
    }

    /// Index of the highest SACKed segment.
    fn top_index(&self) -> Option<usize> {
        if self.sacked == 0 {
            return None;
        }
        let idx = self.index_of(self.top_sacked)?;
        debug_assert!(self.segs[idx].sacked && self.segs[idx].seq == self.top_sacked);
        Some(idx)
    }

    /// The first unSACKed segment at or after index `idx` (`len()` if none),
    /// skipping SACKed runs by their hints (and shortening the hints on the way).
    fn skip_sacked(&mut self, idx: usize) -> usize {
        let base = self.popped;
        let n = self.segs.len();
        let mut cur = idx;
        while cur < n && self.segs[cur].sacked {
            self.visit(1);
            let hint = (self.segs[cur].sacked_to.saturating_sub(base)) as usize;
            cur = hint.max(cur + 1).min(n);
        }
        // Path compression: every SACKed segment walked now points at `cur`.
        let to = base + cur as u64;
        let mut i = idx;
        while i < cur {
            let s = &mut self.segs[i];
            let next = (s.sacked_to.saturating_sub(base)) as usize;
            s.sacked_to = to;
            i = next.max(i + 1);
        }
        cur
    }

    /// Drop every segment wholly below `ack`; returns the newest one dropped.
    pub fn ack(&mut self, ack: u64) -> Option<Segment> {
        self.ack_visit(ack, |_| {})
    }

    /// [`ack`](Self::ack), calling `visit` on every segment removed that was
    /// not SACKed (those were delivered when SACKed).
    pub fn ack_visit(&mut self, ack: u64, mut visit: impl FnMut(&mut Segment)) -> Option<Segment> {
        let mut newest = None;
        while let Some(f) = self.segs.front() {
            if f.end() > ack {
                break;
            }
            let len = u64::from(f.len);
            if f.sacked {
                self.sacked -= 1;
                self.sacked_bytes -= len;
            } else {
                if f.lost {
                    self.lost_unsacked_bytes -= len;
                }
                let (at, below) = self.rxt_cursor.get();
                if f.seq < at {
                    self.rxt_cursor.set((at, below - len));
                }
            }
            if f.lost {
                self.lost_count -= 1;
            }
            if self.counts_sacked_rtx(f) {
                self.sacked_rtx_bytes -= len;
            }
            self.acked_order = self.acked_order.max(f.order);
            self.popped += 1;
            self.popped_erased += u64::from(f.erased());
            newest = self.segs.pop_front();
            if let Some(seg) = newest.as_mut().filter(|s| !s.sacked) {
                visit(seg);
            }
        }
        newest
    }

    /// Mark the segments wholly inside the SACK blocks as SACKed; returns
    /// whether anything was newly SACKed.
    pub fn apply_sack(&mut self, blocks: &[(u64, u64)]) -> bool {
        self.apply_sack_visit(blocks, |_| {})
    }

    /// [`apply_sack`](Self::apply_sack), calling `visit` on every segment
    /// newly SACKed.
    pub fn apply_sack_visit(
        &mut self,
        blocks: &[(u64, u64)],
        mut visit: impl FnMut(&mut Segment),
    ) -> bool {
        let mut any = false;
        let Some(first) = self.segs.front().map(|s| s.seq) else {
            return false;
        };
        for &(start, end) in blocks {
            if end <= first || start >= end {
                continue;
            }
            let start = start.max(first);
            let Some(mut idx) = self.index_of(start) else {
                continue;
            };
            loop {
                // SACKed segments are skipped (their end only grows, so
                // one past `end` ends the block as it would have).
                idx = self.skip_sacked(idx);
                self.visit(1);
                let abs = self.popped + idx as u64;
                let (at, below) = self.rxt_cursor.get();
                let since = self.sacked_rtx_since;
                let Some(s) = self.segs.get_mut(idx) else {
                    break;
                };
                if s.end() > end {
                    break;
                }
                if s.seq >= start {
                    debug_assert!(!s.sacked);
                    s.sacked = true;
                    s.ever_sacked = true;
                    s.sacked_to = abs + 1;
                    let len = u64::from(s.len);
                    self.sacked += 1;
                    self.sacked_bytes += len;
                    if s.lost {
                        self.lost_unsacked_bytes -= len;
                    }
                    if s.seq < at {
                        self.rxt_cursor.set((at, below - len));
                    }
                    if since.is_some_and(|t| s.tx_count > 1 && s.last_sent >= t) {
                        self.sacked_rtx_bytes += len;
                    }
                    self.top_sacked = if self.sacked == 1 {
                        s.seq
                    } else {
                        self.top_sacked.max(s.seq)
                    };
                    self.acked_order = self.acked_order.max(s.order);
                    any = true;
                    visit(s);
                }
                idx += 1;
            }
        }
        if any {
            // Every unSACKed segment below the highest SACKed one is a hole
            // (the segments below `hole_mark` were marked before).
            let top = self.top_sacked;
            let mut idx = self.first_at_or_above(self.hole_mark);
            while let Some(s) = self.segs.get_mut(idx).filter(|s| s.seq < top) {
                if !s.sacked {
                    s.hole = true;
                }
                idx += 1;
                self.visit(1);
            }
            self.hole_mark = self.hole_mark.max(top);
        }
        any
    }

    /// Highest transmission order stamp of a segment cumulatively ACKed or
    /// SACKed: with FIFO paths, everything sent before it has arrived or is lost.
    pub fn acked_order(&self) -> u64 {
        self.acked_order
    }

    /// Segments cumulatively ACKed so far and how many of them were erased at least once.
    pub fn popped(&self) -> (u64, u64) {
        (self.popped, self.popped_erased)
    }

    /// Number of segments in `[from, to)` that are holes now: unSACKed and
    /// below the highest SACKed segment.
    pub fn holes_in(&self, from: u64, to: u64) -> usize {
        let Some(top) = self.top_index() else {
            return 0;
        };
        let top_seq = self.segs[top].seq;
        let Some(start) = self.index_of(from.max(self.segs[0].seq)) else {
            return 0;
        };
        if start >= top {
            // Nothing of [from, to) lies below the highest SACKed segment (RACK
            // may ask about a segment above it): no holes.
            return 0;
        }
        self.segs
            .range(start..top)
            .take_while(|s| s.seq < to.min(top_seq))
            .filter(|s| !s.sacked)
            .count()
    }

    /// RFC 6675 IsLost for every segment: an unSACKed segment is lost when at
    /// least `dupthresh` SACKed segments, or more than `(dupthresh − 1)·mss`
    /// SACKed bytes, lie above it. Marks are only ever added here.
    pub fn mark_lost(&mut self, dupthresh: u32) {
        if self.sacked == 0 {
            return;
        }
        let byte_limit = u64::from(dupthresh.saturating_sub(1)) * self.mss;
        if dupthresh > 0
            && (self.sacked as u64) < u64::from(dupthresh)
            && self.sacked_bytes <= byte_limit
        {
            return; // not enough SACKed above anything
        }
        // Walking down from the highest SACKed segment (nothing above it
        // counts anything), the SACKed segment at which the counts reach the
        // rule: every unSACKed segment below it is lost, none above it. With
        // a threshold of 0, every unSACKed segment is.
        let (mut count, mut bytes) = (0u32, 0u64);
        let mut idx = match self.top_index() {
            Some(top) if dupthresh > 0 => top + 1,
            _ => self.segs.len(),
        };
        let reached = loop {
            if dupthresh == 0 {
                break Some(idx);
            }
            if idx == 0 {
                break None;
            }
            idx -= 1;
            self.visit(1);
            let s = &self.segs[idx];
            if s.sacked {
                count += 1;
                bytes += u64::from(s.len);
                if count >= dupthresh || bytes > byte_limit {
                    break Some(idx);
                }
            }
        };
        let Some(upto) = reached else {
            return;
        };
        // Mark the unSACKed segments below `upto` (below `lost_mark` they
        // are marked already), skipping SACKed runs.
        let mut i = self.first_at_or_above(self.lost_mark);
        loop {
            i = self.skip_sacked(i);
            if i >= upto {
                break;
            }
            self.visit(1);
            let s = &mut self.segs[i];
            if !s.lost {
                s.lost = true;
                let len = u64::from(s.len);
                self.lost_total += len;
                self.lost_unsacked_bytes += len;
                self.lost_count += 1;
            }
            i += 1;
        }
        let mark = self
            .segs
            .get(upto)
            .map_or_else(|| self.segs.back().map_or(0, |s| s.end()), |s| s.seq);
        self.lost_mark = self.lost_mark.max(mark);
    }

    /// RFC 6675 SetPipe: unSACKed bytes not deemed lost, plus unSACKed bytes
    /// below `high_rxt` (retransmitted in this recovery); with
    /// [`count_sacked_retransmissions`](Self::count_sacked_retransmissions),
    /// also the SACKed retransmissions it names (ns-3.44).
    pub fn pipe(&self, high_rxt: u64) -> u64 {
        let (Some(first), Some(last)) = (self.segs.front(), self.segs.back()) else {
            return 0;
        };
        let outstanding = last.end() - first.seq;
        let not_lost = outstanding - self.sacked_bytes - self.lost_unsacked_bytes;
        let pipe = not_lost + self.unsacked_below(high_rxt) + self.sacked_rtx_bytes;
        debug_assert_eq!(pipe, self.pipe_recount(high_rxt));
        pipe
    }

    /// UnSACKed bytes of the segments starting below `seq`: the cursor moved
    /// there (`HighRxt` only grows within a recovery).
    fn unsacked_below(&self, seq: u64) -> u64 {
        let (mut at, mut below) = self.rxt_cursor.get();
        if seq > at {
            let mut idx = self.first_at_or_above(at);
            while let Some(s) = self.segs.get(idx).filter(|s| s.seq < seq) {
                if !s.sacked {
                    below += u64::from(s.len);
                }
                idx += 1;
                self.visit(1);
            }
        } else if seq < at {
            let mut idx = self.first_at_or_above(seq);
            while let Some(s) = self.segs.get(idx).filter(|s| s.seq < at) {
                if !s.sacked {
                    below -= u64::from(s.len);
                }
                idx += 1;
                self.visit(1);
            }
        }
        at = seq;
        self.rxt_cursor.set((at, below));
        below
    }

    /// [`pipe`](Self::pipe) by a full scan (the reference the kept counts
    /// must equal).
    pub fn pipe_recount(&self, high_rxt: u64) -> u64 {
        let mut pipe = 0;
        for s in &self.segs {
            if s.sacked {
                if self.counts_sacked_rtx(s) {
                    pipe += u64::from(s.len); // ns-3.44's BytesInFlight
                }
                continue;
            }
            if !s.lost {
                pipe += u64::from(s.len);
            }
            if s.seq < high_rxt {
                pipe += u64::from(s.len);
            }
        }
        pipe
    }

    /// NextSeg rule 1: the oldest lost, unSACKed segment at or above `from`.
    pub fn next_lost(&mut self, from: u64, scattered: bool) -> Option<usize> {
        let mut idx = match self.index_of(from) {
            Some(i) => i,
            None if self.segs.front().is_some_and(|f| from < f.seq) => 0,
            None => return None,
        };
        if self.lost_count == 0 {
            return None;
        }
        loop {
            idx = self.skip_sacked(idx);
            self.visit(1);
            let s = self.segs.get(idx)?;
            if s.lost && s.seq >= from {
                return Some(idx);
            }
            if !s.lost && !scattered {
                // RFC 6675's lost marks are downward-closed among unSACKed
                // segments (RACK's are not: `scattered`).
                return None;
            }
            idx += 1;
        }
    }

    /// NextSeg rule 3: the oldest unSACKed segment at or above `from` that
    /// lies below the highest SACKed segment.
    pub fn next_hole(&mut self, from: u64) -> Option<usize> {
        let top = self.top_index()?;
        let mut idx = match self.index_of(from) {
            Some(i) => i,
            None if self.segs.front().is_some_and(|f| from < f.seq) => 0,
            None => return None,
        };
        while idx < top {
            idx = self.skip_sacked(idx);
            self.visit(1);
            if idx >= top {
                break;
            }
            if self.segs[idx].seq >= from {
                return Some(idx);
            }
            idx += 1;
        }
        None
    }

    /// Whether any segment is marked lost.
    pub fn any_lost(&self) -> bool {
        self.lost_count > 0
    }

    /// Forget all SACK and loss marks (after an RTO, RFC 2018 §8).
    pub fn clear_marks(&mut self) {
        self.visit(self.segs.len() as u64);
        for s in &mut self.segs {
            s.sacked = false;
            s.lost = false;
        }
        self.sacked = 0;
        self.sacked_bytes = 0;
        self.lost_unsacked_bytes = 0;
        self.lost_count = 0;
        self.sacked_rtx_bytes = 0;
        self.hole_mark = 0;
        self.lost_mark = 0;
        self.rxt_cursor.set((0, 0));
    }

    /// After a timeout that keeps SACK information: every unSACKed segment
    /// is lost.
    pub fn mark_unsacked_lost(&mut self) {
        self.visit(self.segs.len() as u64);
        for s in &mut self.segs {
            if !s.sacked && !s.lost {
                let len = u64::from(s.len);
                self.lost_total += len;
                self.lost_unsacked_bytes += len;
                self.lost_count += 1;
                s.lost = true;
            }
        }
        self.lost_mark = self.segs.back().map_or(0, |s| s.end());
    }

    /// Mark segment `idx` lost (RACK).
    pub fn mark_segment_lost(&mut self, idx: usize) {
        if let Some(s) = self.segs.get_mut(idx) {
            if !s.lost && !s.sacked {
                let len = u64::from(s.len);
                self.lost_total += len;
                self.lost_unsacked_bytes += len;
                self.lost_count += 1;
                s.lost = true;
            }
        }
    }

    /// Bytes marked lost and not SACKed now (ns-3.44's
    /// `TcpTxBuffer::GetLost`, `m_lostOut`: a SACK or the cumulative ACK
    /// takes a segment out; its retransmission does not).
    pub fn lost_out(&self) -> u64 {
        debug_assert_eq!(
            self.lost_unsacked_bytes,
            self.segs
                .iter()
                .filter(|s| s.lost && !s.sacked)
                .map(|s| u64::from(s.len))
                .sum::<u64>()
        );
        self.lost_unsacked_bytes
    }

    /// Bytes ever marked lost by [`mark_lost`](Self::mark_lost) (a counter).
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// Bytes in SACKed segments.
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// Number of SACKed segments.
    pub fn sacked_count(&self) -> usize {
        self.sacked
    }

    /// Every kept count against a full recount (for tests and debug checks).
    pub fn check_counts(&self) -> Result<(), String> {
        let mut sacked = 0usize;
        let (mut sacked_bytes, mut lost_unsacked, mut rtx) = (0u64, 0u64, 0u64);
        let mut lost_count = 0usize;
        let mut top = None;
        let base = self.popped;
        // The first unSACKed position at or after each one.
        let mut next_unsacked = vec![0usize; self.segs.len()];
        let mut nu = self.segs.len();
        for (i, s) in self.segs.iter().enumerate().rev() {
            if !s.sacked {
                nu = i;
            }
            next_unsacked[i] = nu;
        }
        for (i, s) in self.segs.iter().enumerate() {
            let len = u64::from(s.len);
            if s.sacked {
                sacked += 1;
                sacked_bytes += len;
                top = Some(s.seq);
                let to = s.sacked_to.saturating_sub(base) as usize;
                if to <= i || to.min(self.segs.len()) > next_unsacked[i] {
                    return Err(format!("segment {i}: SACKed-run hint {to} past a hole"));
                }
            } else {
                if s.lost {
                    lost_unsacked += len;
                }
                if s.seq < self.hole_mark && !s.hole {
                    return Err(format!("segment {i} below hole_mark not a hole"));
                }
                if s.seq < self.lost_mark && !s.lost {
                    return Err(format!("segment {i} below lost_mark not lost"));
                }
            }
            if s.lost {
                lost_count += 1;
            }
            if self.counts_sacked_rtx(s) {
                rtx += len;
            }
        }
        let (at, below) = self.rxt_cursor.get();
        let below_recount: u64 = self
            .segs
            .iter()
            .filter(|s| !s.sacked && s.seq < at)
            .map(|s| u64::from(s.len))
            .sum();
        let top_ok = top.is_none_or(|t| t == self.top_sacked);
        let checks = [
            ("sacked", sacked as u64, self.sacked as u64),
            ("sacked_bytes", sacked_bytes, self.sacked_bytes),
            (
                "lost_unsacked_bytes",
                lost_unsacked,
                self.lost_unsacked_bytes,
            ),
            ("lost_count", lost_count as u64, self.lost_count as u64),
            ("sacked_rtx_bytes", rtx, self.sacked_rtx_bytes),
            ("rxt_cursor", below_recount, below),
            ("top_sacked", 1, u64::from(top_ok)),
        ];
        for (name, want, have) in checks {
            if want != have {
                return Err(format!("{name}: kept {have}, recount {want}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new(100);
        for i in 0..n {
            let mut s = Segment::new(i * 100, 100, Time::ZERO);
            s.tx_count = 1;
            b.push(s);
        }
        b
    }

    /// `count_sacked_retransmissions` (ns-3.44's `BytesInFlight`): segments
    /// 0–2 lost and resent at 5 ms, segment 2's resend SACKed. RFC 6675's
    /// pipe leaves it out (it counts the resends of 0 and 1 and segments 7–9);
    /// ns-3's keeps it until a timeout at 7 ms clears the flag.
    #[test]
    fn ns3_pipe_keeps_a_sacked_retransmission_until_a_timeout() {
        let mut b = board(10);
        b.apply_sack(&[(300, 700)]);
        b.mark_lost(3);
        let resent = Time::from_millis(5);
        for idx in [0, 1, 2] {
            b.update(idx, |s| {
                s.tx_count = 2;
                s.last_sent = resent;
            });
        }
        assert!(b.apply_sack(&[(200, 300)]));
        let rfc = 200 + 300;
        assert_eq!(b.pipe(300), rfc);
        b.count_sacked_retransmissions(Some(Time::ZERO));
        assert_eq!(
            b.pipe(300),
            rfc + 100,
            "the SACKed resend of segment 2 counts"
        );
        b.count_sacked_retransmissions(Some(Time::from_millis(7)));
        assert_eq!(b.pipe(300), rfc, "a timeout after the resend clears it");
        b.count_sacked_retransmissions(None);
        assert_eq!(b.pipe(300), rfc);
    }

    /// `lost_out` (ns-3.44's `GetLost`): lost, un-SACKed bytes now. It
    /// falls when a lost segment's resend is SACKed or cumulatively
    /// acknowledged — not when it is resent — where `lost_total` only
    /// counts up.
    #[test]
    fn lost_out_falls_as_lost_segments_are_delivered() {
        let mut b = board(10);
        b.apply_sack(&[(300, 700)]);
        b.mark_lost(3);
        assert_eq!((b.lost_out(), b.lost_total()), (300, 300));
        b.update(0, |s| s.tx_count = 2).unwrap(); // resent: still lost
        assert_eq!(b.lost_out(), 300);
        assert!(b.apply_sack(&[(200, 300)])); // segment 2's resend SACKed
        assert_eq!((b.lost_out(), b.lost_total()), (200, 300));
        b.ack(100); // segment 0's resend acknowledged
        assert_eq!((b.lost_out(), b.lost_total()), (100, 300));
        b.ack(700);
        assert_eq!((b.lost_out(), b.lost_total()), (0, 300));
    }

    #[test]
    fn sack_marks_whole_segments_only() {
        let mut b = board(10);
        assert!(b.apply_sack(&[(250, 500)]));
        let sacked: Vec<bool> = b.iter().map(|s| s.sacked).collect();
        assert_eq!(sacked[2..5], [false, true, true]);
        assert!(!b.apply_sack(&[(300, 500)]), "nothing new");
        assert_eq!(b.sacked_count(), 2);
    }

    #[test]
    fn is_lost_by_count_and_bytes() {
        // Segments 3,4 SACKed: two segments = 200 bytes, not > 2·100 → not lost.
        let mut b = board(10);
        b.apply_sack(&[(300, 500)]);
        b.mark_lost(3);
        assert!(b.iter().all(|s| !s.lost));
        // Add segment 6: 3 SACKed above 0..3 and above 5.
        b.apply_sack(&[(600, 700)]);
        b.mark_lost(3);
        let lost: Vec<u64> = b.iter().filter(|s| s.lost).map(|s| s.seq).collect();
        assert_eq!(lost, vec![0, 100, 200]);
        assert_eq!(b.next_lost(0, false), Some(0));
        assert_eq!(b.next_lost(150, false), Some(2));
        assert_eq!(b.next_lost(300, false), None);
        // pipe: unsacked not lost = 5,7,8,9 → 400; none retransmitted yet.
        assert_eq!(b.pipe(0), 400);
        // After retransmitting segment 0: +100.
        assert_eq!(b.pipe(100), 500);
        // Rule 3: unSACKed below the highest SACKed segment (6).
        assert_eq!(b.next_hole(300), Some(5));
        assert_eq!(b.next_hole(600), None);
    }

    #[test]
    fn ack_pops_and_reports_newest() {
        let mut b = board(5);
        b.apply_sack(&[(300, 400)]);
        let newest = b.ack(400).unwrap();
        assert_eq!(newest.seq, 300);
        assert_eq!(b.len(), 1);
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.index_of(450), Some(0));
        assert_eq!(b.index_of(350), None);
    }

    #[test]
    fn guessed_indexes_match_the_binary_search() {
        // Uniform sizes (the guess hits), mixed ones (it misses and falls
        // back), a short oldest segment, and after ACKs shift the front.
        for lens in [
            vec![100u32; 12],
            vec![100, 100, 40, 40, 40, 250, 100, 100, 7, 100],
            vec![30, 100, 100, 100, 100, 100],
        ] {
            let mut b = Scoreboard::new(100);
            let mut seq = 1_000;
            for &len in &lens {
                b.push(Segment::new(seq, len, Time::ZERO));
                seq += u64::from(len);
            }
            for ack in [0, 1_100, 1_240] {
                b.ack(ack);
                for q in 900..seq + 150 {
                    let want = b.segs.partition_point(|s| s.end() <= q);
                    let want = (q >= b.segs[0].seq && want < b.segs.len()).then_some(want);
                    assert_eq!(b.index_of(q), want, "index_of({q}) {lens:?}");
                    let at = b.segs.partition_point(|s| s.seq < q);
                    assert_eq!(b.first_at_or_above(q), at, "first_at_or_above({q})");
                }
            }
        }
    }

    #[test]
    fn variable_sizes_lookup_and_holes() {
        let mut b = Scoreboard::new(100);
        let mut seq = 0;
        for len in [100u32, 100, 40, 40, 40, 250] {
            b.push(Segment::new(seq, len, Time::ZERO));
            seq += u64::from(len);
        }
        assert_eq!(b.index_of(0), Some(0));
        assert_eq!(b.index_of(239), Some(2));
        assert_eq!(b.index_of(240), Some(3));
        assert_eq!(b.index_of(569), Some(5));
        assert_eq!(b.index_of(570), None);
        assert!(b.apply_sack(&[(240, 280)]));
        assert_eq!(b.holes_in(0, 570), 3);
        assert_eq!(b.holes_in(100, 240), 2);
        // At or above the highest SACKed segment there are no holes (RACK asks
        // LT-TCP's FEC hold about such segments; this panicked, found by
        // `python -m linklab.check`).
        assert_eq!(b.holes_in(240, 570), 0);
        assert_eq!(b.holes_in(280, 570), 0);
        assert_eq!(b.holes_in(400, 570), 0);
        let holes: Vec<bool> = b.iter().map(|s| s.hole).collect();
        assert_eq!(holes, [true, true, true, false, false, false]);
        // IsLost's byte rule counts segments of the current size: 250 SACKed
        // bytes above 280 are more than 2 × 40 but not more than 2 × 200.
        b.apply_sack(&[(320, 570)]);
        let mut big = b.clone();
        big.set_mss(200);
        big.mark_lost(3);
        assert!(big.iter().all(|s| !s.lost));
        b.set_mss(40);
        b.mark_lost(3);
        let lost: Vec<u64> = b.iter().filter(|s| s.lost).map(|s| s.seq).collect();
        assert_eq!(lost, vec![0, 100, 200, 280]);
        b.ack(240);
        assert_eq!(b.popped(), (3, 3));
    }

    proptest::proptest! {
        /// Segments of any sizes: lookups, SACK marks, holes, loss marks and
        /// counters agree with a naive model after every operation.
        #[test]
        fn variable_size_scoreboard_invariants(
            lens in proptest::collection::vec(1u32..2000, 1..60),
            ops in proptest::collection::vec((0u8..3, 0u64..1_000_000, 0u64..5000), 1..40),
        ) {
            let mut b = Scoreboard::new(500);
            let mut seq = 0u64;
            for &len in &lens {
                b.push(Segment::new(seq, len, Time::ZERO));
                seq += u64::from(len);
            }
            let top = seq;
            let mut popped = 0u64;
            for (op, x, w) in ops {
                let x = x % (top + 1);
                match op {
                    0 => {
                        let before: Vec<Segment> = b.iter().copied().collect();
                        b.apply_sack(&[(x, x + w)]);
                        for (old, new) in before.iter().zip(b.iter()) {
                            let inside = x <= old.seq && old.end() <= x + w;
                            proptest::prop_assert_eq!(new.sacked, old.sacked || inside);
                        }
                    }
                    1 => {
                        let n = b.iter().take_while(|s| s.end() <= x).count() as u64;
                        b.ack(x);
                        popped += n;
                        proptest::prop_assert_eq!(b.popped().0, popped);
                    }
                    _ => b.mark_lost((w % 4) as u32 + 1),
                }
                let segs: Vec<Segment> = b.iter().copied().collect();
                for w in segs.windows(2) {
                    proptest::prop_assert_eq!(w[0].end(), w[1].seq);
                }
                proptest::prop_assert_eq!(b.sacked_count(), segs.iter().filter(|s| s.sacked).count());
                proptest::prop_assert_eq!(
                    b.sacked_bytes(),
                    segs.iter().filter(|s| s.sacked).map(|s| u64::from(s.len)).sum::<u64>()
                );
                if let Some(hi) = segs.iter().rposition(|s| s.sacked) {
                    for s in &segs[..hi] {
                        proptest::prop_assert!(s.sacked || s.hole);
                    }
                    let holes = segs[..hi].iter().filter(|s| !s.sacked).count();
                    proptest::prop_assert_eq!(b.holes_in(0, top), holes);
                }
                // Lost marks are downward-closed among unSACKed segments.
                if let Some(l) = segs.iter().rposition(|s| s.lost) {
                    for s in &segs[..l] {
                        proptest::prop_assert!(s.sacked || s.lost);
                    }
                }
                for (i, s) in segs.iter().enumerate() {
                    proptest::prop_assert_eq!(b.index_of(s.seq), Some(i));
                    proptest::prop_assert_eq!(b.index_of(s.end() - 1), Some(i));
                }
                proptest::prop_assert_eq!(b.index_of(top), None);
            }
        }
    }

    /// The scoreboard as it was before the kept counts (issue 33, F9): every
    /// rule by a scan of the whole window, the reference the incremental
    /// one must match mark for mark.
    #[derive(Default)]
    struct Naive {
        segs: Vec<Segment>,
        since: Option<Time>,
        lost_total: u64,
    }

    impl Naive {
        fn apply_sack(&mut self, blocks: &[(u64, u64)]) -> bool {
            let mut any = false;
            for &(start, end) in blocks {
                for s in &mut self.segs {
                    if start <= s.seq && s.end() <= end && !s.sacked {
                        s.sacked = true;
                        s.ever_sacked = true;
                        any = true;
                    }
                }
            }
            if any {
                let top = self.segs.iter().rposition(|s| s.sacked).unwrap_or(0);
                for s in &mut self.segs[..top] {
                    s.hole |= !s.sacked;
                }
            }
            any
        }
        fn mark_lost(&mut self, dupthresh: u32, mss: u64) {
            for i in 0..self.segs.len() {
                let above = &self.segs[i + 1..];
                let count = above.iter().filter(|s| s.sacked).count() as u64;
                let bytes: u64 = above
                    .iter()
                    .filter(|s| s.sacked)
                    .map(|s| u64::from(s.len))
                    .sum();
                let limit = u64::from(dupthresh.saturating_sub(1)) * mss;
                let s = &mut self.segs[i];
                if !s.sacked && !s.lost && (count >= u64::from(dupthresh) || bytes > limit) {
                    s.lost = true;
                    self.lost_total += u64::from(s.len);
                }
            }
        }
        fn pipe(&self, high_rxt: u64) -> u64 {
            let mut pipe = 0;
            for s in &self.segs {
                let len = u64::from(s.len);
                if s.sacked {
                    if self
                        .since
                        .is_some_and(|t| s.tx_count > 1 && s.last_sent >= t)
                    {
                        pipe += len;
                    }
                    continue;
                }
                pipe += len * u64::from(!s.lost) + len * u64::from(s.seq < high_rxt);
            }
            pipe
        }
        fn start(&self, from: u64) -> Option<usize> {
            match self
                .segs
                .iter()
                .position(|s| s.seq <= from && from < s.end())
            {
                Some(i) => Some(i),
                None if self.segs.first().is_some_and(|f| from < f.seq) => Some(0),
                None => None,
            }
        }
        fn next_lost(&self, from: u64, scattered: bool) -> Option<usize> {
            for i in self.start(from)?..self.segs.len() {
                let s = &self.segs[i];
                if !s.sacked {
                    if s.lost && s.seq >= from {
                        return Some(i);
                    }
                    if !s.lost && !scattered {
                        return None;
                    }
                }
            }
            None
        }
        fn next_hole(&self, from: u64) -> Option<usize> {
            let top = self.segs.iter().rposition(|s| s.sacked)?;
            (self.start(from)?..top).find(|&i| !self.segs[i].sacked && self.segs[i].seq >= from)
        }
    }

    proptest::proptest! {
        /// The kept counts, watermarks and SACKed-run hints against a full
        /// recount and against the whole-window rules, over random sends,
        /// ACKs, SACK blocks, loss marks, resends (RACK's clearing of a loss
        /// mark included), timeouts (SACK marks cleared or kept) and ns-3's
        /// SACKed-retransmission rule: every mark, the pipe, NextSeg's rules
        /// 1 and 3 and the holes agree after every operation.
        #[test]
        fn incremental_scoreboard_matches_a_full_recount(
            ops in proptest::collection::vec((0u8..11, 0u64..4000, 0u64..1500, 0u64..4000), 1..120),
        ) {
            let mss = 100u32;
            let mut b = Scoreboard::new(mss);
            let mut n = Naive::default();
            let (mut now, mut next_seq) = (0u64, 0u64);
            for (op, x, w, y) in ops {
                now += 1;
                let t = Time::from_millis(now);
                let snd_max = next_seq;
                let first = b.front().map_or(snd_max, |s| s.seq);
                let span = snd_max - first + 1;
                match op {
                    0 | 1 => {
                        // Send new segments of 1..=mss bytes (mostly full).
                        for k in 0..=(w % 8) {
                            let len = if (x + k) % 5 == 0 { (x % 100) as u32 + 1 } else { mss };
                            let mut s = Segment::new(next_seq, len, t);
                            next_seq += u64::from(len);
                            s.tx_count = 1;
                            b.push(s);
                            n.segs.push(s);
                        }
                    }
                    2 | 3 => {
                        let start = first + x % span;
                        let blocks = [(start, start + w), (first + y % span, first + y % span + w / 2)];
                        let got = b.apply_sack(&blocks);
                        proptest::prop_assert_eq!(got, n.apply_sack(&blocks));
                    }
                    4 => {
                        let ack = first + (x % span).min(w);
                        b.ack(ack);
                        n.segs.retain(|s| s.end() > ack);
                    }
                    5 => {
                        let dt = (w % 4) as u32 + 1;
                        b.mark_lost(dt);
                        n.mark_lost(dt, u64::from(mss));
                    }
                    6 if !b.is_empty() => {
                        // A resend; with RACK its loss mark is cleared.
                        let idx = (x as usize) % b.len();
                        let rack = w % 2 == 0;
                        let f = |s: &mut Segment| {
                            s.tx_count += 1;
                            s.last_sent = t;
                            if rack {
                                s.lost = false;
                            }
                        };
                        b.update(idx, f);
                        f(&mut n.segs[idx]);
                    }
                    7 => {
                        if w % 3 == 0 {
                            b.clear_marks();
                            for s in &mut n.segs {
                                s.sacked = false;
                                s.lost = false;
                            }
                        }
                        if w % 3 != 1 {
                            b.mark_unsacked_lost();
                            for s in n.segs.iter_mut().filter(|s| !s.sacked && !s.lost) {
                                s.lost = true;
                                n.lost_total += u64::from(s.len);
                            }
                        }
                        let since = (w % 2 == 0).then_some(Time::from_millis(now.saturating_sub(y % 5)));
                        b.count_sacked_retransmissions(since);
                        n.since = since;
                    }
                    8 if !b.is_empty() => {
                        let idx = (x as usize) % b.len();
                        b.mark_segment_lost(idx);
                        let s = &mut n.segs[idx];
                        if !s.lost && !s.sacked {
                            s.lost = true;
                            n.lost_total += u64::from(s.len);
                        }
                    }
                    9 if !b.is_empty() => {
                        // Recovery entry: the head taken for lost.
                        b.update(0, |s| s.lost = true);
                        n.segs[0].lost = true;
                    }
                    _ => {}
                }
                if let Err(e) = b.check_counts() {
                    return Err(proptest::test_runner::TestCaseError::fail(e));
                }
                let segs: Vec<Segment> = b.iter().copied().collect();
                proptest::prop_assert_eq!(segs.len(), n.segs.len());
                for (a, r) in segs.iter().zip(&n.segs) {
                    proptest::prop_assert_eq!(
                        (a.seq, a.sacked, a.lost, a.hole, a.ever_sacked, a.tx_count),
                        (r.seq, r.sacked, r.lost, r.hole, r.ever_sacked, r.tx_count)
                    );
                }
                proptest::prop_assert_eq!(b.lost_total(), n.lost_total);
                proptest::prop_assert_eq!(b.any_lost(), n.segs.iter().any(|s| s.lost));
                for from in [x % (next_seq + 2), y % (next_seq + 2), first] {
                    proptest::prop_assert_eq!(b.pipe(from), n.pipe(from));
                    proptest::prop_assert_eq!(b.next_lost(from, false), n.next_lost(from, false));
                    proptest::prop_assert_eq!(b.next_lost(from, true), n.next_lost(from, true));
                    proptest::prop_assert_eq!(b.next_hole(from), n.next_hole(from));
                }
                if let Err(e) = b.check_counts() {
                    return Err(proptest::test_runner::TestCaseError::fail(e));
                }
            }
        }
    }
}
