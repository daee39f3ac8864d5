//! Static shortest-path (minimum hop count) routes, computed only for the
//! node pairs that carry traffic.
//!
//! A route is a list of link-direction *codes* (`2 * link + dir`, dir 0 = a → b,
//! 1 = b → a). The rule is hop by hop: at node `x` heading for `d`, take the
//! lowest-coded link direction out of `x` whose far end is one hop closer to
//! `d`. (This is what a breadth-first search from every node with "ties to the
//! link added first" produced when the simulator kept a node × node first-hop
//! table; `all_pairs_first_hop` keeps that algorithm as the test oracle.)
//!
//! To find routes on large graphs quickly, [`Router::new`] first peels nodes of
//! degree 1 (counting links, so parallel links stay) until only the 2-core is
//! left: every peeled node hangs in a tree off one core node, its *root*. Between
//! nodes of one tree the route is the unique tree path (up to their lowest common
//! ancestor, then down); otherwise it climbs to the source's root, crosses the
//! core, and descends from the destination's root. Core segments come from one
//! breadth-first search per distinct core destination over the core links only,
//! stopped as soon as every core source that needs it has been reached.
//!
//! Cost: O(N + L) to peel (N nodes, L links); per distinct core destination
//! O(C + Lc) at most (C core nodes, Lc core links); plus the length of the
//! routes. Memory: O(N + L) plus the total length of the distinct routes.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::packet::NodeId;

/// Marks "none" (no parent, not reached).
const NONE: u32 = u32::MAX;

/// Routes for a list of (source, destination) pairs, stored in one arena.
#[derive(Debug, Default)]
pub struct Routes {
    /// Per pair: `(start, len)` of its codes in `codes`; identical pairs share one slice.
    spans: Vec<(usize, u32)>,
    codes: Vec<u32>,
}

impl Routes {
    /// Code of hop `hop` (0 = first link) of route `route`.
    #[inline]
    pub fn hop(&self, route: usize, hop: u32) -> u32 {
        let (start, len) = self.spans[route];
        debug_assert!(
            hop < len,
            "hop {hop} past the end of route {route} ({len} hops)"
        );
        self.codes[start + hop as usize]
    }

    /// The codes of route `route`.
    pub fn route(&self, route: usize) -> &[u32] {
        let (start, len) = self.spans[route];
        &self.codes[start..start + len as usize]
    }
}

/// The topology, preprocessed for route queries.
#[derive(Debug)]
pub struct Router {
    /// Link endpoints `(a, b)`.
    ends: Vec<(u32, u32)>,
    /// Peeled (tree) node: code of the link direction to its parent; core node: [`NONE`].
    up: Vec<u32>,
    /// Hops from the node up to its root (0 for core nodes).
    depth: Vec<u32>,
    /// The core node each node hangs off (itself for core nodes).
    root: Vec<u32>,
    /// Out-codes between two core nodes, per core node, in code order (CSR).
    core_start: Vec<usize>,
    core_codes: Vec<u32>,
}

