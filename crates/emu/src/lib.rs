//! linklab's live emulator (issue 14): real TCP stacks in Linux network
//! namespaces, their packets carried through the simulator's link models in
//! real time. This crate is Linux-only; the core stays sans-IO.
//!
//! Built so far: anonymous network namespaces kept alive by a file descriptor
//! ([`netns::NetNs`]), TUN devices inside them ([`tun::Tun`]) addressed from
//! the benchmarking range 198.18.0.0/15 only, and the real-time loop that
//! joins two of them through an unchanged link model ([`engine::Bridge`]:
//! epoll over the TUN descriptors and a timerfd, a short spin to each
//! deadline, payload bytes kept beside the model by packet id, CE marks
//! written into the IP header with its checksum fixed). Not yet: the
//! `linklab emulate` command, scenarios with several links, traffic
//! generators, residual bit errors, outputs and record/replay.

pub mod engine;
pub mod fabric;
pub mod netns;
pub mod sock;
pub mod tun;
