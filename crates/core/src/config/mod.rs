//! What every model's configuration shares: the one error type
//! ([`ConfigError`]), key-path helpers, values with units ([`units`]) and the
//! reader of `kind`-tagged tables ([`kind`]).
//!
//! Each model keeps its configuration type beside its code (`aqm/red.rs`
//! holds `RedConfig`, `channel/rayleigh.rs` holds `RayleighConfig`, …): a
//! serde `Deserialize` + schemars `JsonSchema` struct that refuses unknown
//! keys, with a `validate()` that reports a [`ConfigError`] whose path is
//! relative to the struct. The scenario layer prefixes the path
//! ([`ConfigError::at`]) with where the struct sits in the file.
//!
//! This module depends on nothing in the crate but [`crate::time`].

pub mod kind;
pub mod units;

use std::fmt;

pub use units::{Bytes, Decibel, Frequency, Length, Limit, Probability, Rate, Speed};

/// A configuration that cannot be used: where, the value, and what is allowed.
///
/// Displayed as one line, `path: value allowed` (`links[2].ab.queue.minth: 40
/// is not below maxth (30); need minth < maxth`), or `path: allowed` when the
/// value is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Key path of the offending value, e.g. `links[2].ab.queue.minth`
    /// (relative to the configuration that reported it until prefixed).
    pub path: String,
    /// The offending value as written (a string in double quotes), empty when
    /// the value is missing or the error concerns a whole table.
    pub value: String,
    /// What is wrong and what is allowed.
    pub allowed: String,
}

impl ConfigError {
    /// An error about `value` (as written) at `path`.
    pub fn new(
        path: impl Into<String>,
        value: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        ConfigError {
            path: bounded(path.into(), SHOWN_PATH_CHARS),
            value: bounded(value.into(), SHOWN_VALUE_CHARS),
            allowed: bounded(allowed.into(), SHOWN_ALLOWED_CHARS),
        }
    }

    /// An error about `path` as a whole (no single value): a missing key, a
    /// rule between several keys.
    pub fn at_key(path: impl Into<String>, allowed: impl Into<String>) -> Self {
        ConfigError::new(path, "", allowed)
    }

    /// The same error with its path inside `prefix` (`"links[2]"` +
    /// `"ab.rate"` = `"links[2].ab.rate"`).
    #[must_use]
    pub fn at(mut self, prefix: &str) -> Self {
        self.path = join(prefix, &self.path);
        self
    }

    /// The text after `path: `: the value (if any) and what is allowed.
    pub fn message(&self) -> String {
        if self.value.is_empty() {
            self.allowed.clone()
        } else {
            format!("{} {}", self.value, self.allowed)
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message())
        } else {
            write!(f, "{}: {}", self.path, self.message())
        }
    }
}

impl std::error::Error for ConfigError {}

/// At most this many characters of an offending value are quoted in an error
/// (a 200,000-element array is not a message line).
pub const SHOWN_VALUE_CHARS: usize = 80;
/// At most this many characters of a key path (a key may be any string).
pub const SHOWN_PATH_CHARS: usize = 200;
/// At most this many characters of what is wrong and allowed (lists of keys).
pub const SHOWN_ALLOWED_CHARS: usize = 2000;

/// `s` cut to `limit` characters: a longer one keeps its first `limit - 1`,
/// then `…` and its length (`"xxxx…" (300002 characters)`).
pub fn bounded(s: String, limit: usize) -> String {
    let n = s.chars().count();
    if n <= limit {
        return s;
    }
    // Already cut (an error passed through serde is built twice): keep its length.
    if let Some((head, tail)) = s.rsplit_once("… (") {
        let digits = tail.strip_suffix(" characters)").unwrap_or_default();
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && head.chars().count() < limit
        {
            return s;
        }
    }
    let cut: String = s.chars().take(limit.saturating_sub(1)).collect();
    format!("{cut}… ({n} characters)")
}

/// `Result` with a [`ConfigError`].
pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

/// Join key paths: `join("links[2]", "ab.rate")` = `links[2].ab.rate`,
/// `join("flows", "[3]")` = `flows[3]`; an empty side is left out.
pub fn join(prefix: &str, rel: &str) -> String {
    match (prefix.is_empty(), rel.is_empty()) {
        (true, _) => rel.to_string(),
        (_, true) => prefix.to_string(),
        _ if rel.starts_with('[') => format!("{prefix}{rel}"),
        _ => format!("{prefix}.{rel}"),
    }
}

