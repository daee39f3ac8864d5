//! TUN devices (`IFF_TUN | IFF_NO_PI`): raw IPv4 packets in and out.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

use crate::netns::NetNs;

/// The benchmarking range every address must come from (RFC 2544).
pub const RANGE: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);

/// Whether `a` lies in 198.18.0.0/15.
pub fn in_range(a: Ipv4Addr) -> bool {
    u32::from(a) >> (32 - RANGE.1) == u32::from(RANGE.0) >> (32 - RANGE.1)
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// A TUN device inside a namespace, with an address and a route to the
/// whole benchmarking range over it.
#[derive(Debug)]
pub struct Tun {
    file: File,
    name: String,
    addr: Ipv4Addr,
}

impl Tun {
    /// Create TUN device `name` in `ns` with address `addr`/32, `lo` and the
    /// device up, and 198.18.0.0/15 routed over it. Non-blocking.
    pub fn open(ns: &NetNs, name: &str, addr: Ipv4Addr) -> io::Result<Tun> {
        if !in_range(addr) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{addr} is outside 198.18.0.0/15; the emulator uses only that range"),
            ));
        }
        if name.is_empty() || name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bad device name",
            ));
        }
        let dev = name.to_string();
        let file = ns.run(move || {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open("/dev/net/tun")?;
            let mut req = IfReq {
                name: [0; libc::IFNAMSIZ],
                flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
                _pad: [0; 22],
            };
            req.name[..dev.len()].copy_from_slice(dev.as_bytes());
            // SAFETY: TUNSETIFF reads an ifreq we own for the call's duration.
            if unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(file)
        })?;
        let cidr = format!("{addr}/32");
        let range = format!("{}/{}", RANGE.0, RANGE.1);
        ns.ip(&["link", "set", "lo", "up"])?;
        ns.ip(&["addr", "add", &cidr, "dev", name])?;
        ns.ip(&["link", "set", name, "up"])?;
        ns.ip(&[
            "route",
            "add",
            &range,
            "dev",
            name,
            "src",
            &addr.to_string(),
        ])?;
        Ok(Tun {
            file,
            name: name.to_string(),
            addr,
        })
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its address.
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// Packets the kernel dropped at this device (its `tx_dropped`: packets
    /// the stack sent that found the device's queue full because the emulator
    /// did not read them in time; and `rx_dropped`: packets the emulator wrote
    /// that the stack refused), read with `ip -s -j link` inside `ns`.
    pub fn kernel_drops(&self, ns: &NetNs) -> io::Result<u64> {
        let out = ns
            .command("ip")?
            .args(["-s", "-j", "link", "show", "dev", &self.name])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |dir: &str| -> io::Result<u64> {
            // ..."stats64":{"rx":{..."dropped":N,...},"tx":{..."dropped":N,...}}
            let at = text.find(&format!("\"{dir}\":{{")).ok_or_else(|| {
                io::Error::other(format!("no {dir} statistics for {}", self.name))
            })?;
            let rest = &text[at..];
            let d = rest
                .find("\"dropped\":")
                .ok_or_else(|| io::Error::other("no dropped field"))?;
            let digits: String = rest[d + 10..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits
                .parse()
                .map_err(|_| io::Error::other("bad dropped field"))
        };
        Ok(field("rx")? + field("tx")?)
    }

    /// Read one packet into `buf`; `Ok(None)` when none is waiting.
    pub fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match self.file.read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Write one packet.
    pub fn send(&mut self, pkt: &[u8]) -> io::Result<()> {
        self.file.write_all(pkt)
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}
