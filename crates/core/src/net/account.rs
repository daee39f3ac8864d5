//! The packet account (`docs/metrics.md`, "The packet account"): every
//! packet offered to a link direction, and every packet a flow's endpoints
//! send, is accounted for at the end of every run.
//!
//! Two independent books are kept and must agree:
//! - each link model's own counters ([`Link::account`]) and the packets it
//!   still holds ([`Link::for_each_held`]), which must close on their own:
//!   `offered = queue_dropped + departed + waiting`, and
//!   `departed + copies = delivered + lost + in transit after the queue`;
//! - what the network saw cross each link's boundary ([`DirSeen`]: offered,
//!   handed over at the far end, reported dropped by cause), and per flow
//!   ([`Leg`]) what its endpoints sent, what reached the other end and what
//!   was dropped where: `sent + copies = delivered + dropped + in flight`.
//!
//! Any difference is a bug in the core: the run fails with an
//! [`AccountingError`] instead of a silently wrong summary.

use serde::Serialize;

use super::Simulation;
use crate::aqm::{Causes, DropCause};
use crate::link::{Account, Dir, Place};
use crate::packet::{Kind, Packet};

/// What the network saw cross one link direction's boundary.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DirSeen {
    /// Packets offered to it.
    pub offered: u64,
    /// Packets handed over at its far end.
    pub arrived: u64,
    /// Packets it reported discarded, by cause.
    pub dropped: Causes,
}

/// One direction of a flow (its data segments, or its ACKs) as the network
/// saw it.
#[derive(Clone, Debug, Default)]
pub(super) struct Leg {
    /// Packets the endpoint sent.
    pub sent: u64,
    /// Packets that reached the other endpoint (copies included).
    pub delivered: u64,
    /// Drops: (link direction code, cause, packets), in order of first drop.
    pub dropped: Vec<(u32, DropCause, u64)>,
}

impl Leg {
    /// Count a drop of `p` on direction `code` for `cause`.
    pub fn drop(&mut self, code: usize, cause: DropCause) {
        let code = code as u32;
        match self
            .dropped
            .iter_mut()
            .find(|(c, k, _)| *c == code && *k == cause)
        {
            Some(e) => e.2 += 1,
            None => self.dropped.push((code, cause, 1)),
        }
    }
}

/// The flow's two legs: data (index 0) and ACKs (index 1).
pub(super) fn leg_index(p: &Packet) -> usize {
    usize::from(p.kind == Kind::Ack)
}

/// A broken packet account: a bug in the core. The message names the link
/// direction or flow, the counts and what does not add up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountingError {
    /// What does not add up.
    pub message: String,
}

impl std::fmt::Display for AccountingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for AccountingError {}

/// Packets in transit by [`Place`] (serialised as an object of the non-zero
/// counts by place name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held([u64; Place::ALL.len()]);

impl Held {
    fn add(&mut self, p: Place) {
        self.0[p.index()] += 1;
    }

    /// Packets at `p`.
    pub fn get(&self, p: Place) -> u64 {
        self.0[p.index()]
    }

    /// Packets at every place but the queue.
    pub fn after_queue(&self) -> u64 {
        self.total() - self.get(Place::Queue)
    }

    /// Packets at every place.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

impl Serialize for Held {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        for p in Place::ALL.iter().filter(|&&p| p != Place::Queue) {
            let n = self.get(*p);
            if n > 0 {
                m.serialize_entry(p.name(), &n)?;
            }
        }
        m.end()
    }
}

impl std::fmt::Display for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = Place::ALL
            .iter()
            .filter(|&&p| p != Place::Queue && self.get(p) > 0)
            .map(|&p| format!("{} {}", p.name(), self.get(p)))
            .collect();
        if parts.is_empty() {
            write!(f, "none")
        } else {
            write!(f, "{}", parts.join(", "))
        }
    }
}

/// A link direction's closed account (the summary's `links[].account`).
#[derive(Clone, Debug, Serialize)]
pub struct LinkAccount {
    /// Packets offered to the direction.
    pub offered: u64,
    /// The buffer in front of the transmitter.
    pub queue: QueueAccount,
    /// The transmitter, the wire and everything after it.
    pub link: WireAccount,
}

