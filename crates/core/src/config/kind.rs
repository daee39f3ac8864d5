//! Tables tagged by a kind key (`queue = { kind = "red", minth = 5, … }`):
//! one variant type per model, chosen by the tag.
//!
//! serde's own `#[serde(tag = "kind")]` buffers the table, so an error inside
//! the variant loses its key path, and a missing tag cannot fall back to a
//! default. [`deserialize_tagged`] reads the table, takes the tag (or the
//! default), and deserializes the variant's own struct with its key paths
//! intact; a bare string is the shorthand for a table with only the tag
//! (`cc = "cubic"` is `cc = { kind = "cubic" }`); `tagged_enum!` declares such an
//! enum from one list of `Variant(Type) = "key"` arms.
//!
//! The table is buffered as a [`toml::Value`], the scenario's own
//! representation: every value arrives at the variant as written (a JSON
//! value would turn `nan` and `inf` into null, i.e. into an absent key).
//! Non-finite numbers are refused before any table is typed
//! ([`crate::scenario::check_tree`]); a variant read directly still sees them.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::Value as Json;
use toml::Value;

use super::{one_of, quoted, to_serde, units::schema, ConfigError};

/// How a tagged enum is written.
#[derive(Clone, Copy, Debug)]
pub struct Tagged {
    /// The tag key (`kind`, `scheme`).
    pub tag: &'static str,
    /// What the table is, for messages (`queue`, `channel`).
    pub noun: &'static str,
    /// The tag's values, one per variant.
    pub keys: &'static [&'static str],
    /// The variant of a table without the tag, if any.
    pub default: Option<&'static str>,
}

/// Deserialize a `spec.tag`-tagged table: `variant(key, rest)` reads the
/// variant `key` from the table without its tag.
pub fn deserialize_tagged<'de, D, T>(
    d: D,
    spec: &Tagged,
    variant: impl FnOnce(&'static str, Value) -> Result<T, ConfigError>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let choices = one_of(spec.keys);
    // The shorthand `cc = "cubic"` is the kind with every default; errors
    // about it name the key itself, not a `kind` the user did not write.
    let (mut map, tag_path) = match Value::deserialize(d)? {
        Value::Table(map) => (map, spec.tag),
        Value::String(s) => (
            toml::Table::from_iter([(spec.tag.to_string(), Value::String(s))]),
            "",
        ),
        other => {
            let (noun, tag) = (spec.noun, spec.tag);
            let allowed = format!(
                "is neither a {noun} {tag} nor a table; \
                 a {noun} is {choices} or a table with {tag} = {choices}"
            );
            return Err(to_serde(ConfigError::new("", other.to_string(), allowed)));
        }
    };
    let key = match map.remove(spec.tag) {
        None => spec.default.ok_or_else(|| {
            ConfigError::at_key(
                spec.tag,
                format!("missing; a {} needs {} = {choices}", spec.noun, spec.tag),
            )
        }),
        Some(Value::String(s)) => spec.keys.iter().copied().find(|k| *k == s).ok_or_else(|| {
            ConfigError::new(
                tag_path,
                quoted(&s),
                format!("is not a {} {}; allowed: {choices}", spec.noun, spec.tag),
            )
        }),
        Some(other) => Err(ConfigError::new(
            spec.tag,
            other.to_string(),
            format!("is not allowed; allowed: {choices}"),
        )),
    }
    .map_err(to_serde)?;
    variant(key, Value::Table(map)).map_err(|e| to_serde(name_the_kind(e, spec, key)))
}

/// Say which kind a top-level unknown or missing key concerns.
fn name_the_kind(mut e: ConfigError, spec: &Tagged, key: &str) -> ConfigError {
    if e.path.contains(['.', '[']) {
        return e;
    }
    let of = format!("a {} of {} = {}", spec.noun, spec.tag, quoted(key));
    if let Some((head, keys)) = e.allowed.split_once(super::KEYS_HERE) {
        e.allowed = format!("{head}; {of} takes: {}, {keys}", spec.tag);
    } else if e.allowed == super::REQUIRED {
        e.allowed = format!("missing; {of} needs it");
    }
    e
}

/// The schema of variant `key` of a `tag`-tagged enum: `T`'s own, with the tag.
pub fn variant_schema<T: JsonSchema>(
    g: &mut SchemaGenerator,
    tag: &str,
    key: &str,
    is_default: bool,
) -> Json {
    let mut s: Schema = T::json_schema(g);
    let o = s.ensure_object();
    if let Some(Json::Object(props)) = o.get_mut("properties") {
        props.insert(tag.into(), serde_json::json!({ "const": key }));
    } else {
        o.insert("type".into(), "object".into());
        o.insert(
            "properties".into(),
            serde_json::json!({ tag: { "const": key } }),
        );
    }
    if !is_default {
        match o.get_mut("required") {
            Some(Json::Array(r)) => r.insert(0, tag.into()),
            _ => {
                o.insert("required".into(), serde_json::json!([tag]));
            }
        }
    }
    s.to_value()
}

