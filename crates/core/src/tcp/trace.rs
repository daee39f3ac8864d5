//! The sender's trace recorder: every per-flow trace a [`super::TcpSender`]
//! can keep (window, transmissions, RTT samples, timer expiries, LT-TCP's
//! erasure estimate and blocks) in one place, off unless
//! [`super::TcpSender::set_trace`] turns it on.
//!
//! The sender calls one method per event; each does nothing while the
//! recorder is off, so the per-ACK path pays one branch for tracing.

use crate::time::Time;

/// One RTT sample, as the `rtt` trace records it: the estimator after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttRow {
    /// When the sample was taken (the ACK's arrival).
    pub at: Time,
    /// The measured round-trip time.
    pub sample: Time,
    /// The smoothed RTT after the sample (the timer's: whole ticks under
    /// ns-2's clock).
    pub srtt: Time,
    /// The variation term after the sample.
    pub rttvar: Time,
    /// The RTO after the sample (its back-off cleared).
    pub rto: Time,
}

/// One retransmission-timer expiry, as the `rto` trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoRow {
    /// When the timer expired.
    pub at: Time,
    /// The SYN's timer (`true`) or the data's.
    pub syn: bool,
    /// The RTO in force when it expired (back-off included).
    pub rto: Time,
    /// Doublings applied to that RTO: 0 for the first expiry since the last
    /// RTT sample (a timeout episode starts), then 1, 2, …
    pub backoff: u32,
    /// The RTO after this expiry's back-off: the restarted timer.
    pub next_rto: Time,
    /// The first byte resent (`snd_una`; 0 for the SYN).
    pub seq: u64,
    /// The congestion window after the expiry, bytes.
    pub cwnd: u64,
    /// The slow-start threshold after the expiry, bytes.
    pub ssthresh: u64,
}

/// A window-trace row: (time, cwnd, ssthresh, (data timeouts, fast
/// retransmits) so far).
pub type CwndRow = (Time, u64, u64, (u64, u64));

/// An LT-TCP block-trace row: (time, segment size, cwnd, k, P).
pub type MssRow = (Time, u32, u64, u16, u16);

/// The recorder. Off by default.
#[derive(Debug, Default)]
pub(super) struct SenderTrace {
    on: bool,
    /// The (cwnd, ssthresh) of the last window row: a row is written on a
    /// change only, unless [`Self::force_cwnd_row`] asks for the next one.
    last_cwnd: Option<(u64, u64)>,
    cwnd: Vec<CwndRow>,
    sent: Vec<(Time, u64, bool)>,
    rtt: Vec<RttRow>,
    rto: Vec<RtoRow>,
    erasure: Vec<(Time, f64, f64)>,
    mss: Vec<MssRow>,
}

impl SenderTrace {
    /// Turn recording on or off; turning it on writes the next window row
    /// whatever it holds.
    pub(super) fn set(&mut self, on: bool) {
        self.on = on;
        if on {
            self.last_cwnd = None;
        }
    }

    /// The next window row is written even if the window did not change (a
    /// timeout or a recovery entry shows in the trace's counts).
    pub(super) fn force_cwnd_row(&mut self) {
        self.last_cwnd = None;
    }

    /// The window now; a row if it changed since the last row.
    pub(super) fn cwnd(&mut self, now: Time, cwnd: u64, ssthresh: u64, counts: (u64, u64)) {
        if !self.on {
            return;
        }
        let cur = (cwnd, ssthresh);
        if self.last_cwnd != Some(cur) {
            self.last_cwnd = Some(cur);
            self.cwnd.push((now, cwnd, ssthresh, counts));
        }
    }

    /// A data segment left at `now` (`retransmit`: not its first copy).
    pub(super) fn sent(&mut self, now: Time, seq: u64, retransmit: bool) {
        if self.on {
            self.sent.push((now, seq, retransmit));
        }
    }

    /// An RTT sample (the row is built only while recording).
    pub(super) fn rtt(&mut self, row: impl FnOnce() -> RttRow) {
        if self.on {
            self.rtt.push(row());
        }
    }

    /// A retransmission-timer expiry (the row is built only while recording).
    pub(super) fn rto(&mut self, row: impl FnOnce() -> RtoRow) {
        if self.on {
            self.rto.push(row());
        }
    }

    /// LT-TCP: a window's erasure rate `new_l` and the estimate `e` in use.
    pub(super) fn erasure(&mut self, now: Time, new_l: f64, e: f64) {
        if self.on {
            self.erasure.push((now, new_l, e));
        }
    }

    /// LT-TCP: a block was planned.
    pub(super) fn block(&mut self, row: MssRow) {
        if self.on {
            self.mss.push(row);
        }
    }

    pub(super) fn take_cwnd(&mut self) -> Vec<CwndRow> {
        std::mem::take(&mut self.cwnd)
    }

    pub(super) fn take_sent(&mut self) -> Vec<(Time, u64, bool)> {
        std::mem::take(&mut self.sent)
    }

    pub(super) fn take_rtt(&mut self) -> Vec<RttRow> {
        std::mem::take(&mut self.rtt)
    }

    pub(super) fn take_rto(&mut self) -> Vec<RtoRow> {
        std::mem::take(&mut self.rto)
    }

    pub(super) fn take_erasure(&mut self) -> Vec<(Time, f64, f64)> {
        std::mem::take(&mut self.erasure)
    }

    pub(super) fn take_mss(&mut self) -> Vec<MssRow> {
        std::mem::take(&mut self.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_records_nothing_and_on_records_changes_only() {
        let mut t = SenderTrace::default();
        let at = Time::from_millis(1);
        t.cwnd(at, 10, 20, (0, 0));
        t.sent(at, 0, false);
        t.rtt(|| panic!("a row is not built while off"));
        assert!(t.take_cwnd().is_empty() && t.take_sent().is_empty());
        t.set(true);
        t.cwnd(at, 10, 20, (0, 0));
        t.cwnd(at, 10, 20, (0, 0));
        t.cwnd(at, 11, 20, (0, 0));
        t.force_cwnd_row();
        t.cwnd(at, 11, 20, (1, 0));
        let rows = t.take_cwnd();
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[2].3, (1, 0));
        t.sent(at, 5, true);
        assert_eq!(t.take_sent(), vec![(at, 5, true)]);
        assert!(t.take_sent().is_empty(), "take empties the trace");
    }
}