/// The buffer's part of a [`LinkAccount`]: `offered = dropped + departed + waiting`.
#[derive(Clone, Debug, Serialize)]
pub struct QueueAccount {
    /// Discarded in the buffer (at arrival or at dequeue), by cause.
    pub dropped: Causes,
    /// Left the buffer for transmission.
    pub departed: u64,
    /// Waiting at the end of the run.
    pub waiting: u64,
}

/// The link's part of a [`LinkAccount`]:
/// `departed + copies = delivered + lost + in_transit`.
#[derive(Clone, Debug, Serialize)]
pub struct WireAccount {
    /// Copies the link made (netem `duplicate`).
    pub copies: u64,
    /// Handed over at the far end.
    pub delivered: u64,
    /// Lost after the buffer, by cause.
    pub lost: Causes,
    /// Still inside at the end of the run, by place.
    pub in_transit: Held,
}

/// A flow's closed account (the summary's `flows[].account`).
#[derive(Clone, Debug, Serialize)]
pub struct FlowAccount {
    /// Its data segments (LT-TCP repairs included), sender to receiver.
    pub data: LegAccount,
    /// Its ACKs, receiver to sender.
    pub acks: LegAccount,
}

/// One leg of a [`FlowAccount`]: `sent + copies = delivered + dropped + in_flight`.
#[derive(Clone, Debug, Serialize)]
pub struct LegAccount {
    /// Packets the endpoint sent.
    pub sent: u64,
    /// Copies links made of them (netem `duplicate`).
    pub copies: u64,
    /// Packets that reached the other endpoint (copies included).
    pub delivered: u64,
    /// Packets dropped, by where and why.
    pub dropped: Vec<LegDrop>,
    /// Packets inside links at the end of the run.
    pub in_flight: u64,
}

/// Drops of a flow's packets on one link direction for one cause.
#[derive(Clone, Debug, Serialize)]
pub struct LegDrop {
    /// The link direction, `from->to`.
    pub link: String,
    /// The cause (`overflow`, `aqm_early`, `link_loss`, …).
    pub cause: &'static str,
    /// Packets.
    pub packets: u64,
}

/// Every account of a run, closed.
#[derive(Clone, Debug)]
pub struct Accounts {
    /// One per link direction, in the order of the summary's `links`.
    pub links: Vec<LinkAccount>,
    /// One per flow.
    pub flows: Vec<FlowAccount>,
    /// One per media stream (`[[media]]`).
    pub media: Vec<LegAccount>,
    /// Per media stream: the distinct packets (by number) inside links at
    /// the end that its sink has not received — an original and its netem
    /// copy count once, a copy of a packet already received not at all:
    /// the stream's `in_flight` (finding M1 of docs/checking.md).
    pub media_pending: Vec<u64>,
}

fn fail(message: String) -> AccountingError {
    AccountingError { message }
}

