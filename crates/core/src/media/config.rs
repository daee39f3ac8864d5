//! `[[media]]`: one table per media stream (or pair of node ranges), tagged
//! by `kind` (`cbr`, `voice`, `video`); keys every kind shares and the
//! kind's own, unknown keys refused.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Codec, Pattern, RTP_HEADER};
use crate::config::kind::tagged_enum;
use crate::config::{check_range, Bytes, ConfigError, Rate, Result};
use crate::time::Time;

/// Which way a stream runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum Direction {
    /// From `from` to `to` only.
    #[default]
    #[serde(rename = "one-way")]
    OneWay,
    /// Both ways: a second stream from `to` to `from` (a call), named with
    /// a `" (back)"` suffix, with its own random stream.
    #[serde(rename = "two-way")]
    TwoWay,
}

/// What every kind shares, read from its table.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    /// Sender node (or range).
    pub from: String,
    /// Receiver node (or range).
    pub to: String,
    /// Name prefix.
    pub name: Option<String>,
    /// First packet.
    pub start: Time,
    /// No packet from then on.
    pub stop: Option<Time>,
    /// Fixed playout delay.
    pub playout: Time,
    /// One-way or two-way.
    pub direction: Direction,
}

/// The default playout delay: 100 ms (with 20 ms packets and no look-ahead,
/// a mouth-to-ear delay of 120 ms, inside G.114's 150 ms).
pub const DEFAULT_PLAYOUT: Time = Time::from_millis(100);

/// A media kind's configuration.
pub trait MediaKind {
    /// The keys every kind shares.
    fn common(&self) -> Common;
    /// Check the kind's own keys (paths relative to the table) and resolve
    /// what the source sends.
    fn pattern(&self) -> Result<Pattern>;

    /// Check every key; paths relative to the table.
    fn validate(&self) -> Result<()> {
        let c = self.common();
        if let Some(stop) = c.stop {
            if stop <= c.start {
                return Err(ConfigError::new(
                    "stop",
                    format!("\"{stop}\""),
                    format!(
                        "is not after the start ({}); allowed: a later time",
                        c.start
                    ),
                ));
            }
        }
        if c.playout == Time::ZERO || c.playout > Time::from_secs(10) {
            return Err(ConfigError::new(
                "playout",
                format!("\"{}\"", c.playout),
                "is out of range; allowed: more than 0 s and at most 10 s",
            ));
        }
        self.pattern().map(|_| ())
    }
}

macro_rules! media_table {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$fmeta:meta])* $field:ident : $ty:ty, )* }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// Sending node (or a range like "S{1..4}", zipped with `to`).
            pub from: String,
            /// Receiving node (or a range).
            pub to: String,
            /// Name prefix. Default "KIND:FROM->TO".
            pub name: Option<String>,
            /// First packet. Default "0s".
            pub start: Option<Time>,
            /// No packet at or after this time (after `start`). Default: until the end.
            pub stop: Option<Time>,
            /// Fixed playout delay: a packet whose one-way delay exceeds it
            /// is late (lost to the listener). More than 0 s, at most 10 s.
            /// Default "100ms".
            pub playout: Option<Time>,
            /// "one-way" (default) or "two-way" (a second stream back from
            /// `to` to `from`).
            pub direction: Option<Direction>,
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            fn shared(&self) -> Common {
                Common {
                    from: self.from.clone(),
                    to: self.to.clone(),
                    name: self.name.clone(),
                    start: self.start.unwrap_or(Time::ZERO),
                    stop: self.stop,
                    playout: self.playout.unwrap_or(DEFAULT_PLAYOUT),
                    direction: self.direction.unwrap_or_default(),
                }
            }
        }
    };
}

media_table! {
    /// Constant bit rate (`kind = "cbr"`): one UDP packet of `size` bytes
    /// every `interval`, or at `rate`.
    CbrConfig {
        /// Bytes above UDP per packet, 1 to 65507. Default "160B".
        size: Option<Bytes>,
        /// Packet interval (give this or `rate`). Default "20ms".
        interval: Option<Time>,
        /// Rate of the bytes above UDP: the interval is size·8/rate.
        rate: Option<Rate>,
    }
}

