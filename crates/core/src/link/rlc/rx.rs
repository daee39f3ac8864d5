//! The AM receiver of one direction: VR(R), VR(H), the reception bitmap and
//! the STATUS triggers (TS 25.322 §9.4, §9.7.2, §11.5).

use std::collections::VecDeque;

use super::pdu::{AckInfo, RUN_MAX};
use crate::time::Time;

/// Receiver state. Sequence numbers are unwrapped (`u64`); with a window of
/// at most 2047 PDUs this is equivalent to the 12-bit modular arithmetic.
#[derive(Debug, Default)]
pub(crate) struct Rx {
    /// VR(R): the first PDU not yet received in sequence.
    pub vr_r: u64,
    /// VR(H): one past the highest SN received.
    pub vr_h: u64,
    /// Reception flags of SNs `vr_r..vr_h` (front is always `false`).
    rcv: VecDeque<bool>,
    /// A STATUS is due (poll received, missing PDU detected).
    pub status_due: bool,
    /// Timer_Status_Prohibit: no STATUS before this instant.
    pub prohibit_until: Time,
    /// An MRW was received and must be acknowledged (MRW_ACK SUFI): the
    /// (SN_MRW, last discarded SDU) it carried.
    pub mrw_ack_due: Option<(u64, u64)>,
    /// In-order delivery: the next SDU id to hand to the upper layer.
    pub next_deliver: u64,
}

impl Rx {
    /// Whether PDU `sn` has been received (or skipped by an MRW).
    pub fn has(&self, sn: u64) -> bool {
        if sn < self.vr_r {
            true
        } else if sn >= self.vr_h {
            false
        } else {
            self.rcv[(sn - self.vr_r) as usize]
        }
    }

    /// Record AMD PDU `sn`. Returns (newly received, a gap appeared above VR(H)).
    pub fn receive(&mut self, sn: u64) -> (bool, bool) {
        if sn < self.vr_r {
            return (false, false);
        }
        if sn == self.vr_r && self.vr_h == self.vr_r {
            // The next in sequence with nothing outstanding (the common
            // case): received and slid past at once, the bitmap untouched
            // (it is empty: it covers vr_r..vr_h).
            debug_assert!(self.rcv.is_empty());
            self.vr_r += 1;
            self.vr_h = self.vr_r;
            return (true, false);
        }
        let mut gap = false;
        if sn >= self.vr_h {
            gap = sn > self.vr_h;
            let len = (sn + 1 - self.vr_r) as usize;
            if len == self.rcv.len() + 1 {
                // The next in sequence (the common case): one slot.
                self.rcv.push_back(false);
            } else {
                self.rcv.resize(len, false);
            }
            self.vr_h = sn + 1;
        }
        let i = (sn - self.vr_r) as usize;
        if self.rcv[i] {
            return (false, gap);
        }
        self.rcv[i] = true;
        self.slide();
        (true, gap)
    }

    /// Move the window to at least `sn` (MRW): PDUs below it are discarded.
    pub fn move_window(&mut self, sn: u64) {
        if sn <= self.vr_r {
            return;
        }
        let skip = ((sn - self.vr_r) as usize).min(self.rcv.len());
        self.rcv.drain(..skip);
        self.vr_r = sn;
        self.vr_h = self.vr_h.max(sn);
        self.slide();
    }

    fn slide(&mut self) {
        while self.rcv.front() == Some(&true) {
            self.rcv.pop_front();
            self.vr_r += 1;
        }
    }

    /// The ACK and LIST SUFIs of a STATUS PDU with room for `capacity` LIST
    /// pairs. When the missing runs do not all fit, LSN is set to the first
    /// unreported missing SN, so nothing above it is acknowledged (§9.2.2.11.2).
    pub fn ack_info(&self, capacity: usize) -> AckInfo {
        let mut missing: Vec<(u64, u64)> = Vec::new();
        let mut i = 0usize;
        while i < self.rcv.len() {
            if self.rcv[i] {
                i += 1;
                continue;
            }
            let start = self.vr_r + i as u64;
            let mut len = 0u64;
            while i < self.rcv.len() && !self.rcv[i] && len < RUN_MAX {
                len += 1;
                i += 1;
            }
            if missing.len() == capacity {
                return AckInfo {
                    lsn: start,
                    missing,
                };
            }
            missing.push((start, len));
        }
        AckInfo {
            lsn: self.vr_h,
            missing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_fast_path_keeps_the_window() {
        let mut rx = Rx::default();
        for sn in 0..5 {
            assert_eq!(rx.receive(sn), (true, false));
        }
        assert_eq!((rx.vr_r, rx.vr_h), (5, 5));
        assert_eq!(rx.receive(3), (false, false));
        assert_eq!(rx.receive(7), (true, true));
        assert_eq!(rx.receive(5), (true, false));
        assert_eq!((rx.vr_r, rx.vr_h), (6, 8));
        assert!(rx.has(5) && !rx.has(6) && rx.has(7) && !rx.has(8));
        assert_eq!(rx.ack_info(4).missing, vec![(6, 1)]);
        assert_eq!(rx.receive(6), (true, false));
        assert_eq!((rx.vr_r, rx.vr_h), (8, 8));
        assert_eq!(rx.receive(8), (true, false));
        let a = rx.ack_info(4);
        assert_eq!((a.lsn, a.missing.len()), (9, 0));
    }

    #[test]
    fn window_and_status_runs() {
        let mut rx = Rx::default();
        assert_eq!(rx.receive(0), (true, false));
        assert_eq!(rx.receive(3), (true, true));
        assert_eq!((rx.vr_r, rx.vr_h), (1, 4));
        assert_eq!(rx.receive(3), (false, false));
        // 20 missing after 4: runs of 16 and 4.
        assert_eq!(rx.receive(25), (true, true));
        let a = rx.ack_info(10);
        assert_eq!(a.lsn, 26);
        assert_eq!(a.missing, vec![(1, 2), (4, 16), (20, 5)]);
        // Truncated: only two runs fit; LSN stops at the third.
        let a = rx.ack_info(2);
        assert_eq!(a.lsn, 20);
        assert_eq!(a.missing.len(), 2);
        assert_eq!(rx.ack_info(0).lsn, 1);
        rx.move_window(5);
        assert_eq!((rx.vr_r, rx.vr_h), (5, 26));
        assert!(rx.has(4) && !rx.has(5) && rx.has(25));
        rx.move_window(30);
        assert_eq!((rx.vr_r, rx.vr_h), (30, 30));
    }
}
