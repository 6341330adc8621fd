//! Proptest versions of the fuzz targets' properties (`checks.rs`), so `cargo test` exercises
//! them on every run; `scripts/fuzz.sh` runs the same properties under libFuzzer.

pub mod checks;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Bytes that look like stdout lines: JSON-RPC fragments, BOMs, `\r`, invalid UTF-8.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"{\"jsonrpc\":\"2.0\"".to_vec()),
        Just(b",\"id\":1".to_vec()),
        Just(b",\"id\":null".to_vec()),
        Just(b",\"method\":\"notifications/progress\"".to_vec()),
        Just(b",\"result\":{}".to_vec()),
        Just(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"on\"}]}".to_vec()),
        Just(b",\"result\":{\"content\":[],\"isError\":true,\"structuredContent\":null}".to_vec()),
        Just(b",\"result\":{\"content\":[],\"tools\":[]}".to_vec()),
        Just(b",\"result\":{\"content\":[{\"type\":\"video\"}],\"resultType\":\"task\"}".to_vec()),
        Just(b",\"id\":\"s\"".to_vec()),
        Just(b",\"error\":{\"code\":-32600}".to_vec()),
        Just(b",\"params\":{\"progressToken\":1,\"progress\":1e308}".to_vec()),
        Just(b"}".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\r".to_vec()),
        Just(vec![0xff, 0xfe]),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    proptest::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// Argument names as models write them: snake_case, camelCase, doubled underscores.
fn name() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("user"),
            Just("name"),
            Just("_"),
            Just("__"),
            Just("N"),
            Just("id"),
            Just("device"),
            Just("Name"),
        ],
        1..5,
    )
    .prop_map(|parts| parts.concat())
}

fn object_of_names() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::btree_map(name(), 0_i64..100, 0..6)
        .prop_map(|map| map.into_iter().map(|(k, v)| (k, json!(v))).collect())
}

/// Arithmetic-looking text: numbers, operators, functions, deep parentheses.
fn expression() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("("),
        Just(")"),
        Just("+"),
        Just("-"),
        Just("*"),
        Just("/"),
        Just("^"),
        Just("%"),
        Just("sqrt("),
        Just("tan("),
        Just("log("),
        Just("1e308"),
        Just("0"),
        Just("2"),
        Just("."),
        Just(","),
        Just("pi"),
        Just(" "),
    ];
    prop_oneof![
        proptest::collection::vec(token, 0..40).prop_map(|t| t.concat()),
        (1_usize..20_000).prop_map(|n| "(".repeat(n)),
        ".*".prop_map(|s: String| s),
    ]
}

proptest! {
    #[test]
    fn every_stdout_line_is_judged_without_panicking(bytes in line()) {
        checks::stdout_line(&bytes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn normalizing_never_loses_an_argument(
        known in proptest::collection::vec(name(), 0..4),
        arguments in object_of_names(),
    ) {
        let properties: Map<String, Value> =
            known.into_iter().map(|k| (k, json!({"type": "integer"}))).collect();
        let schema = json!({"type": "object", "properties": properties});
        checks::normalized_arguments(&schema, &Value::Object(arguments))
            .map_err(TestCaseError::fail)?;
    }

    #[test]
    fn math_eval_answers_any_text(expression in expression()) {
        checks::math_expression(&expression).map_err(TestCaseError::fail)?;
    }
}
