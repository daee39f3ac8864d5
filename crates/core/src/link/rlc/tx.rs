//! The AM transmitter of one direction: VT(A), VT(S), per-PDU transmission
//! counts (VT(DAT)), the retransmission set, the poll timer and the MRW
//! procedure state (TS 25.322 §9.4, §9.5, §9.7.1, §11.3, §11.6).

use std::collections::{BTreeSet, VecDeque};

use crate::time::Time;

/// Acknowledgement state of a transmitted AMD PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PduState {
    /// Sent, not yet acknowledged.
    Outstanding,
    /// Positively acknowledged.
    Acked,
    /// Below SN_MRW after an SDU discard: never sent again.
    Done,
}

/// A transmitted AMD PDU kept for retransmission.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TxPdu {
    /// First SDU with bytes in this PDU.
    pub first_sdu: u64,
    /// Last SDU with bytes in this PDU.
    pub last_sdu: u64,
    /// Transmissions so far (VT(DAT)).
    pub tx_count: u32,
    /// Start of the TTI of the latest transmission (for the stale-NACK
    /// guard, [`super::Epc`]).
    pub last_tx: Time,
    /// Acknowledgement state.
    pub state: PduState,
}

/// An SDU discard being signalled to the receiver.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mrw {
    /// SN_MRW_LENGTH: the receiver discards every PDU below it.
    pub sn: u64,
    /// The last discarded SDU (what N_LENGTH identifies).
    pub last_sdu: u64,
    /// Timer_MRW: when to send the MRW again (`None`: send at the next TTI).
    pub resend_at: Option<Time>,
}

/// Transmitter state.
#[derive(Debug, Default)]
pub(crate) struct Tx {
    /// PDUs `vt_a..vt_s`.
    pub pdus: VecDeque<TxPdu>,
    /// VT(A): the first PDU not acknowledged (front of `pdus`).
    pub vt_a: u64,
    /// NACKed PDUs waiting for retransmission, oldest first.
    pub retx: BTreeSet<u64>,
    /// A poll must go out with the next AMD PDU (Timer_Poll expired).
    pub poll_pending: bool,
    /// Timer_Poll expiry, when running.
    pub poll_deadline: Option<Time>,
    /// VT(S) when the running poll was sent.
    pub poll_sn: u64,
    /// When the running poll was sent (TTI start).
    pub poll_at: Time,
    /// The SDU discard being signalled, if any.
    pub mrw: Option<Mrw>,
    /// Current MaxDAT (`None`: unlimited).
    pub max_dat: Option<u32>,
    /// Next SDU to segment.
    pub seg_next: u64,
    /// Stream bytes of `seg_next` already segmented.
    pub seg_off: u32,
    /// With ideal feedback ([`super::Feedback::Ideal`]): the PDUs sent in
    /// the latest TTI and whether each arrived, learnt at the next TTI.
    pub fates: Vec<(u64, bool)>,
}

impl Tx {
    /// VT(S): the next new SN.
    pub fn vt_s(&self) -> u64 {
        self.vt_a + self.pdus.len() as u64
    }

    /// The PDU with `sn`, if it is in `vt_a..vt_s`.
    pub fn pdu(&self, sn: u64) -> Option<&TxPdu> {
        sn.checked_sub(self.vt_a)
            .and_then(|i| self.pdus.get(i as usize))
    }

    /// Mutable PDU `sn`.
    pub fn pdu_mut(&mut self, sn: u64) -> Option<&mut TxPdu> {
        sn.checked_sub(self.vt_a)
            .and_then(|i| self.pdus.get_mut(i as usize))
    }

    /// Whether PDU `sn` is outstanding.
    pub fn outstanding(&self, sn: u64) -> bool {
        self.pdu(sn)
            .is_some_and(|p| p.state == PduState::Outstanding)
    }

    /// Whether PDU `sn` has used up its transmissions (VT(DAT) ≥ MaxDAT).
    pub fn exhausted(&self, sn: u64) -> bool {
        match (self.max_dat, self.pdu(sn)) {
            (Some(m), Some(p)) => p.tx_count >= m,
            _ => false,
        }
    }

    /// Advance VT(A) past acknowledged and discarded PDUs. When nothing is
    /// outstanding any more the poll timer stops and a pending poll is moot.
    pub fn slide(&mut self) {
        while self
            .pdus
            .front()
            .is_some_and(|p| p.state != PduState::Outstanding)
        {
            self.pdus.pop_front();
            self.vt_a += 1;
        }
        if self.pdus.is_empty() {
            self.poll_deadline = None;
            self.poll_pending = false;
        }
    }

    /// The highest outstanding SN (what a poll-only retransmission resends).
    pub fn last_outstanding(&self) -> Option<u64> {
        self.pdus
            .iter()
            .rposition(|p| p.state == PduState::Outstanding)
            .map(|i| self.vt_a + i as u64)
    }
}
