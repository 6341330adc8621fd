//! The grammars of configuration values: durations (the crate's one duration grammar),
//! `${VAR}` expansion in env values, and reading the environment.

use std::time::Duration;

use serde_json::Value;

/// Reads an environment variable (the one place the client does).
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// A value as errors show it: its JSON, cut at 60 bytes.
pub(super) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        format!("{}…", &text[..text.floor_char_boundary(60)])
    } else {
        text
    }
}

/// A duration, 0 to 24 h: seconds as a number (`30`, `0.5`, `"30"`) or a duration in jiff's
/// friendly or ISO 8601 format (`"500ms"`, `"30s"`, `"2m"`, `"1h 30m"`, `"PT5M"`). The one
/// duration grammar of this crate (`mcpServers`, tool definitions, `chat --timeout`).
pub(crate) fn duration(value: &Value) -> Result<Duration, String> {
    let invalid = || "use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\"".to_owned();
    let seconds = match value {
        Value::Number(n) => n.as_f64().ok_or_else(invalid)?,
        Value::String(text) => {
            let text = text.trim();
            match text.parse::<f64>() {
                Ok(seconds) => seconds,
                Err(_) => text
                    .parse::<jiff::SignedDuration>()
                    .map_err(|_| invalid())?
                    .as_secs_f64(),
            }
        }
        _ => return Err(invalid()),
    };
    if !(0.0..=86_400.0).contains(&seconds) {
        return Err("use 0 s to 24 h".to_owned());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Expands `${VAR}` and `${VAR:-default}` in an env value. Errors never quote the value:
/// env values are where secrets live.
pub(super) fn expand(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| {
                format!(
                    "has an unclosed `${{` (character {} of the value): write ${{NAME}} or ${{NAME:-default}}",
                    value.len() - rest.len() + start + 1
                )
            })?;
        let expression = &after[..end];
        let (name, default) = match expression.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expression, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(
                "has a `${…}` that is not a variable name: use letters, digits and _ (e.g. ${MQTT_PASSWORD})"
                    .to_owned(),
            );
        }
        match (lookup(name), default) {
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "refers to ${{{name}}}, which is not set (set it, or write ${{{name}:-default}})"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod duration_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn durations_are_seconds_or_what_jiff_reads_up_to_a_day() {
        for (value, seconds) in [
            (json!(30), 30.0),
            (json!(0.5), 0.5),
            (json!("30"), 30.0),
            (json!("500ms"), 0.5),
            (json!("2m"), 120.0),
            (json!("1h 30m"), 5400.0),
            (json!("PT5M"), 300.0),
        ] {
            assert_eq!(
                duration(&value),
                Ok(Duration::from_secs_f64(seconds)),
                "{value}"
            );
        }
        let advice = "use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\"";
        assert_eq!(duration(&json!("soon")).unwrap_err(), advice);
        assert_eq!(duration(&json!(true)).unwrap_err(), advice);
        assert_eq!(duration(&json!("25h")).unwrap_err(), "use 0 s to 24 h");
        assert_eq!(duration(&json!(-1)).unwrap_err(), "use 0 s to 24 h");
    }
}

#[cfg(test)]
mod expand_tests {
    use super::*;

    #[test]
    fn expansion_errors_never_quote_the_value() {
        let none = |_: &str| None;
        let unclosed = expand("hunter2${OOPS", &none).unwrap_err();
        assert_eq!(
            unclosed,
            "has an unclosed `${` (character 8 of the value): write ${NAME} or ${NAME:-default}"
        );
        let odd = expand("hunter2${my secret}", &none).unwrap_err();
        assert_eq!(
            odd,
            "has a `${…}` that is not a variable name: use letters, digits and _ (e.g. ${MQTT_PASSWORD})"
        );
        assert!(!unclosed.contains("hunter2") && !odd.contains("my secret"));
    }
}
