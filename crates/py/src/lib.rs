//! `linklab._core`: the thin PyO3 binding of `linklab-core`.
//!
//! It converts a scenario (TOML text or a Python dict) in, runs it with the GIL
//! released, and hands back plain Python objects: the summary as a dict, trace
//! columns as little-endian `bytes` (or a list of `str`) tagged with a dtype so
//! the Python layer can build polars columns without a per-element loop, and
//! pcap files as `bytes`. Everything else (files, tables, the CLI) is Python.
//!
//! No panic crosses into Python as an abort: the core runs on a worker thread
//! under `catch_unwind` and a panic becomes `linklab._core.InternalError`.
//! The worker runs the simulation in slices of [`SLICE_EVENTS`] events. While
//! it runs, the calling thread waits with the GIL released and wakes every
//! [`SIGNAL_POLL`] to let Python handle Ctrl-C (which stops the worker at the
//! end of its slice); with a `sink`, it also hands the trace rows and pcap
//! bytes drained after each slice to the sink, so that long traced runs stream
//! to disk in bounded memory (the worker waits while a piece is pending).
#![warn(missing_docs)]

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use linklab_core::analytic::arq::{ArqModel, LIMIT_CAP, MAX_N, MAX_NPDU, MAX_SDUS};
use linklab_core::analytic::mqam::{self as qam, Modulation, Qam8};
use linklab_core::analytic::LossVolumeInput;
use linklab_core::api::{self, Column, ConfigError, RunOptions, RunOutput, Source, Summary, Table};
use linklab_core::channel::fading::{FadingChannel, FadingConfig};
use linklab_core::config::{Bytes, Rate};
use linklab_core::rng::Rng;
use linklab_core::scenario::MAX_DEPTH;
use linklab_core::time::Time;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

pyo3::create_exception!(
    linklab._core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run. `.path` is the key path of the offending value \
     (e.g. `links[2].ab.loss`, empty when it concerns the whole file), `.value` the \
     value as written (a string in double quotes; empty when missing), `.allowed` what \
     is wrong and what is allowed, and `.message` the value and `.allowed` together."
);

pyo3::create_exception!(
    linklab._core,
    InternalError,
    PyRuntimeError,
    "A bug in the linklab core (a Rust panic); the message is the panic's."
);

pyo3::create_exception!(
    linklab._core,
    AccountingError,
    InternalError,
    "A packet account that does not close at the end of a run: a bug in the linklab \
     core. The message names the link direction or flow, the counts that do not add up, \
     the scenario and the seed."
);

pyo3::create_exception!(
    linklab._core,
    EmulationError,
    PyValueError,
    "A scenario or option that live emulation cannot run (a congestion control the \
     kernel lacks, linklab's own TCP variants, a cross-layer feed), or a machine that \
     cannot emulate (no root, no /dev/net/tun, not Linux); the message says which and \
     what is allowed."
);

/// How often the waiting thread wakes to check for signals (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Stack of the worker thread that runs the core.
const WORKER_STACK: usize = 64 << 20;

/// Events per slice of a run: between slices the worker checks for a stop
/// request and, with a sink, drains traces and captures (a few MB at most).
const SLICE_EVENTS: u64 = 1 << 16;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// A `ScenarioError` carrying `.path`, `.value`, `.allowed` and `.message`.
fn scenario_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let exc = py.get_type::<ScenarioError>().call1((e.to_string(),))?;
        exc.setattr("path", &e.path)?;
        exc.setattr("value", &e.value)?;
        exc.setattr("allowed", &e.allowed)?;
        exc.setattr("message", e.message())?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

fn internal_error(what: &str, payload: &(dyn Any + Send)) -> PyErr {
    InternalError::new_err(format!(
        "internal error in the linklab core ({what}): {}; this is a bug, please report it",
        panic_message(payload)
    ))
}

// ---------------------------------------------------------------------------
// Arguments in
// ---------------------------------------------------------------------------

/// Most values (dict entries and list items, counted each time they are
/// reached) a scenario dict may hold: a bound on the work of reading one that
/// shares sub-objects.
const MAX_VALUES: usize = 20_000_000;

/// Refuse a dict nested deeper than the core allows (or holding itself), or
/// too large, before converting it: without recursion, so neither a deep
/// nor a self-referencing dict can exhaust the stack.
fn check_nesting(source: &Bound<'_, PyAny>) -> Result<(), ConfigError> {
    let mut stack = vec![(source.clone(), 1usize)];
    let mut seen = 0usize;
    while let Some((obj, depth)) = stack.pop() {
        let children: Vec<Bound<'_, PyAny>> = if let Ok(d) = obj.cast::<PyDict>() {
            d.values().iter().collect()
        } else if let Ok(l) = obj.cast::<PyList>() {
            l.iter().collect()
        } else if let Ok(t) = obj.cast::<PyTuple>() {
            t.iter().collect()
        } else {
            continue;
        };
        if depth >= MAX_DEPTH {
            return Err(ConfigError::at_key(
                "scenario",
                format!("is nested more than {MAX_DEPTH} levels deep (or holds itself); a scenario needs far fewer"),
            ));
        }
        seen += children.len();
        if seen > MAX_VALUES {
            return Err(ConfigError::at_key(
                "scenario",
                format!("holds more than {MAX_VALUES} values; use ranges such as \"S{{1..1000}}\""),
            ));
        }
        stack.extend(children.into_iter().map(|c| (c, depth + 1)));
    }
    Ok(())
}

fn source_from_py(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(text) = source.cast::<PyString>() {
        return Ok(Source::Toml(text.to_str()?.to_owned()));
    }
    if source.cast::<PyDict>().is_ok() {
        check_nesting(source).map_err(|e| scenario_error(py, &e))?;
        return pythonize::depythonize::<toml::Table>(source)
            .map(Source::Table)
            .map_err(|e| {
                let e = ConfigError::at_key(
                    "",
                    format!(
                        "the scenario dict cannot be read as a TOML table ({e}); values must be \
                         str, int, float, bool, list or dict with str keys (no None)"
                    ),
                );
                scenario_error(py, &e)
            });
    }
    Err(PyTypeError::new_err(format!(
        "source must be TOML text (str) or a dict, not {}",
        source.get_type().name()?
    )))
}

