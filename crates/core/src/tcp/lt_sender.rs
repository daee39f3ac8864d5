//! LT-TCP's sender side (seed 002): FEC blocks, proactive and reactive
//! Reed–Solomon repairs, the erasure-rate estimate and the adaptive MSS, as
//! one component the [`super::TcpSender`] calls through a few hooks:
//!
//! - [`LtSender::open_block`] before a new segment (its size),
//!   [`LtSender::segment_added`] after it, [`LtSender::close_block`] when the
//!   application stops;
//! - [`LtSender::next_repair`] and [`LtSender::repair_sent`] when the sender
//!   may transmit (a repair goes before new data);
//! - [`LtSender::reactive_trigger`] at a duplicate ACK,
//!   [`LtSender::after_ack`] after every ACK, [`LtSender::on_timeout`] at a
//!   retransmission timeout;
//! - [`LtSender::hold`]: whether a retransmission waits for repairs already
//!   coming;
//! - [`LtSender::growth_units`]: the window growth an ACK is worth.
//!
//! The configuration ([`LtConfig`]) stays in the sender's `TcpConfig` and is
//! passed to the hooks that read it.

use std::collections::VecDeque;
use std::num::NonZeroU32;

use super::lt::{self, ErasureEstimator, EstimatorSide, LtConfig, ReactiveLimit};
use super::scoreboard::Scoreboard;
use super::trace::SenderTrace;
use crate::time::Time;

/// One LT-TCP FEC block: the data segments of one window plus its repairs.
#[derive(Clone, Copy, Debug)]
struct Block {
    start: u64,
    end: u64,
    mss: u32,
    /// Data segments planned / sent so far.
    k_plan: u16,
    k: u16,
    /// Proactive repairs planned, and still to send.
    p: u16,
    proactive_left: u16,
    /// Repair packets sent so far (the next repair index).
    next_index: u16,
    /// Still taking data segments.
    open: bool,
    /// Repairs sent and not yet resolved (nothing sent after them acknowledged).
    unresolved: u16,
    /// When the latest repair of the block was sent.
    last_repair_at: Time,
}

/// A repair the sender may transmit now ([`LtSender::next_repair`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RepairPlan {
    /// The block's first byte (the repair's `seq`).
    pub start: u64,
    /// The block's data bytes.
    pub block_len: NonZeroU32,
    /// The repair's index within its block.
    pub index: u8,
    /// Payload bytes (the block's segment size).
    pub size: u64,
    /// A proactive (PHASE 1) repair, else a reactive (PHASE 2) one.
    pub proactive: bool,
    /// The repair occupies the window (a reactive repair outside it does not).
    pub in_window: bool,
}

/// LT-TCP's sender-side state.
#[derive(Debug)]
pub(super) struct LtSender {
    /// Adaptive MSS or FEC on: data goes out in blocks.
    blocks_on: bool,
    blocks: VecDeque<Block>,
    /// Repairs counted in flight: (order stamp, payload bytes, block start).
    fec_out: VecDeque<(u64, u64, u64)>,
    fec_pipe: u64,
    reactive_pending: u32,
    /// Segment size of the current block (0 = the configured MSS).
    seg_mss: u64,
    /// Bytes acknowledged not yet fed to the window growth (adaptive MSS).
    abc_bytes: u64,
    /// Repair bytes resolved (× 1 − E) not yet fed to the window growth.
    repair_credit: u64,
    estimator: ErasureEstimator,
    /// The estimation window ends when `snd_una` reaches this.
    est_marker: u64,
    est_base: (u64, u64),
    /// Receiver-side estimate from the latest ACK.
    echoed_e: f64,
}

impl LtSender {
    /// The component for a sender configured with `cfg`.
    pub(super) fn new(cfg: &LtConfig) -> Self {
        LtSender {
            blocks_on: cfg.blocks(),
            blocks: VecDeque::new(),
            fec_out: VecDeque::new(),
            fec_pipe: 0,
            reactive_pending: 0,
            seg_mss: 0,
            abc_bytes: 0,
            repair_credit: 0,
            estimator: ErasureEstimator::starting_at(cfg.initial_estimate),
            est_marker: 0,
            est_base: (0, 0),
            echoed_e: cfg.initial_estimate,
        }
    }

