//! ns-3.44's sender-side ECN state for [`TcpConfig::cwr_per_echo`]
//! (`src/internet/model/tcp-socket-base.cc` at tag ns-3.44): when a data
//! segment carries CWR.
//!
//! An ACK of new data with ECE enters `ECN_ECE_RCVD` and records its
//! acknowledgment number (`m_ecnEchoSeq`, `ReceivedAck` 1908–1924); an ACK
//! without ECE leaves that state (1925–1929). A new data segment carries CWR
//! only in `ECN_ECE_RCVD` and only when the echo acknowledges data beyond
//! the segment that carried the previous CWR (`m_ecnEchoSeq > m_ecnCWRSeq`,
//! `SendDataPacket` 3233–3241), so one CWR is in flight at a time: echoes of
//! marks made before the receiver saw it bring no second CWR, and a mark
//! after it keeps the receiver echoing for a round trip until the next one.
//! RFC 3168 §6.1.2 and Linux send CWR once per window reduction instead.
//!
//! [`TcpConfig::cwr_per_echo`]: super::config::TcpConfig::cwr_per_echo

/// The state (`m_ecnState` as far as the sender's CWR is concerned,
/// `m_ecnEchoSeq`, `m_ecnCWRSeq`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Ns3EceState {
    /// `ECN_ECE_RCVD`: an echo not yet answered.
    rcvd: bool,
    /// The acknowledgment number of the latest echo of new data.
    echo_seq: u64,
    /// The first sequence number of the last segment sent with CWR.
    cwr_seq: u64,
}

impl Ns3EceState {
    /// An ACK of new data, acknowledging up to `ack`, carried ECE.
    pub(crate) fn on_echo(&mut self, ack: u64) {
        self.rcvd = true;
        self.echo_seq = self.echo_seq.max(ack);
    }

    /// An ACK without ECE arrived.
    pub(crate) fn on_no_echo(&mut self) {
        self.rcvd = false;
    }

    /// A new data segment starting at `seq` goes out: whether it carries
    /// CWR (and, if so, the state moves to `ECN_CWR_SENT`).
    pub(crate) fn cwr_flag(&mut self, seq: u64) -> bool {
        if self.rcvd && self.echo_seq > self.cwr_seq {
            self.rcvd = false;
            self.cwr_seq = seq;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cwr_in_flight() {
        let mut s = Ns3EceState::default();
        assert!(!s.cwr_flag(0), "no echo, no CWR");
        s.on_echo(1000);
        assert!(s.cwr_flag(5000), "the first echo is answered");
        assert!(!s.cwr_flag(5500), "once");
        // Echoes of marks on segments before the CWR segment: no new CWR.
        s.on_echo(3000);
        assert!(!s.cwr_flag(6000));
        s.on_echo(5000);
        assert!(
            !s.cwr_flag(6500),
            "5000 does not acknowledge the CWR segment"
        );
        // An echo acknowledging the CWR segment: the receiver saw it and
        // still echoes, so a new CWR goes out.
        s.on_echo(5500);
        assert!(s.cwr_flag(7000));
        assert!(!s.cwr_flag(7500));
    }

    #[test]
    fn an_ack_without_echo_cancels_the_pending_cwr() {
        let mut s = Ns3EceState::default();
        s.on_echo(1000);
        s.on_no_echo();
        assert!(!s.cwr_flag(2000), "ECN_ECE_RCVD left before data went out");
        s.on_echo(1500);
        assert!(s.cwr_flag(2000));
    }
}