impl Router {
    /// Preprocess `n` nodes joined by duplex `links`.
    pub fn new(n: usize, links: &[(NodeId, NodeId)]) -> Router {
        let ends: Vec<(u32, u32)> = links.iter().map(|(a, b)| (a.0, b.0)).collect();
        // Incident links per node (CSR); a self-loop counts twice.
        let mut deg = vec![0u32; n];
        for &(a, b) in &ends {
            deg[a as usize] += 1;
            deg[b as usize] += 1;
        }
        let mut inc_start = Vec::with_capacity(n + 1);
        inc_start.push(0usize);
        for &d in &deg {
            inc_start.push(inc_start[inc_start.len() - 1] + d as usize);
        }
        let mut fill = inc_start.clone();
        let mut inc = vec![0u32; 2 * ends.len()];
        for (i, &(a, b)) in ends.iter().enumerate() {
            for v in [a, b] {
                inc[fill[v as usize]] = i as u32;
                fill[v as usize] += 1;
            }
        }
        // Peel degree-1 nodes; `order` lists them, children before parents.
        let mut up = vec![NONE; n];
        let mut order = Vec::new();
        let mut stack: Vec<u32> = (0..n as u32).filter(|&v| deg[v as usize] == 1).collect();
        while let Some(v) = stack.pop() {
            let vi = v as usize;
            if deg[vi] != 1 {
                continue; // its last neighbour was peeled first: v is a root
            }
            let Some((link, parent)) = inc[inc_start[vi]..inc_start[vi + 1]]
                .iter()
                .map(|&l| {
                    let (a, b) = ends[l as usize];
                    (l, if a == v { b } else { a })
                })
                .find(|&(_, other)| other != v && (up[other as usize] == NONE))
            else {
                unreachable!("a node of degree 1 has one remaining link");
            };
            up[vi] = 2 * link + u32::from(ends[link as usize].0 != v);
            deg[vi] = 0;
            deg[parent as usize] -= 1;
            if deg[parent as usize] == 1 {
                stack.push(parent);
            }
            order.push(v);
        }
        let mut depth = vec![0u32; n];
        let mut root: Vec<u32> = (0..n as u32).collect();
        for &v in order.iter().rev() {
            let p = far_end(&ends, up[v as usize]) as usize;
            depth[v as usize] = depth[p] + 1;
            root[v as usize] = root[p];
        }
        // Core adjacency, in code order.
        let is_core = |v: u32| up[v as usize] == NONE;
        let mut core_start = vec![0usize; n + 1];
        let core_edge = |code: u32| {
            let (from, to) = endpoints(&ends, code);
            (is_core(from) && is_core(to)).then_some(from)
        };
        for code in 0..2 * ends.len() as u32 {
            if let Some(from) = core_edge(code) {
                core_start[from as usize + 1] += 1;
            }
        }
        for v in 0..n {
            core_start[v + 1] += core_start[v];
        }
        let mut fill = core_start.clone();
        let mut core_codes = vec![0u32; core_start[n]];
        for code in 0..2 * ends.len() as u32 {
            if let Some(from) = core_edge(code) {
                core_codes[fill[from as usize]] = code;
                fill[from as usize] += 1;
            }
        }
        Router {
            ends,
            up,
            depth,
            root,
            core_start,
            core_codes,
        }
    }

    /// Node a link direction arrives at.
    fn to(&self, code: u32) -> u32 {
        far_end(&self.ends, code)
    }

    /// The route from `src` to `dst` (`None` if there is none or `src == dst`).
    pub fn route(&self, src: NodeId, dst: NodeId) -> Option<Vec<u32>> {
        let routes = self.routes(&[(src, dst)]);
        routes.has(0).then(|| routes.table.route(0).to_vec())
    }

    /// Routes of `pairs`; a pair with no route (or `src == dst`) gets `None`.
    pub fn routes(&self, pairs: &[(NodeId, NodeId)]) -> RouteSet {
        // Core segments needed: (core source, core destination).
        let mut wanted: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for &(s, d) in pairs {
            let (rs, rd) = (self.root[s.0 as usize], self.root[d.0 as usize]);
            if s != d && rs != rd {
                wanted.entry(rd).or_default().push(rs);
            }
        }
        let core = self.core_segments(wanted);
        let mut table = Routes::default();
        let mut found = Vec::with_capacity(pairs.len());
        let mut seen: HashMap<(NodeId, NodeId), Option<(usize, u32)>> = HashMap::new();
        let mut down = Vec::new();
        for &(s, d) in pairs {
            let span = *seen.entry((s, d)).or_insert_with(|| {
                let start = table.codes.len();
                self.append_route(s.0, d.0, &core, &mut table.codes, &mut down)
                    .then(|| (start, (table.codes.len() - start) as u32))
            });
            found.push(span.is_some());
            table.spans.push(span.unwrap_or((0, 0)));
        }
        RouteSet { table, found }
    }

    /// Core paths for every `(source, destination)` of `wanted`
    /// (destination → sources): key `(source, destination)`, value the codes
    /// (`None`: not connected).
    fn core_segments(
        &self,
        wanted: BTreeMap<u32, Vec<u32>>,
    ) -> HashMap<(u32, u32), Option<Vec<u32>>> {
        let mut out = HashMap::new();
        let mut dist = vec![NONE; self.up.len()];
        let mut queue: Vec<u32> = Vec::new();
        for (rd, sources) in wanted {
            // Breadth-first from rd (links are duplex, so distances to rd equal
            // distances from it) until every source is reached.
            let mut needed: HashSet<u32> = sources.iter().copied().filter(|&s| s != rd).collect();
            for &v in &queue {
                dist[v as usize] = NONE;
            }
            queue.clear();
            dist[rd as usize] = 0;
            queue.push(rd);
            let mut head = 0;
            while head < queue.len() && !needed.is_empty() {
                let u = queue[head];
                head += 1;
                for &code in self.core_out(u) {
                    let v = self.to(code);
                    if dist[v as usize] == NONE {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push(v);
                        needed.remove(&v);
                    }
                }
            }
            for rs in sources {
                out.entry((rs, rd)).or_insert_with(|| {
                    if dist[rs as usize] == NONE {
                        return None;
                    }
                    // Hop by hop: the first core link one step closer to rd.
                    let mut path = Vec::with_capacity(dist[rs as usize] as usize);
                    let mut x = rs;
                    while x != rd {
                        let want = dist[x as usize] - 1;
                        let code = *self
                            .core_out(x)
                            .iter()
                            .find(|&&c| dist[self.to(c) as usize] == want)
                            .expect("a reached node has a neighbour one hop closer");
                        path.push(code);
                        x = self.to(code);
                    }
                    Some(path)
                });
            }
        }
        out
    }

