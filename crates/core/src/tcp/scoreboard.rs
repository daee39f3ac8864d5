//! Per-segment record of outstanding data and the SACK scoreboard (RFC 6675).

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
    /// Selectively acknowledged.
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
#[derive(Clone, Debug)]
pub struct Scoreboard {
    segs: VecDeque<Segment>,
    mss: u64,
    sacked: usize,
    sacked_bytes: u64,
    /// Highest transmission order stamp of any segment cumulatively ACKed or SACKed.
    acked_order: u64,
    /// Segments cumulatively ACKed so far, and how many of them were [`Segment::erased`].
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
        }
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
    }

    /// Change the sender MSS used by the IsLost byte rule.
    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
    }

    /// Record a new segment at the top (its `seq` must be the previous end).
    pub fn push(&mut self, seg: Segment) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.seq));
        debug_assert!(seg.len > 0);
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

    /// Mutable segment by index.
    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Segment> {
        self.segs.get_mut(idx)
    }

    /// Oldest segment.
    pub fn front(&self) -> Option<&Segment> {
        self.segs.front()
    }

    /// Iterate oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Segment> {
        self.segs.iter()
    }

    /// Index of the segment containing byte `seq`.
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        let first = self.segs.front()?;
        if seq < first.seq {
            return None;
        }
        let idx = self.segs.partition_point(|s| s.end() <= seq);
        let s = self.segs.get(idx)?;
        debug_assert!(s.seq <= seq && seq < s.end());
        Some(idx)
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
            if f.sacked {
                self.sacked -= 1;
                self.sacked_bytes -= u64::from(f.len);
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
            while let Some(s) = self.segs.get_mut(idx) {
                if s.end() > end {
                    break;
                }
                if s.seq >= start && !s.sacked {
                    s.sacked = true;
                    s.ever_sacked = true;
                    self.sacked += 1;
                    self.sacked_bytes += u64::from(s.len);
                    self.acked_order = self.acked_order.max(s.order);
                    any = true;
                    visit(s);
                }
                idx += 1;
            }
        }
        if any {
            // Every unSACKed segment below the highest SACKed one is a hole.
            let top = self.segs.iter().rposition(|s| s.sacked).unwrap_or(0);
            for s in self.segs.range_mut(..top) {
                if !s.sacked {
                    s.hole = true;
                }
            }
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
        let Some(top) = self.segs.iter().rposition(|s| s.sacked) else {
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
        let (mut count, mut bytes) = (0u32, 0u64);
        let mut idx = self.segs.len();
        while idx > 0 {
            idx -= 1;
            let s = &self.segs[idx];
            if s.sacked {
                count += 1;
                bytes += u64::from(s.len);
            } else if count >= dupthresh || bytes > byte_limit {
                // Everything unSACKed from here down is lost.
                for s in self.segs.range_mut(..=idx) {
                    if !s.sacked {
                        if !s.lost {
                            self.lost_total += u64::from(s.len);
                        }
                        s.lost = true;
                    }
                }
                return;
            }
        }
    }

    /// RFC 6675 SetPipe: unSACKed bytes not deemed lost, plus unSACKed bytes
    /// below `high_rxt` (retransmitted in this recovery); with
    /// [`count_sacked_retransmissions`](Self::count_sacked_retransmissions),
    /// also the SACKed retransmissions it names (ns-3.44).
    pub fn pipe(&self, high_rxt: u64) -> u64 {
        let mut pipe = 0;
        for s in &self.segs {
            if s.sacked {
                if self
                    .sacked_rtx_since
                    .is_some_and(|t| s.tx_count > 1 && s.last_sent >= t)
                {
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
    pub fn next_lost(&self, from: u64, scattered: bool) -> Option<usize> {
        let mut idx = match self.index_of(from) {
            Some(i) => i,
            None if self.segs.front().is_some_and(|f| from < f.seq) => 0,
            None => return None,
        };
        while let Some(s) = self.segs.get(idx) {
            if !s.sacked {
                if s.lost && s.seq >= from {
                    return Some(idx);
                }
                if !s.lost && !scattered {
                    // RFC 6675's lost marks are downward-closed among unSACKed
                    // segments (RACK's are not: `scattered`).
                    return None;
                }
            }
            idx += 1;
        }
        None
    }

    /// NextSeg rule 3: the oldest unSACKed segment at or above `from` that
    /// lies below the highest SACKed segment.
    pub fn next_hole(&self, from: u64) -> Option<usize> {
        if self.sacked == 0 {
            return None;
        }
        let top = self.segs.iter().rposition(|s| s.sacked)?;
        let start = match self.index_of(from) {
            Some(i) => i,
            None if self.segs.front().is_some_and(|f| from < f.seq) => 0,
            None => return None,
        };
        (start..top).find(|&i| !self.segs[i].sacked && self.segs[i].seq >= from)
    }

    /// Forget all SACK and loss marks (after an RTO, RFC 2018 §8).
    pub fn clear_marks(&mut self) {
        for s in &mut self.segs {
            s.sacked = false;
            s.lost = false;
        }
        self.sacked = 0;
        self.sacked_bytes = 0;
    }

    /// After a timeout that keeps SACK information: every unSACKed segment
    /// is lost.
    pub fn mark_unsacked_lost(&mut self) {
        for s in &mut self.segs {
            if !s.sacked {
                if !s.lost {
                    self.lost_total += u64::from(s.len);
                }
                s.lost = true;
            }
        }
    }

    /// Mark segment `idx` lost (RACK).
    pub fn mark_segment_lost(&mut self, idx: usize) {
        if let Some(s) = self.segs.get_mut(idx) {
            if !s.lost && !s.sacked {
                self.lost_total += u64::from(s.len);
                s.lost = true;
            }
        }
    }

    /// Bytes marked lost and not SACKed now (ns-3.44's
    /// `TcpTxBuffer::GetLost`, `m_lostOut`: a SACK or the cumulative ACK
    /// takes a segment out; its retransmission does not).
    pub fn lost_out(&self) -> u64 {
        self.segs
            .iter()
            .filter(|s| s.lost && !s.sacked)
            .map(|s| u64::from(s.len))
            .sum()
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
            let s = b.get_mut(idx).unwrap();
            s.tx_count = 2;
            s.last_sent = resent;
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
        b.get_mut(0).unwrap().tx_count = 2; // resent: still lost
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
}
