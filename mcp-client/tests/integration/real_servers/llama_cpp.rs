//! llama-cpp-python's server, both chat formats.

use serde_json::Value;
use test_support::llm::ModelServer;

use super::{Home, TOOL};

const NO_USAGE: &str = "the model server did not say how many tokens it used, so --token-budget cannot be kept: use --no-stream with --token-budget (servers report usage for whole responses), or leave the budget out";

#[test]
fn chatml_function_calling_round_trips_keeps_the_budget_and_refines() {
    let server = ModelServer::llama_cpp(Some("chatml-function-calling"));
    let base = format!("{}/v1", server.url);
    let home = Home::new();

    // Streamed: the second turn (the call and its result, content "") is accepted; the
    // server streams no usage, which is recorded as unknown.
    let run = home.chat("openai", &base, &["--tool-choice", TOOL]);
    run.assert_round_trip();
    assert_eq!(run.done()["usage"], Value::Null, "{:?}", run.events);
    assert!(
        run.all("turn_finished")
            .iter()
            .all(|turn| turn["usage"].is_null()),
        "{:?}",
        run.events
    );

    // Whole responses carry usage.
    let run = home.chat("openai", &base, &["--tool-choice", TOOL, "--no-stream"]);
    run.assert_round_trip();
    let usage = &run.done()["usage"];
    assert!(
        usage["input_tokens"].as_u64().unwrap() > 0 && usage["output_tokens"].as_u64().unwrap() > 0,
        "{usage}"
    );

    // A budget that cannot be counted is refused, never silently ignored...
    let run = home.chat(
        "openai",
        &base,
        &["--tool-choice", TOOL, "--token-budget", "100000"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.done()["reason"], "error");
    assert_eq!(run.all("error")[0]["message"], NO_USAGE);
    assert!(run.all("tool_result").is_empty(), "{:?}", run.events);

    // ...and one that can is kept: one turn already passes a budget of 1 token.
    let run = home.chat(
        "openai",
        &base,
        &["--tool-choice", TOOL, "--no-stream", "--token-budget", "1"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(
        run.done()["reason"],
        "token_budget_reached",
        "{:?}",
        run.events
    );
    assert_eq!(run.done()["turns"], 1);

    // Refinement: the follow-up prompts and, should the model call tools twice, the
    // answer-only request without tools.
    let run = home.chat("openai", &base, &["--tool-choice", TOOL, "--refine"]);
    run.assert_round_trip();
    drop(server);
}

#[test]
fn the_gguf_chat_template_round_trips_with_a_named_tool() {
    // The model's own template uses tools only when tool_choice names one.
    let server = ModelServer::llama_cpp(None);
    let base = format!("{}/v1", server.url);
    let home = Home::new();
    home.chat("openai", &base, &["--tool-choice", TOOL])
        .assert_round_trip();
    home.chat("openai", &base, &["--tool-choice", TOOL, "--no-stream"])
        .assert_round_trip();
    drop(server);
}
