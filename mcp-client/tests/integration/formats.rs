//! Provider wire formats of the Z-Wave tools and the builtins, as snapshots (insta): tool
//! definitions for Ollama/Qwen, OpenAI and Anthropic, and the tool-result messages.

use mcp_client::{
    llm::ToolResult,
    llm::format::{
        anthropic_tool_results, anthropic_tools, ollama_tool_results, ollama_tools,
        openai_tool_results, openai_tools,
    },
    tools::{
        ToolCall, ToolError, ToolOutcome,
        definition::{self, Implementation, ToolDefinition},
        results::for_model,
    },
};
use serde_json::{Value, json};

use crate::harness::fixture_path;

/// The Z-Wave server's tools (fixtures/mcp/zwave-tools.json, kept current by protocol-tests)
/// followed by the builtins.
pub(crate) fn tools() -> Vec<ToolDefinition> {
    let listed: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_path("mcp/zwave-tools.json")).unwrap(),
    )
    .unwrap();
    let mut tools: Vec<ToolDefinition> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| ToolDefinition {
            name: tool["name"].as_str().unwrap().to_owned(),
            description: tool["description"].as_str().unwrap().to_owned(),
            parameters: tool["inputSchema"].as_object().unwrap().clone(),
            implementation: Implementation::Mcp {
                server: "zwave".into(),
                original_name: tool["name"].as_str().unwrap().to_owned(),
            },
            timeout: None,
            hints: Default::default(),
        })
        .collect();
    tools.extend(
        definition::load_file(&fixture_path("tools/local-tools.json"))
            .unwrap()
            .into_iter()
            .filter(|t| {
                matches!(
                    t.name.as_str(),
                    "echo" | "math_eval" | "get_current_datetime"
                )
            }),
    );
    tools
}

#[test]
fn ollama_tool_definitions() {
    crate::harness::capture_logs();
    let converted = ollama_tools(&tools());
    assert!(
        crate::harness::all_logs()
            .iter()
            .any(|l| l.contains("Converted 8 tools to Qwen format"))
    );
    for tool in &converted {
        let object = tool.as_object().unwrap();
        assert_eq!(
            object.len(),
            2,
            "only `type` and `function` at the top (what Qwen accepts)"
        );
        assert_eq!(tool["function"]["parameters"]["type"], "object");
    }
    insta::assert_json_snapshot!(converted);
}

#[test]
fn openai_tool_definitions() {
    insta::assert_json_snapshot!(openai_tools(&tools()));
}

#[test]
fn anthropic_tool_definitions() {
    insta::assert_json_snapshot!(anthropic_tools(&tools()));
}

fn outcome(tool: &str, result: Result<Value, ToolError>) -> ToolOutcome {
    ToolOutcome {
        tool_name: tool.into(),
        execution_time_ms: 3,
        result,
    }
}

/// One turn: a Z-Wave call (MCP result), a builtin, a failed call and an unknown tool.
fn turn() -> Vec<ToolResult> {
    let call = |id: &str, name: &str, args: Value| ToolCall {
        id: id.into(),
        name: name.into(),
        args,
    };
    let unknown = outcome(
        "fly_to_moon",
        Err(ToolError::UnknownTool {
            name: "fly_to_moon".into(),
        }),
    );
    vec![
        (
            call("call_1", "control_zwave_device", json!({"deviceName": "Living Room Light", "action": "dim", "level": 40})),
            outcome(
                "control_zwave_device",
                Ok(json!({"content": [{"type": "text", "text": "Living Room Light dimmed to 40%; the device confirmed it (now on at 40%)."}],
                       "structuredContent": {"confirmed": true}, "isError": false})),
            ),
        ),
        (call("call_2", "math_eval", json!({"expression": "2+2"})), outcome("math_eval", Ok(json!({"result": 4})))),
        (
            call("call_3", "control_zwave_device", json!({"deviceName": "Garage Light", "action": "on"})),
            outcome("control_zwave_device", Err(ToolError::Failed("\"Garage Light\" (node 7, Garage) is offline (status Dead) and cannot be controlled until it is reachable again".into()))),
        ),
        (call("call_4", "fly_to_moon", json!({})), unknown),
    ]
    .into_iter()
    .map(|(call, outcome)| ToolResult {
        call_id: call.id,
        tool_name: call.name,
        result: for_model(&outcome, None),
    })
    .collect()
}

#[test]
fn tool_result_messages_for_each_provider() {
    let turn = turn();
    insta::assert_json_snapshot!("anthropic_results", anthropic_tool_results(&turn));
    insta::assert_json_snapshot!("openai_results", openai_tool_results(&turn));
    insta::assert_json_snapshot!("ollama_results", ollama_tool_results(&turn));
}
