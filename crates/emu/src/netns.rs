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

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::thread;

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

    /// `program` as a command that runs inside the namespace.
    pub fn command(&self, program: &str) -> io::Result<Command> {
        let fd = self.fd.try_clone()?;
        let mut cmd = Command::new(program);
        // SAFETY: between fork and exec only async-signal-safe calls: setns.
        unsafe {
            cmd.pre_exec(move || check(libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET)));
        }
        Ok(cmd)
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