/// A string value as written in a file: in double quotes.
pub fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// A list of words as an English alternative: `"a"`, `"a" or "b"`,
/// `"a", "b" or "c"`.
pub fn one_of(words: &[&str]) -> String {
    let q: Vec<String> = words.iter().map(|w| quoted(w)).collect();
    match q.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// `Err` at `key` unless `lo ≤ v ≤ hi`.
pub fn check_range<T: PartialOrd + fmt::Display>(key: &str, v: T, lo: T, hi: T) -> Result<()> {
    if v >= lo && v <= hi {
        Ok(())
    } else {
        Err(ConfigError::new(
            key,
            v.to_string(),
            format!("is out of range; allowed: {lo} to {hi}"),
        ))
    }
}

// ---------------------------------------------------------------------------
// Through serde
// ---------------------------------------------------------------------------

/// Between an unknown key and the list of the keys allowed there.
pub(crate) const KEYS_HERE: &str = "; the keys here: ";
/// What a missing required key says.
pub(crate) const REQUIRED: &str = "missing; this key is required";

/// Marks a [`ConfigError`] travelling through serde as an error message.
const MARK: char = '\u{1f}';

/// A [`ConfigError`] as a serde error of any deserializer, to be recovered
/// (with its relative path) by [`deserialize`].
pub fn to_serde<E: serde::de::Error>(e: ConfigError) -> E {
    let clean = |s: &str| s.replace(MARK, "\u{fffd}");
    E::custom(format!(
        "{MARK}{}{MARK}{}{MARK}{}",
        clean(&e.path),
        clean(&e.value),
        clean(&e.allowed)
    ))
}

/// Deserialize `T` from `d`, turning any error into a [`ConfigError`] with
/// the key path of the offending value (relative to `d`'s root).
pub fn deserialize<'de, T, D>(d: D) -> Result<T>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
    D::Error: fmt::Display,
{
    serde_path_to_error::deserialize(d).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        // Only the message: some deserializers (toml) add lines of context.
        let msg = e.into_inner().to_string();
        from_serde(&path, msg.lines().next().unwrap_or_default().trim())
    })
}

/// A serde error message raised at `path`, as a [`ConfigError`]: one made by
/// [`to_serde`] keeps its own path below `path`; serde's own messages are
/// reworded to name the key and what is allowed.
fn from_serde(path: &str, msg: &str) -> ConfigError {
    if let Some(rest) = msg.strip_prefix(MARK) {
        let mut parts = rest.splitn(3, MARK);
        let (rel, value, allowed) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        return ConfigError::new(join(path, rel), value, allowed);
    }
    // Some deserializers put an unknown key in the path, others do not.
    let with_key = |key: &str| {
        if path == key || path.ends_with(&format!(".{key}")) {
            path.to_string()
        } else {
            join(path, key)
        }
    };
    if let Some((key, keys)) = between(msg, "unknown field `", "`, expected ") {
        return ConfigError::at_key(
            with_key(key),
            format!("unknown key `{key}`{KEYS_HERE}{}", words(keys)),
        );
    }
    if let Some(key) = msg
        .strip_prefix("unknown field `")
        .and_then(|r| r.strip_suffix("`, there are no fields"))
    {
        return ConfigError::at_key(
            with_key(key),
            format!("unknown key `{key}`; no keys are allowed here"),
        );
    }
    if let Some(key) = msg
        .strip_prefix("missing field `")
        .and_then(|r| r.strip_suffix('`'))
    {
        return ConfigError::at_key(join(path, key), REQUIRED);
    }
    if let Some((value, expected)) = between(msg, "unknown variant `", "`, expected ") {
        return ConfigError::new(
            path,
            quoted(value),
            format!("is not allowed; allowed: {}", one_of(&word_list(expected))),
        );
    }
    for (head, what) in [
        ("invalid type: ", "has the wrong type"),
        ("invalid value: ", "is not allowed"),
        ("invalid length ", "has the wrong length"),
    ] {
        if let Some((found, expected)) = between(msg, head, ", expected ") {
            return ConfigError::new(
                path,
                literal(found),
                format!("{what}; expected {}", type_words(expected)),
            );
        }
    }
    ConfigError::at_key(path, msg)
}

/// `(a, b)` for `msg` = `{head}{a}{mid}{b}`.
fn between<'m>(msg: &'m str, head: &str, mid: &str) -> Option<(&'m str, &'m str)> {
    msg.strip_prefix(head)?.split_once(mid)
}

