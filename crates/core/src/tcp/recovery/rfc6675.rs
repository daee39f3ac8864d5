//! RFC 6675 SACK loss recovery (IsLost, NextSeg, `pipe`), with the ns-3.44
//! options that `profile = "ns3"` selects (docs/models/tcp.md's ns-3 table):
//! `cut_flight = "pipe"` (the cut from ns-3's `BytesInFlight`),
//! `rto_resend_lost` (NextSeg rule 1 after a timeout), NextSeg in ns-3's
//! CA_CWR (`cwr_per_echo`); and, after a timeout that kept the scoreboard or
//! with RACK, the resends of segments marked lost (Linux's CA_Loss).

use crate::packet::Packet;
use crate::tcp::sender::TcpSender;
use crate::tcp::{CutFlight, PrrVariant, Variant};
use crate::time::Time;

impl TcpSender {
    /// An ACK of new data in SACK recovery: a full ACK (one covering
    /// RecoveryPoint) ends it — with PRR, at the window the congestion
    /// control chose (RFC 6937) or at ssthresh (RFC 9937 §6.4); the
    /// retransmission timer restarts on every one.
    pub(in crate::tcp::sender) fn rfc6675_on_ack(&mut self, full: bool, mss: u64, now: Time) {
        if !full && self.cfg.partial_ack_resend && !self.rec.sack1() {
            // ns-3.44's `ProcessAck`: `DoRetransmit` unless the new oldest
            // segment is a retransmission not SACKed
            // (`IsRetransmittedDataAcked(ack + segment)`).
            self.partial_ack_tx = self.sb.front().is_some_and(|s| s.tx_count <= 1);
        }
        if full {
            self.in_recovery = false;
            if self.prr.on {
                // RFC 6937: leave recovery at the window the CC
                // chose; RFC 9937 §6.4: cwnd = ssthresh (the
                // same unless LT-TCP's ECN-only mode made no
                // congestion response, whose window stays).
                self.win.cwnd =
                    if self.cfg.prr_variant == PrrVariant::Rfc9937 && !self.cfg.lt.ecn_only {
                        self.win.ssthresh.max(mss)
                    } else {
                        self.rec.recovery_cwnd
                    };
            }
        }
        self.restart_timer(now);
    }

    /// A duplicate ACK: apply its SACK blocks and mark losses; outside
    /// recovery, enter it at RFC 6675 §5 steps 1–2 (DupAcks ≥ DupThresh or
    /// IsLost(HighACK + 1); with RACK, any segment marked lost) if the
    /// re-entry guard allows. Whether the blocks covered anything new.
    pub(in crate::tcp::sender) fn rfc6675_on_dupack(
        &mut self,
        now: Time,
        pkt: &Packet,
        ece: bool,
        dt: u32,
    ) -> bool {
        let sacked_new = self.apply_sack(pkt, now);
        self.mark_losses(now);
        self.dupacks += 1;
        self.lt.reactive_trigger(&self.cfg.lt);
        if !self.in_recovery {
            let trigger = self.sack_loss_detected(dt);
            // Re-entry guard (RFC 6675 §5): HighACK > RecoveryPoint, where
            // RecoveryPoint = HighData is the last byte sent, so an ACK equal
            // to `recover` already qualifies (as in ns-3).
            let allowed = self.may_recover(self.snd_una);
            self.dupack_enter_or_echo(trigger && allowed, ece, now);
        }
        sacked_new
    }

    /// Entering SACK recovery: the oldest segment taken for lost (the fast
    /// retransmit), HighRxt at snd_una, the pipe counted.
    pub(in crate::tcp::sender) fn rfc6675_on_entry(&mut self) {
        self.sb.update(0, |s| s.lost = true);
        self.rec.high_rxt = self.snd_una;
        self.rec.pipe = self.sb.pipe(self.rec.high_rxt);
    }

    /// RFC 6675 NextSeg (§4), the pipe already checked against the window.
    pub(in crate::tcp::sender) fn rfc6675_next_seg(
        &mut self,
        now: Time,
        ns3_cwr: bool,
    ) -> Option<Packet> {
        // RFC 6675 NextSeg rule 1: lost, unSACKed data above HighRxt
        // (LT-TCP: not in a block that FEC in flight can still rebuild).
        // With RACK, any segment marked lost (a retransmission RACK found
        // lost again included).
        let mut from = if self.rack.is_some() {
            self.snd_una
        } else {
            self.rec.high_rxt
        };
        while let Some(idx) = self.sb.next_lost(from, self.rack.is_some()) {
            let seq = self.sb.get(idx).map_or(from, |s| s.seq);
            match self.fec_hold(seq, now) {
                Some(end) => from = end,
                None => return Some(self.send_segment(idx, now)),
            }
        }
        // Rule 2: new data (pipe already checked).
        if let Some(p) = self.send_in_order(now, false) {
            return Some(p);
        }
        // Rule 3: unSACKed data above HighRxt and below the highest SACKed byte
        // (not with RACK: only what it marks lost is resent; not in ns-3's
        // CA_CWR, tcp-socket-base.cc 3432).
        if self.rack.is_some() || ns3_cwr {
            return None;
        }
        self.send_hole(now)
    }

