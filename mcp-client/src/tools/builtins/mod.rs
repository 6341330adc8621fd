//! Builtin local tools: named Rust handlers that definition files refer to
//! (`"implementation": {"type": "builtin", "handler": "echo"}`).

pub mod math;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// A builtin handler: parameters in, result or error message out.
pub type Builtin = fn(&JsonObject) -> Result<Value, String>;

/// The handler named `name`, if there is one.
pub fn builtin(name: &str) -> Option<Builtin> {
    match name {
        "echo" => Some(echo),
        "math_eval" => Some(math_eval),
        "get_current_datetime" => Some(current_datetime),
        _ => None,
    }
}

/// `{echo: <parameters>}`.
fn echo(parameters: &JsonObject) -> Result<Value, String> {
    Ok(json!({ "echo": parameters }))
}

/// `{expression}` → `{result: <number>}`.
fn math_eval(parameters: &JsonObject) -> Result<Value, String> {
    let expression = parameters
        .get("expression")
        .and_then(Value::as_str)
        .ok_or("math_eval needs `expression`, a string such as \"2 * (3 + 4)\"")?;
    let value = math::evaluate(expression).map_err(|err| err.to_string())?;
    // Whole numbers come back as integers: 2+2 is 4, not 4.0.
    let result = if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    };
    Ok(json!({ "result": result }))
}

/// Local and UTC time in ISO-8601, optionally in an IANA time zone.
fn current_datetime(parameters: &JsonObject) -> Result<Value, String> {
    let now = jiff::Timestamp::now();
    let zone = match parameters.get("timezone").and_then(Value::as_str).map(str::trim).filter(|z| !z.is_empty()) {
        Some(name) => jiff::tz::TimeZone::get(name).map_err(|_| {
            format!("unknown time zone \"{name}\": use an IANA name such as \"Europe/Berlin\" or \"America/New_York\"")
        })?,
        None => jiff::tz::TimeZone::system(),
    };
    let local = now.to_zoned(zone.clone());
    Ok(json!({
        "utc": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "local": local.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        "timezone": zone.iana_name().unwrap_or("local"),
        "weekday": local.strftime("%A").to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn echo_mirrors_its_parameters() {
        assert_eq!(
            echo(&object(json!({"a": 1, "b": [true]}))).unwrap(),
            json!({"echo": {"a": 1, "b": [true]}})
        );
    }

    #[test]
    fn math_eval_returns_whole_numbers_as_integers() {
        assert_eq!(
            math_eval(&object(json!({"expression": "2+2"}))).unwrap(),
            json!({"result": 4})
        );
        assert_eq!(
            math_eval(&object(json!({"expression": "7/2"}))).unwrap(),
            json!({"result": 3.5})
        );
        assert_eq!(
            math_eval(&object(json!({"expression": "1/0"}))).unwrap_err(),
            "division by zero at position 1"
        );
    }

    #[test]
    fn datetime_in_a_named_zone_and_errors_for_unknown_zones() {
        let value = current_datetime(&object(json!({"timezone": "Asia/Tokyo"}))).unwrap();
        assert_eq!(value["timezone"], "Asia/Tokyo");
        assert!(
            value["local"].as_str().unwrap().ends_with("+09:00"),
            "{value}"
        );
        assert!(value["utc"].as_str().unwrap().ends_with('Z'));
        assert_eq!(
            current_datetime(&object(json!({"timezone": "Mars/Olympus"}))).unwrap_err(),
            "unknown time zone \"Mars/Olympus\": use an IANA name such as \"Europe/Berlin\" or \"America/New_York\""
        );
    }
}