impl Simulation {
    /// Close every packet account at the end of the run and check it: the
    /// models' own books, the network's view of each link direction and of
    /// each flow, and that no component was left with a wake-up the run
    /// should have served. Cheap (one walk over what the links hold).
    pub fn close_accounts(&self) -> Result<Accounts, AccountingError> {
        self.check_wakeups()?;
        let nd = 2 * self.links.len();
        let mut held = vec![Held::default(); nd];
        let mut in_flight = vec![[0u64; 2]; self.flows.len()];
        let mut made = vec![[0u64; 2]; self.flows.len()];
        let mut media_in = vec![0u64; self.media.len()];
        let mut media_made = vec![0u64; self.media.len()];
        let mut media_seqs: Vec<Vec<u64>> = vec![Vec::new(); self.media.len()];
        for (i, l) in self.links.iter().enumerate() {
            let mut count = 0usize;
            l.model
                .for_each_held(&mut |d: Dir, place: Place, p: &Packet| {
                    count += 1;
                    held[2 * i + d.index()].add(place);
                    if let Some(m) = crate::media::stream_of(p.flow) {
                        if let Some(n) = media_in.get_mut(m) {
                            *n += 1;
                            media_seqs[m].push(p.seq);
                        }
                    } else if let Some(f) = in_flight.get_mut(p.flow.0 as usize) {
                        f[leg_index(p)] += 1;
                    }
                });
            l.model.for_each_copies(&mut |_, flow, ack, n| {
                if let Some(m) = crate::media::stream_of(flow) {
                    if let Some(c) = media_made.get_mut(m) {
                        *c += n;
                    }
                } else if let Some(c) = made.get_mut(flow.0 as usize) {
                    c[usize::from(ack)] += n;
                }
            });
            let claimed = l.model.in_transit();
            if count != claimed {
                return Err(fail(format!(
                    "link {}: the model counts {claimed} packets inside but holds {count}",
                    l.names.join(" / ")
                )));
            }
        }
        let mut links = Vec::with_capacity(nd);
        let mut copies_made = 0;
        for (i, l) in self.links.iter().enumerate() {
            for d in Dir::BOTH {
                let code = 2 * i + d.index();
                let a = l.model.account(d);
                copies_made += a.copies;
                check_direction(&l.names[d.index()], &a, &held[code], &self.seen[code])?;
                links.push(LinkAccount {
                    offered: a.offered,
                    queue: QueueAccount {
                        dropped: a.queue_dropped,
                        departed: a.departed,
                        waiting: held[code].get(Place::Queue),
                    },
                    link: WireAccount {
                        copies: a.copies,
                        delivered: a.delivered,
                        lost: a.lost,
                        in_transit: held[code],
                    },
                });
            }
        }
        let mut flows = Vec::with_capacity(self.flows.len());
        let mut copies_seen = 0;
        for (f, legs) in self.legs.iter().enumerate() {
            let mut accounts = Vec::with_capacity(2);
            for (k, leg) in legs.iter().enumerate() {
                let copies = made[f][k];
                copies_seen += copies;
                let dropped: u64 = leg.dropped.iter().map(|e| e.2).sum();
                let (inside, name) = (in_flight[f][k], ["data", "acks"][k]);
                if leg.sent + copies != leg.delivered + dropped + inside {
                    return Err(fail(format!(
                        "flow {} ({name}): sent {} + copies {copies} != delivered {} + dropped {dropped} + in flight {inside}",
                        self.flows[f].spec.name, leg.sent, leg.delivered
                    )));
                }
                let mut drops = leg.dropped.clone();
                drops.sort_by_key(|e| (e.0, e.1));
                accounts.push(LegAccount {
                    sent: leg.sent,
                    copies,
                    delivered: leg.delivered,
                    dropped: drops
                        .iter()
                        .map(|&(code, cause, packets)| LegDrop {
                            link: self.links[code as usize / 2].names[code as usize % 2].clone(),
                            cause: cause.name(),
                            packets,
                        })
                        .collect(),
                    in_flight: inside,
                });
            }
            let acks = accounts.pop().expect("two legs");
            let data = accounts.pop().expect("two legs");
            flows.push(FlowAccount { data, acks });
        }
        let mut media = Vec::with_capacity(self.media.len());
        for (m, leg) in self.media_legs.iter().enumerate() {
            let copies = media_made[m];
            copies_seen += copies;
            let dropped: u64 = leg.dropped.iter().map(|e| e.2).sum();
            let inside = media_in[m];
            if leg.sent + copies != leg.delivered + dropped + inside {
                return Err(fail(format!(
                    "media stream {}: sent {} + copies {copies} != delivered {} + dropped {dropped} + in flight {inside}",
                    self.media[m].spec.name, leg.sent, leg.delivered
                )));
            }
            media.push(self.leg_account(leg, copies, inside));
        }
        if copies_made != copies_seen {
            return Err(fail(format!(
                "links made {copies_made} copies of packets but the flows' accounts hold {copies_seen}"
            )));
        }
        let media_pending = media_seqs
            .into_iter()
            .zip(&self.media)
            .map(|(mut seqs, m)| {
                seqs.sort_unstable();
                seqs.dedup();
                seqs.iter().filter(|&&q| !m.sink.has_received(q)).count() as u64
            })
            .collect();
        Ok(Accounts {
            links,
            flows,
            media,
            media_pending,
        })
    }

