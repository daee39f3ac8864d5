//! Proportional Rate Reduction: the window on each ACK of a loss recovery
//! (or of an ECN reduction run through PRR), in the three rule sets
//! `prr_variant` selects (docs/models/tcp.md):
//!
//! - [`Prr::rfc6937`]: RFC 6937 §3 (PRR-SSRB below ssthresh);
//! - [`Prr::rfc9937`]: RFC 9937 §6.2 (it obsoletes 6937): PRR-CRB, a
//!   segment more only on a safe ACK, nothing on an ACK that delivers nothing;
//! - [`Prr::ns3`]: ns-3.44's `TcpPrrRecovery::DoRecovery`
//!   (`src/internet/model/tcp-prr-recovery.cc` at tag ns-3.44), with its
//!   32-bit arithmetic.
//!
//! Each takes the episode's counters here and the sender's ssthresh, MSS and
//! pipe, and returns the new congestion window (`pipe + SndCnt`), or `None`
//! where the rule set leaves the window as it was.

/// The counters of one PRR episode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Prr {
    /// PRR paces this sender's loss reductions (`prr`; off with LT-TCP's
    /// ECN-only response, which makes none, and under a rate-sample
    /// algorithm, which sets the window itself).
    pub on: bool,
    /// `prr_delivered`: bytes delivered to the receiver in the episode.
    pub delivered: u64,
    /// `prr_out`: bytes sent in the episode.
    pub out: u64,
    /// `RecoverFS`: the flight at the start of the episode (RFC 9937: less
    /// the bytes SACKed before it).
    pub recover_fs: u64,
    /// With `prr_variant = "ns3"`: ns-3's `m_bytesAckedNotProcessed`, the
    /// bytes of partial segments carried to the next ACK's `segsAcked`.
    pub ns3_acked_carry: u64,
}

impl Prr {
    /// A new episode with `recover_fs` bytes in flight at its start.
    pub(super) fn start(&mut self, recover_fs: u64) {
        self.delivered = 0;
        self.out = 0;
        self.recover_fs = recover_fs;
    }

