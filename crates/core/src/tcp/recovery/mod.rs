//! Loss recovery: the rule sets the sender follows between a loss signal and
//! the end of its recovery, each whole in one file, and the hooks by which
//! [`TcpSender`] calls them.
//!
//! - [`newreno`]: Reno (RFC 5681 §3.2) and NewReno (RFC 6582): window
//!   inflation by duplicate ACKs, partial-ACK retransmissions.
//! - [`rfc6675`]: SACK recovery (RFC 6675: IsLost, NextSeg, `pipe`) with its
//!   ns-3 options (`cut_flight`, `rto_resend_lost`, CA_CWR under
//!   `cwr_per_echo`) and RACK's resends after a timeout.
//! - [`sack1`]: ns-2.35's `Agent/TCP/Sack1` (`sack_rules = "ns2"`): a
//!   counted pipe, fast retransmit at exactly the DupThresh-th duplicate ACK.
//!
//! The hooks, called from `sender.rs`: [`TcpSender::recovery_on_ack`] (an ACK
//! of new data inside recovery: partial or full), [`TcpSender::recovery_on_dupack`]
//! (a duplicate ACK), [`TcpSender::recovery_on_entry`] (the rule set's part
//! of entering fast recovery), [`TcpSender::next_seg`] (what to send in SACK
//! recovery once the pipe allows a segment).

mod newreno;
mod rfc6675;
mod sack1;

use super::TcpSender;
use crate::packet::Packet;
use crate::tcp::{SackRules, TcpConfig, Variant};
use crate::time::Time;

/// The loss-recovery rule set, fixed by `variant` and `sack_rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rules {
    /// RFC 5681 §3.2 fast retransmit / fast recovery (`variant = "reno"`).
    Reno,
    /// RFC 6582 (`variant = "newreno"`).
    NewReno,
    /// RFC 6675 SACK recovery (`variant = "sack"`, `sack_rules = "rfc6675"`).
    Rfc6675,
    /// ns-2's Sack1 (`variant = "sack"`, `sack_rules = "ns2"`).
    Sack1,
}

/// The rule set and the state of loss recovery the sender keeps across ACKs.
#[derive(Debug)]
pub(super) struct Recovery {
    /// Which rules.
    pub(super) rules: Rules,
    /// Window the CC chose on entering recovery (deflation target).
    pub(super) recovery_cwnd: u64,
    /// `snd_max` on entering recovery / at the last RTO (exclusive): RFC 6582
    /// `recover` + 1, RFC 6675 `RecoveryPoint` + 1. Unused by Reno.
    pub(super) recover: Option<u64>,
    /// NewReno: the next partial ACK is the first of this recovery (it
    /// restarts the timer, RFC 6582 §3.2 step 5's "first partial ACK").
    pub(super) first_partial: bool,
    /// One past the highest byte retransmitted in this SACK recovery (HighRxt + 1).
    pub(super) high_rxt: u64,
    /// RFC 6675's pipe, recounted on every ACK of a SACK recovery (or of the
    /// go-back-N after a timeout that kept the scoreboard) and raised by
    /// every segment sent in it.
    pub(super) pipe: u64,
    /// ns-2's counted `pipe_` in bytes (may go negative), with [`Rules::Sack1`].
    pub(super) ns2_pipe: i64,
    /// ns-2's `timeout_`: since a timeout, no ACK has acknowledged new data
    /// (duplicate ACKs are ignored), with [`Rules::Sack1`].
    pub(super) ns2_after_timeout: bool,
}

impl Recovery {
    /// The rules `cfg` selects, nothing recovered yet.
    pub(super) fn new(cfg: &TcpConfig) -> Self {
        let rules = match (cfg.variant, cfg.sack_rules) {
            (Variant::Reno, _) => Rules::Reno,
            (Variant::NewReno, _) => Rules::NewReno,
            (Variant::Sack, SackRules::Rfc6675) => Rules::Rfc6675,
            (Variant::Sack, SackRules::Ns2) => Rules::Sack1,
        };
        Recovery {
            rules,
            recovery_cwnd: 0,
            recover: None,
            first_partial: false,
            high_rxt: 0,
            pipe: 0,
            ns2_pipe: 0,
            ns2_after_timeout: false,
        }
    }