fn params_from_py(params: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, String)>> {
    let Some(params) = params else {
        return Ok(Vec::new());
    };
    params
        .iter()
        .map(|(k, v)| {
            let key: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err("params keys must be str"))?;
            let value: String = v.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "params[{key:?}] must be a str (as typed after --set)"
                ))
            })?;
            Ok((key, value))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Results out
// ---------------------------------------------------------------------------

/// Little-endian bytes of fixed-width values, written straight into a `bytes`.
fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to_le: fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to_le(*v));
        }
        Ok(())
    })
}

/// A column as `(dtype, data)`: `("f64", bytes)`, `("u64", bytes)` or `("str", list)`.
fn column_to_py<'py>(py: Python<'py>, column: &Column) -> PyResult<Bound<'py, PyTuple>> {
    let (dtype, data): (&str, Bound<'py, PyAny>) = match column {
        Column::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes)?.into_any()),
        Column::U64(v) => ("u64", le_bytes(py, v, u64::to_le_bytes)?.into_any()),
        Column::Str(v) => ("str", PyList::new(py, v)?.into_any()),
    };
    PyTuple::new(py, [PyString::new(py, dtype).into_any(), data])
}

fn table_to_py<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let columns = PyDict::new(py);
    for (name, column) in &table.columns {
        columns.set_item(name, column_to_py(py, column)?)?;
    }
    Ok(columns)
}

/// `(traces, pcaps)` as Python dicts: `{table: {column: (dtype, data)}}` and `{link: bytes}`.
fn pieces_to_py<'py>(
    py: Python<'py>,
    traces: &[Table],
    pcaps: &[(String, Vec<u8>)],
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let t = PyDict::new(py);
    for table in traces {
        t.set_item(&table.name, table_to_py(py, table)?)?;
    }
    let p = PyDict::new(py);
    for (link, bytes) in pcaps {
        p.set_item(link, PyBytes::new(py, bytes))?;
    }
    Ok((t, p))
}

/// A dict built with its keys sorted (as `serde_json`'s maps sort them, so the
/// printed summary keeps its key order) and interned: a summary repeats the
/// same dozen keys in every flow, link and queue object (about 60 MB of
/// duplicate strings at 10 000 flows otherwise). Serialising the typed summary
/// straight into these dicts needs no intermediate JSON tree.
struct SortedInternedKeys;

impl pythonize::PythonizeMappingType for SortedInternedKeys {
    type Builder<'py> = (Python<'py>, Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>);

    fn builder<'py>(py: Python<'py>, len: Option<usize>) -> PyResult<Self::Builder<'py>> {
        Ok((py, Vec::with_capacity(len.unwrap_or(0))))
    }

    fn push_item<'py>(
        builder: &mut Self::Builder<'py>,
        key: Bound<'py, PyAny>,
        value: Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let key = match key.cast::<PyString>() {
            Ok(k) => PyString::intern(builder.0, k.to_str()?).into_any(),
            Err(_) => key,
        };
        builder.1.push((key, value));
        Ok(())
    }

    fn finish<'py>(builder: Self::Builder<'py>) -> PyResult<Bound<'py, pyo3::types::PyMapping>> {
        let (py, mut items) = builder;
        // Keys are str (summary field and parameter names): sort by their text.
        let text = |k: &Bound<'py, PyAny>| -> String {
            k.cast::<PyString>()
                .ok()
                .and_then(|s| s.to_str().ok().map(str::to_owned))
                .unwrap_or_default()
        };
        items.sort_by_cached_key(|(k, _)| text(k));
        let dict = PyDict::new(py);
        for (k, v) in items {
            dict.set_item(k, v)?;
        }
        Ok(dict.into_mapping())
    }
}

impl pythonize::PythonizeTypes for SortedInternedKeys {
    type Map = SortedInternedKeys;
    type NamedMap = pythonize::PythonizeUnnamedMappingAdapter<SortedInternedKeys>;
    type List = PyList;
}

/// The summary as the Python dict `linklab run --json` prints, with the wall
/// time of the whole core call and the packet-hops per wall-second of its run
/// phase (`None` when that phase took no measurable time).
fn summary_to_py<'py>(
    py: Python<'py>,
    summary: &Summary,
    phases: &Phases,
) -> PyResult<Bound<'py, PyAny>> {
    #[derive(serde::Serialize)]
    struct WithWallTime<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        wall_time_s: f64,
        hops_per_s: Option<f64>,
    }
    let run_s = phases.run.as_secs_f64();
    let out = WithWallTime {
        summary,
        wall_time_s: phases.total().as_secs_f64(),
        hops_per_s: (run_s > 0.0).then(|| summary.network.hops as f64 / run_s),
    };
    // The summary of a large network is millions of fresh, acyclic dicts:
    // with the cyclic collector on, each generation-0 threshold of them
    // triggers a collection that walks the young ones, and the older
    // generations' walks grow with the summary (a 100 000-link star: 13 of
    // its 19 s). Nothing here can form a cycle, so it is paused while they
    // are made, and restored as it was.
    let gc = py.import("gc")?;
    let was_on = gc.call_method0("isenabled")?.is_truthy()?;
    if was_on {
        gc.call_method0("disable")?;
    }
    let made = pythonize::pythonize_custom::<SortedInternedKeys, _>(py, &out);
    if was_on {
        gc.call_method0("enable")?;
    }
    Ok(made?)
}

// ---------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------

/// Wall time of each phase of a run, measured on the worker.
#[derive(Clone, Copy, Debug, Default)]
struct Phases {
    /// Load, expand, route and build.
    build: Duration,
    /// The simulation (with the pieces handed over).
    run: Duration,
    /// Summary and the last traces and captures.
    finish: Duration,
}

impl Phases {
    fn total(&self) -> Duration {
        self.build + self.run + self.finish
    }
}

/// What the worker hands back: `None` if it was asked to stop.
type Outcome = thread::Result<(Option<Result<RunOutput, Failure>>, Phases)>;

/// Why a run produced no output.
enum Failure {
    /// The scenario cannot be run.
    Config(ConfigError),
    /// A packet account did not close (a bug).
    Account(api::AccountingError),
}

/// A message from the worker.
enum Msg {
    /// Trace rows and pcap bytes drained after a slice.
    Piece(Vec<Table>, Vec<(String, Vec<u8>)>),
    /// The run ended (or failed, or stopped on request).
    End(Box<Outcome>),
}

