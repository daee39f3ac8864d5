//! Scenarios: TOML, `[params]` substitution, topology expansion and assembly
//! of the network.
//!
//! Each model's configuration (its keys, defaults and rules) lives beside the
//! model (`aqm/`, `channel/`, `link/`, `tcp/`); this layer parses the file into
//! those types, expands node ranges and flow groups, prefixes the models' key
//! paths with where they sit in the file, and builds the network. Everything a
//! user can get wrong ends here as one [`ConfigError`].

mod config;
pub mod params;
mod schema;
pub mod topology;

pub use config::{FlowConfig, ParamValue, ScenarioConfig};
pub use schema::json_schema;
pub(crate) use schema::PLACEHOLDER;

use std::collections::{HashMap, HashSet};

use crate::config::{join, ConfigError, Rate, Result};
use crate::link::{Files, LinkConfig, LinkKind, WiredLinkConfig};
use crate::net::limits::{MAX_FLOWS, MAX_LINKS, MAX_NODES};
use crate::net::{FlowSpec, LinkId, NetworkBuilder, Simulation};
use crate::packet::FlowId;
use crate::rng::Rng;
use crate::sch::AckRegulationConfig;
use crate::tcp::{App, TcpConfig};
use crate::time::Time;
use topology::{FlowNames, NameRange, Pairs};

/// How deeply tables and arrays of a scenario may nest (a scenario needs 7).
pub const MAX_DEPTH: usize = 32;

/// A scenario ready to build: resolved parameters and the typed scenario.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Resolved `[params]` (after overrides), in file order.
    pub params: Vec<(String, toml::Value)>,
    /// The typed scenario.
    pub file: ScenarioConfig,
}

/// Parse TOML text into a table.
pub fn parse(text: &str) -> Result<toml::Table> {
    toml::from_str::<toml::Table>(text).map_err(|e| {
        ConfigError::at_key(
            "scenario",
            format!("not valid TOML: {}", e.to_string().trim()),
        )
    })
}

/// Check, substitute parameters in and type a scenario table.
pub fn load(mut doc: toml::Table, overrides: &[(String, String)]) -> Result<Loaded> {
    if let Err(e) = check_tree(&doc) {
        dismantle(doc);
        return Err(e);
    }
    let params = params::resolve(&doc, overrides)?;
    params::substitute(&mut doc, &params)?;
    let file: ScenarioConfig =
        crate::config::deserialize(toml::Value::Table(doc)).map_err(|e| {
            if e.path.is_empty() {
                e.at("scenario")
            } else {
                e
            }
        })?;
    Ok(Loaded { params, file })
}

/// A scenario built in Rust: no parameters, so no overrides.
pub fn loaded(file: ScenarioConfig, overrides: &[(String, String)]) -> Result<Loaded> {
    params::resolve(&toml::Table::new(), overrides)?;
    Ok(Loaded {
        params: Vec::new(),
        file,
    })
}

/// Read the files the scenario names (trace files), relative to `base`.
pub fn read_files(loaded: &mut Loaded, base: Option<std::path::PathBuf>) -> Result<()> {
    let mut files = Files {
        base,
        ..Files::default()
    };
    for (i, l) in loaded.file.links.iter_mut().enumerate() {
        l.model_mut()
            .load_files(&mut files)
            .map_err(|e| e.at(&format!("links[{i}]")))?;
    }
    for (i, w) in loaded.file.workloads.iter_mut().enumerate() {
        w.load_files(files.base.as_deref())
            .map_err(|e| e.at(&format!("workloads[{i}]")))?;
    }
    Ok(())
}

/// Refuse, without recursing, tables nested more than [`MAX_DEPTH`] deep and
/// any non-finite number (`nan`, `inf`, `-inf`): every number a scenario
/// holds is a finite one (an unbounded limit is the string `"inf"`). This is
/// the one place they are refused, for TOML text and Python dicts alike, and
/// before any table is typed, so no model, default or tagged table ever sees
/// one.
pub fn check_tree(doc: &toml::Table) -> Result<()> {
    let mut stack: Vec<(&toml::Value, usize)> = doc.values().map(|v| (v, 2)).collect();
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &toml::Value>> = match v {
            toml::Value::Table(t) => Box::new(t.values()),
            toml::Value::Array(a) => Box::new(a.iter()),
            toml::Value::Float(x) if !x.is_finite() => {
                return Err(ConfigError::new(
                    path_of(doc, v),
                    non_finite_text(*x),
                    "is not a finite number; allowed: finite numbers only (no nan, inf or -inf)",
                ));
            }
            _ => continue,
        };
        if depth >= MAX_DEPTH {
            return Err(ConfigError::at_key(
                "scenario",
                format!("is nested more than {MAX_DEPTH} levels deep; a scenario needs far fewer"),
            ));
        }
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    Ok(())
}

