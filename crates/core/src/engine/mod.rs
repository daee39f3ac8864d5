//! The discrete-event engine: a time-ordered queue of wake-ups.
//!
//! Events are plain `Copy` values in one binary heap keyed by (time, insertion
//! number), so events at the same instant run in the order they were
//! scheduled. Each component keeps at most one *live* wake-up; superseded ones
//! are skipped when popped (see [`Wakeups`]). The engine knows nothing about
//! the models: [`crate::net::Simulation`] owns the models and decides what a
//! popped event means.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Time;

/// A scheduled event: `target` is woken at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry<T> {
    time: Time,
    seq: u64,
    target: T,
}

/// Time-ordered event queue with FIFO tie-breaking.
#[derive(Debug)]
pub struct EventQueue<T: Ord + Copy> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    seq: u64,
    now: Time,
    popped: u64,
}

impl<T: Ord + Copy> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
            now: Time::ZERO,
            popped: 0,
        }
    }
}

impl<T: Ord + Copy> EventQueue<T> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `target` at `time` (clamped to now: the past cannot be scheduled).
    pub fn push(&mut self, time: Time, target: T) {
        let time = time.max(self.now);
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            time,
            seq: self.seq,
            target,
        }));
    }

    /// Pop the earliest event not after `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, T)> {
        let Reverse(top) = self.heap.peek()?;
        if top.time > until {
            return None;
        }
        let Reverse(e) = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.target))
    }

    /// Time of the earliest waiting event.
    pub fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(e)| e.time)
    }

    /// The current time (time of the last popped event).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far (including superseded wake-ups).
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// Per-component bookkeeping of the one live wake-up each component may have.
///
/// A model reports its next wake-up through `poll_timeout()`; after every
/// interaction the simulation calls [`Wakeups::schedule`], which pushes an
/// event only if the new time is earlier than the live one. When an event is
/// popped, [`Wakeups::fire`] says whether it is the live one (otherwise it was
/// superseded and is skipped).
#[derive(Debug, Default)]
pub struct Wakeups {
    live: Vec<Time>,
}

impl Wakeups {
    /// Bookkeeping for `n` components, none scheduled.
    pub fn new(n: usize) -> Wakeups {
        Wakeups {
            live: vec![Time::MAX; n],
        }
    }

    /// Room for `n` components (those added have no wake-up).
    pub fn grow(&mut self, n: usize) {
        if self.live.len() < n {
            self.live.resize(n, Time::MAX);
        }
    }

    /// Schedule component `i` at `at` if that is earlier than its live wake-up.
    #[inline]
    pub fn schedule<T: Ord + Copy>(
        &mut self,
        q: &mut EventQueue<T>,
        i: usize,
        at: Option<Time>,
        target: T,
    ) {
        if let Some(at) = at {
            // A time in the past means "at once": the queue runs it now, so
            // the live time must be now too, or `fire` would never match it
            // and the component would never be woken again.
            let at = at.max(q.now());
            if at < self.live[i] {
                self.live[i] = at;
                q.push(at, target);
            }
        }
    }

    /// An event for component `i` at `t` was popped: is it the live one?
    /// If so the component has no live wake-up any more.
    #[inline]
    pub fn fire(&mut self, i: usize, t: Time) -> bool {
        if self.live[i] == t {
            self.live[i] = Time::MAX;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(Time(5), 3u32);
        q.push(Time(1), 9);
        q.push(Time(5), 1);
        q.push(Time(5), 2);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(
            order,
            vec![(Time(1), 9), (Time(5), 3), (Time(5), 1), (Time(5), 2)]
        );
    }

    #[test]
    fn until_bound() {
        let mut q = EventQueue::new();
        q.push(Time(10), 0u8);
        assert_eq!(q.next_time(), Some(Time(10)));
        assert_eq!(q.pop_until(Time(9)), None);
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), 0)));
    }

    proptest::proptest! {
        /// Interleaved pushes and pops come out in (time, insertion) order,
        /// as from a sorted list.
        #[test]
        fn pops_in_time_then_insertion_order(
            ops in proptest::collection::vec((0u64..50, proptest::bool::weighted(0.6)), 1..400)
        ) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(Time, u32)> = Vec::new();
            for (i, &(t, push)) in ops.iter().enumerate() {
                if push {
                    // Never in the past: the queue clamps to now.
                    let t = Time(t).max(q.now());
                    q.push(t, i as u32);
                    reference.push((t, i as u32));
                    reference.sort_by_key(|&(t, i)| (t, i)); // insertion number = i
                } else {
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(q.pop_until(Time::MAX), want);
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(e) = q.pop_until(Time::MAX) {
                proptest::prop_assert_eq!(e, reference.remove(0));
            }
        }
    }

    #[test]
    fn superseded_wakeups_are_skipped() {
        let mut q = EventQueue::new();
        let mut w = Wakeups::new(1);
        w.schedule(&mut q, 0, Some(Time(10)), 0u8);
        w.schedule(&mut q, 0, Some(Time(5)), 0u8); // earlier: pushed
        w.schedule(&mut q, 0, Some(Time(7)), 0u8); // later than live: not pushed
        assert_eq!(q.len(), 2);
        let (t, _) = q.pop_until(Time::MAX).unwrap();
        assert!(w.fire(0, t));
        let (t, _) = q.pop_until(Time::MAX).unwrap();
        assert_eq!(t, Time(10));
        assert!(!w.fire(0, t), "superseded wake-up must be skipped");
    }

    /// A wake-up asked for in the past ("at once") runs now and is the live
    /// one: it fires, and later wake-ups can be scheduled again. (It used to
    /// keep the past time as live, so `fire` never matched and the component
    /// was never woken again: CoDel's dequeue drops stranded a link's wire.)
    #[test]
    fn a_wakeup_in_the_past_fires_and_the_component_stays_schedulable() {
        let mut q = EventQueue::new();
        let mut w = Wakeups::new(1);
        q.push(Time(100), 1u8);
        assert_eq!(q.pop_until(Time::MAX), Some((Time(100), 1)));
        w.schedule(&mut q, 0, Some(Time::ZERO), 0u8);
        let (t, _) = q.pop_until(Time::MAX).unwrap();
        assert_eq!(t, Time(100));
        assert!(w.fire(0, t), "the wake-up at once must fire");
        w.schedule(&mut q, 0, Some(Time(300)), 0u8);
        assert_eq!(q.pop_until(Time::MAX).map(|e| e.0), Some(Time(300)));
    }
}