/// Run the core on a worker thread in slices; wait for it with the GIL
/// released, waking to run Python's signal handlers (so Ctrl-C raises
/// `KeyboardInterrupt` and stops the worker). With `sink`, every drained piece
/// is passed to `sink(traces, pcaps)`; an exception from the sink stops the run.
fn run_on_worker(
    py: Python<'_>,
    src: Source,
    opts: RunOptions,
    sink: Option<&Bound<'_, PyAny>>,
) -> PyResult<Outcome> {
    let streaming = sink.is_some()
        && (opts.trace || !opts.pcap_links.is_empty() || !opts.pcapng_links.is_empty());
    let stop = Arc::new(AtomicBool::new(false));
    let stop_worker = Arc::clone(&stop);
    // One piece in the channel at most: the worker waits while Python writes.
    let (tx, rx) = mpsc::sync_channel::<Msg>(1);
    let spawned = thread::Builder::new()
        .name("linklab-run".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                let mut phases = Phases::default();
                let result = (|| {
                    let t0 = Instant::now();
                    let started = api::start(src, &opts);
                    phases.build = t0.elapsed();
                    let mut run = match started {
                        Ok(r) => r,
                        Err(e) => return Some(Err(Failure::Config(e))),
                    };
                    let t1 = Instant::now();
                    while !run.advance(SLICE_EVENTS) {
                        if stop_worker.load(Ordering::Relaxed) {
                            return None;
                        }
                        if streaming {
                            let (t, p) = run.drain();
                            // The receiver is gone only if the caller stopped.
                            tx.send(Msg::Piece(t, p)).ok()?;
                        }
                    }
                    let t2 = Instant::now();
                    phases.run = t2 - t1;
                    let out = run.finish();
                    phases.finish = t2.elapsed();
                    Some(out.map_err(Failure::Account))
                })();
                (result, phases)
            }));
            let _ = tx.send(Msg::End(Box::new(outcome)));
        });
    let worker = match spawned {
        Ok(handle) => handle,
        Err(e) => {
            return Err(PyRuntimeError::new_err(format!(
                "cannot start the simulation thread: {e}"
            )))
        }
    };
    let stop_on = |e: PyErr| {
        stop.store(true, Ordering::Relaxed);
        e
    };
    let mut rx = rx;
    loop {
        // `Receiver` is not `Sync`: move it into the detached closure and back.
        let (back, received) = py.detach(move || {
            let received = rx.recv_timeout(SIGNAL_POLL);
            (rx, received)
        });
        rx = back;
        match received {
            Ok(Msg::End(outcome)) => {
                // The worker exits right after sending: wait for it (its
                // thread-local packet pool goes with it), then hand the run's
                // freed heap back before the summary is built in Python.
                let _ = py.detach(move || worker.join());
                release_freed_heap();
                return Ok(*outcome);
            }
            Ok(Msg::Piece(t, p)) => {
                if let Some(sink) = sink {
                    let (t, p) = pieces_to_py(py, &t, &p).map_err(stop_on)?;
                    sink.call1((t, p)).map_err(stop_on)?;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals().map_err(stop_on)?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(InternalError::new_err(
                    "internal error: the simulation thread ended without a result",
                ))
            }
        }
    }
}

/// Return the heap a finished run freed to the operating system. The network
/// lived on the worker thread, whose glibc arena keeps freed pages mapped and
/// serves no other thread: at 10 000 flows that is ~120 MB of resident memory
/// the summary's Python objects would be allocated beside (docs/benchmarks.md,
/// Scale). Elsewhere than glibc, nothing.
fn release_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory of the allocator's arenas;
    // it takes no pointer and is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Run a scenario.
///
/// `source` is TOML text or a dict. Returns `(summary, traces, pcaps)`: the
/// summary dict (with `wall_time_s` measured here), a dict of trace tables
/// `{table: {column: (dtype, data)}}` where dtype is `"f64"`/`"u64"` with
/// little-endian `bytes` data or `"str"` with a list, and a dict of pcap files
/// `{link: bytes}` (`pcap` lists the link specs captured as classic pcap,
/// `pcapng` those captured as pcapng; see `Simulation::capture`).
///
/// With `sink` (a callable), traces and captures are not returned (both dicts
/// are empty) but handed over piece by piece while the run goes on:
/// `sink(traces, pcaps)` with the same shapes, each table holding the rows
/// since the previous piece and each capture the bytes since the previous
/// piece (the first piece starts with the pcap header); pieces joined in order
/// are the tables and files of the whole run. An exception raised by the sink
/// stops the run and propagates.
///
/// `base_dir` is the directory relative file names in the scenario (trace
/// files) start from: the scenario file's (default: the current directory).
///
/// `histograms` keeps per-flow delay and jitter histograms (the
/// `histograms` table, at the end of the run; a scenario with
/// `[histograms]` has them anyway), with or without `trace`.
///
/// With `timings` (a dict), the wall time of each phase of the core is stored
/// in it: `build_s` (load, expand, route, build), `run_s` (the simulation) and
/// `summary_s` (summary and the last traces); `wall_time_s` is their sum.
///
/// Raises `ScenarioError` for a scenario that cannot be run and
/// `InternalError` if the core panics.
#[pyfunction]
#[pyo3(signature = (source, *, seed = None, params = None, trace = false, pcap = None, pcapng = None, sink = None, timings = None, base_dir = None, histograms = false))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    seed: Option<u64>,
    params: Option<&Bound<'py, PyDict>>,
    trace: bool,
    pcap: Option<Vec<String>>,
    pcapng: Option<Vec<String>>,
    sink: Option<&Bound<'py, PyAny>>,
    timings: Option<&Bound<'py, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
    histograms: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let src = source_from_py(py, source)?;
    let opts = RunOptions {
        seed,
        params: params_from_py(params)?,
        trace,
        histograms,
        pcap_links: pcap.unwrap_or_default(),
        pcapng_links: pcapng.unwrap_or_default(),
        base_dir,
    };
    match run_on_worker(py, src, opts, sink)? {
        Ok((Some(Ok(out)), phases)) => {
            if let Some(t) = timings {
                t.set_item("build_s", phases.build.as_secs_f64())?;
                t.set_item("run_s", phases.run.as_secs_f64())?;
                t.set_item("summary_s", phases.finish.as_secs_f64())?;
            }
            let (traces, pcaps) = pieces_to_py(py, &out.traces, &out.pcaps)?;
            let summary = summary_to_py(py, &out.summary, &phases)?;
            if let Some(sink) = sink {
                sink.call1((traces, pcaps))?;
                let empty = (PyDict::new(py), PyDict::new(py));
                return PyTuple::new(py, [summary, empty.0.into_any(), empty.1.into_any()]);
            }
            PyTuple::new(py, [summary, traces.into_any(), pcaps.into_any()])
        }
        Ok((Some(Err(Failure::Config(e))), _)) => Err(scenario_error(py, &e)),
        Ok((Some(Err(Failure::Account(e))), _)) => Err(AccountingError::new_err(e.message)),
        Ok((None, _)) => Err(InternalError::new_err(
            "internal error: the simulation stopped without being asked to",
        )),
        Err(payload) => Err(internal_error("run", payload.as_ref())),
    }
}

