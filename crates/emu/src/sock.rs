//! Socket settings the emulator applies to kernel connections.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Set the kernel congestion control of `s` (`TCP_CONGESTION`), e.g.
/// `"cubic"`, `"reno"`, `"bbr"`; an error names an algorithm the kernel lacks.
pub fn set_congestion(s: &TcpStream, name: &str) -> io::Result<()> {
    // SAFETY: TCP_CONGESTION reads `name.len()` bytes from a buffer we own.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("congestion control {name:?} is not available in this kernel: {e}"),
        ));
    }
    Ok(())
}

#[allow(missing_docs)] // the kernel's field names, documented in tcp.h
/// The kernel's `struct tcp_info` (include/uapi/linux/tcp.h) up to
/// `tcpi_total_rto_time` (Linux 6.7); an older kernel fills less of it and
/// [`tcp_info`] reports how much.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawTcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub app_limited: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
}

/// Byte offset of `total_rto` in [`RawTcpInfo`]: a kernel that fills less
/// than this plus 8 bytes does not count timeouts.
const RTO_FIELDS_END: usize = std::mem::offset_of!(RawTcpInfo, total_rto_time) + 4;

/// The connection's `TCP_INFO`, and whether the kernel filled the timeout
/// counters (`total_rto`, `total_rto_recoveries`; Linux 6.7 and later).
pub fn tcp_info(s: &TcpStream) -> io::Result<(RawTcpInfo, bool)> {
    let mut info = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into our struct.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut RawTcpInfo).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize >= RTO_FIELDS_END))
}

/// Make the kernel pace `s` whatever its congestion control: a maximum
/// pacing rate (`SO_MAX_PACING_RATE`) other than "unlimited" marks the socket
/// as needing TCP's internal pacing; the rate set here (2^64 − 2 bytes/s)
/// never binds, so the pace is the kernel's own (`tcp_update_pacing_rate`).
pub fn set_pacing(s: &TcpStream) -> io::Result<()> {
    let v: u64 = u64::MAX - 1;
    // SAFETY: setting a u64 option on our socket.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&v as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A TCP connection to `to` whose segments carry at most `mss` payload
/// bytes (`TCP_MAXSEG`, set before the SYN so that both ends use it), whose
/// congestion control is `cc` and which the kernel paces when `pacing`
/// ([`set_pacing`]); waits at most `timeout` for the handshake.
pub fn connect(
    to: std::net::SocketAddrV4,
    cc: &str,
    mss: Option<u32>,
    pacing: bool,
    timeout: std::time::Duration,
) -> io::Result<TcpStream> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: a plain socket call; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let stream = TcpStream::from(owned);
    set_congestion(&stream, cc)?;
    if pacing {
        set_pacing(&stream)?;
    }
    if let Some(mss) = mss {
        let v = mss as libc::c_int;
        // SAFETY: setting an int option on our socket.
        let r = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    stream.set_write_timeout(Some(timeout.max(std::time::Duration::from_millis(1))))?;
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*to.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: connecting our socket to an address we own (SO_SNDTIMEO bounds the wait).
    let r = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stream)
}
