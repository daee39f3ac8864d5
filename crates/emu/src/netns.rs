//! Anonymous network namespaces.
//!
//! A namespace is made by a short-lived thread that calls
//! `unshare(CLONE_NEWNET)` (namespaces belong to threads, so the rest of the
//! process is untouched) and opens `/proc/thread-self/ns/net`. That file
//! descriptor keeps the namespace alive; it is never bind-mounted or named,
//! so when the descriptor and every task inside are gone — also after
//! `kill -9` of the emulator — the kernel frees the namespace and the devices
//! in it. Work inside it runs on a thread that `setns`es into it, or in a
//! child process that does so before `exec`.
//!
//! Every child process is tied to the emulator: it gets `SIGKILL` when the
//! thread that started it ends (`PR_SET_PDEATHSIG`), also after `kill -9` of
//! the emulator. A user command ([`NetNs::supervise`]) moreover runs under a
//! minimal init (PID 1) of a PID namespace of its own, so that everything it
//! starts — background jobs and daemons included — is killed by the kernel
//! when it ends or is killed: nothing started inside a namespace outlives
//! the run, and nothing is left to hold the namespace.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// An anonymous network namespace, alive while this value is.
#[derive(Debug)]
pub struct NetNs {
    fd: OwnedFd,
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl NetNs {
    /// A fresh network namespace. Needs `CAP_SYS_ADMIN` (root).
    pub fn new() -> io::Result<NetNs> {
        let fd = thread::spawn(|| -> io::Result<OwnedFd> {
            // SAFETY: unshare only changes this thread's namespaces.
            check(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
            Ok(File::open("/proc/thread-self/ns/net")?.into())
        })
        .join()
        .map_err(|_| io::Error::other("namespace thread panicked"))??;
        Ok(NetNs { fd })
    }

    /// Run `f` on a thread inside the namespace and return its result.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> io::Result<T> + Send + 'static,
    ) -> io::Result<T> {
        let fd = self.fd.try_clone()?;
        thread::spawn(move || {
            // SAFETY: setns on a namespace fd we own; affects this thread only.
            check(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) })?;
            f()
        })
        .join()
        .map_err(|_| io::Error::other("namespace thread panicked"))?
    }

    /// Spawn a thread inside the namespace running `f`.
    pub fn spawn<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> io::Result<T> + Send + 'static,
    ) -> io::Result<thread::JoinHandle<io::Result<T>>> {
        let fd = self.fd.try_clone()?;
        Ok(thread::spawn(move || {
            // SAFETY: as in `run`.
            check(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) })?;
            f()
        }))
    }

    /// `program` as a command that runs inside the namespace. The child is
    /// killed (`SIGKILL`) when the thread that spawns it ends, so spawn it
    /// from a thread that waits for it.
    pub fn command(&self, program: &str) -> io::Result<Command> {
        self.command_under(program, false)
    }

    /// [`NetNs::command`]; with `init`, the child becomes a minimal init
    /// ([`run_init`]) that forks the program and waits for it.
    fn command_under(&self, program: &str, init: bool) -> io::Result<Command> {
        let fd = self.fd.try_clone()?;
        let parent = own_pidfd();
        let mut cmd = Command::new(program);
        // SAFETY: between fork and exec only async-signal-safe calls: setns,
        // prctl, poll, and in `run_init` fork, close_range, waitpid, _exit.
        unsafe {
            cmd.pre_exec(move || {
                check(libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET))?;
                tie_to_parent(parent.as_ref().map(AsRawFd::as_raw_fd))?;
                if init {
                    run_init()?;
                }
                Ok(())
            });
        }
        Ok(cmd)
    }

    /// Run `program ARGS` (with `env` added) inside the namespace, under a
    /// minimal init (PID 1) of a PID namespace of its own, on a supervising
    /// thread that waits for it. When the program ends, the init exits with
    /// its status (128 + N if signal N ended it) and the kernel kills
    /// whatever the program left behind; when `stop` is set, the supervisor
    /// kills the init (and so everything under it) with `SIGKILL`; when the
    /// emulator dies, `PR_SET_PDEATHSIG` does. The program itself is not
    /// PID 1, so signals reach it as anywhere else. Returns once the program
    /// has started (or with the reason it could not); the thread's result
    /// says how it ended.
    pub fn supervise(
        &self,
        program: &str,
        args: &[&str],
        env: &[(String, String)],
        stop: Arc<AtomicBool>,
    ) -> io::Result<thread::JoinHandle<Ended>> {
        let mut cmd = self.command_under(program, true)?;
        cmd.args(args).envs(env.iter().cloned());
        let (tx, rx) = mpsc::channel();
        let handle = thread::Builder::new()
            .name("linklab-command".into())
            .spawn(move || {
                // SAFETY: unshare only changes this thread's namespace for
                // children; this thread spawns one child and ends after it.
                let child =
                    check(unsafe { libc::unshare(libc::CLONE_NEWPID) }).and_then(|()| cmd.spawn());
                let mut child = match child {
                    Ok(c) => {
                        let _ = tx.send(Ok(()));
                        c
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return Ended::default();
                    }
                };
                loop {
                    match child.try_wait() {
                        Ok(Some(status)) => {
                            return Ended {
                                status: Some(status),
                                at: Some(Instant::now()),
                                killed: false,
                            }
                        }
                        Ok(None) if stop.load(Ordering::Relaxed) => {
                            let _ = child.kill();
                            return Ended {
                                status: child.wait().ok(),
                                at: None,
                                killed: true,
                            };
                        }
                        Ok(None) => thread::sleep(Duration::from_millis(5)),
                        Err(_) => {
                            let _ = child.kill();
                            return Ended {
                                status: child.wait().ok(),
                                at: None,
                                killed: true,
                            };
                        }
                    }
                }
            })?;
        match rx.recv() {
            Ok(Ok(())) => Ok(handle),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => Err(io::Error::other("command supervisor ended early")),
        }
    }

    /// Run `ip ARGS` inside the namespace; an error carries its stderr.
    pub fn ip(&self, args: &[&str]) -> io::Result<()> {
        let out = self.command("ip")?.args(args).output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "ip {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    }

    /// The namespace's inode (for tests and logs).
    pub fn id(&self) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: dup of a valid fd; the File closes the duplicate.
        let f = unsafe { File::from_raw_fd(libc::dup(self.fd.as_raw_fd())) };
        Ok(f.metadata()?.ino())
    }
}

