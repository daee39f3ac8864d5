//! Reno (RFC 5681 §3.2) and NewReno (RFC 6582) fast recovery: the window
//! inflated by DupThresh segments at entry and one per further duplicate
//! ACK; Reno leaves at the first ACK of new data, NewReno at the first that
//! covers `recover`, resending at every partial ACK.

use crate::tcp::sender::TcpSender;
use crate::time::Time;

impl TcpSender {
    /// Reno: any ACK of new data ends fast recovery, the window deflated.
    pub(in crate::tcp::sender) fn reno_on_ack(&mut self, now: Time) {
        self.win.cwnd = self.rec.recovery_cwnd;
        self.in_recovery = false;
        self.restart_timer(now);
    }

    /// NewReno: a full ACK ends fast recovery (deflated); a partial one
    /// resends the next hole and deflates by what it acknowledged.
    pub(in crate::tcp::sender) fn newreno_on_ack(
        &mut self,
        full: bool,
        acked: u64,
        mss: u64,
        now: Time,
    ) {
        if full {
            self.win.cwnd = self.rec.recovery_cwnd;
            self.in_recovery = false;
            self.restart_timer(now);
            return;
        }
        // RFC 6582 §3.2 step 5: partial ACK.
        self.rtx_pending = Some(self.snd_una);
        let back = if acked >= mss { mss } else { 0 };
        self.win.cwnd = (self.win.cwnd.saturating_sub(acked) + back).max(mss);
        if self.rec.first_partial {
            self.rec.first_partial = false;
            self.restart_timer(now);
        }
    }

    /// A duplicate ACK: fast retransmit at exactly the DupThresh-th, if the
    /// re-entry guard allows; in recovery, inflate the window by a segment.
    pub(in crate::tcp::sender) fn newreno_on_dupack(
        &mut self,
        now: Time,
        ece: bool,
        dt: u32,
        mss: u64,
    ) {
        self.dupacks += 1;
        self.lt.reactive_trigger(&self.cfg.lt);
        if self.in_recovery {
            self.win.cwnd += mss; // RFC 5681 step 4: inflate
            return;
        }
        let trigger = self.dupacks == dt;
        // Re-entry guard. NewReno (RFC 6582 §3.2 step 2): the ACK must cover
        // more than `recover` (= snd_max at entry, one past the highest byte
        // sent). ns-2's Reno (`reno_rto_guard`): after a timeout, only an ACK
        // beyond what had been sent then.
        let allowed = if self.rec.rules == super::Rules::Reno {
            self.rto_guard.is_none_or(|r| self.snd_una > r)
        } else {
            self.rec.recover.is_none_or(|r| self.snd_una > r)
        };
        self.dupack_enter_or_echo(trigger && allowed, ece, now);
    }

    /// Entering fast recovery: the window inflated by the DupThresh
    /// segments that have left the network (RFC 5681 §3.2 step 4).
    pub(in crate::tcp::sender) fn newreno_on_entry(&mut self) {
        self.win.cwnd += u64::from(self.cfg.dupack_threshold) * self.win.mss;
    }
}
