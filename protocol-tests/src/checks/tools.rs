//! Tools: `tools/list` (each definition judged by `mcp_client::tools::review`, the engine
//! `mcp-client doctor` uses too), an unknown tool, invalid arguments.

use mcp_client::tools::review::{ToolParts, review};
use serde_json::{Value, json};

use super::{
    report::{Outcome, Verdict},
    response::{error_code, show},
};
use crate::session::{ANSWER_TIMEOUT, Session};

pub(super) async fn check_tools_list(session: &mut Session, tools: &mut Vec<Value>) -> Outcome {
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let response = session.request("tools/list", params, ANSWER_TIMEOUT).await;
        let Some(page) = response
            .as_ref()
            .and_then(|r| r.pointer("/result/tools"))
            .and_then(Value::as_array)
        else {
            return (
                Verdict::Fail,
                format!("no tools in the tools/list result: {}", show(&response)),
            );
        };
        tools.extend(page.iter().cloned());
        pages += 1;
        cursor = response
            .as_ref()
            .and_then(|r| r.pointer("/result/nextCursor"))
            .filter(|c| !c.is_null())
            .cloned();
        if cursor.is_none() {
            break;
        }
        if pages >= 50 {
            return (
                Verdict::Fail,
                "more than 50 pages: the cursor never ends".into(),
            );
        }
    }
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tool in tools.iter() {
        let parts = ToolParts::of_json(tool);
        if !seen.insert(parts.name) {
            problems.push(format!("`{}`: listed twice", parts.name));
        }
        for problem in review(parts) {
            let line = format!("`{}`: {}", parts.name, problem.detail);
            match problem.verdict {
                Verdict::Fail => problems.push(line),
                Verdict::Warn => warnings.push(line),
                // Notes are about a host's local tools, not about the server; a review
                // gives no other verdicts.
                _ => {}
            }
        }
    }
    let summary = format!(
        "{} tools in {pages} page{}",
        tools.len(),
        if pages == 1 { "" } else { "s" }
    );
    if !problems.is_empty() {
        (Verdict::Fail, format!("{summary}: {}", problems.join("; ")))
    } else if !warnings.is_empty() {
        (Verdict::Warn, format!("{summary}: {}", warnings.join("; ")))
    } else {
        (
            Verdict::Pass,
            format!(
                "{summary}; names valid for LLM providers; object schemas that compile; descriptions"
            ),
        )
    }
}

pub(super) async fn check_unknown_tool(session: &mut Session) -> Outcome {
    let params = json!({"name": "no_such_tool_mcp_conformance", "arguments": {}});
    let response = session
        .request("tools/call", Some(params), ANSWER_TIMEOUT)
        .await;
    match &response {
        Some(r) if r.get("error").is_some() => (
            Verdict::Pass,
            format!("JSON-RPC error {}", error_code(r).unwrap_or_default()),
        ),
        Some(r) if r.pointer("/result/isError") == Some(&json!(true)) => (
            Verdict::Warn,
            "answered with an isError result; the spec asks for a JSON-RPC error for unknown tools"
                .into(),
        ),
        _ => (
            Verdict::Fail,
            format!("expected a JSON-RPC error: {}", show(&response)),
        ),
    }
}

/// A tool with required parameters, to call without them.
fn tool_with_required(tools: &[Value]) -> Option<&Value> {
    tools.iter().find(|t| {
        t.pointer("/inputSchema/required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
    })
}

pub(super) async fn check_invalid_arguments(session: &mut Session, tools: &[Value]) -> Outcome {
    let Some(tool) = tool_with_required(tools) else {
        return (Verdict::Skip, "no tool has required parameters".into());
    };
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let response = session
        .request(
            "tools/call",
            Some(json!({"name": name, "arguments": {}})),
            ANSWER_TIMEOUT,
        )
        .await;
    match &response {
        Some(r) if r.pointer("/result/isError") == Some(&json!(true)) => {
            let text = r
                .pointer("/result/content/0/text")
                .and_then(Value::as_str)
                .unwrap_or("(no text)");
            (
                Verdict::Pass,
                format!("`{name}` without its required parameters: isError result \"{text}\""),
            )
        }
        Some(r) if r.get("error").is_some() => (
            Verdict::Warn,
            format!(
                "`{name}`: JSON-RPC error {}; MCP 2025-11-25 asks for an isError result the model can read",
                error_code(r).unwrap_or_default()
            ),
        ),
        _ => (
            Verdict::Fail,
            format!(
                "`{name}` without required parameters did not fail: {}",
                show(&response)
            ),
        ),
    }
}
