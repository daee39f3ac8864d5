//! The discrete-event engine: a time-ordered queue of wake-ups.
//!
//! Events are plain `Copy` values in a radix heap keyed by time (issue 38:
//! it replaced a binary heap keyed by (time, insertion number)): events at
//! the same instant run in the order they were scheduled. Each component
//! keeps at most one *live* wake-up; superseded ones are skipped when popped
//! (see [`Wakeups`]). The engine knows nothing about the models:
//! [`crate::net::Simulation`] owns the models and decides what a popped event
//! means.

use crate::time::Time;

/// A scheduled event: `target` is woken at `time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry<T> {
    time: Time,
    target: T,
}

/// Buckets of the radix heap: 0 holds the events at `last`, bucket `b ≥ 1`
/// those whose time differs from `last` first in bit `b − 1`.
const BUCKETS: usize = 65;

/// Time-ordered event queue with FIFO tie-breaking.
///
/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) over the event
/// times, which never decrease below the last popped one (the past cannot
/// be scheduled): a push appends to the bucket of the highest bit in which
/// its time differs from the last popped time; a pop takes bucket 0 in
/// order, or first refills it from the lowest non-empty bucket, whose
/// events all move to lower buckets. Events with the same time always sit
/// in the same bucket in the order they were pushed (a refill keeps the
/// order), so ties pop first-in first-out, as a (time, insertion number)
/// heap pops them. Each event moves at most 64 times, in practice once or
/// twice; a push is a few instructions. A refill of a bucket that holds one
/// event pops that event at once (it is the earliest, alone at its time).
///
/// An event pushed earlier than every waiting one is held apart, in
/// `front`, and pops from there without entering the buckets (a link's
/// next wake-up is often the next event of the whole simulation).
#[derive(Debug)]
pub struct EventQueue<T: Ord + Copy> {
    /// The earliest waiting event, outside the buckets: every event in the
    /// buckets is later, or at the same time and pushed after it.
    front: Option<Entry<T>>,
    /// Events at `last`, in push order; those before `head` have popped.
    now_bucket: Vec<Entry<T>>,
    /// The next event of `now_bucket` to pop.
    head: usize,
    /// Buckets 1..=64 (index b − 1), each in push order for equal times.
    buckets: Vec<Vec<Entry<T>>>,
    /// The earliest time in each bucket (index b − 1; meaningful while the
    /// bucket is non-empty): a refill finds its new `last` without a scan.
    mins: [u64; BUCKETS - 1],
    /// Bit b − 1 set when bucket b (≥ 1) is non-empty.
    occupied: u64,
    /// The time the buckets are relative to: the last popped (or refilled) time.
    last: Time,
    len: usize,
    now: Time,
    popped: u64,
}

