//! `mcp-client chat` and the library against real model servers nobody here wrote:
//! llama-cpp-python's OpenAI-compatible server (SmolLM2-135M-Instruct, with its
//! grammar-constrained `chatml-function-calling` format and with the GGUF's own template) and
//! the LiteLLM proxy in front of it (Anthropic's `/v1/messages` and `/v1/chat/completions`),
//! with the real `zwave-mcp-server --demo` running the tools (`test_support::llm` installs
//! and starts the servers; nothing is skipped).
//!
//! A 135M model says anything, so its words are never asserted; the protocol is: every
//! request accepted (the second turn carries the tool call and its result in the form the
//! server takes), the calls run, the outcome and usage recorded. A tool call is forced with
//! `--tool-choice`: such a small model does not choose one by itself.
//!
//! | module | proves |
//! |---|---|
//! | `llama_cpp` | the whole round trip, streamed and not, in both chat formats; the token budget with and without streamed usage; refinement |
//! | `litellm` | the round trip through LiteLLM in both dialects, and its refusal of `tool_choice: none` answered without tools |
//! | `shim` | the fix-up between LiteLLM and llama.cpp (a defect between those two, not ours) |

mod litellm;
mod llama_cpp;
mod shim;

use std::{path::PathBuf, process::Command, time::Duration};

use serde_json::Value;
use test_support::mosquitto::ScratchDir;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");
/// Room for a tool call's arguments and a short answer; the model is fast on two cores.
const MAX_TOKENS: &str = "256";
const TOOL: &str = "control_zwave_device";

/// One `chat --once --json` run.
struct Run {
    code: Option<i32>,
    stderr: String,
    events: Vec<Value>,
}

impl Run {
    fn all(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    fn done(&self) -> &Value {
        self.all("done")
            .pop()
            .unwrap_or_else(|| panic!("no done event; stderr:\n{}", self.stderr))
    }

    /// The tool was called and answered (run, or refused with an error result when the
    /// model's arguments were unusable: a 135M model's may be cut off or not JSON), every
    /// result went back and the server accepted the next request (the defect that failed
    /// every llama.cpp tool conversation); the exit status says what the events say.
    fn assert_round_trip(&self) {
        let results = self.all("tool_result");
        assert!(
            results.iter().any(|r| r["name"] == TOOL),
            "no {TOOL} result: {:?}\n{}",
            self.events,
            self.stderr
        );
        for call in self.all("tool_call") {
            assert!(
                results.iter().any(|r| r["id"] == call["id"]),
                "call {} has no result: {:?}",
                call["id"],
                self.events
            );
        }
        let done = self.done();
        assert!(
            self.all("error").is_empty() && done["reason"] != "error",
            "the server refused a request: {:?}\n{}",
            self.events,
            self.stderr
        );
        assert!(done["turns"].as_u64().unwrap() >= 2, "{done}");
        let succeeded =
            done["reason"] == "completed" && results.iter().all(|r| r["success"] == true);
        assert_eq!(
            self.code,
            Some(if succeeded { 0 } else { 1 }),
            "{:?}\n{}",
            self.events,
            self.stderr
        );
    }
}

/// The demo home's `mcpServers` file and a history database, in a scratch directory.
struct Home {
    dir: ScratchDir,
}

impl Home {
    fn new() -> Self {
        let dir = ScratchDir::new();
        let server = test_support::workspace_bin("zwave-mcp-server");
        std::fs::write(
            dir.path().join("servers.json"),
            serde_json::json!({"mcpServers": {"zwave": {"command": server, "args": ["--demo"]}}})
                .to_string(),
        )
        .unwrap();
        Self { dir }
    }

    fn history(&self) -> PathBuf {
        self.dir.path().join("history.db")
    }

    /// `chat --once QUESTION --json` with `provider` at `base_url` and `extra` options.
    fn chat(&self, provider: &str, base_url: &str, extra: &[&str]) -> Run {
        let output = test_support::child::run(
            Command::new(BIN)
                .args(["chat", "--config"])
                .arg(self.dir.path().join("servers.json"))
                .arg("--history")
                .arg(self.history())
                .args([
                    "--provider",
                    provider,
                    "--model",
                    test_support::llm::MODEL,
                    "--base-url",
                    base_url,
                    "--max-tokens",
                    MAX_TOKENS,
                    "--yes",
                    "--json",
                ])
                .args(extra)
                .args(["--once", "Turn on Switch One."])
                .env_remove("MCP_CLIENT_PROVIDER")
                .env_remove("MCP_CLIENT_MODEL")
                .env("OPENAI_API_KEY", "sk-test")
                .env("ANTHROPIC_API_KEY", "sk-test")
                .env("MCP_CLIENT_LOG", "warn"),
            b"",
            Duration::from_secs(600),
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        Run {
            code: output.status.code(),
            stderr: String::from_utf8(output.stderr).unwrap(),
            events: stdout
                .lines()
                .map(|line| {
                    serde_json::from_str(line)
                        .unwrap_or_else(|err| panic!("not a JSON event ({err}): {line}"))
                })
                .collect(),
        }
    }
}
