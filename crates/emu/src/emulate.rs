//! A scenario run live (`linklab emulate`): the scenario's links are built
//! exactly as the simulator builds them (same loader, same seed), every node
//! at the end of a flow gets a kernel (an anonymous namespace with a TUN
//! device at 198.18.0.k), and the [`Fabric`] carries their packets through the
//! links in real time. Traffic is a kernel TCP connection per `[[flows]]`
//! entry (the built-in bulk sender and receiver, with the flow's congestion
//! control set per socket), or commands the user runs inside the namespaces.
//! The result is the summary of `linklab run` (goodput measured at the
//! receivers, the links' and queues' own counters) plus the emulation's
//! timing error and TUN drops, and a `TCP_INFO` trace of every connection.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpListener};
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use linklab_core::api::RunParts;
use linklab_core::link::{Dir, Link};
use linklab_core::metrics::histogram::Histogram;
use linklab_core::net::summary::link_summaries;
use linklab_core::net::{FlowSpec, NetLink};
use linklab_core::packet::NodeId;
use linklab_core::tcp::App;
use linklab_core::time::Time;
use serde_json::{json, Value};

use crate::fabric::{Fabric, Record};
use crate::netns::{Ended, NetNs};
use crate::sock::{connect, tcp_info, RawTcpInfo};
use crate::tun::Tun;

/// Most kernels (namespaces) one emulation makes.
pub const MAX_KERNELS: usize = 64;
/// Most built-in flows (each is two threads).
pub const MAX_FLOWS: usize = 128;
/// Longest emulation.
pub const MAX_DURATION: Time = Time(3_600_000_000_000);
/// First port of the built-in receivers (flow f listens on `PORT_BASE + f`).
pub const PORT_BASE: u16 = 10_000;

/// How an emulation is driven.
#[derive(Clone, Debug)]
pub struct Options {
    /// Run this long instead of the scenario's `duration`.
    pub duration: Option<Time>,
    /// Record every arrival and decision for replay.
    pub record: bool,
    /// Commands to run instead of the built-in traffic: (node name, shell
    /// command line), each in that node's namespace.
    pub commands: Vec<(String, String)>,
    /// An interactive shell in this node's namespace instead of the
    /// built-in traffic; the run ends when it exits (or at the duration).
    pub shell: Option<String>,
    /// The command whose end ends the run (the node name it was given in
    /// `commands`, or `"shell"`); the others still running are killed then.
    /// `None`: the run ends when the last one ends.
    pub lead: Option<String>,
    /// `TCP_INFO` sampling interval of the built-in senders.
    pub info_interval: Duration,
    /// Set to end the run early (Ctrl-C); the summary covers the time run.
    pub stop: Arc<AtomicBool>,
    /// Capture a node's traffic, as its kernel sent and received it: (node
    /// name, or "a"/"b"; the pcap file to write, created or truncated).
    pub pcap: Vec<(String, std::path::PathBuf)>,
    /// Leave the kernels' TCP settings as Linux ships them instead of
    /// mapping the scenario's `[tcp]` onto them ([`KernelTcp`]).
    pub linux_defaults: bool,
    /// Kernel settings beyond the scenario's `[tcp]`, `(key, value)`, for
    /// experiments that change one thing on the kernel's side
    /// ([`KernelKnobs`]): a sysctl under `net.ipv4.` (`net.ipv4.tcp_recovery`),
    /// `quickack`, `pacing` or `gso_max_segs`.
    pub kernel: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            duration: None,
            record: false,
            commands: Vec::new(),
            shell: None,
            lead: None,
            info_interval: Duration::from_millis(10),
            stop: Arc::new(AtomicBool::new(false)),
            linux_defaults: false,
            pcap: Vec::new(),
            kernel: Vec::new(),
        }
    }
}

/// Why an emulation could not run.
#[derive(Debug)]
pub enum Error {
    /// The scenario or the options ask for something emulation cannot do
    /// (the message names it and what is allowed).
    Config(String),
    /// The machine cannot emulate: no root, no `/dev/net/tun`.
    Unavailable(String),
    /// A system call failed during the run.
    Io(io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Config(m) | Error::Unavailable(m) => f.write_str(m),
            Error::Io(e) => write!(f, "emulation failed: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

/// One `TCP_INFO` sample of a built-in sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InfoRow {
    /// Seconds since the start of the emulation.
    pub t: f64,
    /// Flow index.
    pub flow: u32,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments (`u32::MAX >> 1` and above: not set).
    pub ssthresh: u32,
    /// Smoothed RTT, seconds.
    pub rtt_s: f64,
    /// RTT variation, seconds.
    pub rttvar_s: f64,
    /// Segments retransmitted so far.
    pub total_retrans: u32,
    /// Bytes acknowledged so far.
    pub bytes_acked: u64,
    /// Segments sent but not acknowledged.
    pub unacked: u32,
    /// The kernel's delivery-rate estimate, bit/s.
    pub delivery_rate_bps: u64,
    /// Congestion-avoidance state (0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss).
    pub ca_state: u8,
}

/// What an emulation produced.
#[derive(Debug)]
pub struct Output {
    /// The summary, in the shape of `linklab run --json` plus `emulation`.
    pub summary: Value,
    /// `TCP_INFO` samples of the built-in senders, in time order per flow.
    pub tcp_info: Vec<InfoRow>,
    /// Arrivals and decisions, when recording.
    pub record: Option<Record>,
}

/// Whether this process may emulate: root and `/dev/net/tun`.
pub fn check_available() -> Result<(), Error> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Error::Unavailable(
            "emulation needs root (it creates network namespaces and TUN devices); run it as root"
                .into(),
        ));
    }
    let missing = missing_capabilities();
    if !missing.is_empty() {
        return Err(Error::Unavailable(format!(
            "emulation needs the capabilities CAP_SYS_ADMIN (network and PID namespaces) and \
             CAP_NET_ADMIN (TUN devices, addresses, routes); this process runs as root without \
             {} (dropped, e.g. by capsh --drop or setpriv --bounding-set); run it as root with \
             both",
            missing.join(" and ")
        )));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(Error::Unavailable(
            "emulation needs /dev/net/tun, which this machine lacks (load the tun module)".into(),
        ));
    }
    Ok(())
}