    /// `leg` as its account, with `copies` made and `inside` in flight.
    fn leg_account(&self, leg: &Leg, copies: u64, inside: u64) -> LegAccount {
        let mut drops = leg.dropped.clone();
        drops.sort_by_key(|e| (e.0, e.1));
        LegAccount {
            sent: leg.sent,
            copies,
            delivered: leg.delivered,
            dropped: drops
                .iter()
                .map(|&(code, cause, packets)| LegDrop {
                    link: self.links[code as usize / 2].names[code as usize % 2].clone(),
                    cause: cause.name(),
                    packets,
                })
                .collect(),
            in_flight: inside,
        }
    }

    /// No model may be left wanting a wake-up at or before the end of the
    /// run: the engine serves every one up to it, so one left over was lost
    /// (and with it, the packets it would have moved).
    fn check_wakeups(&self) -> Result<(), AccountingError> {
        let end = self.end;
        let late = |what: String, t: crate::time::Time| {
            fail(format!(
                "{what} wanted a wake-up at {t}, before the end of the run ({end}), that never came"
            ))
        };
        for l in &self.links {
            if let Some(t) = l.model.poll_timeout().filter(|&t| t <= end) {
                return Err(late(format!("link {}", l.names.join(" / ")), t));
            }
        }
        for m in &self.media {
            if let Some(t) = m.source.poll_timeout().filter(|&t| t <= end) {
                return Err(late(
                    format!("the source of media stream {}", m.spec.name),
                    t,
                ));
            }
        }
        for f in &self.flows {
            if let Some(t) = f.sender.poll_timeout().filter(|&t| t <= end) {
                return Err(late(format!("the sender of flow {}", f.spec.name), t));
            }
            if let Some(t) = f.receiver.poll_timeout().filter(|&t| t <= end) {
                return Err(late(format!("the receiver of flow {}", f.spec.name), t));
            }
        }
        Ok(())
    }
}