    /// [`TcpConfig::partial_ack_resend`] (ns-3.44's `DoRetransmit` on a
    /// partial ACK): one segment outside the congestion window — `NextSeg`
    /// without rule 3: the lowest unSACKed segment marked lost and never
    /// retransmitted (ns-3's `!m_retrans`), else new data if the receiver
    /// window allows, else the oldest segment again. Still in SACK recovery
    /// only (a timeout in between cancels it).
    ///
    /// [`TcpConfig::partial_ack_resend`]: crate::tcp::TcpConfig::partial_ack_resend
    pub(in crate::tcp::sender) fn ns3_partial_ack_send(&mut self, now: Time) -> Option<Packet> {
        if !self.in_recovery || self.cfg.variant != Variant::Sack || self.snd_una >= self.snd_max {
            return None;
        }
        let lost = self
            .sb
            .iter()
            .position(|s| s.lost && !s.sacked && s.tx_count <= 1);
        if let Some(idx) = lost {
            return Some(self.send_segment(idx, now));
        }
        if let Some(p) = self.send_in_order(now, false) {
            return Some(p);
        }
        Some(self.send_segment(0, now))
    }

    /// RFC 6675 §5 steps 1–2: DupAcks ≥ DupThresh, or IsLost(HighACK + 1).
    pub(in crate::tcp::sender) fn sack_loss_detected(&self, dt: u32) -> bool {
        if self.rack.is_some() {
            // RACK-TLP: recovery starts when RACK marks a loss.
            return self.sb.any_lost();
        }
        self.dupacks >= dt || self.sb.front().is_some_and(|s| s.lost)
    }

    /// Resend the first unSACKed segment above HighRxt and below the highest
    /// SACKed byte (LT-TCP: not one that FEC in flight can still rebuild).
    pub(in crate::tcp::sender) fn send_hole(&mut self, now: Time) -> Option<Packet> {
        let mut from = self.rec.high_rxt;
        loop {
            let idx = self.sb.next_hole(from)?;
            let seq = self.sb.get(idx).map_or(from, |s| s.seq);
            match self.fec_hold(seq, now) {
                Some(end) => from = end,
                None => return Some(self.send_segment(idx, now)),
            }
        }
    }

    /// After a timeout that kept the SACK scoreboard, until its recovery
    /// point: every unSACKed segment sent before the timeout is marked lost
    /// and the go-back-N resends only those (ns-3 `ReTxTimeout`, Linux's
    /// CA_Loss), the window checked against the pipe. With RACK too when
    /// the scoreboard was not kept (every segment is marked lost then), so
    /// that the retransmissions RACK finds lost again are resent
    /// ([`TcpSender::resend_rack_lost`]). Not under ns-2's rules, whose
    /// go-back-N resends SACKed data too.
    pub(in crate::tcp::sender) fn rto_sack_recovery(&self) -> bool {
        (self.cfg.rto_keeps_sack || self.rack.is_some())
            && self.cfg.variant == Variant::Sack
            && !self.rec.sack1()
            && !self.in_recovery
            && self.rec.recover.is_some_and(|r| self.snd_una < r)
    }

    /// After a timeout with RACK, until the recovery point: the oldest
    /// segment below `snd_nxt` that RACK marked lost — a retransmission of
    /// the go-back-N lost again (RFC 8985 §6.2 finds those), or data sent
    /// after the timeout — goes before the go-back-N continues, within the
    /// window against the pipe: Linux's CA_Loss retransmits every
    /// lost-marked segment in sequence order (`tcp_xmit_retransmit_queue`,
    /// limited by cwnd − `tcp_packets_in_flight`). Sets `why` when the
    /// window holds it back.
    pub(in crate::tcp::sender) fn resend_rack_lost(&mut self, now: Time) -> Option<Packet> {
        if self.rack.is_none() || !self.rto_sack_recovery() {
            return None;
        }
        self.resend_lowest_lost(now, false)
    }