/// The capabilities emulation needs that this thread lacks, in its effective
/// set or in its bounding set (without which the `ip` it runs lacks them):
/// `CAP_SYS_ADMIN` (`unshare`, `setns`) and `CAP_NET_ADMIN` (TUN devices,
/// addresses, routes). Empty when `/proc` does not say.
fn missing_capabilities() -> Vec<&'static str> {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    let set = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    let (Some(eff), Some(bnd)) = (set("CapEff:"), set("CapBnd:")) else {
        return Vec::new();
    };
    [(21, "CAP_SYS_ADMIN"), (12, "CAP_NET_ADMIN")]
        .into_iter()
        // Bit numbers of <linux/capability.h>.
        .filter(|&(bit, _)| (eff & bnd) >> bit & 1 == 0)
        .map(|(_, name)| name)
        .collect()
}

/// A refusal of the kernel while the namespaces and devices are made
/// (`EPERM`, `EACCES`: a container or a security module forbids them) as a
/// clean error naming what failed.
fn plumbing(what: &str) -> impl Fn(io::Error) -> Error + '_ {
    move |e| match e.kind() {
        io::ErrorKind::PermissionDenied => Error::Unavailable(format!(
            "emulation cannot {what}: {e}; it needs CAP_SYS_ADMIN and CAP_NET_ADMIN and a \
             system that allows network namespaces and TUN devices (a container or a security \
             module may forbid them)"
        )),
        _ => Error::Io(e),
    }
}

/// The kernel congestion control for a flow's `cc` kind.
fn kernel_cc(kind: &str) -> &str {
    match kind {
        "newreno" | "reno" => "reno",
        other => other,
    }
}

/// The address of kernel `k`: 198.18.0.0 + k + 1.
fn kernel_addr(k: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(198, 18, 0, 0)) + k as u32 + 1)
}

/// What the scenario's flows need from the kernel, checked before anything
/// is created.
fn check_flows(flows: &[FlowSpec], builtin: bool) -> Result<Vec<String>, Error> {
    if builtin && flows.len() > MAX_FLOWS {
        return Err(Error::Config(format!(
            "flows: {} flows; emulation runs at most {MAX_FLOWS} built-in connections",
            flows.len()
        )));
    }
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    let available: Vec<&str> = available.split_whitespace().collect();
    let mut out = Vec::with_capacity(flows.len());
    for (i, f) in flows.iter().enumerate() {
        let kind = f.tcp.cc.kind();
        let cc = kernel_cc(kind);
        if builtin && !available.contains(&cc) {
            return Err(Error::Config(format!(
                "flows[{i}].cc: \"{kind}\" needs the kernel's \"{cc}\", which this kernel lacks; \
                 allowed here: {}",
                available.join(", ")
            )));
        }
        if builtin && (f.tcp.tcp_l || f.tcp.lt.any()) {
            return Err(Error::Config(format!(
                "flows[{i}]: LT-TCP and TCP-L are linklab's own TCP variants; kernel TCP in \
                 emulation has neither (allowed: cc = reno, newreno, cubic, bbr, dctcp, ecn)"
            )));
        }
        out.push(cc.to_string());
    }
    Ok(out)
}

/// The scenario's `[tcp]` as far as Linux has a knob for it, per namespace:
/// SACK (`variant = "sack"`; without it Linux runs NewReno), timestamps and
/// ECN (sysctls of the namespace), the initial window and the minimum RTO
/// (`initcwnd` and `rto_min` of the route over the TUN device). The MSS is
/// set per connection (`TCP_MAXSEG`). Linux has no knob for the rest
/// (delayed ACKs, limited transmit, PRR, RACK, pacing are its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelTcp {
    /// `net.ipv4.tcp_sack`.
    pub sack: bool,
    /// `net.ipv4.tcp_timestamps`.
    pub timestamps: bool,
    /// `net.ipv4.tcp_ecn` = 1 (request ECN) rather than 2 (accept it).
    pub ecn: bool,
    /// `initcwnd` of the route, segments.
    pub initcwnd: u32,
    /// `rto_min` of the route, milliseconds.
    pub rto_min_ms: u64,
}

impl KernelTcp {
    fn of(f: &FlowSpec) -> KernelTcp {
        KernelTcp {
            sack: f.tcp.variant == linklab_core::tcp::Variant::Sack,
            timestamps: f.tcp.timestamps,
            ecn: f.tcp.ecn,
            initcwnd: f.tcp.initial_window.max(1),
            rto_min_ms: (f.tcp.min_rto.as_nanos() / 1_000_000).max(1),
        }
    }

    /// Apply the sysctls to namespace `ns`; the route attributes are
    /// [`KernelTcp::route_attrs`].
    fn apply(&self, ns: &NetNs) -> io::Result<()> {
        let (sack, ts, ecn) = (self.sack, self.timestamps, self.ecn);
        ns.run(move || {
            let set = |key: &str, v: &str| std::fs::write(format!("/proc/sys/net/ipv4/{key}"), v);
            set("tcp_sack", if sack { "1" } else { "0" })?;
            set("tcp_timestamps", if ts { "1" } else { "0" })?;
            set("tcp_ecn", if ecn { "1" } else { "2" })
        })
    }

    /// The attributes of the route over the TUN device (`ip route`).
    fn route_attrs(&self) -> Vec<String> {
        vec![
            "initcwnd".into(),
            self.initcwnd.to_string(),
            "rto_min".into(),
            format!("{}ms", self.rto_min_ms),
        ]
    }
}

