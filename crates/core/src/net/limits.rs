//! Size limits of one simulated network.
//!
//! Everything a network holds grows linearly with these counts (routes are
//! per flow, not per node pair), so the caps only keep a mistyped range such
//! as `N{1..99999999}` from exhausting memory before the run starts. They are
//! checked while a scenario is expanded (before anything is allocated for the
//! items) and again by [`super::NetworkBuilder`].

/// Most nodes in one network.
pub const MAX_NODES: usize = 1_000_000;

/// Most duplex links in one network.
pub const MAX_LINKS: usize = 1_000_000;

/// Most TCP flows in one network (each flow holds a sender and a receiver,
/// a few KiB each).
pub const MAX_FLOWS: usize = 200_000;
