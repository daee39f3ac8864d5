//! `[params]`: named parameters with defaults, overridden by `--set name=value`
//! and referred to anywhere else in the file as `"${name}"`.
//!
//! A string that is exactly `"${name}"` becomes the parameter's value with its
//! type (so `loss = "${per}"` is a number); a string that merely contains
//! `${name}` gets the value's text spliced in (`a = "S{1..${flows}}"`).

use toml::{Table, Value};

use crate::config::ConfigError;

type Result<T> = crate::config::Result<T>;

fn err(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::at_key(path, message)
}

fn valid_name(n: &str) -> bool {
    let mut c = n.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Read `[params]` from `doc`, apply `overrides`, and return the resolved
/// parameters (in file order).
pub fn resolve(doc: &Table, overrides: &[(String, String)]) -> Result<Vec<(String, Value)>> {
    let mut params: Vec<(String, Value)> = Vec::new();
    if let Some(p) = doc.get("params") {
        let Value::Table(t) = p else {
            return Err(err(
                "params",
                format!(
                    "must be a table of name = default value, got {}",
                    type_name(p)
                ),
            ));
        };
        for (k, v) in t {
            if !valid_name(k) {
                return Err(err(
                    format!("params.{k}"),
                    "parameter names are letters, digits and '_' and start with a letter or '_'",
                ));
            }
            match v {
                Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => {}
                other => {
                    return Err(err(
                        format!("params.{k}"),
                        format!(
                            "a parameter's default is a string, number or boolean, got {}",
                            type_name(other)
                        ),
                    ))
                }
            }
            params.push((k.clone(), v.clone()));
        }
    }
    for (name, text) in overrides {
        let Some(slot) = params.iter_mut().find(|(k, _)| k == name) else {
            let known: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
            return Err(err(
                format!("--set {name}"),
                if known.is_empty() {
                    "unknown parameter: this scenario has no [params]".to_string()
                } else {
                    format!(
                        "unknown parameter; this scenario's parameters are: {}",
                        known.join(", ")
                    )
                },
            ));
        };
        let t = text.trim();
        let new = match &slot.1 {
            Value::Integer(_) => t.parse::<i64>().map(Value::Integer).map_err(|_| {
                err(
                    format!("--set {name}"),
                    format!("'{text}' is not an integer (the default is {})", slot.1),
                )
            })?,
            Value::Float(_) => t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Value::Float)
                .ok_or_else(|| {
                    err(
                        format!("--set {name}"),
                        format!("'{text}' is not a number (the default is {})", slot.1),
                    )
                })?,
            Value::Boolean(_) => match t {
                "true" => Value::Boolean(true),
                "false" => Value::Boolean(false),
                _ => {
                    return Err(err(
                        format!("--set {name}"),
                        format!("'{text}' is not true or false"),
                    ))
                }
            },
            _ => Value::String(text.clone()),
        };
        slot.1 = new;
    }
    Ok(params)
}

fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format!("{f}"),
        Value::Boolean(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// Replace every `${name}` in `doc` (except inside `[params]`).
pub fn substitute(doc: &mut Table, params: &[(String, Value)]) -> Result<()> {
    for (k, v) in doc.iter_mut() {
        if k == "params" {
            continue;
        }
        subst_value(v, k.clone(), params)?;
    }
    Ok(())
}

fn subst_value(v: &mut Value, path: String, params: &[(String, Value)]) -> Result<()> {
    match v {
        Value::String(s) if s.contains("${") => {
            *v = subst_string(s, &path, params)?;
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                subst_value(x, format!("{path}[{i}]"), params)?;
            }
        }
        Value::Table(t) => {
            for (k, x) in t.iter_mut() {
                subst_value(x, format!("{path}.{k}"), params)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn lookup<'a>(name: &str, path: &str, params: &'a [(String, Value)]) -> Result<&'a Value> {
    params.iter().find(|(k, _)| k == name).map(|(_, v)| v).ok_or_else(|| {
        let known: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
        err(
            path,
            format!(
                "refers to an undefined parameter '${{{name}}}'; define it in [params] (defined: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ),
        )
    })
}

fn subst_string(s: &str, path: &str, params: &[(String, Value)]) -> Result<Value> {
    if let Some(name) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        if valid_name(name) {
            return Ok(lookup(name, path, params)?.clone());
        }
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let j = after
            .find('}')
            .ok_or_else(|| err(path, format!("'{s}' has an unclosed '${{'")))?;
        let name = &after[..j];
        if !valid_name(name) {
            return Err(err(
                path,
                format!("'{s}': '{name}' is not a parameter name"),
            ));
        }
        out.push_str(&display(lookup(name, path, params)?));
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn typed_and_spliced_substitution() {
        let mut d = doc(
            "[params]\nflows = 3\nper = 0.1\n[x]\nloss = \"${per}\"\nname = \"S{1..${flows}}\"\n",
        );
        let p = resolve(&d, &[]).unwrap();
        substitute(&mut d, &p).unwrap();
        assert_eq!(d["x"]["loss"], Value::Float(0.1));
        assert_eq!(d["x"]["name"], Value::String("S{1..3}".into()));
    }

    #[test]
    fn overrides_are_typed() {
        let d = doc("[params]\nflows = 3\n");
        let p = resolve(&d, &[("flows".into(), "5".into())]).unwrap();
        assert_eq!(p[0].1, Value::Integer(5));
        let e = resolve(&d, &[("flows".into(), "five".into())]).unwrap_err();
        assert_eq!(e.path, "--set flows");
        let e = resolve(&d, &[("nope".into(), "1".into())]).unwrap_err();
        assert!(e.allowed.contains("flows"), "{e}");
    }

    #[test]
    fn undefined_reference() {
        let mut d = doc("[x]\ny = \"${z}\"\n");
        let e = substitute(&mut d, &[]).unwrap_err();
        assert_eq!(e.path, "x.y");
    }
}