/// Kernel settings an experiment changes beyond the scenario's `[tcp]`
/// (`--kernel KEY=VALUE`), applied in every namespace the run makes — never
/// on the host:
///
/// * a sysctl under `net.ipv4.`, written in the namespace (a sysctl the
///   kernel keeps per namespace; the host's are not visible there), e.g.
///   `net.ipv4.tcp_recovery=0` (RACK off), `net.ipv4.tcp_early_retrans=0`
///   (no tail-loss probes), `net.ipv4.tcp_comp_sack_nr=0` (no SACK
///   compression);
/// * `quickack=1`: the route's `quickack` attribute — the receiver ACKs every
///   segment (no delayed ACKs);
/// * `pacing=1`: `SO_MAX_PACING_RATE` on the built-in senders, which makes
///   Linux pace any congestion control (BBR always paces) at
///   `tcp_update_pacing_rate`'s 2 × cwnd / srtt in slow start, 1.2 × after;
/// * `gso_max_segs=N`: at most N segments per GSO packet on the TUN device
///   (1: none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelKnobs {
    /// `(key, value)` of each sysctl, `net.ipv4.…`.
    pub sysctls: Vec<(String, String)>,
    /// The route's `quickack` attribute.
    pub quickack: Option<bool>,
    /// Pace the built-in senders (`SO_MAX_PACING_RATE`).
    pub pacing: bool,
    /// `gso_max_segs` of the TUN device.
    pub gso_max_segs: Option<u32>,
}

impl KernelKnobs {
    /// Parse and check `(key, value)` pairs; the error names the key and
    /// what is allowed.
    pub fn parse(pairs: &[(String, String)]) -> Result<KernelKnobs, Error> {
        const ALLOWED: &str = "a sysctl under net.ipv4. (e.g. net.ipv4.tcp_recovery=0), \
             quickack=0|1, pacing=0|1, gso_max_segs=N";
        let mut out = KernelKnobs::default();
        let flag = |key: &str, v: &str| match v {
            "1" | "true" | "on" => Ok(true),
            "0" | "false" | "off" => Ok(false),
            _ => Err(Error::Config(format!(
                "--kernel {key}={v}: not a switch; allowed: 0 or 1"
            ))),
        };
        for (key, value) in pairs {
            match key.as_str() {
                "quickack" => out.quickack = Some(flag(key, value)?),
                "pacing" => out.pacing = flag(key, value)?,
                "gso_max_segs" => match value.parse::<u32>() {
                    Ok(n) if (1..=65535).contains(&n) => out.gso_max_segs = Some(n),
                    _ => {
                        return Err(Error::Config(format!(
                        "--kernel gso_max_segs={value}: out of range; allowed: 1 to 65535 segments"
                    )))
                    }
                },
                k if k.starts_with("net.ipv4.")
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
                    && !k.contains("..") =>
                {
                    let path = format!("/proc/sys/{}", k.replace('.', "/"));
                    if !std::path::Path::new(&path).is_file() {
                        return Err(Error::Config(format!(
                            "--kernel {k}: this kernel has no such sysctl ({path}); allowed: \
                             {ALLOWED}"
                        )));
                    }
                    if value.is_empty()
                        || !value
                            .bytes()
                            .all(|b| b.is_ascii_graphic() || b == b' ' || b == b'\t')
                    {
                        return Err(Error::Config(format!(
                            "--kernel {k}={value:?}: not printable; allowed: a value of printable characters"
                        )));
                    }
                    out.sysctls.push((k.to_string(), value.clone()));
                }
                _ => {
                    return Err(Error::Config(format!(
                        "--kernel {key}={value}: unknown setting; allowed: {ALLOWED}"
                    )))
                }
            }
        }
        Ok(out)
    }

    /// Whether nothing is changed.
    pub fn is_empty(&self) -> bool {
        *self == KernelKnobs::default()
    }

    /// Write the sysctls in namespace `ns`.
    fn apply(&self, ns: &NetNs) -> io::Result<()> {
        let sysctls = self.sysctls.clone();
        ns.run(move || {
            for (k, v) in &sysctls {
                let path = format!("/proc/sys/{}", k.replace('.', "/"));
                std::fs::write(&path, v).map_err(|e| {
                    let why = if e.kind() == io::ErrorKind::NotFound {
                        "the kernel keeps this sysctl for the host only, not per namespace".into()
                    } else {
                        e.to_string()
                    };
                    io::Error::new(e.kind(), format!("--kernel {k}={v}: {why}"))
                })?;
            }
            Ok(())
        })
    }

    /// The summary's `emulation.kernel_knobs`.
    fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for (k, v) in &self.sysctls {
            m.insert(k.clone(), json!(v));
        }
        if let Some(q) = self.quickack {
            m.insert("quickack".into(), json!(u8::from(q)));
        }
        if self.pacing {
            m.insert("pacing".into(), json!(1));
        }
        if let Some(n) = self.gso_max_segs {
            m.insert("gso_max_segs".into(), json!(n));
        }
        Value::Object(m)
    }
}

/// The kernel settings of every kernel node from the flows that start or
/// end there; an error when two flows at one node disagree.
fn kernel_settings(
    flows: &[FlowSpec],
    nodes: &[String],
) -> Result<BTreeMap<usize, KernelTcp>, Error> {
    let mut out: BTreeMap<usize, (usize, KernelTcp)> = BTreeMap::new();
    for (i, f) in flows.iter().enumerate() {
        let k = KernelTcp::of(f);
        for n in [f.src.0 as usize, f.dst.0 as usize] {
            match out.get(&n) {
                Some(&(j, other)) if other != k => {
                    return Err(Error::Config(format!(
                        "flows[{i}].tcp: differs from flows[{j}] at node \"{}\" in a setting \
                         Linux keeps per namespace (sack, timestamps, ecn, initial window, \
                         min_rto): {k:?} vs {other:?}; give the flows of a node one [tcp], \
                         or emulate with Linux defaults",
                        nodes[n]
                    )));
                }
                Some(_) => {}
                None => {
                    out.insert(n, (i, k));
                }
            }
        }
    }
    Ok(out.into_iter().map(|(n, (_, k))| (n, k)).collect())
}

