//! Static shortest-path (minimum hop count) routes.

use std::collections::VecDeque;

use crate::packet::NodeId;

/// Marks "no route" in the table.
pub const NO_ROUTE: u32 = u32::MAX;

/// First-hop table: entry `src * n + dst` is the index (into `edges`) of the
/// first link direction on a minimum-hop path, or [`NO_ROUTE`]. Ties go to the
/// link added first, so routes are deterministic.
pub fn shortest_paths(n: usize, edges: &[(NodeId, NodeId)]) -> Vec<u32> {
    let mut out_edges: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, (a, _)) in edges.iter().enumerate() {
        out_edges[a.0 as usize].push(i as u32);
    }
    let mut table = vec![NO_ROUTE; n * n];
    let mut seen = vec![false; n];
    let mut q = VecDeque::new();
    for s in 0..n {
        seen.iter_mut().for_each(|x| *x = false);
        seen[s] = true;
        q.clear();
        // (node, first hop used to reach it); the source has none yet.
        q.push_back((s, NO_ROUTE));
        while let Some((u, first)) = q.pop_front() {
            for &e in &out_edges[u] {
                let v = edges[e as usize].1 .0 as usize;
                if !seen[v] {
                    seen[v] = true;
                    let hop = if u == s { e } else { first };
                    table[s * n + v] = hop;
                    q.push_back((v, hop));
                }
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_and_shortcut() {
        // 0 -> 1 -> 2 -> 3 and a shortcut 0 -> 3 added last.
        let e = [(0, 1), (1, 2), (2, 3), (0, 3)].map(|(a, b)| (NodeId(a), NodeId(b)));
        let t = shortest_paths(4, &e);
        assert_eq!(t[2], 0); // 0 -> 2 via link 0
        assert_eq!(t[3], 3); // 0 -> 3 direct
        assert_eq!(t[4 + 3], 1); // 1 -> 3 via link 1
        assert_eq!(t[3 * 4], NO_ROUTE); // 3 has no out links
    }
}
