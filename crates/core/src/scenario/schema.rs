//! The JSON Schema of scenario files, generated from the configuration types
//! ([`ScenarioConfig`] and the models' own types), then adjusted to the file:
//! any value may instead be a `"${name}"` parameter reference (substituted
//! before the types see it), and TOML has no `null`. Alternatives are
//! `anyOf` (never `oneOf`): a reference may stand for any of them. A
//! kind-tagged table picks its kind's schema with `if`/`then`
//! ([`crate::config::kind::enum_schema`]); the `if` conditions are left as
//! they are (a reference there would match every kind). A property whose
//! description states its default (as in "Default `"0s"`." or "Default
//! false.") carries it as `default`.

use serde_json::{json, Map, Value};

use super::ScenarioConfig;

/// What a string that refers to a parameter looks like (it contains `${name}`).
pub(crate) const PLACEHOLDER: &str = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}";

/// JSON Schema (draft 2020-12) of scenario files, for editors and checks.
pub fn json_schema() -> Value {
    let mut v = schemars::schema_for!(ScenarioConfig).to_value();
    adjust(&mut v);
    v
}

/// Keywords whose value is a schema, or an array or object of schemas.
const SUBSCHEMAS: &[&str] = &[
    "properties",
    "$defs",
    "items",
    "prefixItems",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "then",
];

/// Apply the file's adjustments to `schema` and every schema in it.
fn adjust(schema: &mut Value) {
    let Value::Object(o) = schema else { return };
    if !o.contains_key("anyOf") {
        if let Some(alternatives) = o.remove("oneOf") {
            o.insert("anyOf".into(), alternatives);
        }
    }
    for key in SUBSCHEMAS {
        match (o.get_mut(*key), *key) {
            (Some(Value::Object(m)), "properties" | "$defs") => m.values_mut().for_each(adjust),
            (Some(Value::Array(a)), _) => a.iter_mut().for_each(adjust),
            (Some(v @ Value::Object(_)), _) => adjust(v),
            _ => {}
        }
    }
    drop_null(o);
    if let Some(Value::Object(props)) = o.get_mut("properties") {
        props.values_mut().for_each(add_default);
    }
    let kept = o.get("$comment").and_then(Value::as_str) == Some(crate::config::kind::NO_REFERENCE);
    if is_scalar(o) && !kept {
        let description = o.remove("description");
        let inner = Value::Object(std::mem::take(o));
        o.insert(
            "anyOf".into(),
            json!([inner, { "type": "string", "pattern": PLACEHOLDER }]),
        );
        if let Some(d) = description {
            o.insert("description".into(), d);
        }
    }
}

/// Give a property schema the `default` its description states, or the one
/// its first alternative carries, at the property's level (where editors
/// look for it).
fn add_default(prop: &mut Value) {
    let Value::Object(p) = prop else { return };
    if p.contains_key("default") {
        return;
    }
    let inner = p
        .get("anyOf")
        .and_then(|a| a.get(0))
        .and_then(|b| b.get("default"))
        .cloned();
    let stated = p
        .get("description")
        .and_then(Value::as_str)
        .and_then(stated_default);
    if let Some(d) = inner.or(stated) {
        p.insert("default".into(), d);
    }
}

/// The value after "Default " in a description, when it is a literal: a
/// quoted string (`"0s"`, in backticks or not), a number or a boolean,
/// followed by the end of a sentence or clause. Prose ("Default: the
/// direction's delay", "Default 1 − p") gives none.
fn stated_default(text: &str) -> Option<Value> {
    let at = text.find("Default ").or_else(|| text.find("Default\n"))?;
    let rest = text[at + "Default ".len()..].trim_start();
    let (token, after) = if let Some(r) = rest.strip_prefix('`') {
        let end = r.find('`')?;
        (&r[..end], &r[end + 1..])
    } else if let Some(r) = rest.strip_prefix('"') {
        let end = r.find('"')? + 2;
        (&rest[..end], &rest[end..])
    } else {
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')'))
            .unwrap_or(rest.len());
        let token = rest[..end].strip_suffix('.').unwrap_or(&rest[..end]);
        (token, &rest[token.len()..])
    };
    let ends = after.is_empty()
        || after.starts_with(['.', ',', ';', ')', '\n'])
        || after.starts_with(" (");
    if !ends {
        return None;
    }
    match serde_json::from_str::<Value>(token).ok()? {
        v @ (Value::String(_) | Value::Number(_) | Value::Bool(_)) => Some(v),
        _ => None,
    }
}

/// Remove `null` (which `Option` fields get): TOML has none.
fn drop_null(o: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            o.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(branches)) = o.get_mut("anyOf") {
        branches.retain(|b| b.get("type").is_none_or(|t| t != "null"));
        if branches.len() == 1 && o.len() == 1 {
            if let Some(Value::Object(only)) =
                o.remove("anyOf").and_then(|mut b| b.as_array_mut()?.pop())
            {
                *o = only;
            }
        }
    }
}

/// Whether `o` describes a scalar (a value a parameter can stand for).
fn is_scalar(o: &Map<String, Value>) -> bool {
    let scalar = |t: &Value| {
        matches!(
            t.as_str(),
            Some("string" | "number" | "integer" | "boolean")
        )
    };
    match o.get("type") {
        Some(Value::Array(ts)) => ts.iter().all(scalar),
        Some(t) => scalar(t),
        None => o.contains_key("const") || o.contains_key("enum"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_everywhere_a_scalar_is() {
        let s = json_schema();
        let text = s.to_string();
        assert!(!text.contains("\"null\""), "TOML has no null");
        assert!(
            !text.contains("oneOf"),
            "a reference may stand for any alternative"
        );
        // Units keep their patterns, beside the placeholder.
        let rate = &s["$defs"]["Rate"];
        assert_eq!(rate["anyOf"][1]["pattern"], PLACEHOLDER);
        assert!(rate["anyOf"][0]["pattern"]
            .as_str()
            .unwrap()
            .contains("bit"));
        // `params` is optional.
        let required = s["required"].as_array().unwrap();
        assert_eq!(required, &[json!("duration")]);
    }

    #[test]
    fn defaults_from_descriptions() {
        let d = |t: &str| stated_default(t);
        assert_eq!(d("One-way delay. Default `\"0s\"`."), Some(json!("0s")));
        assert_eq!(d("Capacity. Default \"100p\"."), Some(json!("100p")));
        assert_eq!(
            d("Default false (true with profile \"ns2\")."),
            Some(json!(false))
        );
        assert_eq!(d("Loss. Default 0."), Some(json!(0)));
        assert_eq!(d("Default 0.5"), Some(json!(0.5)));
        assert_eq!(d("Default\n`\"1500B\"`; more"), Some(json!("1500B")));
        assert_eq!(d("Default 1 − p."), None);
        assert_eq!(d("Default: the direction's delay."), None);
        assert_eq!(d("Default the TCP mss."), None);
        assert_eq!(d("Default drop-tail, 50 packets."), None);
        assert_eq!(d("No default here."), None);
    }
}