/// A node name as part of an environment variable name.
fn env_name(node: &str) -> String {
    node.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// Run `parts` (a built scenario) live.
pub fn emulate(parts: RunParts, opts: &Options) -> Result<Output, Error> {
    let net = parts.network;
    if net.cross_layer {
        return Err(Error::Config(
            "links: a cross-layer feed (arq.adaptive) reads linklab's own TCP; emulation runs \
             kernel TCP, so remove the feed to emulate"
                .into(),
        ));
    }
    if net.media > 0 {
        return Err(Error::Config(
            "media: [[media]] streams are simulated only; the live emulator does not run them, \
             so remove them to emulate"
                .into(),
        ));
    }
    if net.workloads {
        return Err(Error::Config(
            "workloads: [[workloads]] (flows arriving during the run) are simulated only; \
             the live emulator runs the [[flows]] entries, so remove the workloads to emulate"
                .into(),
        ));
    }
    if net.paced {
        return Err(Error::Config(
            "flows: rate_cap and on/off applications are simulated only; the live emulator's \
             built-in applications send as fast as TCP takes them, so remove those keys to emulate"
                .into(),
        ));
    }
    if net.monitored {
        return Err(Error::Config(
            "monitor: [monitor] is measured by the simulator only; remove it to emulate".into(),
        ));
    }
    let duration = opts.duration.unwrap_or(parts.duration);
    if duration == Time::ZERO || duration > MAX_DURATION {
        return Err(Error::Config(format!(
            "duration: {duration}; emulation runs in real time, allowed: more than 0 s and at most {MAX_DURATION}"
        )));
    }
    let builtin = opts.commands.is_empty() && opts.shell.is_none();
    let scheduler = scheduler();
    let ccs = check_flows(&net.flows, builtin)?;
    let knobs = KernelKnobs::parse(&opts.kernel)?;
    let settings = if opts.linux_defaults {
        BTreeMap::new()
    } else {
        kernel_settings(&net.flows, &net.nodes)?
    };
    // A node by name; "a" and "b" (when no node has that name) are the
    // first flow's sender and receiver.
    let find = |name: &str, what: &str| -> Result<usize, Error> {
        if let Some(n) = net.nodes.iter().position(|n| n == name) {
            return Ok(n);
        }
        match (name, net.flows.first()) {
            ("a", Some(f)) => return Ok(f.src.0 as usize),
            ("b", Some(f)) => return Ok(f.dst.0 as usize),
            _ => {}
        }
        let shown: Vec<&str> = net.nodes.iter().take(12).map(String::as_str).collect();
        Err(Error::Config(format!(
            "{what}: no node \"{name}\"; allowed: a, b (the first flow's ends) or a node: {}",
            shown.join(", ")
        )))
    };
    // Kernels: every flow endpoint, then every node a command names.
    let mut kernel_nodes: Vec<usize> = Vec::new();
    let mut add = |n: usize| {
        if !kernel_nodes.contains(&n) {
            kernel_nodes.push(n);
        }
    };
    for f in &net.flows {
        add(f.src.0 as usize);
        add(f.dst.0 as usize);
    }
    let mut command_nodes = Vec::new();
    for (node, cmd) in &opts.commands {
        let n = find(node, "--a/--b")?;
        add(n);
        command_nodes.push((node.clone(), n, cmd.clone()));
    }
    let shell_node = match &opts.shell {
        Some(node) => {
            let n = find(node, "--shell")?;
            add(n);
            Some(n)
        }
        None => None,
    };
    if let Some(lead) = &opts.lead {
        let names: Vec<&str> = command_nodes
            .iter()
            .map(|(given, ..)| given.as_str())
            .chain(shell_node.map(|_| "shell"))
            .collect();
        if !names.contains(&lead.as_str()) {
            return Err(Error::Config(format!(
                "lead: \"{lead}\" names no command of this run; allowed: {}",
                if names.is_empty() {
                    "none (the run has no commands)".to_string()
                } else {
                    names
                        .iter()
                        .map(|n| format!("\"{n}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )));
        }
    }
    let mut capture_nodes = Vec::new();
    for (node, path) in &opts.pcap {
        let n = find(node, "--pcap")?;
        if !kernel_nodes.contains(&n) {
            return Err(Error::Config(format!(
                "--pcap: node \"{node}\" has no kernel (it only forwards); allowed: a node that \
                 ends a flow or runs a command"
            )));
        }
        capture_nodes.push((n, path.clone()));
    }
    if kernel_nodes.len() > MAX_KERNELS {
        return Err(Error::Config(format!(
            "flows: {} nodes end flows; emulation makes at most {MAX_KERNELS} namespaces",
            kernel_nodes.len()
        )));
    }
    check_available()?;

    // Namespaces and devices.
    let mut nss = Vec::with_capacity(kernel_nodes.len());
    let mut tuns = Vec::with_capacity(kernel_nodes.len());
    for (k, &n) in kernel_nodes.iter().enumerate() {
        let ns = NetNs::new().map_err(plumbing("create a network namespace"))?;
        let tun = Tun::open(&ns, "ll0", kernel_addr(k)).map_err(plumbing("create a TUN device"))?;
        nss.push(ns);
        tuns.push((n, tun));
    }
    let kernel_of = |n: NodeId| kernel_nodes.iter().position(|&x| x == n.0 as usize);
    let addr_of = |n: NodeId| kernel_addr(kernel_of(n).unwrap_or(0));
    let range = format!("{}/{}", crate::tun::RANGE.0, crate::tun::RANGE.1);
    for (i, &n) in kernel_nodes.iter().enumerate() {
        let mut attrs = Vec::new();
        if let Some(k) = settings.get(&n) {
            k.apply(&nss[i])?;
            attrs.extend(k.route_attrs());
        }
        knobs.apply(&nss[i])?;
        if let Some(q) = knobs.quickack {
            attrs.extend(["quickack".to_string(), u8::from(q).to_string()]);
        }
        if !attrs.is_empty() {
            let addr = kernel_addr(i).to_string();
            let mut args = vec!["route", "change", &range, "dev", "ll0", "src", &addr];
            args.extend(attrs.iter().map(String::as_str));
            nss[i].ip(&args)?;
        }
        if let Some(segs) = knobs.gso_max_segs {
            nss[i].ip(&[
                "link",
                "set",
                "dev",
                "ll0",
                "gso_max_segs",
                &segs.to_string(),
            ])?;
        }
    }
    let mut names = Vec::with_capacity(net.links.len());
    let mut links = Vec::with_capacity(net.links.len());
    for l in net.links {
        let (a, b) = (l.from(Dir::AB).0 as usize, l.to[0].0 as usize);
        names.push((l.names, l.to));
        links.push((a, b, l.model));
    }
    let mut fabric = Fabric::new(net.nodes.len(), links, tuns);
    if opts.record {
        fabric = fabric.recording();
    }
    for (n, path) in &capture_nodes {
        let k = kernel_nodes.iter().position(|x| x == n).unwrap_or(0);
        let file = std::fs::File::create(path)
            .map_err(|e| Error::Config(format!("--pcap: cannot write {}: {e}", path.display())))?;
        fabric.capture(k, file)?;
    }

    // Traffic.
    let start = Instant::now() + Duration::from_millis(20);
    let end = start + Duration::from_nanos(duration.as_nanos());
    let stop = opts.stop.clone();
    let mut receivers = Vec::new();
    let mut senders = Vec::new();
    let mut commands: Vec<(String, usize, String, std::thread::JoinHandle<Ended>)> = Vec::new();
    if builtin {
        for (i, f) in net.flows.iter().enumerate() {
            let dst = addr_of(f.dst);
            let port = PORT_BASE + i as u16;
            fabric.register_flow(dst, port);
            let rx_ns = &nss[kernel_of(f.dst).unwrap_or(0)];
            let listener = rx_ns.run(move || TcpListener::bind(SocketAddrV4::new(dst, port)))?;
            listener.set_nonblocking(true)?;
            let finite = match f.app {
                App::Bytes(n) => Some(n),
                App::Bulk => None,
            };
            let stop_rx = stop.clone();
            receivers.push(std::thread::spawn(move || {
                receive(listener, start, end, finite, &stop_rx)
            }));
            let tx_ns = &nss[kernel_of(f.src).unwrap_or(0)];
            let cc = ccs[i].clone();
            let mss = (!opts.linux_defaults).then_some(f.tcp.mss);
            let pacing = knobs.pacing;
            let (at, until) = (f.start, f.stop);
            let interval = opts.info_interval;
            let stop_tx = stop.clone();
            let flow = i as u32;
            senders.push(tx_ns.spawn(move || {
                send(
                    SendPlan {
                        flow,
                        to: SocketAddrV4::new(dst, port),
                        cc,
                        mss,
                        pacing,
                        start,
                        begin: start + Duration::from_nanos(at.as_nanos()),
                        until: until
                            .map(|u| start + Duration::from_nanos(u.as_nanos()))
                            .unwrap_or(end)
                            .min(end),
                        end,
                        bytes: finite,
                        interval,
                    },
                    &stop_tx,
                )
            })?);
        }
    } else {
        let mut env: Vec<(String, String)> = kernel_nodes
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                (
                    format!("LINKLAB_{}", env_name(&net.nodes[n])),
                    kernel_addr(k).to_string(),
                )
            })
            .collect();
        if let Some(f) = net.flows.first() {
            env.push(("LINKLAB_A".into(), addr_of(f.src).to_string()));
            env.push(("LINKLAB_B".into(), addr_of(f.dst).to_string()));
        }
        // Each command is supervised on a thread of its own; the last one to
        // end stops the run.
        let sh = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
        let mut jobs: Vec<(String, usize, String, bool)> = command_nodes
            .iter()
            .map(|(given, n, line)| (given.clone(), *n, line.clone(), false))
            .collect();
        if let Some(n) = shell_node {
            jobs.push(("shell".into(), n, sh.clone(), true));
        }
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(jobs.len()));
        for (given, n, line, shell) in jobs {
            let k = kernel_nodes.iter().position(|&x| x == n).unwrap_or(0);
            let (program, args): (&str, Vec<&str>) = if shell {
                (&sh, vec![])
            } else {
                ("sh", vec!["-c", &line])
            };
            let own_stop = Arc::new(AtomicBool::new(false));
            let (run_stop, left) = (stop.clone(), running.clone());
            let leads = opts.lead.as_deref() == Some(given.as_str());
            match nss[k].supervise(program, &args, &env, own_stop.clone()) {
                Ok(handle) => {
                    let watch = std::thread::spawn(move || {
                        // Ends this command when the run ends; stops the run
                        // when this is the last command to end, or the lead.
                        while !handle.is_finished() {
                            if run_stop.load(Ordering::Relaxed) {
                                own_stop.store(true, Ordering::Relaxed);
                            }
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        if left.fetch_sub(1, Ordering::AcqRel) == 1 || leads {
                            run_stop.store(true, Ordering::Relaxed);
                        }
                        handle.join().unwrap_or_default()
                    });
                    commands.push((given, n, line, watch));
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    for (.., w) in commands {
                        let _ = w.join();
                    }
                    return Err(Error::Config(if shell {
                        format!(
                            "--shell: cannot start {program} (from $SHELL): {e}; set SHELL to \
                             an installed shell"
                        )
                    } else {
                        format!("command {line:?} at node \"{given}\": cannot start sh: {e}")
                    }));
                }
            }
        }
    }

    std::thread::sleep(start.saturating_duration_since(Instant::now()));
    let ran = fabric.run_from(start, end - start, Some(&stop));
    let elapsed = start.elapsed().min(end - start);
    stop.store(true, Ordering::Relaxed);
    let commands: Vec<Value> = commands
        .into_iter()
        .map(|(given, n, line, w)| {
            let ended = w.join().unwrap_or_default();
            command_json(&given, &net.nodes[n], &line, &ended, start)
        })
        .collect();
    let mut rx_results = Vec::new();
    for r in receivers {
        rx_results.push(
            r.join()
                .map_err(|_| io::Error::other("receiver thread panicked"))??,
        );
    }
    let mut tx_results = Vec::new();
    for s in senders {
        tx_results.push(
            s.join()
                .map_err(|_| io::Error::other("sender thread panicked"))??,
        );
    }
    ran?;
    fabric.finish_captures()?;
    let mut tun_drops = BTreeMap::new();
    for (k, (n, tun)) in fabric.tuns().iter().enumerate() {
        tun_drops.insert(net.nodes[*n].clone(), tun.kernel_drops(&nss[k])?);
    }

    // Summary.
    let secs = elapsed.as_secs_f64();
    let end_t = Time(elapsed.as_nanos() as u64);
    let timing = fabric.stats.timing_error();
    let stats = fabric.stats.clone();
    let traffic = std::mem::take(&mut fabric.traffic);
    let record = fabric.record.take();
    let mut netlinks: Vec<NetLink> = fabric
        .into_links()
        .into_iter()
        .zip(names)
        .map(|(model, (names, to)): (Box<dyn Link>, _)| NetLink { names, to, model })
        .collect();
    let (links, queues) = link_summaries(&mut netlinks, end_t);
    let mut flows = Vec::new();
    let mut tcp_info_rows = Vec::new();
    let (mut all_delay, mut all_jitter) = (Histogram::new(), Histogram::new());
    let mut sums = [0u64; 5]; // delivered, wire bytes, timeouts, episodes, retransmits
    let mut rto_known = true;
    if builtin {
        for (i, f) in net.flows.iter().enumerate() {
            let (delivered, completed) = rx_results[i];
            let tx = &tx_results[i];
            let tr = &traffic[i];
            all_delay.merge(&tr.delay);
            all_jitter.merge(&tr.jitter);
            let info = tx.last;
            rto_known &= tx.rto_known;
            let (timeouts, episodes) = (
                u64::from(info.total_rto),
                u64::from(info.total_rto_recoveries),
            );
            for (s, v) in sums.iter_mut().zip([
                delivered,
                tr.data_bytes,
                timeouts,
                episodes,
                u64::from(info.total_retrans),
            ]) {
                *s += v;
            }
            flows.push(json!({
                "id": i,
                "name": f.name,
                "from": net.nodes[f.src.0 as usize],
                "to": net.nodes[f.dst.0 as usize],
                "cc": ccs[i],
                "goodput_bps": delivered as f64 * 8.0 / secs,
                "delay_mean_s": delay(&tr.delay, None),
                "delay_p50_s": delay(&tr.delay, Some(0.5)),
                "delay_p90_s": delay(&tr.delay, Some(0.9)),
                "delay_p95_s": delay(&tr.delay, Some(0.95)),
                "delay_p99_s": delay(&tr.delay, Some(0.99)),
                "delay_p999_s": delay(&tr.delay, Some(0.999)),
                "delay_max_s": delay(&tr.delay, Some(1.0)),
                "jitter_mean_s": delay(&tr.jitter, None),
                "jitter_p50_s": delay(&tr.jitter, Some(0.5)),
                "jitter_p90_s": delay(&tr.jitter, Some(0.9)),
                "jitter_p99_s": delay(&tr.jitter, Some(0.99)),
                "jitter_p999_s": delay(&tr.jitter, Some(0.999)),
                "timeouts": tx.rto_known.then_some(timeouts),
                "timeout_episodes": tx.rto_known.then_some(episodes),
                "fast_retransmits": Value::Null,
                "retransmits": info.total_retrans,
                "delivered_bytes": delivered,
                "throughput_bps": tr.data_bytes as f64 * 8.0 / secs,
                "ecn_reductions": Value::Null,
                "segments_sent": info.data_segs_out,
                "send_limits": send_limits(&info, tx.connected),
                "rtt": kernel_rtt(&info, tx.connected),
                "completed_s": completed,
                "kernel": {
                    "connected": tx.connected,
                    "cwnd": info.snd_cwnd,
                    "rtt_s": f64::from(info.rtt) * 1e-6,
                    "min_rtt_s": f64::from(info.min_rtt) * 1e-6,
                    "bytes_retrans": info.bytes_retrans,
                    "delivered_ce": info.delivered_ce,
                    "error": tx.error,
                },
            }));
            tcp_info_rows.extend(tx.rows.iter().copied());
        }
    }
    let [delivered, wire, timeouts, episodes, retransmits] = sums;
    let drops_total: u64 = tun_drops.values().sum();
    // Packet-hops as `linklab run` counts them (packets handed over at the far
    // end of a link direction); the run is in real time, so per second of it.
    let hops: u64 = links.iter().map(|l| l.rx_packets).sum();
    let summary = json!({
        "scenario": parts.name,
        "seed": parts.seed,
        "params": parts.params,
        "sim_time_s": secs,
        "events": stats.read.iter().sum::<u64>(),
        "hops": hops,
        "hops_per_s": (secs > 0.0).then(|| hops as f64 / secs),
        "aggregate": {
            "goodput_bps": delivered as f64 * 8.0 / secs,
            "delay_mean_s": delay(&all_delay, None),
            "delay_p50_s": delay(&all_delay, Some(0.5)),
            "delay_p90_s": delay(&all_delay, Some(0.9)),
            "delay_p95_s": delay(&all_delay, Some(0.95)),
            "delay_p99_s": delay(&all_delay, Some(0.99)),
            "delay_p999_s": delay(&all_delay, Some(0.999)),
            "delay_max_s": delay(&all_delay, Some(1.0)),
            "jitter_mean_s": delay(&all_jitter, None),
            "jitter_p50_s": delay(&all_jitter, Some(0.5)),
            "jitter_p90_s": delay(&all_jitter, Some(0.9)),
            "jitter_p99_s": delay(&all_jitter, Some(0.99)),
            "jitter_p999_s": delay(&all_jitter, Some(0.999)),
            "timeouts": (builtin && rto_known).then_some(timeouts),
            "timeout_episodes": (builtin && rto_known).then_some(episodes),
            "fast_retransmits": Value::Null,
            "retransmits": retransmits,
            "delivered_bytes": delivered,
            "throughput_bps": wire as f64 * 8.0 / secs,
        },
        "flows": flows,
        "links": links,
        "queues": queues,
        "emulation": {
            "traffic": if builtin { "builtin" } else if opts.shell.is_some() { "shell" } else { "commands" },
            "commands": commands,
            "nodes": kernel_nodes.iter().enumerate().map(|(k, &n)| (net.nodes[n].clone(), kernel_addr(k).to_string())).collect::<BTreeMap<_, _>>(),
            "timing_error_s": {"p50": timing.p50, "p99": timing.p99, "p999": timing.p999, "max": timing.max},
            "packets_read": stats.read.iter().sum::<u64>(),
            "packets_written": stats.written.iter().sum::<u64>(),
            "link_drops": stats.dropped,
            "refused_corrupt": stats.refused,
            "loop_cpu_s": stats.loop_cpu_ns as f64 * 1e-9,
            "ignored": stats.ignored,
            "unroutable": stats.unroutable,
            "tun_drops": drops_total,
            "tun_drops_by_node": tun_drops,
            "kernel_knobs": knobs.to_json(),
            "scheduler": scheduler,
            "kernel_tcp": settings.iter().map(|(&n, k)| (net.nodes[n].clone(), json!({
                "sack": k.sack,
                "timestamps": k.timestamps,
                "ecn": k.ecn,
                "initcwnd": k.initcwnd,
                "rto_min_ms": k.rto_min_ms,
            }))).collect::<BTreeMap<_, _>>(),
        },
    });
    drop(nss);
    Ok(Output {
        summary,
        tcp_info: tcp_info_rows,
        record,
    })
}

/// How a user command ended, for `emulation.commands`: `name` (as given:
/// a node, `a`, `b` or `shell`), `node`, `command`, `exit_status` (`null`
/// if a signal ended it), `signal`, `ended_s` (seconds into the run when it
/// ended by itself; `null`: still running at the end, then killed),
/// `killed_at_end`, and `failed`: it ended by itself before the end of the
/// run with a status other than 0 or by a signal.
fn command_json(given: &str, node: &str, line: &str, ended: &Ended, start: Instant) -> Value {
    let status = ended.status;
    let code = status.and_then(|s| s.code());
    let signal = status.and_then(|s| s.signal());
    json!({
        "name": given,
        "node": node,
        "command": line,
        "exit_status": code,
        "signal": if ended.killed { None } else { signal },
        "ended_s": ended.at.map(|at| at.saturating_duration_since(start).as_secs_f64()),
        "killed_at_end": ended.killed,
        "failed": !ended.killed && code != Some(0),
    })
}

/// The kernel's send limits of a connection from its last `TCP_INFO`, in
/// the shape of the simulator's `flows[].send_limits`: `busy_s`
/// (`tcpi_busy_time`: the write queue held data), `rwnd_s`
/// (`tcpi_rwnd_limited`), `sender_s` (`tcpi_sndbuf_limited`: the send
/// buffer was full — the application could not hand over more) and `cwnd_s`
/// the rest of the busy time (the congestion window or pacing); `null`
/// for a connection never made.
fn send_limits(info: &RawTcpInfo, connected: bool) -> Value {
    if !connected {
        return Value::Null;
    }
    let us = |v: u64| v as f64 * 1e-6;
    let busy = info.busy_time;
    let rest = busy.saturating_sub(info.rwnd_limited + info.sndbuf_limited);
    json!({
        "busy_s": us(busy),
        "rwnd_s": us(info.rwnd_limited),
        "cwnd_s": us(rest),
        "sender_s": us(info.sndbuf_limited),
        "rwnd_bytes": info.snd_wnd,
        "min_rtt_s": (info.min_rtt > 0).then(|| f64::from(info.min_rtt) * 1e-6),
    })
}

/// The kernel's RTT estimator from a connection's last `TCP_INFO`, in the
/// shape of the simulator's `flows[].rtt`: `srtt_s` (`tcpi_rtt`), `rttvar_s`
/// (`tcpi_rttvar`, Linux's mean deviation) and `rto_s` (`tcpi_rto`); the
/// kernel does not count its samples (`samples` null). `null` for a
/// connection never made.
fn kernel_rtt(info: &RawTcpInfo, connected: bool) -> Value {
    if !connected {
        return Value::Null;
    }
    let us = |v: u32| f64::from(v) * 1e-6;
    json!({
        "samples": Value::Null,
        "srtt_s": us(info.rtt),
        "rttvar_s": us(info.rttvar),
        "rto_s": us(info.rto),
    })
}

/// The scheduling of the calling thread (which the loop and the built-in
/// senders and receivers inherit): `{policy, priority, nice}`, so that a
/// summary says whether the emulator ran at a raised priority.
fn scheduler() -> Value {
    // SAFETY: plain queries of the calling thread's scheduling.
    let (policy, nice) = unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        (libc::sched_getscheduler(0), nice)
    };
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: the kernel writes one sched_param we own.
    unsafe { libc::sched_getparam(0, &mut param) };
    let name = match policy & !libc::SCHED_RESET_ON_FORK {
        libc::SCHED_OTHER => "other",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        _ => "unknown",
    };
    json!({"policy": name, "priority": param.sched_priority, "nice": nice})
}

/// A delay statistic of `h` in seconds (`q`: quantile, 1.0 the largest;
/// `None`: the mean), `null` when nothing was measured.
fn delay(h: &Histogram, q: Option<f64>) -> Value {
    if h.count() == 0 {
        return Value::Null;
    }
    let ns = match q {
        None => h.mean(),
        Some(q) if q >= 1.0 => h.max() as f64,
        Some(q) => h.quantile(q) as f64,
    };
    json!(ns * 1e-9)
}

/// The built-in receiver: accept one connection, count the bytes that
/// arrive before `end`; the completion time of a finite transfer.
fn receive(
    listener: TcpListener,
    start: Instant,
    end: Instant,
    finite: Option<u64>,
    stop: &AtomicBool,
) -> io::Result<(u64, Option<f64>)> {
    let done = || Instant::now() >= end || stop.load(Ordering::Relaxed);
    let mut conn = loop {
        match listener.accept() {
            Ok((c, _)) => break c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if done() {
                    return Ok((0, None));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(e),
        }
    };
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_millis(20)))?;
    let mut buf = vec![0u8; 1 << 18];
    let mut got = 0u64;
    loop {
        match conn.read(&mut buf) {
            Ok(0) => {
                let complete = finite.is_some_and(|n| got >= n);
                let at = complete.then(|| start.elapsed().as_secs_f64());
                return Ok((got, at));
            }
            Ok(n) => {
                if Instant::now() < end {
                    got += n as u64;
                }
                if finite.is_some_and(|total| got >= total) {
                    return Ok((got, Some(start.elapsed().as_secs_f64())));
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok((got, None)),
            Err(e) => return Err(e),
        }
        if done() {
            return Ok((got, None));
        }
    }
}

/// What a built-in sender does.
struct SendPlan {
    flow: u32,
    to: SocketAddrV4,
    cc: String,
    mss: Option<u32>,
    pacing: bool,
    start: Instant,
    begin: Instant,
    until: Instant,
    end: Instant,
    bytes: Option<u64>,
    interval: Duration,
}

/// What a built-in sender reports.
struct SendResult {
    rows: Vec<InfoRow>,
    last: RawTcpInfo,
    rto_known: bool,
    connected: bool,
    error: Option<String>,
}

/// The built-in sender: connect at `begin`, write until `until` (or the
/// transfer's size); a sampler thread reads `TCP_INFO` every `interval`
/// (absolute ticks from the connection) until `end` or until a finite
/// transfer is acknowledged.
fn send(plan: SendPlan, stop: &AtomicBool) -> io::Result<SendResult> {
    let mut out = SendResult {
        rows: Vec::new(),
        last: RawTcpInfo::default(),
        rto_known: false,
        connected: false,
        error: None,
    };
    std::thread::sleep(plan.begin.saturating_duration_since(Instant::now()));
    let over = || Instant::now() >= plan.end || stop.load(Ordering::Relaxed);
    let mut s = loop {
        if over() {
            return Ok(out);
        }
        let left = plan.end.saturating_duration_since(Instant::now());
        match connect(plan.to, &plan.cc, plan.mss, plan.pacing, left) {
            Ok(s) => break s,
            // The handshake did not finish by the end (its SYNs were lost).
            Err(_) if over() => return Ok(out),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINPROGRESS | libc::ETIMEDOUT)) => {}
            Err(e) => {
                out.error = Some(format!("connect: {e}"));
                return Ok(out);
            }
        }
    };
    out.connected = true;
    s.set_nodelay(true)?;
    s.set_write_timeout(Some(Duration::from_millis(20)))?;
    let finished = AtomicBool::new(false);
    let probe = s.try_clone()?;
    let (flow, start, end, interval) = (plan.flow, plan.start, plan.end, plan.interval);
    let finite = plan.bytes.is_some();
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut rows = Vec::new();
            let mut last = (RawTcpInfo::default(), false);
            let mut tick = Instant::now();
            loop {
                if let Ok(info) = tcp_info(&probe) {
                    rows.push(row(flow, start, &info.0));
                    last = info;
                }
                let acked = finished.load(Ordering::Relaxed) && last.0.unacked == 0;
                if Instant::now() >= end || stop.load(Ordering::Relaxed) || (finite && acked) {
                    return (rows, last);
                }
                tick += interval;
                std::thread::sleep(tick.saturating_duration_since(Instant::now()));
            }
        });
        let buf = vec![0x5au8; 1 << 16];
        let mut left = plan.bytes.unwrap_or(u64::MAX);
        while left > 0 && Instant::now() < plan.until && !over() {
            let n = left.min(buf.len() as u64) as usize;
            match s.write(&buf[..n]) {
                Ok(k) => left -= k as u64,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => {
                    out.error = Some(format!("write: {e}"));
                    break;
                }
            }
        }
        let _ = s.shutdown(Shutdown::Write);
        finished.store(true, Ordering::Relaxed);
        let (rows, (last, rto)) = sampler.join().unwrap_or_default();
        out.rows = rows;
        out.last = last;
        out.rto_known = rto;
    });
    Ok(out)
}

fn row(flow: u32, start: Instant, i: &RawTcpInfo) -> InfoRow {
    InfoRow {
        t: start.elapsed().as_secs_f64(),
        flow,
        cwnd: i.snd_cwnd,
        ssthresh: i.snd_ssthresh,
        rtt_s: f64::from(i.rtt) * 1e-6,
        rttvar_s: f64::from(i.rttvar) * 1e-6,
        total_retrans: i.total_retrans,
        bytes_acked: i.bytes_acked,
        unacked: i.unacked,
        delivery_rate_bps: i.delivery_rate.saturating_mul(8),
        ca_state: i.ca_state,
    }
}