/// Check one link direction named `name`: its model's books close with what
/// it holds, and agree with what the network saw.
fn check_direction(
    name: &str,
    a: &Account,
    held: &Held,
    seen: &DirSeen,
) -> Result<(), AccountingError> {
    let broken = |what: String| fail(format!("link direction {name}: {what}"));
    let waiting = held.get(Place::Queue);
    let qd = a.queue_dropped.total();
    if a.offered != qd + a.departed + waiting {
        return Err(broken(format!(
            "offered {} != dropped in the queue {qd} ({}) + departed {} + waiting {waiting}",
            a.offered, a.queue_dropped, a.departed
        )));
    }
    let lost = a.lost.total();
    if a.departed + a.copies != a.delivered + lost + held.after_queue() {
        return Err(broken(format!(
            "departed {} + copies {} != delivered {} + lost {lost} ({}) + in transit {} ({held})",
            a.departed,
            a.copies,
            a.delivered,
            a.lost,
            held.after_queue()
        )));
    }
    if let Some((c, _)) = a.queue_dropped.iter().find(|(c, _)| !c.at_queue()) {
        return Err(broken(format!(
            "the queue counts drops of the link's cause {}",
            c.name()
        )));
    }
    if let Some((c, _)) = a.lost.iter().find(|(c, _)| c.at_queue()) {
        return Err(broken(format!(
            "the link counts losses of the queue's cause {}",
            c.name()
        )));
    }
    if a.offered != seen.offered {
        return Err(broken(format!(
            "the model counts {} packets offered, the network offered {}",
            a.offered, seen.offered
        )));
    }
    if a.delivered != seen.arrived {
        return Err(broken(format!(
            "the model counts {} packets delivered, the network received {}",
            a.delivered, seen.arrived
        )));
    }
    let mut dropped = a.queue_dropped;
    dropped += a.lost;
    if dropped != seen.dropped {
        return Err(broken(format!(
            "the model counts drops {dropped}, the network was handed {}",
            seen.dropped
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Occupancy;
    use crate::link::wired::tests::link;
    use crate::link::{Delivery, Link, LinkStats, WiredLink};
    use crate::net::{FlowSpec, NetworkBuilder};
    use crate::tcp::{App, TcpConfig};
    use crate::time::Time;

    /// How a [`Faulty`] link breaks the account.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fault {
        /// Swallows every 7th packet offered: neither kept nor reported.
        Swallow,
        /// Hides every 7th packet it delivers.
        Hide,
        /// Reports every 7th packet it delivers as lost instead, for a
        /// cause its books do not have.
        Misreport,
        /// None.
        Honest,
    }

    /// A wired link with a bug.
    #[derive(Debug)]
    struct Faulty {
        inner: WiredLink,
        fault: Fault,
        n: u64,
    }

    impl Link for Faulty {
        fn enqueue(&mut self, now: Time, dir: Dir, pkt: Packet) -> Option<(Packet, DropCause)> {
            self.n += 1;
            if self.fault == Fault::Swallow && self.n.is_multiple_of(7) {
                return None;
            }
            self.inner.enqueue(now, dir, pkt)
        }
        fn poll_timeout(&self) -> Option<Time> {
            self.inner.poll_timeout()
        }
        fn poll_deliver(&mut self, now: Time) -> Option<(Dir, crate::link::Delivery)> {
            loop {
                let (d, x) = self.inner.poll_deliver(now)?;
                self.n += 1;
                if !self.n.is_multiple_of(7) {
                    return Some((d, x));
                }
                match (self.fault, x) {
                    (Fault::Hide, _) => continue,
                    (Fault::Misreport, Delivery::Arrived(p)) => {
                        return Some((d, Delivery::Lost(p, DropCause::LinkLoss)))
                    }
                    _ => return Some((d, x)),
                }
            }
        }
        fn occupancy(&self, dir: Dir) -> &Occupancy {
            self.inner.occupancy(dir)
        }
        fn occupancy_mut(&mut self, dir: Dir) -> &mut Occupancy {
            self.inner.occupancy_mut(dir)
        }
        fn queue_kind(&self, dir: Dir) -> &'static str {
            self.inner.queue_kind(dir)
        }
        fn stats(&self, dir: Dir) -> &LinkStats {
            self.inner.stats(dir)
        }
        fn rate_bps(&self, dir: Dir) -> u64 {
            self.inner.rate_bps(dir)
        }
        fn in_transit(&self) -> usize {
            self.inner.in_transit()
        }
        fn account(&self, dir: Dir) -> Account {
            self.inner.account(dir)
        }
        fn for_each_held(&self, f: &mut dyn FnMut(Dir, Place, &Packet)) {
            self.inner.for_each_held(f)
        }
    }

    /// One bulk flow S → D over a 2 Mbit/s, 10 ms link with `fault`, run 5 s.
    fn run(fault: Fault) -> Result<Accounts, AccountingError> {
        let mut nb = NetworkBuilder::new();
        let (s, d) = (nb.node("S"), nb.node("D"));
        let inner = WiredLink::new(link(2_000_000, 10, 20), link(2_000_000, 10, 20));
        nb.link(s, d, Box::new(Faulty { inner, fault, n: 0 }));
        nb.flow(FlowSpec {
            name: "f".into(),
            src: s,
            dst: d,
            tcp: TcpConfig::default().into(),
            app: App::Bulk,
            start: Time::ZERO,
            stop: None,
        });
        let mut sim = nb.build().unwrap();
        sim.run(Time::from_secs(5));
        sim.close_accounts()
    }

    #[test]
    fn an_honest_link_closes_its_account() {
        let a = run(Fault::Honest).unwrap();
        let data = &a.flows[0].data;
        let dropped: u64 = data.dropped.iter().map(|d| d.packets).sum();
        assert!(data.sent > 500 && dropped > 0, "{data:?}");
        assert_eq!(data.sent, data.delivered + dropped + data.in_flight);
        let ab = &a.links[0];
        assert_eq!(
            ab.offered,
            ab.queue.dropped.total() + ab.queue.departed + ab.queue.waiting
        );
    }

    #[test]
    fn a_swallowed_packet_breaks_the_account_naming_the_link() {
        let e = run(Fault::Swallow).unwrap_err().message;
        assert!(e.contains("link direction S->D"), "{e}");
        assert!(e.contains("packets offered"), "{e}");
    }

    #[test]
    fn a_hidden_delivery_breaks_the_account() {
        let e = run(Fault::Hide).unwrap_err().message;
        assert!(e.contains("delivered"), "{e}");
    }

    #[test]
    fn a_loss_the_model_did_not_count_breaks_the_account() {
        let e = run(Fault::Misreport).unwrap_err().message;
        assert!(e.contains("link direction"), "{e}");
    }
}