    fn core_out(&self, v: u32) -> &[u32] {
        &self.core_codes[self.core_start[v as usize]..self.core_start[v as usize + 1]]
    }

    /// Append the route `s → d` to `out`; false (nothing appended) if there is none.
    fn append_route(
        &self,
        s: u32,
        d: u32,
        core: &HashMap<(u32, u32), Option<Vec<u32>>>,
        out: &mut Vec<u32>,
        down: &mut Vec<u32>,
    ) -> bool {
        if s == d {
            return false;
        }
        let (rs, rd) = (self.root[s as usize], self.root[d as usize]);
        let start = out.len();
        down.clear();
        let (mut x, mut y) = (s, d);
        if rs == rd {
            // One tree: up to the lowest common ancestor, then down.
            while self.depth[x as usize] > self.depth[y as usize] {
                x = self.climb(x, out);
            }
            while self.depth[y as usize] > self.depth[x as usize] {
                y = self.climb(y, down);
            }
            while x != y {
                x = self.climb(x, out);
                y = self.climb(y, down);
            }
        } else {
            while x != rs {
                x = self.climb(x, out);
            }
            while y != rd {
                y = self.climb(y, down);
            }
            match core.get(&(rs, rd)) {
                Some(Some(path)) => out.extend_from_slice(path),
                _ => {
                    out.truncate(start);
                    return false;
                }
            }
        }
        // `down` holds the upward codes from d; reversed and flipped they descend.
        out.extend(down.iter().rev().map(|c| c ^ 1));
        true
    }

    /// Record the upward link of tree node `v` in `path`; returns its parent.
    fn climb(&self, v: u32, path: &mut Vec<u32>) -> u32 {
        let code = self.up[v as usize];
        path.push(code);
        self.to(code)
    }
}

/// Routes of a list of pairs, and which pairs have one.
#[derive(Debug)]
pub struct RouteSet {
    /// The routes, indexed like the pairs (a pair without a route has an empty one).
    pub table: Routes,
    found: Vec<bool>,
}

impl RouteSet {
    /// Whether pair `i` has a route.
    pub fn has(&self, i: usize) -> bool {
        self.found[i]
    }
}

/// The (from, to) nodes of link direction `code`.
fn endpoints(ends: &[(u32, u32)], code: u32) -> (u32, u32) {
    let (a, b) = ends[(code / 2) as usize];
    if code & 1 == 0 {
        (a, b)
    } else {
        (b, a)
    }
}

/// Node that link direction `code` arrives at.
fn far_end(ends: &[(u32, u32)], code: u32) -> u32 {
    endpoints(ends, code).1
}