/// How a supervised program ended ([`NetNs::supervise`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ended {
    /// Its exit status (`None`: unknown).
    pub status: Option<ExitStatus>,
    /// When it ended by itself (`None`: it was killed by the supervisor).
    pub at: Option<Instant>,
    /// The supervisor killed it because the run ended.
    pub killed: bool,
}

/// In the child before `exec`, as PID 1 of a fresh PID namespace: fork; the
/// child returns (and goes on to `exec` the program); this process becomes
/// the namespace's init: it closes every descriptor but 0-2 (among them the
/// pipe on which `Command::spawn` waits for the `exec`), reaps every task
/// until the program has ended, and exits with the program's status (128 +
/// N for signal N). Its exit makes the kernel kill the rest of the
/// namespace. Never returns in the init.
unsafe fn run_init() -> io::Result<()> {
    let child = libc::fork();
    if child < 0 {
        return Err(io::Error::last_os_error());
    }
    if child == 0 {
        return Ok(());
    }
    libc::prctl(libc::PR_SET_NAME, c"linklab-init".as_ptr() as libc::c_ulong);
    if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) < 0 {
        for fd in 3..1024 {
            libc::close(fd);
        }
    }
    let mut status = 0;
    let code = loop {
        let r = libc::waitpid(-1, &mut status, 0);
        if r == child {
            if libc::WIFEXITED(status) {
                break libc::WEXITSTATUS(status);
            }
            if libc::WIFSIGNALED(status) {
                break 128 + libc::WTERMSIG(status);
            }
        } else if r < 0 && *libc::__errno_location() != libc::EINTR {
            break 255;
        }
    };
    libc::_exit(code)
}

/// A pidfd of this process, for children to check that it still lives.
fn own_pidfd() -> Option<OwnedFd> {
    // SAFETY: pidfd_open of our own pid; the descriptor (close-on-exec) is
    // owned by the returned value.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// In a child before `exec`: `SIGKILL` when the parent thread ends; and if
/// the parent process died before that was set, fail (the child then exits).
fn tie_to_parent(parent: Option<RawFd>) -> io::Result<()> {
    // SAFETY: prctl and poll are async-signal-safe.
    unsafe {
        check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
        ))?;
        if let Some(fd) = parent {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            if libc::poll(&mut p, 1, 0) > 0 {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
        }
    }
    Ok(())
}