    /// The loop both rules above share: the lowest segment below `snd_nxt`
    /// marked lost (skipping those resent since the timeout when
    /// `first_sends_only`) that no LT-TCP repair covers, if the window
    /// allows it (else `why` is set and nothing goes).
    pub(in crate::tcp::sender) fn resend_lowest_lost(
        &mut self,
        now: Time,
        first_sends_only: bool,
    ) -> Option<Packet> {
        let mut from = self.snd_una;
        while let Some(idx) = self.sb.next_lost(from, true) {
            let (seq, end, len, tx_count) = self
                .sb
                .get(idx)
                .map(|s| (s.seq, s.end(), s.len, s.tx_count))?;
            if seq >= self.snd_nxt {
                return None; // the go-back-N's own
            }
            if first_sends_only && tx_count > 1 {
                from = end; // resent since the timeout: its loss waits for the next one
                continue;
            }
            if let Some(end) = self.fec_hold(seq, now) {
                from = end;
                continue;
            }
            if !self.window_allows(u64::from(len), end, true) {
                return None;
            }
            return Some(self.send_segment(idx, now));
        }
        None
    }

    /// ns-3.44's NextSeg rule 1 outside fast recovery (`rto_resend_lost`):
    /// after a timeout that kept the scoreboard, until its recovery point, a
    /// segment first sent after the timeout (never retransmitted) that RFC
    /// 6675's IsLost marks lost is resent before new data. ns-3's
    /// `SendPendingData` asks `TcpTxBuffer::NextSeg` in every state, and its
    /// rule 1 returns the lowest lost segment not flagged `m_retrans` (the
    /// flags are cleared at the timeout, `SetSentListLost`); the go-back-N's
    /// own resends are flagged, so one of them lost again still waits for the
    /// next timeout, as here. Off (RFC 6675 §5.1, which ends loss recovery at
    /// a timeout), such a segment waits until the recovery point is reached
    /// or the next timeout. Not with RACK, whose own rule resends what it
    /// marks lost ([`TcpSender::resend_rack_lost`]).
    pub(in crate::tcp::sender) fn resend_lost_after_rto(&mut self, now: Time) -> Option<Packet> {
        if !self.cfg.rto_resend_lost || self.rack.is_some() || !self.rto_sack_recovery() {
            return None;
        }
        self.resend_lowest_lost(now, true)
    }

    /// Whether a loss's cut halves ns-3's pipe ([`CutFlight::Pipe`]): with
    /// SACK and NewReno, whose ns-3 class (`TcpNewReno`, `TcpLinuxReno`)
    /// halves the bytes in flight; ns-3's CUBIC, DCTCP, Westwood+ and BBR
    /// cut from cwnd or their own estimate, so their flight stays
    /// FlightSize.
    pub(in crate::tcp::sender) fn ns3_cut_flight(&self) -> bool {
        self.cfg.cut_flight == CutFlight::Pipe
            && self.cfg.variant == Variant::Sack
            && self.cfg.cc.is_newreno()
    }

    /// ns-3.44's `BytesInFlight()` for [`CutFlight::Pipe`]: the RFC 6675
    /// pipe over the scoreboard (what is outstanding, less SACKed and lost
    /// segments, plus retransmitted ones), the data outstanding while
    /// nothing is SACKed. `head_lost`: count the oldest segment as lost,
    /// as `EnterRecovery` marks it before it asks.
    pub(in crate::tcp::sender) fn ns3_pipe(&self, head_lost: bool) -> u64 {
        debug_assert!(self.ns3_cut_flight());
        if self.sb.sacked_count() == 0 {
            let out = self.snd_nxt - self.snd_una;
            return if head_lost {
                out.saturating_sub(self.seg_size())
            } else {
                out
            };
        }
        let pipe = self.sb.pipe(self.rec.high_rxt.max(self.snd_una));
        let head = self
            .sb
            .get(0)
            .filter(|s| head_lost && !s.lost && !s.sacked && s.seq >= self.rec.high_rxt)
            .map_or(0, |s| u64::from(s.len));
        pipe - head
    }

    /// [`Self::ns3_cwr`] with SACK (RFC 6675 rules): the segments the
    /// scoreboard marks lost are resent in CA_CWR too (ns-3's `NextSeg`
    /// rule 1 runs in every state, rule 3 only in CA_RECOVERY,
    /// tcp-socket-base.cc 3432), the window checked against the pipe
    /// (`BytesInFlight`). Not while a timeout's go-back-N is under way
    /// (`snd_nxt` behind `snd_max`): that resends every segment marked lost
    /// at the timeout (ns-3's `ReTxTimeout` marks them, rule 1 resends them).
    pub(in crate::tcp::sender) fn ns3_sack_cwr(&self) -> bool {
        self.ns3_cwr()
            && self.cfg.variant == Variant::Sack
            && !self.rec.sack1()
            && self.snd_nxt >= self.snd_max
    }
}
