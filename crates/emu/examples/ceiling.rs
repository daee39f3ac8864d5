//! Throughput ceiling and timing error of the bridge: one kernel CUBIC flow
//! between two namespaces through a wired link of the given rate (default
//! 10 Gbit/s) and 1 ms one-way delay, for a few seconds. Needs root.
//!
//!     cargo run --release -p linklab-emu --example ceiling -- [RATE_MBIT] [SECONDS]

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use linklab_core::config::Rate;
use linklab_core::link::{LinkKind, WiredLinkConfig};
use linklab_core::time::Time;
use linklab_emu::fabric::Fabric;
use linklab_emu::netns::NetNs;
use linklab_emu::tun::Tun;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mbit: u64 = args.get(1).and_then(|x| x.parse().ok()).unwrap_or(10_000);
    let secs: f64 = args.get(2).and_then(|x| x.parse().ok()).unwrap_or(4.0);
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
    let (na, nb) = (NetNs::new()?, NetNs::new()?);
    let link = WiredLinkConfig::new("a", "b")
        .rate(Rate::from_bps(mbit * 1_000_000).expect("rate"))
        .delay(Time::from_millis(1))
        .build("a", "b", 1)
        .expect("link");
    let mut br = Fabric::pair(
        Tun::open(&na, "llab0", a)?,
        Tun::open(&nb, "llab0", b)?,
        link,
    );
    let sink = nb.spawn(move || {
        let l = TcpListener::bind(SocketAddrV4::new(b, 5001))?;
        let (mut s, _) = l.accept()?;
        let mut buf = vec![0u8; 1 << 18];
        let (mut got, t) = (0usize, Instant::now());
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            got += n;
        }
        Ok(got as f64 * 8.0 / t.elapsed().as_secs_f64())
    })?;
    let source = na.spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        let mut s = TcpStream::connect(SocketAddrV4::new(b, 5001))?;
        linklab_emu::sock::set_congestion(&s, "cubic")?;
        let data = vec![1u8; 1 << 18];
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs_f64(secs) {
            s.write_all(&data)?;
        }
        Ok(())
    })?;
    br.run(Duration::from_secs_f64(secs + 0.5))?;
    source.join().expect("source")?;
    let goodput = sink.join().expect("sink")?;
    let te = br.stats.timing_error();
    let drops = br.tuns()[0].1.kernel_drops(&na)? + br.tuns()[1].1.kernel_drops(&nb)?;
    println!(
        "{{\"rate_mbit\": {mbit}, \"goodput_mbit\": {:.1}, \"packets\": {}, \"link_drops\": {}, \"tun_drops\": {drops}, \"timing_error_us\": {{\"p50\": {:.0}, \"p99\": {:.0}, \"p999\": {:.0}, \"max\": {:.0}}}}}",
        goodput / 1e6,
        br.stats.lateness_ns.len(),
        br.stats.dropped,
        te.p50 * 1e6,
        te.p99 * 1e6,
        te.p999 * 1e6,
        te.max * 1e6
    );
    Ok(())
}
