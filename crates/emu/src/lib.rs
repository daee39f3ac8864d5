//! linklab's live emulator (issue 14): real TCP stacks in Linux network
//! namespaces, their packets carried through the simulator's link models in
//! real time. This crate is Linux-only; the core stays sans-IO.
//!
//! - [`netns::NetNs`]: anonymous network namespaces kept alive by a file
//!   descriptor (the kernel frees them even after `kill -9`);
//! - [`tun::Tun`]: TUN devices inside them, addressed from the benchmarking
//!   range 198.18.0.0/15 only;
//! - [`wire`]: live packets parsed into the models' view, CE marks and
//!   residual bit errors written back into the bytes;
//! - [`fabric::Fabric`]: the real-time loop joining the namespaces through a
//!   network of unchanged link models, with record and [`fabric::replay`];
//! - [`emulate`]: a scenario run live — a kernel per flow endpoint, kernel
//!   TCP connections or user commands as traffic, the run's summary;
//! - [`sock`]: socket options (congestion control, `TCP_INFO`).

pub mod emulate;
pub mod fabric;
pub mod netns;
pub mod sock;
pub mod tun;
pub mod wire;