/// Run scenario `source` live: kernel TCP between network namespaces
/// through the scenario's link models, in real time (`docs/emulation.md`).
///
/// `duration` (a time such as `"10s"`) replaces the scenario's; `record`
/// keeps every arrival and decision for [`emulate_replay`]; `commands`
/// (`[(node, shell command)]`) or `shell` (a node name) replace the built-in
/// traffic; `lead` (a node of `commands`, or `"shell"`) names the one whose
/// end ends the run (default: the last to end); `linux_defaults` leaves the kernels' TCP settings as shipped
/// instead of mapping the scenario's `[tcp]` (SACK, timestamps, ECN,
/// initial window, minimum RTO, MSS); `pcap` (`[(node, path)]`) writes what
/// each node's kernel sent and received to a pcap file (raw IP, ns);
/// `kernel` (`[(key, value)]`) changes kernel settings beyond the scenario's
/// `[tcp]` in every namespace (`KernelKnobs`: a `net.ipv4.` sysctl, `quickack`, `pacing`, `gso_max_segs`). Returns `(summary, tcp_info, record)`: the summary dict (the
/// shape of `run`'s plus `emulation`), the `TCP_INFO` samples as a dict of
/// column lists, and the record as JSON text (`None` unless `record`).
///
/// Raises `ScenarioError` for a scenario that cannot be loaded,
/// `EmulationError` for one that cannot be emulated or a machine that
/// cannot emulate, `RuntimeError` if a system call fails during the run,
/// and `KeyboardInterrupt` (after stopping the run) on Ctrl-C.
#[pyfunction]
#[pyo3(signature = (source, *, seed = None, params = None, base_dir = None, duration = None, record = false, commands = None, shell = None, lead = None, linux_defaults = false, pcap = None, kernel = None))]
#[allow(clippy::too_many_arguments)]
fn emulate<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    seed: Option<u64>,
    params: Option<&Bound<'py, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
    duration: Option<String>,
    record: bool,
    commands: Option<Vec<(String, String)>>,
    shell: Option<String>,
    lead: Option<String>,
    linux_defaults: bool,
    pcap: Option<Vec<(String, std::path::PathBuf)>>,
    kernel: Option<Vec<(String, String)>>,
) -> PyResult<Bound<'py, PyTuple>> {
    #[cfg(target_os = "linux")]
    {
        use linklab_emu::emulate::{emulate as live, Error, Options};
        let duration = match duration {
            Some(text) => Some(
                text.parse::<Time>()
                    .map_err(|e| EmulationError::new_err(format!("--duration: {}", e.message())))?,
            ),
            None => None,
        };
        let parts = built_parts(py, source, seed, params, base_dir)?;
        let opts = Options {
            duration,
            record,
            commands: commands.unwrap_or_default(),
            shell,
            lead,
            linux_defaults,
            pcap: pcap.unwrap_or_default(),
            kernel: kernel.unwrap_or_default(),
            ..Options::default()
        };
        let stop = opts.stop.clone();
        let (tx, rx) = mpsc::channel();
        thread::Builder::new()
            .name("linklab-emulate".into())
            .spawn(move || {
                let out = panic::catch_unwind(AssertUnwindSafe(|| live(parts, &opts)));
                let _ = tx.send(out);
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start the emulation: {e}")))?;
        let mut interrupted: Option<PyErr> = None;
        let mut rx = rx;
        let out = loop {
            // `Receiver` is not `Sync`: move it into the detached closure and back.
            let (back, received) = py.detach(move || {
                let received = rx.recv_timeout(SIGNAL_POLL);
                (rx, received)
            });
            rx = back;
            match received {
                Ok(out) => break out,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Ordering::Relaxed);
                        interrupted.get_or_insert(e);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(InternalError::new_err(
                        "internal error: the emulation thread ended without a result",
                    ))
                }
            }
        };
        if let Some(e) = interrupted {
            return Err(e);
        }
        let out = match out {
            Ok(Ok(out)) => out,
            Ok(Err(Error::Io(e))) => {
                return Err(PyRuntimeError::new_err(format!("emulation failed: {e}")))
            }
            Ok(Err(e)) => return Err(EmulationError::new_err(e.to_string())),
            Err(payload) => return Err(internal_error("emulate", payload.as_ref())),
        };
        let summary = pythonize::pythonize_custom::<SortedInternedKeys, _>(py, &out.summary)?;
        let info = PyDict::new(py);
        let rows = &out.tcp_info;
        info.set_item("t", rows.iter().map(|r| r.t).collect::<Vec<_>>())?;
        info.set_item("flow", rows.iter().map(|r| r.flow).collect::<Vec<_>>())?;
        info.set_item("cwnd", rows.iter().map(|r| r.cwnd).collect::<Vec<_>>())?;
        info.set_item(
            "ssthresh",
            rows.iter().map(|r| r.ssthresh).collect::<Vec<_>>(),
        )?;
        info.set_item("rtt_s", rows.iter().map(|r| r.rtt_s).collect::<Vec<_>>())?;
        info.set_item(
            "rttvar_s",
            rows.iter().map(|r| r.rttvar_s).collect::<Vec<_>>(),
        )?;
        info.set_item(
            "unacked",
            rows.iter().map(|r| r.unacked).collect::<Vec<_>>(),
        )?;
        info.set_item(
            "total_retrans",
            rows.iter().map(|r| r.total_retrans).collect::<Vec<_>>(),
        )?;
        info.set_item(
            "bytes_acked",
            rows.iter().map(|r| r.bytes_acked).collect::<Vec<_>>(),
        )?;
        info.set_item(
            "delivery_rate_bps",
            rows.iter().map(|r| r.delivery_rate_bps).collect::<Vec<_>>(),
        )?;
        info.set_item(
            "ca_state",
            // u32, not u8: PyO3 turns a Vec<u8> into one `bytes` object.
            rows.iter()
                .map(|r| u32::from(r.ca_state))
                .collect::<Vec<_>>(),
        )?;
        let record = out.record.map(|r| r.to_json());
        PyTuple::new(
            py,
            [
                summary,
                info.into_any(),
                record.into_pyobject(py)?.into_any(),
            ],
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (
            py,
            source,
            seed,
            params,
            base_dir,
            duration,
            record,
            commands,
            shell,
            lead,
            linux_defaults,
            pcap,
            kernel,
        );
        Err(EmulationError::new_err(
            "live emulation needs Linux (network namespaces and TUN devices)",
        ))
    }
}