/// `$comment` of a schema the scenario schema's adjustments leave as it is
/// (no `"${name}"` alternative added: a reference was handled before).
pub const NO_REFERENCE: &str = "a kind name (a reference was handled above)";

/// The schema of a tagged enum from its variants' schemas (in the order of
/// `keys`, its tag values; `default` the kind a table without the tag is).
///
/// The tag picks the variant (`if` the tag is `key` `then` that variant's
/// schema), so a validator reports a mistyped key against the one kind it
/// belongs to ("additional property `rat`") instead of "valid under none of
/// the alternatives". A bare string is the shorthand for a kind with its
/// defaults. A tag that is a parameter reference (`"${q}"`) may stand for any
/// kind: then the table must fit one of them. A tag that is neither a kind nor
/// a reference is an error at the tag.
pub fn enum_schema(variants: Vec<Json>, tag: &str, keys: &[&str], default: Option<&str>) -> Schema {
    use serde_json::json;
    let is_kind = |k: &str| json!({ "type": "object", "required": [tag], "properties": { tag: { "const": k } } });
    let mut branches: Vec<Json> = vec![json!({
        "if": { "type": "string" },
        "then": { "enum": keys },
    })];
    for (v, key) in variants.iter().zip(keys) {
        branches.push(json!({ "if": is_kind(key), "then": v }));
    }
    let untagged = json!({ "type": "object", "not": { "required": [tag] } });
    match default.and_then(|d| keys.iter().position(|k| *k == d)) {
        Some(i) => branches.push(json!({ "if": untagged, "then": variants[i] })),
        None => branches.push(json!({ "if": untagged, "then": { "required": [tag] } })),
    }
    branches.push(json!({
        "if": {
            "type": "object",
            "required": [tag],
            "properties": { tag: { "type": "string", "pattern": crate::scenario::PLACEHOLDER } },
        },
        "then": { "anyOf": variants },
    }));
    branches.push(json!({
        "if": {
            "type": "object",
            "required": [tag],
            "properties": { tag: { "not": { "type": "string", "pattern": crate::scenario::PLACEHOLDER } } },
        },
        "then": { "properties": { tag: { "enum": keys, "$comment": NO_REFERENCE } } },
    }));
    schema(json!({ "type": ["object", "string"], "allOf": branches }))
}

/// Declare an enum of model configurations tagged by a key (the macro is
/// crate-private, so the example is not compiled as a doctest; the real
/// uses are `aqm::QueueConfig`, `channel::ChannelConfig` and the others):
///
/// ```text
/// tagged_enum! {
///     /// A queue in front of a transmitter.
///     pub enum QueueConfig: dyn AqmConfig, "queue", tag "kind", default "droptail" {
///         /// Drop-tail FIFO.
///         Droptail(DropTailConfig) = "droptail",
///         /// RED.
///         Red(RedConfig) = "red",
///     }
/// }
/// ```
///
/// gives the enum, `KINDS`, `kind()`, `model()` (the variant as `&dyn
/// Trait`), `From` each variant type, `Deserialize` (through
/// [`deserialize_tagged`]) and `JsonSchema` (`oneOf` the variants).
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: dyn $trait:path, $noun:literal, tag $tag:literal
            $(, default $default:literal)? {
            $( $(#[$vmeta:meta])* $variant:ident($ty:ty) = $key:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        // Configurations, one per scenario entry: their size does not matter.
        #[allow(clippy::large_enum_variant)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant($ty), )+
        }

        impl $name {
            /// The values of the tag, one per variant.
            pub const KINDS: &'static [&'static str] = &[$($key),+];
            const DEFAULT: Option<&'static str> = tagged_enum!(@default $($default)?);

            /// The tag value of this configuration.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $key, )+
                }
            }

            /// This configuration as its model's trait object.
            pub fn model(&self) -> &dyn $trait {
                match self {
                    $( Self::$variant(c) => c, )+
                }
            }

            /// This configuration as its model's mutable trait object.
            #[allow(dead_code)]
            pub fn model_mut(&mut self) -> &mut dyn $trait {
                match self {
                    $( Self::$variant(c) => c, )+
                }
            }
        }

        $(
            impl From<$ty> for $name {
                fn from(c: $ty) -> Self {
                    Self::$variant(c)
                }
            }
        )+

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let spec = $crate::config::kind::Tagged {
                    tag: $tag,
                    noun: $noun,
                    keys: Self::KINDS,
                    default: Self::DEFAULT,
                };
                $crate::config::kind::deserialize_tagged(d, &spec, |key, v| match key {
                    $( $key => $crate::config::deserialize::<$ty, _>(v).map(Self::$variant), )+
                    other => Err($crate::config::ConfigError::new($tag, other, "is not a known kind")),
                })
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                $crate::config::kind::enum_schema(vec![$(
                    $crate::config::kind::variant_schema::<$ty>(
                        g, $tag, $key, Self::DEFAULT == Some($key),
                    ),
                )+], $tag, Self::KINDS, Self::DEFAULT)
            }
        }
    };
    (@default $d:literal) => { Some($d) };
    (@default) => { None };
}

pub(crate) use tagged_enum;
