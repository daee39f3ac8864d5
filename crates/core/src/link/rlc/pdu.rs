//! PDUs on the air and the STATUS PDU size model.
//!
//! All AM PDUs of a bearer have the same size on the air (TS 25.322 §9.2.1:
//! AMD PDUs carry `pdu_payload_bytes` behind a `header_bytes` header; control
//! PDUs are padded to the same size), so every PDU takes one slot of a TTI.
//!
//! STATUS PDU contents (§9.2.1.6, §9.2.2.11), in bits of the padded PDU:
//! D/C + PDU type 4, ACK SUFI 16 (type 4 + LSN 12), MRW_ACK SUFI 24 when
//! present (type 4 + N 4 + SN_ACK 12 + 4 spare), and LIST SUFIs of 8 bits
//! (type 4 + length 4) plus 16 bits per (SN 12, L 4) pair, at most 15 pairs
//! per LIST. A pair reports a run of 1..=16 consecutive missing PDUs. With a
//! 42-byte PDU (336 bits) one STATUS reports at most 18 runs.

/// Longest run of missing PDUs one LIST pair reports (L is 4 bits: 0..=15 more).
pub(crate) const RUN_MAX: u64 = 16;

const HEADER_BITS: i64 = 4;
const ACK_SUFI_BITS: i64 = 16;
const MRW_ACK_SUFI_BITS: i64 = 24;
const LIST_HEADER_BITS: i64 = 8;
const LIST_PAIR_BITS: i64 = 16;
const LIST_MAX_PAIRS: usize = 15;

/// Positive and negative acknowledgements of a STATUS PDU (ACK + LIST SUFIs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AckInfo {
    /// ACK SUFI LSN: every PDU with SN < `lsn` not listed as missing is received.
    pub lsn: u64,
    /// Missing runs `(first SN, length 1..=RUN_MAX)`, ascending, all below `lsn`.
    pub missing: Vec<(u64, u64)>,
}

/// A STATUS PDU from a receiver to its peer sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StatusPdu {
    /// ACK/LIST SUFIs (absent when only an MRW_ACK is sent while the status
    /// prohibit timer runs).
    pub ack: Option<AckInfo>,
    /// MRW_ACK SUFI: the MRW acknowledged, echoed (SN_ACK ≥ SN_MRW_LENGTH
    /// and N = N_LENGTH in the standard; here the SN and the last SDU).
    pub mrw_ack: Option<(u64, u64)>,
}

/// A PDU on the air.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AirPdu {
    /// An AMD PDU. `first_sdu..=last_sdu` are the SDUs with bytes in it (what
    /// its length indicators describe to the receiver).
    Data {
        sn: u64,
        first_sdu: u64,
        last_sdu: u64,
        poll: bool,
    },
    /// A STATUS PDU for the sender of the opposite direction (boxed: at
    /// most one a TTI, and the air queue's entries stay small for the data
    /// PDUs, 40 bytes with their arrival time instead of 72).
    Status(Box<StatusPdu>),
    /// A STATUS PDU carrying an MRW SUFI (sender → receiver): discard every
    /// PDU below `sn_mrw` and every SDU up to `last_sdu` (SN_MRW_LENGTH and
    /// N_LENGTH, §9.2.2.11).
    Mrw { sn_mrw: u64, last_sdu: u64 },
}

/// How many LIST pairs fit in a STATUS PDU of `pdu_bytes` bytes.
pub(crate) fn list_capacity(pdu_bytes: u32, with_mrw_ack: bool) -> usize {
    let mut budget = i64::from(pdu_bytes) * 8 - HEADER_BITS - ACK_SUFI_BITS;
    if with_mrw_ack {
        budget -= MRW_ACK_SUFI_BITS;
    }
    let mut n = 0;
    loop {
        let cost = LIST_PAIR_BITS
            + if n % LIST_MAX_PAIRS == 0 {
                LIST_HEADER_BITS
            } else {
                0
            };
        if budget < cost {
            return n;
        }
        budget -= cost;
        n += 1;
    }
}

/// Bits a control PDU needs at least: a STATUS PDU with an ACK and an
/// MRW_ACK SUFI (an MRW SUFI with one SN_MRW, 24 bits, fits too).
pub(crate) const MIN_CONTROL_BITS: i64 = HEADER_BITS + ACK_SUFI_BITS + MRW_ACK_SUFI_BITS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_capacity_of_a_42_byte_pdu() {
        // 336 − 4 − 16 = 316 bits: one LIST of 15 pairs (8 + 240 = 248), then a
        // second LIST header (8) and 3 pairs (48): 304 bits, 12 left.
        assert_eq!(list_capacity(42, false), 18);
        // MRW_ACK takes 24 more bits: 292 → 15 pairs (248), then 8 + 2·16 = 40.
        assert_eq!(list_capacity(42, true), 17);
        assert_eq!(list_capacity(6, true), 0);
    }
}
