//! The JSON Schema of scenario files, generated from the configuration types
//! ([`ScenarioConfig`] and the models' own types), then adjusted to the file:
//! any value may instead be a `"${name}"` parameter reference (substituted
//! before the types see it), and TOML has no `null`. Alternatives are
//! `anyOf` (never `oneOf`): a reference may stand for any of them.

use serde_json::{json, Map, Value};

use super::ScenarioConfig;

/// What a string that refers to a parameter looks like (it contains `${name}`).
const PLACEHOLDER: &str = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}";

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
    if is_scalar(o) {
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
}