media_table! {
    /// A voice call's one direction (`kind = "voice"`): codec frames in
    /// RTP/UDP packets every `interval`, during exponential talk spurts
    /// separated by exponential silences (ITU-T P.59's means by default).
    VoiceConfig {
        /// "g711" (default), "g711-plc", "g729a" or "g723.1".
        codec: Option<Codec>,
        /// Packet interval, a whole number of codec frames, at most 200 ms.
        /// Default 20 ms (G.723.1: 30 ms).
        interval: Option<Time>,
        /// On/off talk spurts (voice activity detection). Default true;
        /// false: a packet every interval for the whole call.
        talk_spurts: Option<bool>,
        /// Mean talk spurt (exponential). Default "1.004s" (P.59).
        talk: Option<Time>,
        /// Mean silence (exponential). Default "1.587s" (P.59).
        silence: Option<Time>,
    }
}

media_table! {
    /// A video call's one direction (`kind = "video"`): `frame_rate` frames
    /// a second of mean `rate`/`frame_rate` bytes, each split into RTP/UDP
    /// packets of at most `packet` bytes, sent back to back.
    VideoConfig {
        /// Mean rate of the frame bytes. Default "1Mbit".
        rate: Option<Rate>,
        /// Frames per second, 1 to 240. Default 30.
        frame_rate: Option<u32>,
        /// Coefficient of variation of the (log-normal) frame size, 0 to 10;
        /// 0: every frame the mean. Default 0.
        size_cv: Option<f64>,
        /// A key frame every this many frames (0: none), at most 100000. Default 0.
        gop: Option<u32>,
        /// Key frame size relative to the other frames, 1 to 100. Default 5.
        key_scale: Option<f64>,
        /// Largest frame bytes per packet (RTP header on top), 100 to 65495. Default "1200B".
        packet: Option<Bytes>,
    }
}

tagged_enum! {
    /// A media stream (`[[media]]`), by `kind`.
    pub enum MediaConfig: dyn MediaKind, "media stream", tag "kind" {
        /// Constant bit rate.
        Cbr(CbrConfig) = "cbr",
        /// A voice call with talk spurts.
        Voice(VoiceConfig) = "voice",
        /// A video call.
        Video(VideoConfig) = "video",
    }
}

fn bad(key: &str, value: impl Into<String>, allowed: impl Into<String>) -> ConfigError {
    ConfigError::new(key, value, allowed)
}

impl MediaKind for CbrConfig {
    fn common(&self) -> Common {
        self.shared()
    }

    fn pattern(&self) -> Result<Pattern> {
        let size = self.size.map_or(160, |b| b.get());
        if !(1..=65_507).contains(&size) {
            return Err(bad(
                "size",
                size.to_string(),
                "is out of range; allowed: 1 to 65507 bytes (a UDP datagram)",
            ));
        }
        let interval = match (self.interval, self.rate) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::at_key(
                    "rate",
                    "is given with `interval`; allowed: one of `interval` or `rate`",
                ))
            }
            (Some(i), None) => i,
            (None, Some(r)) => {
                Time::from_nanos((size as u128 * 8 * 1_000_000_000 / u128::from(r.bps())) as u64)
            }
            (None, None) => Time::from_millis(20),
        };
        if interval < Time::from_micros(1) || interval > Time::from_secs(3600) {
            let key = if self.interval.is_some() {
                "interval"
            } else {
                "rate"
            };
            return Err(bad(
                key,
                format!(
                    "\"{}\"",
                    self.interval.map_or_else(
                        || self.rate.map(|r| r.to_string()).unwrap_or_default(),
                        |i| i.to_string()
                    )
                ),
                "gives a packet interval out of range; allowed: an interval from 1us to 3600s",
            ));
        }
        Ok(Pattern::Cbr {
            payload: size as u32,
            interval,
        })
    }
}

/// ITU-T P.59 (03/1993): mean talk spurt 1.004 s.
pub const P59_TALK: Time = Time::from_millis(1004);
/// ITU-T P.59: mean pause 1.587 s.
pub const P59_SILENCE: Time = Time::from_millis(1587);

impl MediaKind for VoiceConfig {
    fn common(&self) -> Common {
        self.shared()
    }