/// Replay a recording of [`emulate`] (`record`: its JSON text) through the
/// links of the same scenario, `params` and `seed`, built afresh, in
/// simulated time. Returns `{"packets", "mismatches", "first"}`: recorded
/// decisions, how many differ, and the first differing `(packet, link)`.
/// Needs neither root nor Linux-specific devices.
#[pyfunction]
#[pyo3(signature = (source, record, *, seed = None, params = None, base_dir = None))]
fn emulate_replay<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    record: &str,
    seed: Option<u64>,
    params: Option<&Bound<'py, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    #[cfg(target_os = "linux")]
    {
        use linklab_emu::fabric::{replay, Record};
        let rec = Record::from_json(record)
            .map_err(|e| EmulationError::new_err(format!("record: {e}")))?;
        let parts = built_parts(py, source, seed, params, base_dir)?;
        let mut links: Vec<_> = parts.network.links.into_iter().map(|l| l.model).collect();
        if let Some(&(_, l, _, _)) = rec.arrivals.iter().find(|a| a.1 as usize >= links.len()) {
            return Err(EmulationError::new_err(format!(
                "record: link {l} is not in this scenario ({} links); replay with the \
                 scenario, parameters and seed of the recording",
                links.len()
            )));
        }
        let (n, bad) = panic::catch_unwind(AssertUnwindSafe(|| replay(&mut links, &rec)))
            .map_err(|payload| internal_error("emulate_replay", payload.as_ref()))?;
        let out = PyDict::new(py);
        out.set_item("packets", n)?;
        out.set_item("mismatches", bad.len())?;
        out.set_item("first", bad.iter().take(10).collect::<Vec<_>>())?;
        Ok(out)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (py, source, record, seed, params, base_dir);
        Err(EmulationError::new_err("live emulation needs Linux"))
    }
}

/// Load and build `source` for the emulator.
#[cfg(target_os = "linux")]
fn built_parts(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    seed: Option<u64>,
    params: Option<&Bound<'_, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<api::RunParts> {
    let src = source_from_py(py, source)?;
    let opts = RunOptions {
        seed,
        params: params_from_py(params)?,
        base_dir,
        ..RunOptions::default()
    };
    panic::catch_unwind(AssertUnwindSafe(|| api::start(src, &opts)))
        .map_err(|payload| internal_error("emulate", payload.as_ref()))?
        .map(api::Run::into_parts)
        .map_err(|e| scenario_error(py, &e))
}

/// The files scenario `source` reads (trace files) with `params` substituted,
/// resolved against `base_dir`, as a list of paths; nothing is read.
/// Raises `ScenarioError` for a scenario that cannot be loaded.
#[pyfunction]
#[pyo3(signature = (source, *, params = None, base_dir = None))]
fn input_files(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    params: Option<&Bound<'_, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<Vec<String>> {
    let src = source_from_py(py, source)?;
    let opts = RunOptions {
        params: params_from_py(params)?,
        base_dir,
        ..RunOptions::default()
    };
    let files = panic::catch_unwind(AssertUnwindSafe(|| api::input_files(src, &opts)))
        .map_err(|payload| internal_error("input_files", payload.as_ref()))?
        .map_err(|e| scenario_error(py, &e))?;
    Ok(files.iter().map(|p| p.display().to_string()).collect())
}

/// Seed 003's fluid model of the losses one rate switch causes at a shared
/// buffer (Eqs. 1–6): rates in bytes/s, `window` and `buffer` in bytes, `rtt`
/// in seconds. Returns `case`, `t_start_s`, `t_end_s` (None in case 0),
/// `threshold_low_Bps`, `threshold_high_Bps`, `loss_volume_bytes`,
/// `clamped`. Raises `ValueError` `"NAME: why"` for invalid input.
#[pyfunction]
fn loss_volume<'py>(
    py: Python<'py>,
    b_ll: f64,
    b_b: f64,
    b_lh: f64,
    window: f64,
    buffer: f64,
    rtt: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let i = LossVolumeInput {
        b_ll,
        b_b,
        b_lh,
        window,
        buffer,
        rtt,
    };
    i.check()
        .map_err(|(name, why)| PyValueError::new_err(format!("{name}: {why}")))?;
    let r = i.evaluate();
    let out = PyDict::new(py);
    out.set_item("case", r.case)?;
    out.set_item("t_start_s", r.t_start)?;
    out.set_item("t_end_s", r.t_end)?;
    out.set_item("threshold_low_Bps", r.threshold_low)?;
    out.set_item("threshold_high_Bps", r.threshold_high)?;
    out.set_item("loss_volume_bytes", r.loss_volume)?;
    out.set_item("clamped", r.clamped)?;
    Ok(out)
}