impl<T: Ord + Copy> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            front: None,
            now_bucket: Vec::new(),
            head: 0,
            buckets: (1..BUCKETS).map(|_| Vec::new()).collect(),
            mins: [u64::MAX; BUCKETS - 1],
            occupied: 0,
            last: Time::ZERO,
            len: 0,
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

    /// The bucket of `time` (≥ `last`): 0 if equal, else 1 + the highest
    /// differing bit.
    #[inline]
    fn bucket(&self, time: Time) -> usize {
        let x = time.0 ^ self.last.0;
        if x == 0 {
            0
        } else {
            64 - x.leading_zeros() as usize
        }
    }

    #[inline]
    fn put(&mut self, e: Entry<T>) {
        match self.bucket(e.time) {
            0 => self.now_bucket.push(e),
            b => {
                let bit = 1u64 << (b - 1);
                let min = &mut self.mins[b - 1];
                if self.occupied & bit == 0 || e.time.0 < *min {
                    *min = e.time.0;
                }
                self.occupied |= bit;
                self.buckets[b - 1].push(e);
            }
        }
    }

    /// [`EventQueue::put`] ahead of the events at the same time already in
    /// the buckets (a `front` event that a still earlier push displaces:
    /// it was pushed before them). Rare: a `Vec` insert.
    #[cold]
    fn put_first(&mut self, e: Entry<T>) {
        match self.bucket(e.time) {
            0 => self.now_bucket.insert(self.head, e),
            b => {
                let bit = 1u64 << (b - 1);
                let min = &mut self.mins[b - 1];
                if self.occupied & bit == 0 || e.time.0 < *min {
                    *min = e.time.0;
                }
                self.occupied |= bit;
                self.buckets[b - 1].insert(0, e);
            }
        }
    }

    /// The earliest time in the buckets ([`Time::MAX`] when they are empty).
    #[inline]
    fn buckets_min(&self) -> Time {
        if self.head < self.now_bucket.len() {
            self.last
        } else if self.occupied == 0 {
            Time::MAX
        } else {
            Time(self.mins[self.occupied.trailing_zeros() as usize])
        }
    }

    /// Schedule `target` at `time` (clamped to now: the past cannot be scheduled).
    /// Always inline: a wake-up is pushed once per packet-hop, from
    /// [`Wakeups::schedule`] (inline at its call sites).
    #[inline(always)]
    pub fn push(&mut self, time: Time, target: T) {
        let time = time.max(self.now);
        self.len += 1;
        let e = Entry { time, target };
        match self.front {
            // Later than the front event, or at its time and so after it.
            Some(f) if time >= f.time => self.put(e),
            Some(f) => {
                // Earlier than every waiting event: it takes the front.
                self.front = Some(e);
                if f.time < self.buckets_min() {
                    self.put(f);
                } else {
                    self.put_first(f);
                }
            }
            None if time < self.buckets_min() => self.front = Some(e),
            None => self.put(e),
        }
    }

    /// The lowest non-empty bucket above 0 and the earliest time in it.
    fn lowest(&self) -> Option<(usize, Time)> {
        if self.occupied == 0 {
            return None;
        }
        let i = self.occupied.trailing_zeros() as usize;
        Some((i, Time(self.mins[i])))
    }

    /// Pop the earliest event not after `until`, advancing the clock to it.
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, T)> {
        if let Some(f) = self.front {
            if f.time > until {
                return None;
            }
            self.front = None;
            return Some(self.popped_at(f));
        }
        if self.head == self.now_bucket.len() {
            let (i, t) = self.lowest()?;
            if t > until {
                return None;
            }
            // Refill: every event of bucket i moves to a lower bucket
            // relative to the new `last`, in order.
            self.last = t;
            self.occupied &= !(1 << i);
            // The lower buckets and bucket i, borrowed apart: each event
            // of bucket i differs from the new `last` only below bit i, so
            // it moves to bucket 0 or to one of 1..=i, never to i + 1.
            let (lower, rest) = self.buckets.split_at_mut(i);
            let from = &mut rest[0];
            if from.len() == 1 {
                // Alone in its bucket: it is the earliest event (bucket 0 is
                // empty) and pops at once, without the move.
                let e = from[0];
                from.clear();
                return Some(self.popped_at(e));
            }
            for &e in from.iter() {
                let x = e.time.0 ^ t.0;
                if x == 0 {
                    self.now_bucket.push(e);
                } else {
                    let b = 63 - x.leading_zeros() as usize;
                    let bit = 1u64 << b;
                    let min = &mut self.mins[b];
                    if self.occupied & bit == 0 || e.time.0 < *min {
                        *min = e.time.0;
                    }
                    self.occupied |= bit;
                    lower[b].push(e);
                }
            }
            // Keep the bucket's buffer for later pushes.
            from.clear();
        } else if self.last > until {
            return None;
        }
        let e = *self.now_bucket.get(self.head)?;
        self.head += 1;
        if self.head == self.now_bucket.len() {
            self.now_bucket.clear();
            self.head = 0;
        }
        Some(self.popped_at(e))
    }

    /// The clock and counters of a pop of `e`.
    #[inline]
    fn popped_at(&mut self, e: Entry<T>) -> (Time, T) {
        self.len -= 1;
        self.now = e.time;
        self.popped += 1;
        (e.time, e.target)
    }

    /// Time of the earliest waiting event.
    pub fn next_time(&self) -> Option<Time> {
        if let Some(f) = self.front {
            return Some(f.time);
        }
        if self.head == self.now_bucket.len() {
            self.lowest().map(|(_, t)| t)
        } else {
            Some(self.last)
        }
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
        self.len
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
    /// Always inline: it runs about 2.3 times per packet-hop (after every
    /// link service, offer and TCP flush), and the call with its six
    /// arguments and five saved registers cost as much as the test itself.
    #[inline(always)]
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

    /// A refill of a bucket with one event pops it at once: the clock, the
    /// counters and the next pushes are as if it had moved to bucket 0.
    #[test]
    fn a_lone_event_pops_from_its_bucket() {
        let mut q = EventQueue::new();
        q.push(Time(1 << 40), 1u8);
        q.push(Time(7), 2);
        assert_eq!(q.pop_until(Time::MAX), Some((Time(7), 2)));
        assert_eq!((q.len(), q.now(), q.popped()), (1, Time(7), 1));
        assert_eq!(q.pop_until(Time::MAX), Some((Time(1 << 40), 1)));
        assert_eq!((q.len(), q.now(), q.popped()), (0, Time(1 << 40), 2));
        q.push(Time(1 << 40), 3);
        q.push(Time((1 << 40) + 1), 4);
        q.push(Time(1 << 40), 5);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(
            order,
            vec![
                (Time(1 << 40), 3),
                (Time(1 << 40), 5),
                (Time((1 << 40) + 1), 4)
            ]
        );
        assert!(q.is_empty());
    }

    /// An event pushed earlier than all waiting ones takes the front; one
    /// pushed still earlier displaces it into the buckets ahead of the
    /// events at its time pushed after it (FIFO ties kept), in bucket 0 too.
    #[test]
    fn the_front_event_and_its_displacement_keep_ties_in_order() {
        let mut q = EventQueue::new();
        q.push(Time(10), 1u32);
        q.push(Time(3), 2); // the front
        q.push(Time(3), 3); // tie: into the buckets, after 2
        q.push(Time(2), 4); // displaces 2 ahead of 3
        assert_eq!(q.next_time(), Some(Time(2)));
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(
            order,
            vec![(Time(2), 4), (Time(3), 2), (Time(3), 3), (Time(10), 1)]
        );
        // Ties at `last` (bucket 0) with events still to pop there.
        let mut q = EventQueue::new();
        for i in 0..3 {
            q.push(Time(5), i);
        }
        q.push(Time(9), 9);
        assert_eq!(q.pop_until(Time::MAX), Some((Time(5), 0)));
        q.push(Time(5), 10); // a tie at now: after 1 and 2
        q.push(Time(7), 11);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(
            order,
            vec![
                (Time(5), 1),
                (Time(5), 2),
                (Time(5), 10),
                (Time(7), 11),
                (Time(9), 9)
            ]
        );
        // The front held past `until`, and a tie pushed before it pops.
        let mut q = EventQueue::new();
        q.push(Time(4), 1u32);
        assert_eq!(q.pop_until(Time(3)), None);
        assert_eq!(q.next_time(), Some(Time(4)));
        q.push(Time(4), 2);
        q.push(Time(1), 3);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(Time::MAX)).collect();
        assert_eq!(order, vec![(Time(1), 3), (Time(4), 1), (Time(4), 2)]);
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

    proptest::proptest! {
        /// The same with times spread over the whole range (refills across
        /// many buckets) and pops bounded by `until`, as `run_for` slices
        /// them: a bounded pop that finds nothing due changes nothing.
        #[test]
        fn bounded_pops_over_wide_times(
            ops in proptest::collection::vec(
                (0u64..u64::MAX / 4, 0u64..16, 0u8..3, 0u64..1 << 40), 1..400
            )
        ) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(Time, u32)> = Vec::new();
            for (i, &(far, near, op, ahead)) in ops.iter().enumerate() {
                match op {
                    0 | 1 => {
                        // Near times make ties; far ones fill high buckets.
                        let t = if op == 0 { Time(far) } else { Time(q.now().0 + near) };
                        let t = t.max(q.now());
                        q.push(t, i as u32);
                        reference.push((t, i as u32));
                        reference.sort_by_key(|&(t, i)| (t, i));
                    }
                    _ => {
                        let until = Time(q.now().0.saturating_add(ahead));
                        let want = match reference.first() {
                            Some(&(t, _)) if t <= until => Some(reference.remove(0)),
                            _ => None,
                        };
                        proptest::prop_assert_eq!(q.pop_until(until), want);
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
                proptest::prop_assert_eq!(q.next_time(), reference.first().map(|e| e.0));
            }
            while let Some(e) = q.pop_until(Time::MAX) {
                proptest::prop_assert_eq!(e, reference.remove(0));
            }
            proptest::prop_assert!(reference.is_empty());
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
