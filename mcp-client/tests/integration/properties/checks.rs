//! The properties the client's input handling must keep whatever a peer or a model sends.
//! Shared by the proptests (`properties/mod.rs`, run by `cargo test`) and the fuzz targets
//! (`fuzz/fuzz_targets/`, run by `scripts/fuzz.sh`): each returns what was violated.

use mcp_client::{
    Normalizer,
    tools::builtins::math,
    transport::{LineKind, classify, to_message},
};
use rmcp::{RoleClient, service::RxJsonRpcMessage};
use serde_json::Value;

/// A stdout line is judged without panicking; the judgement agrees with the bytes, and a
/// JSON-RPC value is typed (or refused) without panicking either, exactly as rmcp's own
/// decoding types it (the client's shortcut for tool results must never disagree).
pub fn stdout_line(bytes: &[u8]) -> Result<(), String> {
    let line = classify(bytes);
    let stripped = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let stripped = stripped.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stripped);
    if line.invalid_utf8 != std::str::from_utf8(stripped).is_err() {
        return Err(format!(
            "invalid_utf8 is {} for {bytes:?}",
            line.invalid_utf8
        ));
    }
    if let LineKind::JsonRpc(value) = line.kind {
        if value.get("jsonrpc") != Some(&Value::from("2.0")) {
            return Err(format!(
                "judged JSON-RPC without \"jsonrpc\": \"2.0\": {value}"
            ));
        }
        let ours = to_message(value.clone()).map(|message| format!("{message:?}"));
        let rmcp = serde_json::from_value::<RxJsonRpcMessage<RoleClient>>(value.clone())
            .map(|message| format!("{message:?}"));
        if ours.is_ok() != rmcp.is_ok() || ours.as_ref().ok() != rmcp.as_ref().ok() {
            return Err(format!("{value} was typed {ours:?}, and by rmcp {rmcp:?}"));
        }
    }
    Ok(())
}

/// Normalizing a model's arguments against a schema never loses or invents an argument, and
/// never renames one the schema knows.
pub fn normalized_arguments(schema: &Value, arguments: &Value) -> Result<(), String> {
    let (Some(schema), Some(arguments)) = (schema.as_object(), arguments.as_object()) else {
        return Ok(());
    };
    let known = |key: &str| {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(key))
    };
    let out = Normalizer::with_builtins().normalize("s", "t", schema, arguments.clone());
    if out.len() != arguments.len() {
        return Err(format!(
            "{} arguments became {}: {arguments:?} → {out:?}",
            arguments.len(),
            out.len()
        ));
    }
    for (key, value) in arguments {
        if known(key) && out.get(key) != Some(value) {
            return Err(format!(
                "`{key}`, known to the schema, was changed: {out:?}"
            ));
        }
    }
    let mut given: Vec<String> = arguments.values().map(Value::to_string).collect();
    let mut kept: Vec<String> = out.values().map(Value::to_string).collect();
    given.sort();
    kept.sort();
    if given != kept {
        return Err(format!("the values changed: {arguments:?} → {out:?}"));
    }
    Ok(())
}

/// `math_eval` answers any text, however long or nested, with a number or an error, and
/// gives the same answer twice.
pub fn math_expression(expression: &str) -> Result<(), String> {
    let first = math::evaluate(expression).map_err(|e| e.to_string());
    let second = math::evaluate(expression).map_err(|e| e.to_string());
    if format!("{first:?}") != format!("{second:?}") {
        return Err(format!("{expression:?} gave {first:?}, then {second:?}"));
    }
    if let Ok(value) = first
        && !value.is_finite()
    {
        return Err(format!("{expression:?} gave {value}, not a finite number"));
    }
    Ok(())
}