    /// ns-2's Sack1 rules ([`Rules::Sack1`]).
    #[inline]
    pub(super) fn sack1(&self) -> bool {
        self.rules == Rules::Sack1
    }
}

impl TcpSender {
    /// Hook: an ACK of new data (cumulative `ack`, `acked` bytes newly
    /// acknowledged) while in fast recovery: a partial or a full ACK.
    pub(super) fn recovery_on_ack(&mut self, ack: u64, acked: u64, mss: u64, now: Time) {
        let full = self.rec.recover.is_none_or(|r| ack >= r);
        match self.rec.rules {
            Rules::Reno => self.reno_on_ack(now),
            Rules::NewReno => self.newreno_on_ack(full, acked, mss, now),
            Rules::Rfc6675 => self.rfc6675_on_ack(full, mss, now),
            Rules::Sack1 => self.sack1_on_ack(full, mss, now),
        }
    }

    /// Hook: a duplicate ACK (no new data acknowledged, data outstanding);
    /// whether its SACK blocks covered anything new (RFC 6675 only: ns-3's
    /// `isDupack` for its PRR).
    pub(super) fn recovery_on_dupack(
        &mut self,
        now: Time,
        pkt: &Packet,
        ece: bool,
        dt: u32,
        mss: u64,
    ) -> bool {
        match self.rec.rules {
            Rules::Reno | Rules::NewReno => {
                self.newreno_on_dupack(now, ece, dt, mss);
                false
            }
            Rules::Rfc6675 => self.rfc6675_on_dupack(now, pkt, ece, dt),
            Rules::Sack1 => {
                self.sack1_on_dupack(now, pkt, ece, dt);
                false
            }
        }
    }

    /// Hook: the rule set's part of entering fast recovery (after the window
    /// cut, `recover` and the fast retransmit are set).
    pub(super) fn recovery_on_entry(&mut self) {
        match self.rec.rules {
            Rules::Reno | Rules::NewReno => self.newreno_on_entry(),
            Rules::Rfc6675 => self.rfc6675_on_entry(),
            Rules::Sack1 => self.sack1_on_entry(),
        }
    }

    /// Hook: in SACK recovery (or ns-3's CA_CWR with SACK, `ns3_cwr`), the
    /// window against the pipe allowing one more segment: what to send.
    pub(super) fn next_seg(&mut self, now: Time, ns3_cwr: bool) -> Option<Packet> {
        if self.rec.sack1() {
            self.sack1_next_seg(now)
        } else {
            self.rfc6675_next_seg(now, ns3_cwr)
        }
    }

    /// A duplicate ACK outside recovery that may start one: enter fast
    /// recovery when the rule set's trigger and re-entry guard allow it
    /// (`go`) and ns-3's CA_CWR does not hold it back, else answer an ECN
    /// echo.
    fn dupack_enter_or_echo(&mut self, go: bool, ece: bool, now: Time) {
        if go && !self.ns3_cwr() {
            self.enter_recovery(now);
        } else if ece && !self.cfg.cwr_per_echo {
            // ns-3 answers an echo only on an ACK of new data
            // (tcp-socket-base.cc 1908).
            self.ecn_response(now);
        }
    }

    /// SACK's re-entry guard at cumulative ACK `ack`: RFC 6675 (HighACK >
    /// RecoveryPoint, the last byte sent: `ack >= recover`); ns-2's `Sack1`
    /// (`highest_ack_ > recover_` in packets: `ack > recover`).
    pub(super) fn may_recover(&self, ack: u64) -> bool {
        self.rec
            .recover
            .is_none_or(|r| if self.rec.sack1() { ack > r } else { ack >= r })
    }

    /// Pipe for the sending decision in SACK recovery (bytes; ns-2's may be negative).
    pub(super) fn recovery_pipe(&self) -> i64 {
        if self.rec.sack1() {
            self.rec.ns2_pipe
        } else {
            self.rec.pipe as i64
        }
    }
}
