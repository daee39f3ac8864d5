//! Topology expansion: node-name ranges (`"S{1..10}"`), pairs of ends, and
//! flow names. Sizes are known (and checked against [`crate::net::limits`])
//! before anything is allocated for the items.

use std::collections::{HashMap, HashSet};

use crate::config::{quoted, ConfigError, Result};
use crate::net::limits::MAX_NODES;

/// A node-name pattern `prefix{FIRST..LAST}suffix`, or a plain name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameRange<'a> {
    pre: &'a str,
    /// `(first, last)`, or `None` for a plain name.
    range: Option<(u64, u64)>,
    post: &'a str,
}

impl<'a> NameRange<'a> {
    /// Parse `pattern`; a range may have at most [`MAX_NODES`] names.
    pub fn parse(pattern: &'a str) -> Result<NameRange<'a>> {
        let fail = |why: String| Err(ConfigError::new("", quoted(pattern), why));
        let Some(open) = pattern.find('{') else {
            if pattern.contains('}') {
                return fail("has an unmatched '}'".into());
            }
            return Ok(NameRange {
                pre: pattern,
                range: None,
                post: "",
            });
        };
        let Some(close) = pattern[open..].find('}').map(|c| c + open) else {
            return fail("has an unmatched '{'".into());
        };
        let (pre, inner, post) = (
            &pattern[..open],
            &pattern[open + 1..close],
            &pattern[close + 1..],
        );
        if post.contains(['{', '}']) || pre.contains('}') {
            return fail("has more than one {FIRST..LAST} range; only one is allowed".into());
        }
        let bounds = inner.split_once("..").and_then(|(a, b)| {
            let (a, b) = (a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?);
            (a <= b).then_some((a, b))
        });
        let Some((a, b)) = bounds else {
            return fail(
                "is not a range; a range is written {FIRST..LAST} with integers FIRST ≤ LAST, e.g. \"S{1..10}\""
                    .into(),
            );
        };
        if b - a >= MAX_NODES as u64 {
            return fail(format!(
                "expands to {} names; a network has at most {MAX_NODES} nodes (net::limits::MAX_NODES)",
                u128::from(b - a) + 1
            ));
        }
        Ok(NameRange {
            pre,
            range: Some((a, b)),
            post,
        })
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.range.map_or(1, |(a, b)| (b - a) as usize + 1)
    }

    /// Whether there are none (never: a range has at least one name).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Name `i` (< `len()`).
    pub fn name(&self, i: usize) -> String {
        match self.range {
            None => self.pre.to_string(),
            Some((a, _)) => format!("{}{}{}", self.pre, a + i as u64, self.post),
        }
    }
}

/// The pairs of two ranges: zipped if of equal length; otherwise, when one
/// length is a multiple k of the other, fanned out by groups — name i of the
/// shorter side with names i·k … i·k + k − 1 of the longer (a single name
/// with every name of the other side is the case of one group):
/// `BTS{1..10}` × `MS{1..100}` joins BTS1 to MS1…MS10, BTS2 to MS11…MS20, ….
#[derive(Clone, Debug)]
pub struct Pairs<'a> {
    a: NameRange<'a>,
    b: NameRange<'a>,
    len: usize,
}

impl<'a> Pairs<'a> {
    /// Pair `a` with `b`.
    pub fn new(a: NameRange<'a>, b: NameRange<'a>) -> Result<Pairs<'a>> {
        let len = match (a.len(), b.len()) {
            (x, y) if x == y => x,
            (x, y) if y % x == 0 => y,
            (x, y) if x % y == 0 => x,
            (x, y) => {
                return Err(ConfigError::at_key(
                    "",
                    format!(
                        "ranges of {x} and {y} names; allowed: equal lengths, a single name on \
                         one side, or one length a multiple of the other (fan-out by groups)"
                    ),
                ))
            }
        };
        Ok(Pairs { a, b, len })
    }

    /// How many pairs.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (String, String)> + '_ {
        // Name i of the longer side pairs with name i / k of the shorter.
        let side = |r: &NameRange, i: usize| r.name(i / (self.len / r.len()));
        (0..self.len).map(move |i| (side(&self.a, i), side(&self.b, i)))
    }
}

/// Unique flow names: the `k`-th of `count` flows of a group called `base` is
/// `base#k` (just `base` when alone); a name already taken gets the smallest
/// free `base#d`, `d ≥ 2`. Linear in the number of flows.
#[derive(Debug, Default)]
pub struct FlowNames {
    taken: HashSet<String>,
    /// The last `d` given to each base name: every `base#d'` below it is taken.
    last: HashMap<String, u64>,
}