/// serde's `` `a` ``, `` `a` or `b` `` or `` one of `a`, `b` `` as words.
fn word_list(expected: &str) -> Vec<&str> {
    let list = expected.strip_prefix("one of ").unwrap_or(expected);
    list.split(", ")
        .flat_map(|w| w.split(" or "))
        .map(|w| w.trim_matches('`'))
        .collect()
}

fn words(expected: &str) -> String {
    word_list(expected).join(", ")
}

/// serde's description of a found value (`string "x"`, `integer `5``) as
/// the value itself.
fn literal(found: &str) -> String {
    for head in [
        "string ",
        "integer ",
        "floating point ",
        "boolean ",
        "character ",
    ] {
        if let Some(v) = found.strip_prefix(head) {
            return v.trim_matches('`').to_string();
        }
    }
    match found {
        "map" => "a table".into(),
        "sequence" => "an array".into(),
        other => other.to_string(),
    }
}

/// serde's names of primitive types in words.
fn type_words(expected: &str) -> String {
    match expected {
        "f64" | "f32" => "a number".into(),
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number ≥ 0".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer".into(),
        "a boolean" | "a string" => expected.into(),
        "struct" | "map" => "a table".into(),
        "a sequence" => "an array".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join() {
        assert_eq!(join("links[2]", "ab.rate"), "links[2].ab.rate");
        assert_eq!(join("flows", "[3].to"), "flows[3].to");
        assert_eq!(join("", "x"), "x");
        assert_eq!(join("x", ""), "x");
        let e = ConfigError::new("minth", "40", "is not below maxth")
            .at("queue")
            .at("links[1]");
        assert_eq!(e.to_string(), "links[1].queue.minth: 40 is not below maxth");
    }

    #[test]
    fn errors_survive_serde_with_their_path() {
        let e = ConfigError::new("inner.key", "\"x\"", "is wrong; allowed: y");
        let s: serde_json::Error = to_serde(e);
        let back = from_serde("outer[1]", &s.to_string());
        assert_eq!(back.path, "outer[1].inner.key");
        assert_eq!(back.value, "\"x\"");
        assert_eq!(back.allowed, "is wrong; allowed: y");
    }

    #[test]
    fn serde_messages_are_reworded() {
        let e = from_serde("tcp", "unknown field `msss`, expected one of `mss`, `rwnd`");
        assert_eq!(e.path, "tcp.msss");
        assert!(e.allowed.contains("mss, rwnd"), "{e}");
        let e = from_serde(
            "tcp.lt.estimator",
            "unknown variant `x`, expected `receiver` or `sender`",
        );
        assert!(e.allowed.ends_with("\"receiver\" or \"sender\""), "{e}");
        let e = from_serde(
            "tcp.variant",
            "unknown variant `vegas`, expected one of `reno`, `sack`",
        );
        assert_eq!(
            e.to_string(),
            "tcp.variant: \"vegas\" is not allowed; allowed: \"reno\" or \"sack\""
        );
        let e = from_serde("x", "invalid type: string \"a\", expected f64");
        assert_eq!(
            e.to_string(),
            "x: \"a\" has the wrong type; expected a number"
        );
        let e = from_serde("x", "missing field `rate`");
        assert_eq!(e.path, "x.rate");
    }

    #[test]
    fn long_values_are_quoted_by_a_bounded_prefix() {
        let long = format!("\"{}\"", "x".repeat(300_000));
        let e = ConfigError::new("k".repeat(10_000), long, "é".repeat(5_000));
        assert!(e.value.starts_with("\"xxx") && e.value.ends_with("… (300002 characters)"));
        assert_eq!(
            e.value.chars().count(),
            SHOWN_VALUE_CHARS + " (300002 characters)".len()
        );
        assert!(e.path.chars().count() < SHOWN_PATH_CHARS + 30, "{}", e.path);
        assert!(e.allowed.chars().count() < SHOWN_ALLOWED_CHARS + 30);
        assert!(e.to_string().len() < 20_000);
        // Cut once: an error rebuilt from its parts keeps the original length.
        let again = ConfigError::new("", e.value.clone(), "");
        assert_eq!(again.value, e.value);
        let short = ConfigError::new("a", "5", "is fine");
        assert_eq!(short.to_string(), "a: 5 is fine");
    }

    #[test]
    fn word_lists() {
        assert_eq!(one_of(&["a"]), "\"a\"");
        assert_eq!(one_of(&["a", "b", "c"]), "\"a\", \"b\" or \"c\"");
    }
}
