//! Two namespaces joined by a user-space forwarder between their TUN devices:
//! a kernel TCP connection crosses it, and nothing is left afterwards.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use linklab_emu::netns::NetNs;
use linklab_emu::tun::Tun;

fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() == 0 };
    root && std::path::Path::new("/dev/net/tun").exists()
}

#[test]
fn tcp_crosses_a_user_space_forwarder_and_nothing_is_left() {
    if !privileged() {
        println!("SKIP: needs root and /dev/net/tun");
        return;
    }
    let before = Command::new("ip")
        .args(["-o", "link"])
        .output()
        .unwrap()
        .stdout;
    let (a_addr, b_addr) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 1, 1));
    {
        let (na, nb) = (NetNs::new().unwrap(), NetNs::new().unwrap());
        assert_ne!(na.id().unwrap(), nb.id().unwrap());
        let mut ta = Tun::open(&na, "llab0", a_addr).unwrap();
        let mut tb = Tun::open(&nb, "llab0", b_addr).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        let fwd = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let mut moved = 0u64;
            let deadline = Instant::now() + Duration::from_secs(20);
            while !halt.load(Ordering::Relaxed) && Instant::now() < deadline {
                let mut idle = true;
                while let Some(n) = ta.recv(&mut buf).unwrap() {
                    tb.send(&buf[..n]).unwrap();
                    moved += 1;
                    idle = false;
                }
                while let Some(n) = tb.recv(&mut buf).unwrap() {
                    ta.send(&buf[..n]).unwrap();
                    moved += 1;
                    idle = false;
                }
                if idle {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            moved
        });
        let server = nb
            .spawn(move || {
                let l = TcpListener::bind(SocketAddrV4::new(b_addr, 5001))?;
                let (mut s, _) = l.accept()?;
                let mut got = Vec::new();
                s.read_to_end(&mut got)?;
                Ok(got.len())
            })
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let sent = na
            .run(move || {
                let mut s = TcpStream::connect_timeout(
                    &SocketAddrV4::new(b_addr, 5001).into(),
                    Duration::from_secs(5),
                )?;
                let data = vec![7u8; 1 << 20];
                s.write_all(&data)?;
                Ok(data.len())
            })
            .unwrap();
        let got = server.join().unwrap().unwrap();
        stop.store(true, Ordering::Relaxed);
        let moved = fwd.join().unwrap();
        assert_eq!(got, sent);
        assert!(moved > 700, "{moved} packets forwarded");
        // The host sees none of this.
        let during = Command::new("ip")
            .args(["-o", "link"])
            .output()
            .unwrap()
            .stdout;
        assert!(!String::from_utf8_lossy(&during).contains("llab0"));
    }
    let after = Command::new("ip")
        .args(["-o", "link"])
        .output()
        .unwrap()
        .stdout;
    assert_eq!(before, after);
    let ns = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap()
        .stdout;
    assert!(ns.is_empty(), "{}", String::from_utf8_lossy(&ns));
}

#[test]
fn addresses_outside_the_benchmarking_range_are_refused() {
    assert!(linklab_emu::tun::in_range(Ipv4Addr::new(198, 19, 255, 254)));
    assert!(!linklab_emu::tun::in_range(Ipv4Addr::new(198, 20, 0, 1)));
    assert!(!linklab_emu::tun::in_range(Ipv4Addr::new(10, 0, 0, 1)));
    if !privileged() {
        return;
    }
    let ns = NetNs::new().unwrap();
    let e = Tun::open(&ns, "llab0", Ipv4Addr::new(10, 0, 0, 1)).unwrap_err();
    assert!(e.to_string().contains("198.18.0.0/15"), "{e}");
}

/// Bind mounts of namespaces (`nsfs`) on the host: what would keep one alive
/// after its last task and file descriptor are gone.
fn nsfs_mounts() -> usize {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(" nsfs "))
        .count()
}

#[test]
fn a_killed_emulator_leaves_nothing() {
    if std::env::var_os("LINKLAB_EMU_HOLD").is_some() {
        // The child: a namespace with a TUN device, then wait to be killed.
        let ns = NetNs::new().unwrap();
        let _tun = Tun::open(&ns, "llab0", Ipv4Addr::new(198, 18, 0, 1)).unwrap();
        println!("ready {}", ns.id().unwrap());
        std::thread::sleep(Duration::from_secs(30));
        return;
    }
    if !privileged() {
        println!("SKIP: needs root and /dev/net/tun");
        return;
    }
    use std::io::BufRead;
    let mounts = nsfs_mounts();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_killed_emulator_leaves_nothing",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("LINKLAB_EMU_HOLD", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.is_ok_and(|l| l.contains("ready "))));
    // The child's namespace is held only by its file descriptor: not named,
    // not mounted.
    assert_eq!(nsfs_mounts(), mounts);
    let named = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap()
        .stdout;
    assert!(named.is_empty(), "{}", String::from_utf8_lossy(&named));
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    // No task and no descriptor is left, so the kernel frees the namespace and
    // its TUN device.
    assert!(!std::path::Path::new(&format!("/proc/{}", child.id())).exists());
    assert_eq!(nsfs_mounts(), mounts);
}

/// Live (not zombie) processes whose command line holds `token`.
fn live_with(token: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let (Ok(cmd), Ok(stat)) = (
            std::fs::read(p.join("cmdline")),
            std::fs::read_to_string(p.join("stat")),
        ) else {
            continue;
        };
        let state = stat.rsplit_once(") ").map(|(_, r)| r.as_bytes()[0]);
        if String::from_utf8_lossy(&cmd).contains(token) && state != Some(b'Z') {
            out.push(stat);
        }
    }
    out
}

#[test]
fn a_supervised_command_takes_everything_it_started_with_it() {
    if !privileged() {
        println!("SKIP: needs root and /dev/net/tun");
        return;
    }
    let ns = NetNs::new().unwrap();
    let token = format!("{}.{}", 300 + std::process::id() % 100, std::process::id());
    // It ends by itself with status 3, leaving a background job: the job dies
    // with it (the command's init exits, the kernel kills the rest).
    let stop = Arc::new(AtomicBool::new(false));
    let line = format!("sleep {token} & exit 3");
    let ended = ns
        .supervise("sh", &["-c", &line], &[], stop.clone())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(ended.status.and_then(|s| s.code()), Some(3));
    assert!(!ended.killed && ended.at.is_some());
    assert_eq!(live_with(&token), Vec::<String>::new());
    // Still running when told to stop: killed, with everything under it.
    let line = format!("sleep {token} & sleep {token}");
    let h = ns
        .supervise("sh", &["-c", &line], &[], stop.clone())
        .unwrap();
    let t = Instant::now();
    // sh and its two sleeps.
    while live_with(&token).len() < 3 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(live_with(&token).len(), 3);
    stop.store(true, Ordering::Relaxed);
    let ended = h.join().unwrap();
    assert!(ended.killed && ended.at.is_none());
    assert_eq!(live_with(&token), Vec::<String>::new());
    // A program that cannot be started is an error from `supervise` itself.
    let err = ns.supervise("/nonexistent/x", &[], &[], stop).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}
