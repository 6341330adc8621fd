//! The grammars of configuration values: durations (the crate's one duration grammar),
//! `${VAR}` expansion (in `command`, `args`, `env` and `cwd`), and reading the environment.

use std::time::Duration;

use common::DurationError;
use serde_json::Value;

/// Reads an environment variable (the one place the client does).
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// A value as errors show it: its JSON on one line, cut after 60 characters.
pub(super) fn short(value: &Value) -> String {
    common::clip(&value.to_string(), 60)
}

/// A duration as files and flags give it: a number of seconds (`30`, `0.5`) or a string in
/// the workspace's duration grammar (`"30"`, `"500ms"`, `"2m"`, `"1h 30m"`, `"PT5M"`; see
/// `common::duration`), 0 to 24 h. The error says what would be valid.
pub(crate) fn duration(value: &Value) -> Result<Duration, String> {
    let parsed = match value {
        Value::Number(n) => n
            .as_f64()
            .ok_or(DurationError::NotADuration)
            .and_then(common::from_seconds),
        Value::String(text) => common::parse_duration(text),
        _ => Err(DurationError::NotADuration),
    };
    parsed.map_err(|err| err.to_string())
}

/// Expands `${VAR}` (also spelt `${env:VAR}`, as VS Code does), `${VAR:-default}` (the default
/// when VAR is not set or empty) and `${VAR:?message}` (an error with the message when VAR is
/// not set or empty) in a value of `command`, `args`, `env` or `cwd`. Errors never quote the value: values are
/// where secrets live (the message of `:?`, the file's own words for the case, is shown).
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
        let (name, operator) = match expression.find(':') {
            // VS Code's and Cursor's spelling of ${NAME}.
            Some(3) if expression.starts_with("env:") => (&expression[4..], None),
            Some(colon) => (&expression[..colon], Some(&expression[colon..])),
            None => (expression, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(
                "has a `${…}` that is not a variable name: use letters, digits and _ (e.g. ${MQTT_PASSWORD})"
                    .to_owned(),
            );
        }
        let unset = || {
            format!(
                "refers to ${{{name}}}, which is not set (set it, or write ${{{name}:-default}})"
            )
        };
        let found = lookup(name);
        let expanded = match operator.map(|op| (op.get(..2), op.get(2..).unwrap_or_default())) {
            None => found.ok_or_else(unset)?,
            // As in a shell: with the colon, an empty value counts as not set.
            Some((Some(":-"), default)) => found
                .filter(|found| !found.is_empty())
                .unwrap_or_else(|| default.to_owned()),
            Some((Some(":?"), message)) => match found {
                Some(found) if !found.is_empty() => found,
                _ if message.trim().is_empty() => return Err(unset()),
                found => {
                    return Err(format!(
                        "refers to ${{{name}}}, which is {}: {}",
                        if found.is_some() { "empty" } else { "not set" },
                        common::printable(&common::clip(message.trim(), 200))
                    ));
                }
            },
            Some(_) => {
                return Err(format!(
                    "has a `${{{name}:…}}` this client does not read: write ${{{name}}}, ${{{name}:-default}} or ${{{name}:?message}}"
                ));
            }
        };
        out.push_str(&expanded);
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
        let advice = "use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m";
        assert_eq!(duration(&json!("soon")).unwrap_err(), advice);
        assert_eq!(duration(&json!(true)).unwrap_err(), advice);
        assert_eq!(duration(&json!("25h")).unwrap_err(), "use 0s to 24h");
        assert_eq!(duration(&json!(-1)).unwrap_err(), "use 0s to 24h");
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

    #[test]
    fn defaults_and_required_variables_with_a_message() {
        let vars = |name: &str| match name {
            "SET" => Some("v".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(expand("${SET:-d}/${UNSET:-d}", &vars).unwrap(), "v/d");
        // With the colon, empty is as good as not set (as in a shell); without, it is empty.
        assert_eq!(expand("[${EMPTY:-d}][${EMPTY}]", &vars).unwrap(), "[d][]");
        assert_eq!(
            expand("${EMPTY:?give the server's folder}", &vars).unwrap_err(),
            "refers to ${EMPTY}, which is empty: give the server's folder"
        );
        assert_eq!(expand("${SET:?needed}", &vars).unwrap(), "v");
        assert_eq!(expand("${env:SET}", &vars).unwrap(), "v");
        assert_eq!(
            expand("${NOPE:?set NOPE to the server's folder}", &vars).unwrap_err(),
            "refers to ${NOPE}, which is not set: set NOPE to the server's folder"
        );
        assert_eq!(
            expand("${NOPE:?}", &vars).unwrap_err(),
            "refers to ${NOPE}, which is not set (set it, or write ${NOPE:-default})"
        );
        // An operator that starts with a character of several bytes is refused, not split.
        assert_eq!(
            expand("${NOPE:é}", &vars).unwrap_err(),
            expand("${NOPE:=x}", &vars).unwrap_err()
        );
        assert_eq!(
            expand("${NOPE:=x}", &vars).unwrap_err(),
            "has a `${NOPE:…}` this client does not read: write ${NOPE}, ${NOPE:-default} or ${NOPE:?message}"
        );
    }
}
