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