    /// RFC 6937 §3 on one ACK that delivered `delivered` bytes: the
    /// proportional part while pipe > ssthresh, else the slow-start reduction
    /// bound (PRR-SSRB).
    pub(super) fn rfc6937(&mut self, delivered: u64, ssthresh: u64, mss: u64, pipe: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: spread the reduction over the recovery.
            let target = (u128::from(self.delivered) * u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs.max(1)));
            (target as u64).saturating_sub(self.out)
        } else {
            // Slow-start reduction bound: grow back towards ssthresh no faster than slow start.
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        };
        pipe + sndcnt
    }

    /// RFC 9937 §6.2 on one ACK of a PRR episode that delivered `delivered`
    /// bytes, `safe` its SafeACK (snd.una advanced, no further loss): the
    /// proportional part while pipe > ssthresh; below it PRR-CRB, one
    /// segment more (PRR-SSRB) only on a safe ACK; at least a segment while
    /// nothing was sent in the episode. An ACK that delivers nothing leaves
    /// the window as it was (`None`).
    pub(super) fn rfc9937(
        &mut self,
        delivered: u64,
        safe: bool,
        ssthresh: u64,
        mss: u64,
        pipe: u64,
    ) -> Option<u64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let mut sndcnt = if pipe > ssthresh {
            let out = (u128::from(self.delivered) * u128::from(ssthresh))
                .div_ceil(u128::from(self.recover_fs.max(1)));
            (out as u64).saturating_sub(self.out)
        } else {
            // PRR-CRB by default (prr_delivered − prr_out may be negative:
            // then DeliveredData).
            let mut n = self.delivered.saturating_sub(self.out).max(delivered);
            if safe {
                n += mss; // PRR-SSRB while the recovery makes good progress
            }
            n.min(ssthresh - pipe)
        };
        if self.out == 0 && sndcnt == 0 {
            sndcnt = mss; // force the fast retransmit
        }
        Some(pipe + sndcnt)
    }

    /// ns-3.44's `TcpPrrRecovery::DoRecovery` for one call with this ACK's
    /// `delivered` bytes: `dup` for the calls with new SACK information or
    /// at entry, `safe` ns-3's `m_isRetransDataAcked`. In ns-3's 32-bit
    /// arithmetic: the product `prr_delivered · ssthresh` wraps,
    /// `prr_delivered − prr_out` is unsigned and then read as a signed int.
    /// `None` when nothing counts as delivered (the window is left).
    pub(super) fn ns3(
        &mut self,
        delivered: u64,
        dup: bool,
        safe: bool,
        ssthresh: u64,
        mss: u64,
        pipe: u64,
    ) -> Option<u64> {
        let mss = mss as u32;
        let (recover_fs, prr_out) = (self.recover_fs as u32, self.out as u32);
        let mut delivered = delivered as u32;
        if dup && (self.delivered as u32) < recover_fs {
            delivered += mss;
        }
        if delivered == 0 {
            return None;
        }
        let prr_delivered = (self.delivered as u32).wrapping_add(delivered);
        self.delivered = u64::from(prr_delivered);
        let ssthresh = ssthresh.min(u64::from(u32::MAX)) as u32;
        let pipe = pipe.min(u64::from(u32::MAX)) as u32;
        let mut sndcnt = if pipe > ssthresh {
            let target =
                f64::from(prr_delivered.wrapping_mul(ssthresh)) / f64::from(recover_fs.max(1));
            (target.ceil() - f64::from(prr_out)) as i64
        } else {
            let mut limit = i64::from(prr_delivered.wrapping_sub(prr_out).max(delivered) as i32);
            if safe {
                limit += i64::from(mss);
            }
            limit.min(i64::from((ssthresh - pipe) as i32))
        };
        sndcnt = sndcnt.max(if prr_out > 0 { 0 } else { i64::from(mss) });
        Some(u64::from(pipe) + sndcnt as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An episode with RecoverFS `recover_fs`, `delivered` and `out` so far.
    fn prr(recover_fs: u64, delivered: u64, out: u64) -> Prr {
        Prr {
            delivered,
            out,
            recover_fs,
            ns3_acked_carry: 0,
            on: true,
        }
    }

    /// RFC 9937 §6.2 by hand (MSS 1000), against RFC 6937 where they differ.
    #[test]
    fn rfc9937_per_ack_steps_by_hand() {
        // Proportional part (pipe > ssthresh), as RFC 6937:
        // ⌈11 000 · 50 000 / 96 000⌉ = 5730, − 5000 sent = 730.
        let mut p = prr(96_000, 10_000, 5000);
        assert_eq!(p.rfc9937(1000, false, 50_000, 1000, 60_000), Some(60_730));
        assert_eq!(p.delivered, 11_000);
        // Below ssthresh, an ACK with SACK only (not safe): PRR-CRB,
        // max(11 000 − 9000, 1000) = 2000 (of ssthresh − pipe = 10 000);
        // RFC 6937 adds a segment on every ACK: 3000.
        assert_eq!(
            prr(96_000, 10_000, 9000).rfc9937(1000, false, 50_000, 1000, 40_000),
            Some(42_000)
        );
        assert_eq!(
            prr(96_000, 10_000, 9000).rfc9937(1000, true, 50_000, 1000, 40_000),
            Some(43_000)
        );
        assert_eq!(
            prr(96_000, 10_000, 9000).rfc6937(1000, 50_000, 1000, 40_000),
            43_000
        );
        // More sent than delivered: DeliveredData (1000), + 1000 when safe,
        // at most ssthresh − pipe (1500).
        for (safe, cwnd) in [(false, 49_500), (true, 50_000)] {
            let mut p = prr(96_000, 10_000, 15_000);
            assert_eq!(p.rfc9937(1000, safe, 50_000, 1000, 48_500), Some(cwnd));
        }
        // Nothing delivered: the window stays (RFC 6937 recomputes it).
        let mut p = prr(96_000, 10_000, 9000);
        assert_eq!(p.rfc9937(0, true, 50_000, 1000, 40_000), None);
        assert_eq!(p.delivered, 10_000);
        assert_eq!(
            prr(96_000, 10_000, 9000).rfc6937(0, 50_000, 1000, 40_000),
            42_000
        );
        // Nothing sent yet and nothing allowed (pipe = ssthresh): one
        // segment, the fast retransmit.
        assert_eq!(
            prr(96_000, 0, 0).rfc9937(1000, false, 50_000, 1000, 50_000),
            Some(51_000)
        );
    }

    /// ns-3.44's `DoRecovery` by hand (MSS 1000), one case per departure
    /// from RFC 6937 that the arithmetic shows.
    #[test]
    fn ns3_do_recovery_by_hand() {
        // (1) A call with new SACK information adds a segment: 1000 + 1000
        // delivered; ⌈2000 · 50 000 / 96 000⌉ = 1042, − 1000 sent = 42.
        let mut p = prr(96_000, 0, 1000);
        assert_eq!(p.ns3(1000, true, false, 50_000, 1000, 60_000), Some(60_042));
        assert_eq!(p.delivered, 2000);
        // Not once prr_delivered has reached RecoverFS.
        let mut p = prr(96_000, 96_000, 40_000);
        p.ns3(1000, true, false, 50_000, 1000, 60_000);
        assert_eq!(p.delivered, 97_000);
        // (5) The 32-bit product wraps: 31 000 · 200 000 = 6.2e9 becomes
        // 1 905 032 704; / 300 000 → 6351 − 20 000 sent < 0 → nothing
        // (unwrapped: ⌈20 666.7⌉ − 20 000 = 667).
        let mut p = prr(300_000, 30_000, 20_000);
        assert_eq!(
            p.ns3(1000, false, false, 200_000, 1000, 250_000),
            Some(250_000)
        );
        // (4) Below ssthresh with more sent than delivered: the unsigned
        // 11 000 − 15 000 read as an int is −4000, so no DeliveredData
        // (RFC 6937: max(0, 1000) + 1000); a safe ACK adds a segment to
        // the −4000, still nothing.
        for safe in [false, true] {
            let mut p = prr(96_000, 10_000, 15_000);
            assert_eq!(p.ns3(1000, false, safe, 50_000, 1000, 40_000), Some(40_000));
        }
        // The bound otherwise: max(12 000 − 5000, 1000) = 7000, + 1000 on a
        // safe ACK, at most ssthresh − pipe = 10 000.
        let mut p = prr(96_000, 11_000, 5000);
        assert_eq!(p.ns3(1000, false, true, 50_000, 1000, 40_000), Some(48_000));
        // (2) Nothing delivered: the window is left as it was.
        let mut p = prr(96_000, 5000, 3000);
        assert_eq!(p.ns3(0, false, false, 50_000, 1000, 60_000), None);
        assert_eq!(p.delivered, 5000);
        // (6) Nothing sent yet: at least a segment.
        assert_eq!(
            prr(96_000, 0, 0).ns3(100, false, false, 50_000, 1000, 60_000),
            Some(61_000)
        );
    }
}