impl FlowNames {
    /// The name of flow `k` of a group of `count` called `base`.
    pub fn claim(&mut self, base: &str, k: u64, count: u64) -> String {
        let mut name = if count > 1 {
            format!("{base}#{k}")
        } else {
            base.to_string()
        };
        if self.taken.contains(&name) {
            let d = self.last.entry(base.to_string()).or_insert(1);
            loop {
                *d += 1;
                name = format!("{base}#{d}");
                if !self.taken.contains(&name) {
                    break;
                }
            }
        }
        self.taken.insert(name.clone());
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(p: &str) -> Result<Vec<String>> {
        let r = NameRange::parse(p)?;
        Ok((0..r.len()).map(|i| r.name(i)).collect())
    }

    #[test]
    fn ranges() {
        assert_eq!(names("S{1..3}").unwrap(), vec!["S1", "S2", "S3"]);
        assert_eq!(names("R").unwrap(), vec!["R"]);
        assert_eq!(names("a{7..7}b").unwrap(), vec!["a7b"]);
        for bad in ["S{3..1}", "S{1..x}", "S{1..2", "S}", "S{1..2}{1..2}"] {
            assert!(names(bad).is_err(), "{bad}");
        }
        // Too many names: refused before allocating, naming the cap.
        let e = NameRange::parse("N{1..99999999}").unwrap_err();
        assert!(e.allowed.contains("MAX_NODES"), "{e}");
        assert_eq!(NameRange::parse("N{1..1000000}").unwrap().len(), 1_000_000);
    }

    #[test]
    fn pairs_zip_or_broadcast() {
        let p = |a, b| -> Result<Vec<(String, String)>> {
            Ok(Pairs::new(NameRange::parse(a)?, NameRange::parse(b)?)?
                .iter()
                .collect())
        };
        assert_eq!(
            p("S{1..2}", "R").unwrap(),
            [("S1".into(), "R".into()), ("S2".into(), "R".into())]
        );
        assert_eq!(
            p("S{1..2}", "D{1..2}").unwrap()[1],
            ("S2".into(), "D2".into())
        );
        assert!(p("S{1..2}", "D{1..3}").is_err());
        // Fan-out by groups: 2 BTS × 6 MS, three mobiles per BTS, either side.
        let fan = p("BTS{1..2}", "MS{1..6}").unwrap();
        let want: Vec<(String, String)> = [(1, 1), (1, 2), (1, 3), (2, 4), (2, 5), (2, 6)]
            .iter()
            .map(|&(b, m)| (format!("BTS{b}"), format!("MS{m}")))
            .collect();
        assert_eq!(fan, want);
        let rev = p("MS{1..6}", "BTS{1..2}").unwrap();
        assert_eq!(rev[3], ("MS4".into(), "BTS2".into()));
        let e = p("BTS{1..4}", "MS{1..6}").unwrap_err();
        assert!(e.allowed.contains("multiple of the other"), "{e}");
    }

    /// The names the quadratic loop of earlier versions gave.
    fn reference(groups: &[(String, u64)]) -> Vec<String> {
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for (base, count) in groups {
            for k in 0..*count {
                let mut name = if *count > 1 {
                    format!("{base}#{k}")
                } else {
                    base.clone()
                };
                let mut dup = 1;
                while taken.contains(&name) {
                    dup += 1;
                    name = format!("{base}#{dup}");
                }
                taken.insert(name.clone());
                out.push(name);
            }
        }
        out
    }

    proptest! {
        #[test]
        fn flow_names_match_the_reference(
            groups in proptest::collection::vec(
                (prop_oneof![Just("a".to_string()), Just("a#2".to_string()), Just("b".to_string())], 1u64..5),
                0..12,
            )
        ) {
            let mut names = FlowNames::default();
            let got: Vec<String> = groups
                .iter()
                .flat_map(|(b, c)| (0..*c).map(|k| (b.clone(), k, *c)).collect::<Vec<_>>())
                .map(|(b, k, c)| names.claim(&b, k, c))
                .collect();
            prop_assert_eq!(got, reference(&groups));
        }
    }

    #[test]
    fn many_duplicates_are_linear() {
        let mut names = FlowNames::default();
        for _ in 0..50_000 {
            names.claim("S->D", 0, 1);
        }
        assert_eq!(names.claim("S->D", 0, 1), "S->D#50001");
    }
}