/// `nan`, `inf` or `-inf`, as TOML spells them.
fn non_finite_text(x: f64) -> &'static str {
    if x.is_nan() {
        "nan"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// The key path of `target` (a value inside `doc`, found by address), e.g.
/// `links[1].ab.queue.limit`; searched without recursing, only when an
/// error needs it.
fn path_of(doc: &toml::Table, target: &toml::Value) -> String {
    let mut stack: Vec<(&toml::Value, String)> = doc.iter().map(|(k, v)| (v, k.clone())).collect();
    while let Some((v, path)) = stack.pop() {
        if std::ptr::eq(v, target) {
            return path;
        }
        match v {
            toml::Value::Table(t) => {
                stack.extend(t.iter().map(|(k, c)| (c, join(&path, k))));
            }
            toml::Value::Array(a) => {
                stack.extend(
                    a.iter()
                        .enumerate()
                        .map(|(i, c)| (c, format!("{path}[{i}]"))),
                );
            }
            _ => {}
        }
    }
    String::new()
}

/// Drop a table of any depth without recursing.
fn dismantle(doc: toml::Table) {
    let mut stack: Vec<toml::Value> = doc.into_iter().map(|(_, v)| v).collect();
    while let Some(v) = stack.pop() {
        match v {
            toml::Value::Table(t) => stack.extend(t.into_iter().map(|(_, v)| v)),
            toml::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
}

/// Build the simulation of a loaded scenario with run seed `seed`; returns it
/// with the time to run it for.
pub fn build(loaded: &Loaded, seed: u64) -> Result<(Simulation, Time)> {
    let f = &loaded.file;
    if f.duration == Time::ZERO {
        return Err(ConfigError::new(
            "duration",
            "\"0s\"",
            "is zero; a run must last",
        ));
    }
    let no_flows = f.flows.is_empty() && f.workloads.is_empty() && f.media.is_empty();
    for (key, empty) in [("links", f.links.is_empty()), ("flows", no_flows)] {
        if empty {
            return Err(ConfigError::at_key(
                key,
                format!(
                    "missing; a scenario needs at least one link and one flow ([[{key}]]{})",
                    if key == "flows" {
                        ", [[workloads]] or [[media]]"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    check_sizes(f)?;
    let mut net = NetworkBuilder::new();
    net.seed(seed);
    let mut plan = allocation_plan(f)?;
    let feeds = add_links(&mut net, &f.links, seed, &mut plan)?;
    if let Some(((x, y), (j, _))) = plan.into_iter().min_by_key(|(_, (j, _))| *j) {
        return Err(ConfigError::at_key(
            format!("allocations[{j}]"),
            format!("names {x}->{y}, which is not a link direction; allowed: from → to pairs of [[links]] ends"),
        ));
    }
    let (flow_names, group_ends) = add_flows(&mut net, f, seed)?;
    add_workloads(&mut net, loaded, seed)?;
    let media_entries = crate::media::add_media(&mut net, &f.media, seed)?;
    for (i, id) in feeds {
        let p = format!("links[{i}]");
        wire_feed(&mut net, f.links[i].model(), id, &flow_names).map_err(|e| e.at(&p))?;
    }
    let mut sim = net.build().map_err(|(i, m)| {
        if let Some(&j) = i
            .checked_sub(NetworkBuilder::MEDIA)
            .and_then(|k| media_entries.get(k))
        {
            return ConfigError::at_key(format!("media[{j}]"), m);
        }
        if i != NetworkBuilder::WHOLE
            && (NetworkBuilder::WORKLOAD..NetworkBuilder::MEDIA).contains(&i)
        {
            return ConfigError::at_key(format!("workloads[{}]", i - NetworkBuilder::WORKLOAD), m);
        }
        // The flows[] entry that made flow `i`.
        let g = group_ends.partition_point(|&end| end <= i);
        ConfigError::at_key(format!("flows[{g}]"), m)
    })?;
    if let Some(m) = &f.monitor {
        m.validate(f.duration).map_err(|e| e.at("monitor"))?;
        let from = NameRange::parse(&m.from).map_err(|e| e.at("monitor.from"))?;
        let to = NameRange::parse(&m.to).map_err(|e| e.at("monitor.to"))?;
        let pairs = Pairs::new(from, to).map_err(|e| e.at("monitor"))?;
        let links: Vec<String> = pairs.iter().map(|(x, y)| format!("{x}->{y}")).collect();
        sim.monitor(&m.shared, &links, m).map_err(|msg| {
            ConfigError::at_key(
                "monitor",
                format!("{msg}; allowed: link directions \"A->B\" of [[links]] ends"),
            )
        })?;
    }
    if let Some(h) = &f.histograms {
        h.validate().map_err(|e| e.at("histograms"))?;
        sim.enable_histograms(h);
    }
    Ok((sim, f.duration))
}

/// What `[[allocations]]` entry `.0` makes of a link direction.
type Planned = (usize, Generated);

/// A generated rate of a link direction.
enum Generated {
    /// A mobile's radio rate: steps `(at, bit/s)` from `"0s"`.
    Steps(Vec<(Time, u64)>),
    /// An ACK direction regulated at these up-switches (its own rate is the
    /// link's, known when the link is built).
    Acks(AckRegulationConfig, Vec<Time>),
}

/// The generated rates of link directions `(from, to)`.
type AllocationPlan = HashMap<(String, String), Planned>;

/// Expand every `[[allocations]]` entry into per-direction rate schedules.
fn allocation_plan(f: &ScenarioConfig) -> Result<AllocationPlan> {
    let mut plan = AllocationPlan::new();
    let mut budget = crate::sch::MAX_STEPS;
    let put = |plan: &mut AllocationPlan, x: &str, y: &str, j: usize, g: Generated| {
        match plan.insert((x.to_string(), y.to_string()), (j, g)) {
            Some((k, _)) => Err(ConfigError::at_key(
                format!("allocations[{j}]"),
                format!("allocates {x}->{y} again (allocations[{k}] did); allowed: one allocation per direction"),
            )),
            None => Ok(()),
        }
    };
    for (j, a) in f.allocations.iter().enumerate() {
        let p = format!("allocations[{j}]");
        a.validate().map_err(|e| e.at(&p))?;
        let from = NameRange::parse(&a.from).map_err(|e| e.at(&join(&p, "from")))?;
        let to = NameRange::parse(&a.to).map_err(|e| e.at(&join(&p, "to")))?;
        let pairs = Pairs::new(from, to).map_err(|e| e.at(&p))?;
        if pairs.len() > MAX_LINKS {
            return Err(ConfigError::at_key(
                &p,
                format!("names more than {MAX_LINKS} mobiles (net::limits::MAX_LINKS)"),
            ));
        }
        let grants = a
            .expand(pairs.len(), f.duration, budget)
            .map_err(|e| e.at(&p))?;
        let schedules = a.schedules(&grants);
        budget -= schedules.iter().map(Vec::len).sum::<usize>().min(budget);
        for ((x, y), s) in pairs.iter().zip(schedules) {
            put(&mut plan, &x, &y, j, Generated::Steps(s))?;
        }
        if let Some(r) = &a.ack_regulation {
            let starts = grants.starts();
            let steps = starts.len() * (crate::sch::RECOVERY_STEPS as usize + 1);
            if steps > budget {
                return Err(ConfigError::at_key(
                    join(&p, "ack_regulation"),
                    format!("expands to more than {MAX_STEPS} rate steps over the run (sch::MAX_STEPS); allowed: fewer grants", MAX_STEPS = crate::sch::MAX_STEPS),
                ));
            }
            budget -= steps;
            let (x, y) = r.link.split_once("->").unwrap_or_default();
            put(
                &mut plan,
                x.trim(),
                y.trim(),
                j,
                Generated::Acks(r.clone(), starts),
            )?;
        }
    }
    Ok(plan)
}

/// `l` with the generated rates `ab` / `ba` applied to its directions
/// (wired links only; `names` are the link's ends, for messages).
fn allocated(
    l: &LinkConfig,
    ab: Option<Planned>,
    ba: Option<Planned>,
    names: (&str, &str),
) -> Result<LinkConfig> {
    let j = ab.as_ref().or(ba.as_ref()).map_or(0, |x| x.0);
    let at = format!("allocations[{j}]");
    let LinkConfig::Wired(w) = l else {
        return Err(ConfigError::at_key(
            at,
            format!(
                "allocates {}->{}, which is not a wired link; allowed: links of kind \"wired\"",
                names.0, names.1
            ),
        ));
    };
    let mut w = w.clone();
    let steps = |key: &'static str, g: Option<Planned>, w: &mut WiredLinkConfig| {
        Ok::<_, ConfigError>(match g {
            None => None,
            Some((_, Generated::Steps(s))) => Some(s),
            Some((k, Generated::Acks(r, starts))) => {
                let here = format!("allocations[{k}].ack_regulation");
                let base = w.take_fixed_rate(key).map_err(|e| {
                    ConfigError::at_key(
                        &here,
                        format!(
                            "names a direction of {}-{} whose `{}` {}",
                            names.0, names.1, e.path, e.allowed
                        ),
                    )
                })?;
                if r.rate.bps() >= base {
                    return Err(ConfigError::new(
                        join(&here, "rate"),
                        format!("\"{}\"", r.rate),
                        format!(
                            "is not below the direction's own rate ({}); allowed: a lower rate",
                            Rate::from_bps(base).map_or(String::new(), |x| x.to_string())
                        ),
                    ));
                }
                Some(r.schedule(&starts, base))
            }
        })
    };
    let sa = steps("ab", ab, &mut w)?;
    let sb = steps("ba", ba, &mut w)?;
    w.with_schedules(sa, sb)
        .map(LinkConfig::Wired)
        .map_err(|e| {
            ConfigError::at_key(
                at,
                format!(
                    "allocates a direction of {}-{} whose `{}` {}",
                    names.0, names.1, e.path, e.allowed
                ),
            )
        })
}

/// The network's size from the ranges alone, before anything is built: the
/// links, the distinct nodes and the flows against [`crate::net::limits`],
/// each error at the entry that crosses the cap (issue 34: a scenario of
/// 1 000 001 nodes was refused only after 18–79 s and 2.2 GB of links built).
/// The later checks of [`add_links`] and [`add_flows`] stay: they name the
/// same caps for what this one cannot see (a flow between unknown nodes).
fn check_sizes(f: &ScenarioConfig) -> Result<()> {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    // Names by hash: a collision can only undercount, and add_links counts
    // the names themselves.
    let mut names: HashSet<u64> = HashSet::new();
    let mut count = 0usize;
    for (i, config) in f.links.iter().enumerate() {
        let p = format!("links[{i}]");
        let (a, b) = config.model().ends();
        let a = NameRange::parse(a).map_err(|e| e.at(&join(&p, "a")))?;
        let b = NameRange::parse(b).map_err(|e| e.at(&join(&p, "b")))?;
        let pairs = Pairs::new(a.clone(), b.clone()).map_err(|e| e.at(&p))?;
        count += pairs.len();
        if count > MAX_LINKS {
            return Err(ConfigError::at_key(
                &p,
                format!("makes the network more than {MAX_LINKS} links (net::limits::MAX_LINKS)"),
            ));
        }
        for r in [&a, &b] {
            for k in 0..r.len() {
                names.insert(hasher.hash_one(r.name(k)));
                if names.len() > MAX_NODES {
                    return Err(ConfigError::at_key(
                        &p,
                        format!(
                            "makes the network more than {MAX_NODES} nodes (net::limits::MAX_NODES)"
                        ),
                    ));
                }
            }
        }
    }
    let mut flows = 0u64;
    for (i, fl) in f.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        fl.validate().map_err(|e| e.at(&p))?;
        let from = NameRange::parse(&fl.from).map_err(|e| e.at(&join(&p, "from")))?;
        let to = NameRange::parse(&fl.to).map_err(|e| e.at(&join(&p, "to")))?;
        let pairs = Pairs::new(from, to).map_err(|e| e.at(&p))?;
        flows += pairs.len() as u64 * u64::from(fl.count.unwrap_or(1));
        if flows > MAX_FLOWS as u64 {
            return Err(ConfigError::at_key(
                &p,
                format!("makes the scenario more than {MAX_FLOWS} flows (net::limits::MAX_FLOWS)"),
            ));
        }
    }
    Ok(())
}

/// Add every link of `links`, with the schedules of `plan` (taken out of it
/// as they are applied); returns the links that need a cross-layer feed
/// (their index in `links` and their id).
fn add_links(
    net: &mut NetworkBuilder,
    links: &[LinkConfig],
    seed: u64,
    plan: &mut AllocationPlan,
) -> Result<Vec<(usize, LinkId)>> {
    let mut seen = HashSet::new();
    let mut nodes = 0usize;
    let mut feeds = Vec::new();
    for (i, config) in links.iter().enumerate() {
        let p = format!("links[{i}]");
        let l = config.model();
        let (a, b) = l.ends();
        let a = NameRange::parse(a).map_err(|e| e.at(&join(&p, "a")))?;
        let b = NameRange::parse(b).map_err(|e| e.at(&join(&p, "b")))?;
        // The link and flow counts were checked by `check_sizes`; the node
        // count is checked again here by name (it counted hashes).
        let pairs = Pairs::new(a, b).map_err(|e| e.at(&p))?;
        // A link with generated rates is checked as built (with them): its
        // `rate_change` applies to the generated schedule.
        let generated = pairs
            .iter()
            .any(|(x, y)| plan.contains_key(&(x.clone(), y.clone())) || plan.contains_key(&(y, x)));
        if !generated {
            l.validate().map_err(|e| e.at(&p))?;
        }
        for (x, y) in pairs.iter() {
            if x == y {
                return Err(ConfigError::at_key(
                    &p,
                    format!("a link joins two different nodes, got '{x}' twice"),
                ));
            }
            for (from, to) in [(&x, &y), (&y, &x)] {
                if !seen.insert((from.clone(), to.clone())) {
                    return Err(ConfigError::at_key(
                        &p,
                        format!("link {from}->{to} is defined twice"),
                    ));
                }
            }
            nodes += [&x, &y].iter().filter(|n| net.find(n).is_none()).count();
            if nodes > MAX_NODES {
                return Err(ConfigError::at_key(
                    &p,
                    format!(
                        "makes the network more than {MAX_NODES} nodes (net::limits::MAX_NODES)"
                    ),
                ));
            }
            let ab = plan.remove(&(x.clone(), y.clone()));
            let ba = plan.remove(&(y.clone(), x.clone()));
            let model = if ab.is_some() || ba.is_some() {
                allocated(config, ab, ba, (&x, &y))?
                    .model()
                    .build(&x, &y, seed)
                    .map_err(|e| e.at(&p))?
            } else {
                l.build(&x, &y, seed).map_err(|e| e.at(&p))?
            };
            let (na, nb) = (net.node(&x), net.node(&y));
            let id = net.link(na, nb, model);
            if l.feed().is_some() {
                feeds.push((i, id));
            }
        }
    }
    Ok(feeds)
}

/// Add every flow of `f`; returns the flows' names in order and, per entry of
/// `f.flows`, the number of flows made up to its end.
fn add_flows(
    net: &mut NetworkBuilder,
    f: &ScenarioConfig,
    seed: u64,
) -> Result<(Vec<String>, Vec<usize>)> {
    let base = f.tcp.apply(&TcpConfig::default());
    base.validate().map_err(|e| e.at("tcp"))?;
    let mut names = FlowNames::default();
    let mut out = Vec::new();
    let mut ends = Vec::with_capacity(f.flows.len());
    // One configuration per entry, shared by its flows (and the entries
    // without a `tcp` table share the scenario's).
    let shared = std::sync::Arc::new(base.clone());
    for (i, fl) in f.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        fl.validate().map_err(|e| e.at(&p))?;
        let tcp = match &fl.tcp {
            Some(t) => {
                let tcp = t.apply(&base);
                tcp.validate().map_err(|e| e.at(&join(&p, "tcp")))?;
                std::sync::Arc::new(tcp)
            }
            None => shared.clone(),
        };
        let from = NameRange::parse(&fl.from).map_err(|e| e.at(&join(&p, "from")))?;
        let to = NameRange::parse(&fl.to).map_err(|e| e.at(&join(&p, "to")))?;
        let pairs = Pairs::new(from, to).map_err(|e| e.at(&p))?;
        let count = u64::from(fl.count.unwrap_or(1));
        let start = fl.start.unwrap_or(Time::ZERO);
        let jitter = fl.start_jitter.unwrap_or(Time::ZERO);
        let app = fl.bytes.map_or(App::Bulk, |b| App::Bytes(b.get()));
        let shape = fl.app_shape().map_err(|e| e.at(&p))?;
        for (x, y) in pairs.iter() {
            let (Some(src), Some(dst)) = (net.find(&x), net.find(&y)) else {
                let (key, name) = if net.find(&x).is_none() {
                    ("from", x)
                } else {
                    ("to", y)
                };
                return Err(ConfigError::new(
                    join(&p, key),
                    crate::config::quoted(&name),
                    "is not a node of any link",
                ));
            };
            let base_name = fl.name.clone().unwrap_or_else(|| format!("{x}->{y}"));
            for k in 0..count {
                let name = names.claim(&base_name, k, count);
                let start = if jitter.0 > 0 {
                    let u = Rng::stream(seed, &format!("flow:{}:start", out.len())).uniform();
                    start + Time((u * jitter.0 as f64) as u64)
                } else {
                    start
                };
                out.push(name.clone());
                let id = net.flow(FlowSpec {
                    name,
                    src,
                    dst,
                    tcp: tcp.clone(),
                    app,
                    start,
                    stop: fl.stop,
                });
                if let Some(shape) = shape {
                    net.pace(id, shape);
                }
            }
        }
        ends.push(out.len());
    }
    Ok((out, ends))
}

/// Add the `[[workloads]]` of `loaded`: their pairs, arrival processes and
/// size samplers, and the factory of the empty-path runs their slowdowns
/// are measured against.
fn add_workloads(net: &mut NetworkBuilder, loaded: &Loaded, seed: u64) -> Result<()> {
    use crate::workload::{ArrivalConfig, Plan, Process, Source};
    let f = &loaded.file;
    if f.workloads.is_empty() {
        return Ok(());
    }
    if let Some(i) = f.links.iter().position(duplicates) {
        return Err(ConfigError::at_key(
            format!("links[{i}]"),
            "duplicates packets (netem duplicate), which [[workloads]] do not support yet (a flow's slot is reused once none of its packets is in the network); allowed: duplicate = 0 with workloads",
        ));
    }
    let base = f.tcp.apply(&TcpConfig::default());
    base.validate().map_err(|e| e.at("tcp"))?;
    let mut pairs: Vec<(crate::packet::NodeId, crate::packet::NodeId)> = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    let mut index: HashMap<(u32, u32), u32> = HashMap::new();
    let mut sources = Vec::new();
    let mut clients = Vec::new();
    for (i, w) in f.workloads.iter().enumerate() {
        let p = format!("workloads[{i}]");
        w.validate(f.duration).map_err(|e| e.at(&p))?;
        let tcp = match &w.tcp {
            Some(t) => {
                let tcp = t.apply(&base);
                tcp.validate().map_err(|e| e.at(&join(&p, "tcp")))?;
                tcp
            }
            None => base.clone(),
        };
        let from = NameRange::parse(&w.from).map_err(|e| e.at(&join(&p, "from")))?;
        let to = NameRange::parse(&w.to).map_err(|e| e.at(&join(&p, "to")))?;
        let node = |key: &str, name: String| {
            net.find(&name).ok_or_else(|| {
                ConfigError::new(
                    join(&p, key),
                    crate::config::quoted(&name),
                    "is not a node of any link; allowed: the ends of [[links]] entries",
                )
            })
        };
        let mut mine: Vec<(crate::packet::NodeId, crate::packet::NodeId, String, String)> =
            Vec::new();
        let cap = MAX_FLOWS;
        match w.pairs.unwrap_or(crate::workload::PairMode::Cross) {
            crate::workload::PairMode::Cross => {
                if from.len().saturating_mul(to.len()) > cap {
                    return Err(ConfigError::at_key(
                        &p,
                        format!("pairs {} senders with {} receivers: more than {cap} pairs (net::limits::MAX_FLOWS)", from.len(), to.len()),
                    ));
                }
                for a in 0..from.len() {
                    for b in 0..to.len() {
                        let (x, y) = (from.name(a), to.name(b));
                        if x != y {
                            let (na, nb) = (node("from", x.clone())?, node("to", y.clone())?);
                            mine.push((na, nb, x, y));
                        }
                    }
                }
            }
            crate::workload::PairMode::Zip => {
                let pr = Pairs::new(from, to).map_err(|e| e.at(&p))?;
                for (x, y) in pr.iter() {
                    if x == y {
                        return Err(ConfigError::at_key(
                            &p,
                            format!("pairs '{x}' with itself; a flow needs two different nodes"),
                        ));
                    }
                    let (na, nb) = (node("from", x.clone())?, node("to", y.clone())?);
                    mine.push((na, nb, x, y));
                }
            }
        }
        if mine.is_empty() {
            return Err(ConfigError::at_key(
                &p,
                "has no pair of two different nodes; allowed: from and to naming different nodes",
            ));
        }
        if let Some(wt) = &w.weights {
            if wt.len() != mine.len() {
                return Err(ConfigError::at_key(
                    join(&p, "weights"),
                    format!(
                        "has {} weights; allowed: one weight per pair, {} in all (pair order: {}->{} first)",
                        wt.len(),
                        mine.len(),
                        mine[0].2,
                        mine[0].3
                    ),
                ));
            }
        }
        let mut ids = Vec::with_capacity(mine.len());
        let mut backs = Vec::new();
        let closed = matches!(w.arrivals, ArrivalConfig::Closed(_));
        for (a, b, x, y) in mine {
            let mut pair =
                |a: crate::packet::NodeId, b: crate::packet::NodeId, x: &str, y: &str| {
                    *index.entry((a.0, b.0)).or_insert_with(|| {
                        pairs.push((a, b));
                        names.push((x.to_string(), y.to_string()));
                        pairs.len() as u32 - 1
                    })
                };
            ids.push(pair(a, b, &x, &y));
            if closed {
                backs.push(pair(b, a, &y, &x));
            }
        }
        if pairs.len() > cap {
            return Err(ConfigError::at_key(
                &p,
                format!("makes the workloads more than {cap} pairs (net::limits::MAX_FLOWS)"),
            ));
        }
        let (process, load, sizes) = match &w.arrivals {
            ArrivalConfig::Poisson(r)
            | ArrivalConfig::Deterministic(crate::workload::EvenRate(r)) => {
                let rate = r.rate.unwrap_or(1.0);
                let process = if matches!(w.arrivals, ArrivalConfig::Poisson(_)) {
                    Process::Poisson(rate)
                } else {
                    Process::Deterministic(rate)
                };
                let load = r.load.zip(r.link.clone());
                let sizes = w.size.as_ref().map(|s| s.model().sampler()).transpose();
                (process, load, sizes.map_err(|e| e.at(&join(&p, "size")))?)
            }
            ArrivalConfig::Closed(c) => {
                let closed = crate::workload::Closed {
                    clients: c.clients,
                    think: c.think,
                    exponential: c.think_law.unwrap_or_default()
                        == crate::net::app::OnOffLaw::Exponential,
                    objects: c.objects.unwrap_or(1),
                    parallel: c.parallel.unwrap_or(1),
                };
                let sizes = w.size.as_ref().map(|s| s.model().sampler()).transpose();
                (
                    Process::Closed(closed),
                    None,
                    sizes.map_err(|e| e.at(&join(&p, "size")))?,
                )
            }
            ArrivalConfig::Trace(t) => {
                let Some(tr) = &t.loaded else {
                    return Err(ConfigError::new(
                        join(&p, "arrivals.file"),
                        crate::config::quoted(&t.file),
                        "was not read (an internal error)",
                    ));
                };
                (Process::Trace(tr.clone()), None, None)
            }
        };
        let name = w.name.clone().unwrap_or_else(|| p.clone());
        if sources.iter().any(|s: &Source| s.name == name) {
            return Err(ConfigError::new(
                join(&p, "name"),
                crate::config::quoted(&name),
                "is taken by another workload; allowed: a name of its own",
            ));
        }
        let start = w.start.unwrap_or(Time::ZERO);
        let stop = w.stop.unwrap_or(f.duration).min(f.duration);
        let mut src = Source::new(
            name,
            seed,
            tcp,
            ids,
            w.weights.as_deref(),
            process,
            sizes,
            (start, stop),
            w.bucket_edges(),
        );
        src.load = load;
        src.persistent = w.persistent_pool();
        src.app = crate::net::app::AppShape::of(w.rate_cap, w.on, w.off, w.on_off)
            .map_err(|e| e.at(&p))?;
        src.response = w
            .response
            .as_ref()
            .map(|r| r.model().sampler())
            .transpose()
            .map_err(|e| e.at(&join(&p, "response")))?;
        if let Process::Closed(c) = &src.process {
            for k in 0..c.clients {
                let j = k as usize % src.pairs.len();
                clients.push(crate::workload::Client {
                    workload: i as u32,
                    pair: src.pairs[j],
                    back: backs[j],
                    started: Time::ZERO,
                    to_start: 0,
                    done: 0,
                    rng: Rng::stream(seed, &format!("workload:{}:client:{k}", src.name)),
                });
            }
            if clients.len() > 1_000_000 {
                return Err(ConfigError::at_key(
                    join(&p, "arrivals.clients"),
                    "makes more than 1000000 clients in all; allowed: fewer",
                ));
            }
        }
        sources.push(src);
    }
    let shared = loaded.clone();
    let factory = move |w: u32, pair: u32| {
        let (x, y) = names.get(pair as usize)?.clone();
        let mut l = shared.clone();
        let wl = l.file.workloads.get(w as usize)?.clone();
        l.file.workloads.clear();
        l.file.monitor = None;
        // The same application alone: a paced workload's baseline is paced alike.
        l.file.flows = vec![FlowConfig {
            tcp: wl.tcp,
            name: Some("baseline".into()),
            rate_cap: wl.rate_cap,
            on: wl.on,
            off: wl.off,
            on_off: wl.on_off,
            ..FlowConfig::new(x, y)
        }];
        build(&l, seed).ok().map(|(sim, _)| sim)
    };
    net.workloads(Plan {
        sources,
        pairs,
        factory: Some(Box::new(factory)),
        baselines: Default::default(),
        records: Vec::new(),
        alive: 0,
        peak_alive: 0,
        serial: 0,
        closed: false,
        horizon: Time(f.duration.0.saturating_mul(10)),
        clients,
        pools: Default::default(),
        waiting: 0,
    });
    Ok(())
}

/// Whether link `l` duplicates packets (netem `duplicate` above 0).
fn duplicates(l: &LinkConfig) -> bool {
    let LinkConfig::Wired(w) = l else {
        return false;
    };
    let dup = |n: &Option<crate::link::netem::NetemConfig>| {
        n.as_ref()
            .and_then(|n| n.duplicate)
            .is_some_and(|p| p.get() > 0.0)
    };
    dup(&w.netem)
        || w.ab.as_ref().is_some_and(|d| dup(&d.netem))
        || w.ba.as_ref().is_some_and(|d| dup(&d.netem))
}

/// Connect link `id` to the flow its configuration names (paths relative to
/// the link).
fn wire_feed(
    net: &mut NetworkBuilder,
    l: &dyn LinkKind,
    id: LinkId,
    flows: &[String],
) -> Result<()> {
    let Some(feed) = l.feed() else { return Ok(()) };
    let shown = || {
        let v: Vec<&str> = flows.iter().take(12).map(|s| s.as_str()).collect();
        format!(
            "{}{}",
            v.join(", "),
            if flows.len() > 12 { ", …" } else { "" }
        )
    };
    let key = join(feed.path, "flow");
    let flow = match feed.flow {
        Some(name) => flows.iter().position(|f| f == name).ok_or_else(|| {
            ConfigError::new(
                &key,
                crate::config::quoted(name),
                format!("is not a flow; flows: {}", shown()),
            )
        })?,
        None if flows.len() == 1 => 0,
        None => {
            return Err(ConfigError::at_key(
                &key,
                format!(
                "missing; the scenario has {} flows, name the one that feeds the controller: {}",
                flows.len(),
                shown()
            ),
            ))
        }
    };
    let dir = net
        .cross_layer(id, FlowId(flow as u32), feed.side)
        .map_err(|m| ConfigError::at_key(&key, m))?;
    l.check_feed(dir, &flows[flow])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_text(text: &str) -> Result<(Simulation, Time)> {
        build(&load(parse(text)?, &[])?, 1)
    }

    fn error(text: &str) -> ConfigError {
        build_text(text).err().expect("refused")
    }

    const LINK: &str = "[[links]]\na = \"S\"\nb = \"R\"\nrate = \"1Mbit\"\n";
    const FLOW: &str = "[[flows]]\nfrom = \"S\"\nto = \"R\"\n";

    #[test]
    fn an_empty_network_is_refused() {
        let e = error("duration = \"2s\"\n");
        assert_eq!(e.path, "links", "{e}");
        let e = error(&format!("duration = \"2s\"\n{LINK}"));
        assert_eq!(e.path, "flows", "{e}");
        assert!(build_text(&format!("duration = \"2s\"\n{LINK}{FLOW}")).is_ok());
    }

    #[test]
    fn sizes_are_capped_before_allocating() {
        let text =
            "duration = \"1s\"\n[[links]]\na = \"N{1..99999999}\"\nb = \"H\"\nrate = \"1Mbit\"\n";
        let e = error(&format!("{text}{FLOW}"));
        assert_eq!(e.path, "links[0].a", "{e}");
        assert!(e.allowed.contains("MAX_NODES"), "{e}");
        let text = "duration = \"1s\"\n[[links]]\na = \"S{1..100}\"\nb = \"R\"\nrate = \"1Mbit\"\n\
                    [[flows]]\nfrom = \"S{1..100}\"\nto = \"R\"\ncount = 10000\n";
        let e = error(text);
        assert_eq!(e.path, "flows[0]", "{e}");
        assert!(e.allowed.contains("MAX_FLOWS"), "{e}");
        let e = error(&text.replace("10000", "300000"));
        assert_eq!(e.path, "flows[0].count", "{e}");
    }

    #[test]
    fn deep_tables_are_refused_without_recursion() {
        let mut doc = toml::Table::new();
        for _ in 0..11_000 {
            let mut outer = toml::Table::new();
            outer.insert("x".into(), toml::Value::Table(doc));
            doc = outer;
        }
        // A small stack: neither the check nor dropping the table may recurse.
        let e = std::thread::Builder::new()
            .stack_size(128 << 10)
            .spawn(move || load(doc, &[]).unwrap_err())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(e.path, "scenario", "{e}");
        assert!(e.allowed.contains("nested"), "{e}");
        // A scenario's own depth is far below the bound.
        let mut doc = parse(&format!("duration = \"1s\"\n{LINK}{FLOW}")).unwrap();
        doc.insert(
            "tcp".into(),
            toml::Value::Table(parse("[lt]\nproactive_bins = [[1.0, 2]]").unwrap()),
        );
        assert!(load(doc, &[]).is_ok());
    }

    #[test]
    fn non_finite_numbers_are_refused_with_their_key_path() {
        // Issue 34 item 1: inside kind-tagged tables these became "absent"
        // (the default was used) or gave messages about null / a missing key.
        let base = format!("duration = \"2s\"\n{FLOW}");
        let cases = [
            ("delay = inf", "links[0].delay", "inf"),
            ("rate = inf", "links[0].rate", "inf"),
            ("loss = nan", "links[0].loss", "nan"),
            (
                "queue = { kind = \"red\", minth = 5, maxth = 15, limit = -inf }",
                "links[0].queue.limit",
                "-inf",
            ),
            (
                "queue = { kind = \"red\", minth = 5, maxth = 15, maxp = nan }",
                "links[0].queue.maxp",
                "nan",
            ),
            (
                "ab = { queue = { kind = \"red\", minth = nan, maxth = 15 } }",
                "links[0].ab.queue.minth",
                "nan",
            ),
            (
                "channel = { kind = \"bernoulli\", p = nan }",
                "links[0].channel.p",
                "nan",
            ),
        ];
        for (line, path, value) in cases {
            let link = LINK.replace("rate = \"1Mbit\"\n", "");
            let rate = if line.starts_with("rate") {
                ""
            } else {
                "rate = \"1Mbit\"\n"
            };
            let e = error(&format!("{base}{link}{rate}{line}\n"));
            assert_eq!(
                (e.path.as_str(), e.value.as_str()),
                (path, value),
                "{line}: {e}"
            );
            assert!(e.allowed.contains("finite"), "{e}");
        }
        let e = error(&format!(
            "{base}[tcp]\ncc = {{ kind = \"cubic\", beta = nan }}\n{LINK}"
        ));
        assert_eq!(e.path, "tcp.cc.beta", "{e}");
        let e = error(&format!("[params]\nper = nan\n{base}{LINK}"));
        assert_eq!(e.path, "params.per", "{e}");
        let e = error(&format!(
            "{base}{LINK}[[links]]\na = \"R\"\nb = \"T\"\nrate = [1.0, -inf]\n"
        ));
        assert_eq!(e.path, "links[1].rate[1]", "{e}");
    }

    #[test]
    fn the_tagged_reader_keeps_every_number_as_written() {
        use crate::aqm::QueueConfig;
        let v: toml::Value = toml::from_str::<toml::Table>(
            "q = { kind = \"red\", minth = 5, maxth = 15, maxp = inf }",
        )
        .unwrap()["q"]
            .clone();
        match crate::config::deserialize::<QueueConfig, _>(v).unwrap() {
            QueueConfig::Red(r) => assert_eq!(r.max_p, f64::INFINITY),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_scenario_built_in_rust_runs_like_its_file() {
        use crate::config::Rate;
        use crate::link::WiredLinkConfig;
        let text = format!("duration = \"2s\"\n{LINK}{FLOW}");
        let from_file = build_text(&text).unwrap();
        let built = ScenarioConfig::new(Time::from_secs(2))
            .link(WiredLinkConfig::new("S", "R").rate(Rate::from_bps(1_000_000).unwrap()))
            .flow(FlowConfig::new("S", "R"));
        assert_eq!(built, load(parse(&text).unwrap(), &[]).unwrap().file);
        let (mut a, d) = from_file;
        let (mut b, _) = build(&loaded(built, &[]).unwrap(), 1).unwrap();
        a.run(d);
        b.run(d);
        assert_eq!(a.summary().to_json(), b.summary().to_json());
        let e = loaded(ScenarioConfig::new(d), &[("x".into(), "1".into())]).unwrap_err();
        assert_eq!(e.path, "--set x");
    }
}