    /// Data goes out in blocks (adaptive MSS or FEC on).
    pub(super) fn blocks_on(&self) -> bool {
        self.blocks_on
    }

    /// Repair bytes in flight that occupy the window.
    pub(super) fn fec_pipe(&self) -> u64 {
        self.fec_pipe
    }

    /// The erasure estimate E in use (sender- or receiver-side).
    pub(super) fn erasure_estimate(&self, cfg: &LtConfig) -> f64 {
        match cfg.estimator {
            EstimatorSide::Sender => self.estimator.value(),
            EstimatorSide::Receiver => self.echoed_e,
        }
    }

    /// The receiver's estimate echoed on an ACK (a 16-bit fraction).
    pub(super) fn on_echo(&mut self, echo: u16) {
        self.echoed_e = f64::from(echo) / f64::from(u16::MAX);
    }

    /// Size of the segments now being sent (`mss`: the configured one).
    pub(super) fn seg_size(&self, mss: u64) -> u64 {
        if self.seg_mss > 0 {
            self.seg_mss
        } else {
            mss
        }
    }

    /// The segment size of the open block, opening a new block (planned from
    /// the window `cwnd` and the estimate, starting at `snd_max`) if none is
    /// open; the second value is true when a block was opened.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn open_block(
        &mut self,
        cfg: &LtConfig,
        fixed_mss: u32,
        cwnd: u64,
        snd_max: u64,
        sb: &mut Scoreboard,
        trace: &mut SenderTrace,
        now: Time,
    ) -> (u64, bool) {
        if let Some(b) = self.blocks.back().filter(|b| b.open) {
            return (u64::from(b.mss), false);
        }
        let e = self.erasure_estimate(cfg);
        let plan = lt::plan_block(cfg, fixed_mss, cwnd, e);
        if cfg.adaptive_mss {
            // The window arithmetic stays in MSS_max units (see
            // `growth_units`); the IsLost byte rule counts segments of the
            // current size.
            self.seg_mss = u64::from(plan.mss);
            sb.set_mss(self.seg_mss);
        }
        self.blocks.push_back(Block {
            start: snd_max,
            end: snd_max,
            mss: plan.mss,
            k_plan: plan.k,
            k: 0,
            p: plan.p,
            proactive_left: 0,
            next_index: 0,
            open: true,
            unresolved: 0,
            last_repair_at: now,
        });
        trace.block((now, plan.mss, cwnd, plan.k, plan.p));
        (u64::from(plan.mss), true)
    }

    /// A data segment ending at `snd_max` joined the open block; the block
    /// closes when it is full or `last` (the application's last byte).
    pub(super) fn segment_added(&mut self, cfg: &LtConfig, snd_max: u64, last: bool) {
        let full = self.blocks.back_mut().is_some_and(|b| {
            b.k += 1;
            b.end = snd_max;
            b.k >= b.k_plan
        });
        if full || last {
            self.close_block(cfg);
        }
    }

    /// Close the open block (its data is all sent): its proactive repairs may go.
    pub(super) fn close_block(&mut self, cfg: &LtConfig) {
        if let Some(b) = self.blocks.back_mut().filter(|b| b.open) {
            if b.k == 0 {
                self.blocks.pop_back();
                return;
            }
            b.open = false;
            b.proactive_left = if cfg.proactive_fec { b.p } else { 0 };
        }
    }

    /// Reactive FEC: a duplicate ACK asks for `R = g(E)` repairs.
    pub(super) fn reactive_trigger(&mut self, cfg: &LtConfig) {
        if cfg.reactive_fec {
            let r = lt::lookup(&cfg.reactive_bins, self.erasure_estimate(cfg));
            self.reactive_pending += u32::from(r);
        }
    }

    /// New data was acknowledged: pending reactive repairs are forgotten.
    pub(super) fn clear_reactive(&mut self) {
        self.reactive_pending = 0;
    }

    /// A pending proactive repair (oldest closed block first), else a pending
    /// reactive repair for the block holding `una`, if `room` (the window
    /// left for repairs, bytes; may be negative) holds it. The block's
    /// bookkeeping is updated as if it were sent; the sender then calls
    /// [`Self::repair_sent`].
    pub(super) fn next_repair(
        &mut self,
        cfg: &LtConfig,
        sb: &Scoreboard,
        una: u64,
        room: i64,
        now: Time,
    ) -> Option<RepairPlan> {
        let proactive = self.blocks.iter().position(|b| b.proactive_left > 0);
        let idx = match proactive {
            Some(i) => i,
            None => {
                if self.reactive_pending == 0 {
                    return None;
                }
                // With the deficit limit, repairs stop at no more than the
                // block's known holes / (1 − E) in all (proactive included).
                let deficit = cfg.reactive_limit == ReactiveLimit::Deficit;
                let keep = 1.0 - self.erasure_estimate(cfg).min(0.9);
                let found = self.blocks.iter().position(|b| {
                    !b.open
                        && b.start <= una
                        && una < b.end
                        && b.k + b.next_index < cfg.block_max
                        && (!deficit
                            || f64::from(b.next_index)
                                < (sb.holes_in(b.start, b.end) as f64 / keep).ceil())
                });
                match found {
                    Some(i) => i,
                    None => {
                        self.reactive_pending = 0;
                        return None;
                    }
                }
            }
        };
        let size = u64::from(self.blocks[idx].mss);
        // A reactive repair outside the window neither waits for room in it
        // nor occupies it (nor clocks its growth).
        let in_window = proactive.is_some() || cfg.reactive_in_window;
        if in_window && (self.fec_pipe + size) as i64 > room {
            return None;
        }
        let b = &mut self.blocks[idx];
        let index = b.next_index as u8;
        b.next_index += 1;
        b.unresolved += 1;
        b.last_repair_at = now;
        if proactive.is_some() {
            b.proactive_left -= 1;
        } else {
            self.reactive_pending -= 1;
        }
        let block_len =
            NonZeroU32::new((b.end - b.start) as u32).expect("a closed block holds data");
        Some(RepairPlan {
            start: b.start,
            block_len,
            index,
            size,
            proactive: proactive.is_some(),
            in_window,
        })
    }

    /// The repair `plan` left with transmission-order stamp `order`.
    pub(super) fn repair_sent(&mut self, plan: &RepairPlan, order: u64) {
        let counted = if plan.in_window { plan.size } else { 0 };
        self.fec_out.push_back((order, counted, plan.start));
        self.fec_pipe += counted;
    }

    /// A retransmission timeout: every repair in flight is forgotten.
    pub(super) fn on_timeout(&mut self) {
        self.fec_out.clear();
        self.repair_credit = 0;
        self.fec_pipe = 0;
        self.reactive_pending = 0;
        for b in &mut self.blocks {
            b.unresolved = 0;
        }
    }

    /// Bookkeeping after an ACK: repairs leave the flight, finished blocks
    /// are forgotten, the estimation window may close.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn after_ack(
        &mut self,
        cfg: &LtConfig,
        sb: &Scoreboard,
        snd_una: u64,
        snd_max: u64,
        trace: &mut SenderTrace,
        now: Time,
    ) {
        let acked_order = sb.acked_order();
        while let Some(&(o, bytes, start)) = self.fec_out.front() {
            if o > acked_order {
                break;
            }
            self.fec_out.pop_front();
            self.fec_pipe -= bytes;
            let delivered = 1.0 - self.erasure_estimate(cfg);
            self.repair_credit += (bytes as f64 * delivered) as u64;
            let i = self.blocks.partition_point(|b| b.start < start);
            if let Some(b) = self.blocks.get_mut(i).filter(|b| b.start == start) {
                b.unresolved = b.unresolved.saturating_sub(1);
            }
        }
        if snd_una >= snd_max {
            self.fec_out.clear();
            self.fec_pipe = 0;
        }
        while self
            .blocks
            .front()
            .is_some_and(|b| !b.open && b.end <= snd_una)
        {
            self.blocks.pop_front();
        }
        // Per-window erasure rate from the segments this window acknowledged.
        if snd_una >= self.est_marker {
            let (popped, erased) = sb.popped();
            let (dp, de) = (popped - self.est_base.0, erased - self.est_base.1);
            if dp > 0 {
                let new_l = de as f64 / dp as f64;
                self.estimator.update(new_l);
                // The E in use: this estimator's, or the receiver's echo.
                let e = self.erasure_estimate(cfg);
                trace.erasure(now, new_l, e);
                self.est_base = (popped, erased);
            }
            self.est_marker = snd_max.max(snd_una + 1);
        }
    }

    /// If the repairs still coming for the closed block holding `seq`
    /// (proactive ones to send, reactive ones sent less than `guard` — one
    /// smoothed RTT — ago, nothing sent after them acknowledged) cover its
    /// known holes, hold its retransmission back; returns the block's end.
    pub(super) fn hold(
        &self,
        seq: u64,
        now: Time,
        guard: impl FnOnce() -> Time,
        sb: &Scoreboard,
    ) -> Option<u64> {
        if !self.blocks_on || self.blocks.is_empty() {
            return None;
        }
        let i = self.blocks.partition_point(|b| b.end <= seq);
        let b = self.blocks.get(i).filter(|b| b.start <= seq && !b.open)?;
        let in_flight = if now < b.last_repair_at + guard() {
            b.unresolved
        } else {
            0
        };
        let coming = u64::from(b.proactive_left) + u64::from(in_flight);
        if coming == 0 {
            return None;
        }
        (sb.holes_in(b.start, b.end) as u64 <= coming).then_some(b.end)
    }

    /// The window growth an ACK of `acked` new bytes is worth, with the
    /// repair bytes resolved since the last call (× 1 − E) counted as
    /// acknowledged too: `(bytes, calls)` — the congestion control sees
    /// `calls` ACKs of `bytes` each. Without adaptive MSS that is one ACK of
    /// all of it; with it, one ACK of full-sized segments per `unit` (MSS_max,
    /// or 2·MSS_max with delayed ACKs) of bytes, so the window grows by the
    /// same bytes per round trip as with full-sized segments: granulation
    /// does not change aggressiveness.
    pub(super) fn growth_units(&mut self, cfg: &LtConfig, acked: u64, unit: u64) -> (u64, u64) {
        let acked = acked + std::mem::take(&mut self.repair_credit);
        if !cfg.adaptive_mss {
            return (acked, 1);
        }
        self.abc_bytes += acked;
        let calls = self.abc_bytes / unit;
        self.abc_bytes -= calls * unit;
        (unit, calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> LtConfig {
        LtConfig {
            proactive_fec: true,
            reactive_fec: true,
            ..LtConfig::default()
        }
    }

    #[test]
    fn a_block_closes_when_full_and_its_proactive_repairs_then_go() {
        let cfg = cfg();
        let mut lt = LtSender::new(&cfg);
        let mut sb = Scoreboard::new(1000);
        let mut trace = SenderTrace::default();
        let (size, opened) = lt.open_block(&cfg, 1000, 10_000, 0, &mut sb, &mut trace, Time::ZERO);
        assert!(opened && size > 0);
        let k = lt.blocks[0].k_plan;
        let p = lt.blocks[0].p;
        for i in 1..=u64::from(k) {
            assert!(lt.blocks[0].open, "open until its k-th segment");
            lt.segment_added(&cfg, i * size, false);
        }
        assert!(!lt.blocks[0].open);
        assert_eq!(lt.blocks[0].proactive_left, p);
        if p > 0 {
            let plan = lt.next_repair(&cfg, &sb, 0, i64::MAX, Time::ZERO).unwrap();
            assert!(plan.proactive && plan.in_window && plan.index == 0);
            lt.repair_sent(&plan, 1);
            assert_eq!(lt.fec_pipe(), plan.size);
            assert!(
                lt.next_repair(&cfg, &sb, 0, plan.size as i64, Time::ZERO)
                    .is_none(),
                "no room for a second repair beside the first"
            );
            lt.on_timeout();
            assert_eq!(lt.fec_pipe(), 0);
        }
    }

    #[test]
    fn growth_units_without_and_with_adaptive_mss() {
        let mut cfg = cfg();
        let mut lt = LtSender::new(&cfg);
        assert_eq!(lt.growth_units(&cfg, 700, 1000), (700, 1));
        cfg.adaptive_mss = true;
        let mut lt = LtSender::new(&cfg);
        assert_eq!(lt.growth_units(&cfg, 700, 1000), (1000, 0));
        assert_eq!(lt.growth_units(&cfg, 2500, 1000), (1000, 3));
        assert_eq!(lt.abc_bytes, 200);
    }
}