/// The M/G/1 processor-sharing model at `load` over `capacity_bps`: the
/// slowdown 1/(1 − ρ), the mean flows in progress ρ/(1 − ρ), and per size
/// in `sizes` (bytes) `(size, alone_s, mean_s)`. Raises `ValueError`
/// `"NAME: why"` for invalid input (at most 1000 sizes, each in (0, 1e15]).
#[pyfunction]
fn ps_model<'py>(
    py: Python<'py>,
    load: f64,
    capacity_bps: f64,
    sizes: Vec<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let m = linklab_core::analytic::Ps { load, capacity_bps };
    m.check()
        .map_err(|(name, why)| PyValueError::new_err(format!("{name}: {why}")))?;
    if sizes.len() > 1000 {
        return Err(PyValueError::new_err(
            "size: more than 1000 sizes; allowed: at most 1000",
        ));
    }
    if let Some(x) = sizes.iter().find(|x| !(**x > 0.0 && **x <= 1e15)) {
        return Err(PyValueError::new_err(format!(
            "size: {x} bytes is out of range; allowed: above 0, at most 1e15"
        )));
    }
    let out = PyDict::new(py);
    out.set_item("slowdown", m.slowdown())?;
    out.set_item("mean_in_system", m.mean_in_system())?;
    let rows: Vec<(f64, f64, f64)> = sizes
        .iter()
        .map(|&x| (x, m.alone(x), m.mean_time(x)))
        .collect();
    out.set_item("rows", rows)?;
    Ok(out)
}

/// Seed 003's SCH allocation generator (`sch::AllocationConfig`, one
/// `[[allocations]]` entry given as a JSON object `entry`; `from`/`to` are read
/// but only `pairs` counts the mobiles) for `pairs` mobiles over a run of
/// `end_s` seconds: per mobile, its downlink's rate steps `(time_s, bit/s)`
/// from 0 s, as a run of the scenario uses them. Lets a peer simulator (ns-2)
/// see the same allocations. Raises `ValueError` `"KEY: why"` for invalid input.
#[pyfunction]
fn sch_schedules(entry: &str, pairs: usize, end_s: f64) -> PyResult<Vec<Vec<(f64, u64)>>> {
    let bad = |name: &str, why: String| PyValueError::new_err(format!("{name}: {why}"));
    let a: linklab_core::sch::AllocationConfig =
        serde_json::from_str(entry).map_err(|e| bad("entry", e.to_string()))?;
    a.validate().map_err(|e| bad("entry", e.to_string()))?;
    if pairs == 0 {
        return Err(bad("pairs", "is 0; allowed: at least one mobile".into()));
    }
    if !(end_s.is_finite() && end_s > 0.0) {
        return Err(bad(
            "end_s",
            format!("is {end_s}; allowed: a positive number of seconds"),
        ));
    }
    let end = Time((end_s * 1e9).round() as u64);
    let grants = a
        .expand(pairs, end, linklab_core::sch::MAX_STEPS)
        .map_err(|e| bad("entry", e.to_string()))?;
    Ok(a.schedules(&grants)
        .into_iter()
        .map(|s| s.into_iter().map(|(t, r)| (t.as_secs_f64(), r)).collect())
        .collect())
}

/// Seed 004's uncoded M-QAM at symbol SNR `snr_db` (dB): per modulation its
/// `modulation`, `bits`, `ser`, `fer` over AWGN and `ceiling` (bits/symbol
/// over Rayleigh fading of that mean SNR times log-normal shadowing of
/// `shadow_db`, with prediction `nmse`); the adaptive 4–256-QAM switching
/// `levels` (`[modulation, predicted SNR dB]`, the first from -inf) at that
/// mean SNR and NMSE, and their `ceiling`. `qam8`: `"cross"` or
/// `"rectangular"`. Raises `ValueError` `"NAME: why"` for invalid input.
#[pyfunction]
fn mqam<'py>(
    py: Python<'py>,
    snr_db: f64,
    shadow_db: f64,
    nmse: f64,
    qam8: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let bad = |name: &str, why: &str| PyValueError::new_err(format!("{name}: {why}"));
    if !snr_db.is_finite() || !(-20.0..=60.0).contains(&snr_db) {
        return Err(bad("snr", "is outside -20 to 60 dB"));
    }
    if !shadow_db.is_finite() || !(0.0..=20.0).contains(&shadow_db) {
        return Err(bad("shadow", "is outside 0 to 20 dB"));
    }
    if !nmse.is_finite() || !(0.0..1.0).contains(&nmse) {
        return Err(bad("nmse", "is outside 0 to 1 (1 excluded)"));
    }
    let q8 = match qam8 {
        "cross" => Qam8::Cross,
        "rectangular" => Qam8::Rectangular,
        _ => return Err(bad("qam8", "is not an 8-QAM; allowed: cross, rectangular")),
    };
    let g = qam::db_to_lin(snr_db);
    let rows = PyList::empty(py);
    for m in Modulation::ALL {
        let row = PyDict::new(py);
        row.set_item("modulation", m.name())?;
        row.set_item("bits", m.bits())?;
        row.set_item("ser", m.ser(g, q8))?;
        row.set_item("fer", 1.0 - m.frame_success(g, q8))?;
        row.set_item("ceiling", qam::ceiling(&[m], snr_db, shadow_db, nmse, q8))?;
        rows.append(row)?;
    }
    let set = Modulation::adaptive();
    let levels = PyList::empty(py);
    for (m, db) in qam::levels(set, g, nmse, q8) {
        levels.append((m.name(), db))?;
    }
    let out = PyDict::new(py);
    out.set_item("rows", rows)?;
    out.set_item("levels", levels)?;
    out.set_item("ceiling", qam::ceiling(set, snr_db, shadow_db, nmse, q8))?;
    Ok(out)
}

/// Samples of seed 004's fading channel (`docs/models/frame-arq.md`): `config`
/// is a `channel = { … }` table as a dict, `frame_rate` frames per second,
/// `frames` samples from frame 0, `seed` the run seed. Returns lists `gain`
/// (|h|²), `predicted_gain` (|ĥ|²), `error_power` (|h − ĥ|²), `shadow_db`,
/// and `doppler_hz`, `frames_per_shadow_sample`. Raises `ValueError` naming
/// the key for an invalid table.
#[pyfunction]
fn fading_samples<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    frame_rate: u32,
    frames: u64,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let text: String = py
        .import("json")?
        .call_method1("dumps", (config,))?
        .extract()?;
    let cfg: FadingConfig =
        serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("channel: {e}")))?;
    cfg.validate()
        .map_err(|e| PyValueError::new_err(format!("channel.{}: {}", e.path, e.allowed)))?;
    if !(1..=100_000).contains(&frame_rate) || !(1..=50_000_000).contains(&frames) {
        return Err(PyValueError::new_err(
            "frame_rate 1 to 100000 and frames 1 to 50000000 allowed",
        ));
    }
    let frame = Time::from_nanos(1_000_000_000 / u64::from(frame_rate));
    let mut ch = FadingChannel::new(&cfg, frame, seed, "channel");
    let n = frames as usize;
    let (mut g, mut p, mut e, mut s) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for k in 0..frames {
        let f = ch.at(k);
        g.push(f.gain);
        p.push(f.predicted / f.local_mean);
        e.push(f.error);
        s.push(f.shadow_db);
    }
    let out = PyDict::new(py);
    out.set_item("gain", g)?;
    out.set_item("predicted_gain", p)?;
    out.set_item("error_power", e)?;
    out.set_item("shadow_db", s)?;
    out.set_item("doppler_hz", cfg.doppler_hz())?;
    out.set_item(
        "frames_per_shadow_sample",
        cfg.shadow().2 * f64::from(frame_rate),
    )?;
    Ok(out)
}