/// The old all-pairs first-hop table (the test oracle): entry `src * n + dst`
/// is the code of the first link direction on the route, or `u32::MAX`.
#[cfg(test)]
pub fn all_pairs_first_hop(n: usize, links: &[(NodeId, NodeId)]) -> Vec<u32> {
    use std::collections::VecDeque;
    let edges: Vec<(NodeId, NodeId)> = links.iter().flat_map(|&(a, b)| [(a, b), (b, a)]).collect();
    let mut out_edges: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, (a, _)) in edges.iter().enumerate() {
        out_edges[a.0 as usize].push(i as u32);
    }
    let mut table = vec![NONE; n * n];
    let mut seen = vec![false; n];
    let mut q = VecDeque::new();
    for s in 0..n {
        seen.iter_mut().for_each(|x| *x = false);
        seen[s] = true;
        q.clear();
        q.push_back((s, NONE));
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
    use proptest::prelude::*;

    fn links(l: &[(u32, u32)]) -> Vec<(NodeId, NodeId)> {
        l.iter().map(|&(a, b)| (NodeId(a), NodeId(b))).collect()
    }

    /// The route the old table gives, followed hop by hop.
    fn oracle_route(
        table: &[u32],
        n: usize,
        ends: &[(u32, u32)],
        s: u32,
        d: u32,
    ) -> Option<Vec<u32>> {
        if s == d {
            return None;
        }
        let mut x = s;
        let mut path = Vec::new();
        while x != d {
            let code = table[x as usize * n + d as usize];
            if code == NONE || path.len() > n {
                return None;
            }
            path.push(code);
            x = far_end(ends, code);
        }
        Some(path)
    }

    #[test]
    fn chain_and_shortcut() {
        // 0 - 1 - 2 - 3 and a shortcut 0 - 3 added last.
        let l = links(&[(0, 1), (1, 2), (2, 3), (0, 3)]);
        let r = Router::new(4, &l);
        assert_eq!(r.route(NodeId(0), NodeId(2)), Some(vec![0, 2]));
        assert_eq!(r.route(NodeId(0), NodeId(3)), Some(vec![6]));
        assert_eq!(r.route(NodeId(3), NodeId(1)), Some(vec![5, 3]));
        assert_eq!(r.route(NodeId(1), NodeId(1)), None);
    }

    #[test]
    fn a_dumbbell_is_one_tree_and_parallel_links_stay_in_the_core() {
        // Routers 0 and 1; senders 2..7, receivers 7..12.
        let mut l = vec![(0, 1)];
        for i in 0..5 {
            l.push((2 + i, 0));
            l.push((1, 7 + i));
        }
        let r = Router::new(12, &links(&l));
        assert_eq!((0..12).filter(|&v| r.up[v] == NONE).count(), 1);
        // A second, parallel bottleneck makes the routers a 2-core.
        l.push((1, 0));
        let r2 = Router::new(12, &links(&l));
        let core: Vec<usize> = (0..12).filter(|&v| r2.up[v] == NONE).collect();
        assert_eq!(core, vec![0, 1]);
        // Sender 2 (link 1, a = 2) -> receiver 7 (link 2, b = 7); the first
        // bottleneck link wins the tie.
        for r in [r, r2] {
            assert_eq!(r.route(NodeId(2), NodeId(7)), Some(vec![2, 0, 4]));
            assert_eq!(r.route(NodeId(7), NodeId(2)), Some(vec![5, 1, 3]));
        }
    }

    #[test]
    fn disconnected_and_tree_only_components() {
        // 0 - 1, 2 - 3 - 4 (a path: all peeled to one root), 5 alone.
        let l = links(&[(0, 1), (2, 3), (3, 4)]);
        let r = Router::new(6, &l);
        assert_eq!(r.route(NodeId(0), NodeId(1)), Some(vec![0]));
        assert_eq!(r.route(NodeId(2), NodeId(4)), Some(vec![2, 4]));
        assert_eq!(r.route(NodeId(4), NodeId(2)), Some(vec![5, 3]));
        assert_eq!(r.route(NodeId(0), NodeId(2)), None);
        assert_eq!(r.route(NodeId(5), NodeId(0)), None);
        let set = r.routes(&[
            (NodeId(0), NodeId(1)),
            (NodeId(1), NodeId(4)),
            (NodeId(0), NodeId(1)),
        ]);
        assert!(set.has(0) && !set.has(1) && set.has(2));
        assert_eq!(set.table.route(2), &[0]);
    }

    /// A random multigraph: a spanning-ish mix of chains, parallel links,
    /// cycles, self-loops and hanging trees.
    fn graph() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
        (2usize..24).prop_flat_map(|n| {
            let link = (0..n as u32, 0..n as u32);
            (Just(n), prop::collection::vec(link, 0..3 * n))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn routes_equal_the_all_pairs_table((n, raw) in graph()) {
            let l = links(&raw);
            let table = all_pairs_first_hop(n, &l);
            let r = Router::new(n, &l);
            let pairs: Vec<(NodeId, NodeId)> = (0..n as u32)
                .flat_map(|s| (0..n as u32).map(move |d| (NodeId(s), NodeId(d))))
                .collect();
            let set = r.routes(&pairs);
            for (i, &(s, d)) in pairs.iter().enumerate() {
                let want = oracle_route(&table, n, &raw, s.0, d.0);
                let got = set.has(i).then(|| set.table.route(i).to_vec());
                prop_assert_eq!(&got, &want, "{} -> {}", s.0, d.0);
                prop_assert_eq!(r.route(s, d), want);
            }
        }
    }
}