    fn pattern(&self) -> Result<Pattern> {
        let codec = self.codec.unwrap_or(Codec::G711);
        let interval = self.interval.unwrap_or(codec.default_interval());
        let frame = codec.frame().as_nanos();
        let frames = interval.as_nanos() / frame;
        if !interval.as_nanos().is_multiple_of(frame)
            || frames == 0
            || interval > Time::from_millis(200)
        {
            return Err(bad(
                "interval",
                format!("\"{interval}\""),
                format!(
                    "is not a whole number of {} frames ({}) up to 200ms; allowed: {} to 200ms in steps of {}",
                    codec.name(),
                    codec.frame(),
                    codec.frame(),
                    codec.frame()
                ),
            ));
        }
        let spurts = if self.talk_spurts.unwrap_or(true) {
            let talk = self.talk.unwrap_or(P59_TALK);
            let silence = self.silence.unwrap_or(P59_SILENCE);
            for (key, t) in [("talk", talk), ("silence", silence)] {
                if t < Time::from_millis(1) || t > Time::from_secs(3600) {
                    return Err(bad(
                        key,
                        format!("\"{t}\""),
                        "is out of range; allowed: a mean from 1ms to 3600s",
                    ));
                }
            }
            Some((talk, silence))
        } else {
            for (key, given) in [
                ("talk", self.talk.is_some()),
                ("silence", self.silence.is_some()),
            ] {
                if given {
                    return Err(ConfigError::at_key(
                        key,
                        "is given with talk_spurts = false; allowed: talk and silence only with talk spurts",
                    ));
                }
            }
            None
        };
        Ok(Pattern::Voice {
            codec,
            payload: frames as u32 * codec.frame_bytes() + RTP_HEADER,
            interval,
            spurts,
        })
    }
}

impl MediaKind for VideoConfig {
    fn common(&self) -> Common {
        self.shared()
    }

    fn pattern(&self) -> Result<Pattern> {
        let rate = self.rate.map_or(1_000_000, |r| r.bps());
        let fps = self.frame_rate.unwrap_or(30);
        check_range("frame_rate", fps, 1, 240)?;
        let cv = self.size_cv.unwrap_or(0.0);
        if !(0.0..=10.0).contains(&cv) {
            return Err(bad(
                "size_cv",
                cv.to_string(),
                "is out of range; allowed: 0 to 10",
            ));
        }
        let gop = self.gop.unwrap_or(0);
        check_range("gop", gop, 0, 100_000)?;
        let key_scale = self.key_scale.unwrap_or(5.0);
        if !(1.0..=100.0).contains(&key_scale) {
            return Err(bad(
                "key_scale",
                key_scale.to_string(),
                "is out of range; allowed: 1 to 100",
            ));
        }
        let packet = self.packet.map_or(1200, |b| b.get());
        if !(100..=65_495).contains(&packet) {
            return Err(bad(
                "packet",
                packet.to_string(),
                "is out of range; allowed: 100 to 65495 bytes",
            ));
        }
        let mean_bytes = rate as f64 / 8.0 / f64::from(fps);
        if mean_bytes > 1e8 {
            return Err(bad(
                "rate",
                format!(
                    "\"{}\"",
                    Rate::from_bps(rate)
                        .map(|r| r.to_string())
                        .unwrap_or_default()
                ),
                "makes frames above 100 MB; allowed: at most 100 MB a frame (rate / frame_rate)",
            ));
        }
        Ok(Pattern::Video {
            fps,
            mean_bytes,
            cv,
            gop,
            key_scale,
            max_payload: packet as u32,
        })
    }
}