/// Read `text` as a scenario quantity of `kind`: `"rate"` (bit/s),
/// `"size"` (bytes) or `"time"` (seconds). Raises `ValueError` with what
/// is wrong and what is allowed.
#[pyfunction]
fn parse_quantity(kind: &str, text: &str) -> PyResult<f64> {
    match kind {
        "rate" => text
            .parse::<Rate>()
            .map(|r| r.bps() as f64)
            .map_err(|e| PyValueError::new_err(e.message())),
        "size" => text
            .parse::<Bytes>()
            .map(|b| b.get() as f64)
            .map_err(|e| PyValueError::new_err(e.message())),
        "time" => text
            .parse::<Time>()
            .map(|t| t.as_nanos() as f64 / 1e9)
            .map_err(|e| PyValueError::new_err(e.message())),
        _ => Err(PyValueError::new_err(format!(
            "unknown quantity kind {kind:?}; allowed: \"rate\", \"size\", \"time\""
        ))),
    }
}

/// The JSON Schema of scenario files, as JSON text.
#[pyfunction]
fn json_schema() -> PyResult<String> {
    let schema = panic::catch_unwind(api::json_schema)
        .map_err(|payload| internal_error("json_schema", payload.as_ref()))?;
    serde_json::to_string_pretty(&schema)
        .map_err(|e| InternalError::new_err(format!("cannot serialise the JSON Schema: {e}")))
}

/// The selective-repeat ARQ Markov model (seed 001 §III-A) evaluated for
/// `n = 0 ..= n_max`: a dict with `lambda1`, `mean_tx` (`E[η]`, infinite when
/// the SDU may never complete), `pi_good`, `pi_bad` and the lists `F`
/// (`F(n)`), `F_hat` (`F̂(n)`, with `F̂(0) = 1`) and `mean_tx_limited`
/// (`E[η | n ≤ M_t]` with `M_t = n`), each of `n_max + 1` values. Raises
/// `ValueError` naming the parameter for invalid input, including
/// `npdu > MAX_NPDU` and `n_max > MAX_N` (see `arq_bounds`).
#[pyfunction]
fn arq_model<'py>(
    py: Python<'py>,
    p_good: f64,
    p_bad: f64,
    g: f64,
    b: f64,
    npdu: u32,
    n_max: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let m = ArqModel::new(p_good, p_bad, g, b, npdu).map_err(PyValueError::new_err)?;
    let (pi_g, pi_b) = m.stationary();
    let f = m
        .residual_loss_curve(n_max)
        .map_err(PyValueError::new_err)?;
    let out = PyDict::new(py);
    out.set_item("lambda1", m.lambda1())?;
    out.set_item("mean_tx", m.mean_tx().map_err(PyValueError::new_err)?)?;
    out.set_item("pi_good", pi_g)?;
    out.set_item("pi_bad", pi_b)?;
    out.set_item("F", &f)?;
    let f_hat: Vec<f64> = (0..=n_max).map(|n| m.residual_loss_approx(n)).collect();
    out.set_item("F_hat", f_hat)?;
    // E[η | n ≤ M_t] = Σ_{n<M_t} F(n): the partial sums of the curve above.
    let limited: Vec<f64> = std::iter::once(0.0)
        .chain(f.iter().take(n_max as usize).scan(0.0, |acc, x| {
            *acc += x;
            Some(*acc)
        }))
        .collect();
    out.set_item("mean_tx_limited", limited)?;
    Ok(out)
}

/// The smallest `M_t ≥ 1` whose approximate residual SDU loss `F̂(M_t)` is at
/// most `target` (capped; see `ArqModel::limit_for_target`).
#[pyfunction]
fn arq_limit(p_good: f64, p_bad: f64, g: f64, b: f64, npdu: u32, target: f64) -> PyResult<u32> {
    let m = ArqModel::new(p_good, p_bad, g, b, npdu).map_err(PyValueError::new_err)?;
    Ok(m.limit_for_target(target))
}

/// Monte Carlo of `sdus` isolated SDUs (`ArqModel::simulate`, stream
/// `analytic:arq-mc` of `seed`): the number of SDUs still incomplete after
/// `n` frames, for `n = 0 ..= n_max`. Raises `ValueError` beyond the bounds
/// (`sdus > MAX_SDUS`, `n_max > MAX_N`, `npdu > MAX_NPDU`).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
fn arq_monte_carlo(
    py: Python<'_>,
    p_good: f64,
    p_bad: f64,
    g: f64,
    b: f64,
    npdu: u32,
    sdus: usize,
    n_max: u32,
    seed: u64,
) -> PyResult<Vec<u64>> {
    let m = ArqModel::new(p_good, p_bad, g, b, npdu).map_err(PyValueError::new_err)?;
    let etas = py
        .detach(|| m.simulate(sdus, n_max, &mut Rng::stream(seed, "analytic:arq-mc")))
        .map_err(PyValueError::new_err)?;
    // How many SDUs took each η (capped at n_max + 1), then counts[n] = #{η > n}.
    let n = n_max as usize;
    let mut per_eta = vec![0u64; n + 2];
    for e in etas {
        per_eta[(e as usize).min(n + 1)] += 1;
    }
    let mut counts = vec![0u64; n + 1];
    let mut above = per_eta[n + 1];
    for k in (0..=n).rev() {
        counts[k] = above;
        above += per_eta[k];
    }
    Ok(counts)
}

/// The cap of `arq_limit` (an unreachable target returns it).
#[pyfunction]
fn arq_limit_cap() -> u32 {
    LIMIT_CAP
}

