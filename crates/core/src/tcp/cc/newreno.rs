//! Standard TCP AIMD (RFC 5681): slow start, congestion avoidance, halving.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CcModel, CongestionControl, Signal, Window};
use crate::config::Result;
use crate::time::Time;

/// `cc = "newreno"` (or `"reno"`): no parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRenoConfig {}

/// `cc = "reno"`: Linux's name for the same algorithm as `"newreno"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenoConfig {}

impl CcModel for NewRenoConfig {
    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(NewRenoCc::default())
    }
}

impl CcModel for RenoConfig {
    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(NewRenoCc::default())
    }
}

/// RFC 5681's growth on an ACK of `acked` new bytes. Per ACK (`abc`
/// false): slow start `cwnd += min(acked, mss)`, avoidance `cwnd +=
/// max(1, mss²/cwnd)`. By the bytes acknowledged (`abc`, RFC 3465 as Linux's
/// `tcp_slow_start` and `tcp_cong_avoid_ai` count segments): slow start
/// `cwnd += acked` up to ssthresh, the rest of the ACK in avoidance, there
/// `cwnd += max(1, acked·mss/cwnd)`.
pub fn reno_grow(w: &mut Window, acked: u64, abc: bool) {
    if acked == 0 {
        return;
    }
    let mut acked = acked;
    if w.cwnd < w.ssthresh {
        if !abc {
            w.cwnd += acked.min(w.mss);
            return;
        }
        let step = acked.min(w.ssthresh - w.cwnd);
        w.cwnd += step;
        acked -= step;
        if acked == 0 {
            return;
        }
    }
    let per = if abc { acked } else { w.mss };
    w.cwnd += (per * w.mss / w.cwnd.max(1)).max(1);
}

/// RFC 5681 window arithmetic ("NewReno" congestion control in Linux terms).
///
/// * slow start (`cwnd < ssthresh`): `cwnd += min(acked, mss)` per ACK;
/// * congestion avoidance: `cwnd += max(1, mss·mss / cwnd)` per ACK of new data;
/// * with `abc` (RFC 3465, as Linux), both by the bytes acknowledged ([`reno_grow`]);
/// * fast retransmit or ECN: `ssthresh = max(flight / 2, 2·mss)`, `cwnd = ssthresh`;
/// * timeout: `ssthresh = max(flight / 2, 2·mss)`, `cwnd = mss` (loss window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewRenoCc {
    /// Growth by the bytes acknowledged ([`CongestionControl::set_abc`]).
    pub abc: bool,
}

impl CongestionControl for NewRenoCc {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn set_abc(&mut self, on: bool) {
        self.abc = on;
    }

    fn on_ack(&mut self, w: &mut Window, acked: u64, _rtt: Option<Time>, _now: Time) {
        reno_grow(w, acked, self.abc);
    }

    fn on_congestion(&mut self, w: &mut Window, signal: Signal, flight: u64, _now: Time) {
        w.ssthresh = (flight / 2).max(2 * w.mss);
        w.cwnd = match signal {
            Signal::FastRetransmit | Signal::Ecn => w.ssthresh,
            Signal::Timeout => w.mss,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(cwnd: u64, ssthresh: u64) -> Window {
        Window {
            cwnd,
            ssthresh,
            mss: 1000,
        }
    }

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut w = win(2000, u64::MAX / 2);
        NewRenoCc::default().on_ack(&mut w, 1000, None, Time::ZERO);
        assert_eq!(w.cwnd, 3000);
        NewRenoCc::default().on_ack(&mut w, 5000, None, Time::ZERO);
        assert_eq!(w.cwnd, 4000);
        NewRenoCc::default().on_ack(&mut w, 300, None, Time::ZERO);
        assert_eq!(w.cwnd, 4300);
    }

    #[test]
    fn congestion_avoidance_adds_mss_squared_over_cwnd() {
        let mut w = win(10_000, 10_000);
        NewRenoCc::default().on_ack(&mut w, 1000, None, Time::ZERO);
        assert_eq!(w.cwnd, 10_100);
        let mut big = win(2_000_000, 1000);
        NewRenoCc::default().on_ack(&mut big, 1000, None, Time::ZERO);
        assert_eq!(big.cwnd, 2_000_001, "at least one byte");
    }

    /// RFC 3465 as Linux (`abc`): slow start by the bytes acknowledged up to
    /// ssthresh, the rest of the ACK in avoidance; avoidance by
    /// acked·mss/cwnd. Without it, one MSS per ACK as above.
    #[test]
    fn abc_counts_the_bytes_acknowledged() {
        let mut cc = NewRenoCc { abc: true };
        let mut w = win(2000, 5500);
        cc.on_ack(&mut w, 2000, None, Time::ZERO);
        assert_eq!(w.cwnd, 4000, "two segments acked: +2 MSS");
        // 1500 to ssthresh, 500 left in avoidance: + 500·1000/5500 = 90.
        cc.on_ack(&mut w, 2000, None, Time::ZERO);
        assert_eq!(w.cwnd, 5500 + 90);
        let mut w = win(10_000, 10_000);
        cc.on_ack(&mut w, 2000, None, Time::ZERO);
        assert_eq!(w.cwnd, 10_200, "avoidance: 2 segments, 2·MSS²/cwnd");
        let mut per_ack = NewRenoCc::default();
        let mut w = win(10_000, 10_000);
        per_ack.on_ack(&mut w, 2000, None, Time::ZERO);
        assert_eq!(w.cwnd, 10_100, "per ACK: MSS²/cwnd");
    }

    #[test]
    fn responses() {
        let mut w = win(20_000, u64::MAX / 2);
        NewRenoCc::default().on_congestion(&mut w, Signal::FastRetransmit, 18_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (9000, 9000));
        NewRenoCc::default().on_congestion(&mut w, Signal::Ecn, 3000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (2000, 2000));
        let mut w = win(20_000, u64::MAX / 2);
        NewRenoCc::default().on_congestion(&mut w, Signal::Timeout, 20_000, Time::ZERO);
        assert_eq!((w.cwnd, w.ssthresh), (1000, 10_000));
    }
}