/// Add the streams of every `[[media]]` entry to `net` (node ranges zipped,
/// a two-way entry as two streams); returns, per stream, the index of the
/// entry that made it. Paths are prefixed `media[i]`.
pub fn add_media(
    net: &mut crate::net::NetworkBuilder,
    entries: &[MediaConfig],
    seed: u64,
) -> Result<Vec<usize>> {
    use crate::config::join;
    use crate::scenario::topology::{NameRange, Pairs};
    let mut made = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let p = format!("media[{i}]");
        let m = entry.model();
        m.validate().map_err(|e| e.at(&p))?;
        let pattern = m.pattern().map_err(|e| e.at(&p))?;
        let c = m.common();
        let from = NameRange::parse(&c.from).map_err(|e| e.at(&join(&p, "from")))?;
        let to = NameRange::parse(&c.to).map_err(|e| e.at(&join(&p, "to")))?;
        let pairs = Pairs::new(from, to).map_err(|e| e.at(&p))?;
        let ways = if c.direction == Direction::TwoWay {
            2
        } else {
            1
        };
        if made.len() + ways * pairs.len() > super::MAX_STREAMS {
            return Err(ConfigError::at_key(
                &p,
                format!(
                    "makes the scenario more than {} media streams (media::MAX_STREAMS)",
                    super::MAX_STREAMS
                ),
            ));
        }
        for (k, (x, y)) in pairs.iter().enumerate() {
            for (key, node) in [("from", &x), ("to", &y)] {
                if net.find(node).is_none() {
                    return Err(ConfigError::new(
                        join(&p, key),
                        crate::config::quoted(node),
                        "is not a node of any link",
                    ));
                }
            }
            let base = match (&c.name, pairs.len()) {
                (Some(n), 1) => n.clone(),
                (Some(n), _) => format!("{n}#{k}"),
                (None, _) => format!("{}:{x}->{y}", entry.kind()),
            };
            for back in 0..ways {
                let (a, b) = if back == 0 { (&x, &y) } else { (&y, &x) };
                let name = if back == 0 {
                    base.clone()
                } else {
                    format!("{base} (back)")
                };
                if !names.insert(name.clone()) {
                    return Err(ConfigError::new(
                        join(&p, "name"),
                        crate::config::quoted(&name),
                        "names a media stream twice; allowed: a name no other stream has",
                    ));
                }
                let (src, dst) = (net.find(a), net.find(b));
                let (Some(src), Some(dst)) = (src, dst) else {
                    unreachable!("both nodes were found above")
                };
                net.media(super::MediaSpec {
                    rng: crate::rng::Rng::stream(seed, &format!("media:{name}")),
                    name,
                    src,
                    dst,
                    pattern: pattern.clone(),
                    start: c.start,
                    stop: c.stop,
                    playout: c.playout,
                });
                made.push(i);
            }
        }
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<MediaConfig> {
        let v: toml::Value = toml::from_str::<toml::Table>(text).unwrap().into();
        crate::config::deserialize(v)
    }

    #[test]
    fn kinds_read_and_default() {
        let m = read("kind = \"voice\"\nfrom = \"A\"\nto = \"B\"").unwrap();
        assert_eq!(m.kind(), "voice");
        let Pattern::Voice {
            codec,
            payload,
            interval,
            spurts,
        } = m.model().pattern().unwrap()
        else {
            panic!()
        };
        assert_eq!(codec, Codec::G711);
        assert_eq!(payload, 160 + 12);
        assert_eq!(interval, Time::from_millis(20));
        assert_eq!(spurts, Some((P59_TALK, P59_SILENCE)));
        let c = read("kind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\nsize = 100\nrate = \"80kbit\"")
            .unwrap();
        assert_eq!(
            c.model().pattern().unwrap(),
            Pattern::Cbr {
                payload: 100,
                interval: Time::from_millis(10)
            }
        );
    }

    #[test]
    fn bad_keys_are_named() {
        let e = read("kind = \"voice\"\nfrom = \"A\"\nto = \"B\"\nframe_rate = 3").unwrap_err();
        assert!(e.to_string().contains("frame_rate"), "{e}");
        let e = read("kind = \"audio\"\nfrom = \"A\"\nto = \"B\"").unwrap_err();
        assert!(e.to_string().contains("\"cbr\""), "{e}");
        let e = read("kind = \"voice\"\nfrom = \"A\"\nto = \"B\"\ncodec = \"opus\"").unwrap_err();
        assert_eq!(e.path, "codec", "{e}");
        assert!(e.to_string().contains("\"g729a\""), "{e}");
        let m = read(
            "kind = \"voice\"\nfrom = \"A\"\nto = \"B\"\ncodec = \"g723.1\"\ninterval = \"20ms\"",
        )
        .unwrap();
        let e = m.model().validate().unwrap_err();
        assert_eq!(e.path, "interval");
        let m =
            read("kind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\ninterval = \"20ms\"\nrate = \"1Mbit\"")
                .unwrap();
        assert_eq!(m.model().validate().unwrap_err().path, "rate");
        let m = read("kind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\nstart = \"2s\"\nstop = \"1s\"")
            .unwrap();
        assert_eq!(m.model().validate().unwrap_err().path, "stop");
        let m = read("kind = \"video\"\nfrom = \"A\"\nto = \"B\"\nframe_rate = 0").unwrap();
        assert_eq!(m.model().validate().unwrap_err().path, "frame_rate");
        let m = read("kind = \"cbr\"\nfrom = \"A\"\nto = \"B\"\nplayout = \"0s\"").unwrap();
        assert_eq!(m.model().validate().unwrap_err().path, "playout");
    }
}