/// The size bounds of the exact ARQ model: `(MAX_NPDU, MAX_N, MAX_SDUS)`.
#[pyfunction]
fn arq_bounds() -> (u32, u32, usize) {
    (MAX_NPDU, MAX_N, MAX_SDUS)
}

/// The version of the linklab core and binding.
/// The ITU-T G.107 E-model: `inputs` maps G.107 Table 3 names (`slr`,
/// `rlr`, `stmr`, `lstr`, `ds`, `dr`, `telr`, `wepl`, `t`, `tr`, `ta`, `qdu`,
/// `ie`, `bpl`, `ppl`, `burst_r`, `nc`, `nfor`, `ps`, `pr`, `a`, `s_t`,
/// `m_t`; delays in ms, `ppl` in %) to values over the defaults. Returns
/// every input as used, and `ro`, `is`, `id`, `idd`, `ie_eff`, `r`, `mos`.
/// Raises `ValueError` `"NAME: why"` for an unknown or invalid input.
#[pyfunction]
fn emodel<'py>(py: Python<'py>, inputs: Vec<(String, f64)>) -> PyResult<Bound<'py, PyDict>> {
    use linklab_core::analytic::EModel;
    let mut m = EModel::default();
    for (name, v) in inputs {
        let slot = match name.as_str() {
            "slr" => &mut m.slr,
            "rlr" => &mut m.rlr,
            "stmr" => &mut m.stmr,
            "lstr" => &mut m.lstr,
            "ds" => &mut m.ds,
            "dr" => &mut m.dr,
            "telr" => &mut m.telr,
            "wepl" => &mut m.wepl,
            "t" => &mut m.t,
            "tr" => &mut m.tr,
            "ta" => &mut m.ta,
            "qdu" => &mut m.qdu,
            "ie" => &mut m.ie,
            "bpl" => &mut m.bpl,
            "ppl" => &mut m.ppl,
            "burst_r" => &mut m.burst_r,
            "nc" => &mut m.nc,
            "nfor" => &mut m.nfor,
            "ps" => &mut m.ps,
            "pr" => &mut m.pr,
            "a" => &mut m.a,
            "s_t" => &mut m.s_t,
            "m_t" => &mut m.m_t,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{name}: is not an E-model input"
                )))
            }
        };
        *slot = v;
    }
    m.check()
        .map_err(|(name, allowed)| PyValueError::new_err(format!("{name}: allowed: {allowed}")))?;
    let r = m.rate();
    let out = PyDict::new(py);
    for (k, v) in [
        ("slr", m.slr),
        ("rlr", m.rlr),
        ("stmr", m.stmr),
        ("lstr", m.lstr),
        ("ds", m.ds),
        ("dr", m.dr),
        ("telr", m.telr),
        ("wepl", m.wepl),
        ("t", m.t),
        ("tr", m.tr),
        ("ta", m.ta),
        ("qdu", m.qdu),
        ("ie", m.ie),
        ("bpl", m.bpl),
        ("ppl", m.ppl),
        ("burst_r", m.burst_r),
        ("nc", m.nc),
        ("nfor", m.nfor),
        ("ps", m.ps),
        ("pr", m.pr),
        ("a", m.a),
        ("s_t", m.s_t),
        ("m_t", m.m_t),
        ("ro", r.ro),
        ("is", r.is),
        ("id", r.id),
        ("idd", r.idd),
        ("ie_eff", r.ie_eff),
        ("r", r.r),
        ("mos", r.mos),
    ] {
        out.set_item(k, v)?;
    }
    Ok(out)
}

/// The voice codecs of `[[media]]` (`kind = "voice"`): per codec its name,
/// frame (ms), frame bytes, look-ahead (ms), default packet interval (ms),
/// and G.113's `ie` and `bpl`.
#[pyfunction]
fn voice_codecs() -> Vec<(&'static str, f64, u32, f64, f64, f64, f64)> {
    use linklab_core::media::Codec;
    [Codec::G711, Codec::G711Plc, Codec::G729a, Codec::G7231]
        .into_iter()
        .map(|c| {
            let ms = |t: Time| t.as_secs_f64() * 1e3;
            (
                c.name(),
                ms(c.frame()),
                c.frame_bytes(),
                ms(c.lookahead()),
                ms(c.default_interval()),
                c.ie(),
                c.bpl(),
            )
        })
        .collect()
}

/// A named CDF's points: (size in packets, cumulative probability).
type NamedCdf = (&'static str, Vec<(f64, f64)>);

/// The shipped flow-size CDFs (`size = "web_search"`, `"data_mining"`) by
/// name, and the bytes of one packet.
#[pyfunction]
fn size_cdfs() -> (Vec<NamedCdf>, f64) {
    use linklab_core::workload::{CDF_PACKET, DATA_MINING, WEB_SEARCH};
    (
        vec![
            ("web_search", WEB_SEARCH.to_vec()),
            ("data_mining", DATA_MINING.to_vec()),
        ],
        CDF_PACKET,
    )
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// linklab's Rust core: `run`, `json_schema`, `version`, `arq_model`, `arq_limit`, `ScenarioError`, `InternalError`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(input_files, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_replay, m)?)?;
    m.add_function(wrap_pyfunction!(loss_volume, m)?)?;
    m.add_function(wrap_pyfunction!(ps_model, m)?)?;
    m.add_function(wrap_pyfunction!(mqam, m)?)?;
    m.add_function(wrap_pyfunction!(emodel, m)?)?;
    m.add_function(wrap_pyfunction!(voice_codecs, m)?)?;
    m.add_function(wrap_pyfunction!(size_cdfs, m)?)?;
    m.add_function(wrap_pyfunction!(sch_schedules, m)?)?;
    m.add_function(wrap_pyfunction!(fading_samples, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(arq_model, m)?)?;
    m.add_function(wrap_pyfunction!(arq_limit, m)?)?;
    m.add_function(wrap_pyfunction!(arq_limit_cap, m)?)?;
    m.add_function(wrap_pyfunction!(arq_monte_carlo, m)?)?;
    m.add_function(wrap_pyfunction!(arq_bounds, m)?)?;
    m.add("MAX_DEPTH", MAX_DEPTH)?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("EmulationError", py.get_type::<EmulationError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("AccountingError", py.get_type::<AccountingError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
