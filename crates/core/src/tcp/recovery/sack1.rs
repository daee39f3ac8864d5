//! ns-2.35's `Agent/TCP/Sack1` (`tcp-sack1.cc`; `sack_rules = "ns2"`, which
//! `profile = "ns2"` selects): a counted `pipe_` (one off per duplicate ACK,
//! two per partial ACK), fast retransmit at exactly the DupThresh-th
//! duplicate ACK with new SACK information, duplicate ACKs ignored after a
//! timeout until new data is acknowledged, and `send_much`'s choice of what
//! to send. It keeps RFC 6675's scoreboard (HighRxt, the holes).

use crate::packet::Packet;
use crate::tcp::sender::TcpSender;
use crate::time::Time;

impl TcpSender {
    /// An ACK of new data in recovery. tcp-sack1.cc: one off the pipe per
    /// ACK, one more per partial ACK (`partial_ack_` false), whose timer
    /// restart also ends the back-off; `recover_` = 0 at the end. Then RFC
    /// 6675's end of recovery.
    pub(in crate::tcp::sender) fn sack1_on_ack(&mut self, full: bool, mss: u64, now: Time) {
        let seg = self.seg_size() as i64;
        self.rec.ns2_pipe -= if full { seg } else { 2 * seg };
        if full {
            self.rec.recover = None;
        } else {
            self.rtt.clear_backoff();
        }
        self.rfc6675_on_ack(full, mss, now);
    }

    /// A duplicate ACK under ns-2's Sack1 rules (`Sack1TcpAgent::recv`):
    /// ignored after a timeout until new data is acknowledged; counted when
    /// its SACK blocks tell something new; fast retransmit at exactly the
    /// `dt`-th, if the re-entry guard allows (else the timer must fire).
    pub(in crate::tcp::sender) fn sack1_on_dupack(
        &mut self,
        now: Time,
        pkt: &Packet,
        ece: bool,
        dt: u32,
    ) {
        if self.in_recovery {
            self.rec.ns2_pipe -= self.seg_size() as i64;
        }
        let newly = !self.rec.ns2_after_timeout && self.apply_sack(pkt, now);
        if newly {
            self.dupacks += 1;
            self.lt.reactive_trigger(&self.cfg.lt);
        }
        if self.in_recovery {
            return;
        }
        if newly && self.dupacks == dt && self.may_recover(self.snd_una) {
            self.enter_recovery(now);
        } else if ece {
            self.ecn_response(now);
        }
    }

    /// Entering recovery: RFC 6675's scoreboard entry, and ns-2's `pipe_ =
    /// maxseq_ − highest_ack_ − numdupacks_` (the fast retransmit goes out
    /// without adding to it).
    pub(in crate::tcp::sender) fn sack1_on_entry(&mut self) {
        self.rfc6675_on_entry();
        let seg = self.seg_size() as i64;
        let outstanding = (self.snd_max - self.snd_una) as i64;
        self.rec.ns2_pipe = outstanding - i64::from(self.cfg.dupack_threshold) * seg - seg;
    }

    /// tcp-sack1.cc `send_much`: the first hole below the highest SACK not
    /// yet resent (`GetNextRetran`), else the next segment in order.
    pub(in crate::tcp::sender) fn sack1_next_seg(&mut self, now: Time) -> Option<Packet> {
        if let Some(p) = self.send_hole(now) {
            return Some(p);
        }
        self.send_in_order(now, false)
    }
}
