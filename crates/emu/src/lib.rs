//! linklab's live emulator (issue 14): real TCP stacks in Linux network
//! namespaces, their packets carried through the simulator's link models in
//! real time. This crate is Linux-only; the core stays sans-IO.
//!
//! This first step is the plumbing: anonymous network namespaces kept alive
//! by a file descriptor ([`netns::NetNs`]) and TUN devices inside them
//! ([`tun::Tun`]), addressed from the benchmarking range 198.18.0.0/15 only.

pub mod netns;
pub mod tun;
