//! The library as a host embeds it: what it depends on without the CLI's layers, and the
//! `host` example run against the demo home.

use std::{path::PathBuf, process::Command, time::Duration};

/// The packages `mcp-client` depends on (normal edges, every level) with `features`.
fn dependencies(features: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .current_dir(test_support::workspace_root())
        .args([
            "tree",
            "-p",
            "mcp-client",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["-f", "{p}", "--offline", "--locked"]);
    match features {
        ["default"] => {}
        features => {
            command.arg("--no-default-features");
            if !features.is_empty() {
                command.args(["--features", &features.join(",")]);
            }
        }
    }
    let output = test_support::child::output(&mut command, Duration::from_secs(120));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> = stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The crates only the command line needs.
const CLI_ONLY: [&str; 5] = [
    "clap",
    "rustyline",
    "indicatif",
    "anyhow",
    "tracing-subscriber",
];

#[test]
fn the_library_alone_builds_without_the_clis_layers() {
    let alone = dependencies(&[]);
    for name in CLI_ONLY.iter().chain(&["rusqlite", "reqwest", "rustls"]) {
        assert!(
            !alone.iter().any(|dep| dep == name),
            "the library without features depends on {name}: {alone:?}"
        );
    }
    assert!(alone.iter().any(|dep| dep == "rmcp"), "{alone:?}");

    let layers = dependencies(&["providers", "history"]);
    for name in CLI_ONLY {
        assert!(
            !layers.iter().any(|dep| dep == name),
            "providers + history depend on {name}: {layers:?}"
        );
    }
    for name in ["reqwest", "rusqlite"] {
        assert!(layers.iter().any(|dep| dep == name), "{name}: {layers:?}");
    }

    // Remote servers alone: reqwest and rustls for rmcp's Streamable HTTP client, nothing of
    // the CLI's, and not the conversation store.
    let http = dependencies(&["http"]);
    for name in CLI_ONLY.iter().chain(&["rusqlite"]) {
        assert!(
            !http.iter().any(|dep| dep == name),
            "http depends on {name}: {http:?}"
        );
    }
    for name in ["reqwest", "rustls", "sse-stream"] {
        assert!(http.iter().any(|dep| dep == name), "{name}: {http:?}");
    }
    assert!(
        !alone.iter().any(|dep| dep == "sse-stream"),
        "the library without features has rmcp's HTTP client: {alone:?}"
    );

    // OAuth: rmcp's `auth` (oauth2 without its own HTTP client) on the same reqwest and
    // rustls (ring): no second TLS stack, and nothing of the CLI's.
    let oauth = dependencies(&["oauth"]);
    for name in CLI_ONLY.iter().chain(&["rusqlite"]) {
        assert!(
            !oauth.iter().any(|dep| dep == name),
            "oauth depends on {name}: {oauth:?}"
        );
    }
    for name in ["oauth2", "reqwest", "rustls"] {
        assert!(oauth.iter().any(|dep| dep == name), "{name}: {oauth:?}");
    }
    for tree in [&alone, &http] {
        assert!(!tree.iter().any(|dep| dep == "oauth2"), "{tree:?}");
    }
    let tls_stacks = [
        "native-tls",
        "openssl",
        "openssl-sys",
        "aws-lc-rs",
        "aws-lc-sys",
    ];
    for name in tls_stacks {
        assert!(
            !oauth.iter().any(|dep| dep == name),
            "oauth pulls in {name}"
        );
    }

    // The default (the CLI) has them all: the check above looks at the right tree.
    let cli = dependencies(&["default"]);
    for name in CLI_ONLY
        .iter()
        .chain(&["rusqlite", "reqwest", "sse-stream", "oauth2"])
    {
        assert!(cli.iter().any(|dep| dep == name), "{name}: {cli:?}");
    }
    for name in tls_stacks {
        assert!(
            !cli.iter().any(|dep| dep == name),
            "the CLI pulls in {name}"
        );
    }
    eprintln!(
        "mcp-client depends on {} packages alone, {} with providers + history, {} with http, {} with oauth, {} with the CLI",
        alone.len(),
        layers.len(),
        http.len(),
        oauth.len(),
        cli.len()
    );
}

/// The `host` example, built by `cargo test` next to this test's binary.
fn host_example() -> PathBuf {
    let path = test_support::target_dir().join("debug/examples/host");
    let path = if path.is_file() {
        path
    } else {
        test_support::target_dir().join("release/examples/host")
    };
    assert!(
        path.is_file(),
        "{} is missing: `cargo test -p mcp-client` builds the examples",
        path.display()
    );
    path
}

#[test]
fn the_host_example_lists_the_demo_homes_tools_and_calls_one() {
    let server = test_support::workspace_bin("zwave-mcp-server");
    let output = test_support::child::output(
        Command::new(host_example()).arg(&server).arg("--demo"),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("tool get_device_status [mcp:home]"),
        "{stdout}"
    );
    assert!(stdout.contains("\"success\": true"), "{stdout}");
    assert!(stdout.contains("Living Room Light"), "{stdout}");
}

#[test]
fn the_host_example_says_why_a_server_did_not_start() {
    let output = test_support::child::output(
        Command::new(host_example()).arg("/nonexistent/zwave-mcp-server"),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("host: ") && stderr.contains("/nonexistent/zwave-mcp-server"),
        "{stderr}"
    );
}

/// A tool definition from its JSON.
fn tool(json: &str) -> mcp_client::tools::definition::ToolDefinition {
    mcp_client::tools::definition::parse(json)
        .unwrap()
        .pop()
        .unwrap()
}

#[tokio::test]
async fn a_host_that_cannot_be_built_says_which_file_or_tool_and_why() {
    let missing = std::path::Path::new("/nonexistent/mcp.json");
    let Err(err) = mcp_client::Host::builder().servers_from_file(missing) else {
        panic!("a missing mcpServers file was accepted");
    };
    assert!(
        err.to_string()
            .starts_with("cannot read \"/nonexistent/mcp.json\": "),
        "{err}"
    );

    let tools = crate::harness::scratch_file("host-tools.json");
    std::fs::write(&tools, "{not json").unwrap();
    let Err(err) = mcp_client::Host::builder().tools_from_file(&tools) else {
        panic!("a tool file that is not JSON was accepted");
    };
    assert!(err.to_string().contains("host-tools.json"), "{err}");

    let nameless = tool(
        r#"{"name": "calc", "description": "", "parameters": {"type": "object"},
            "implementation": {"type": "builtin", "handler": "math_eval"}}"#,
    );
    let Err(err) = mcp_client::Host::builder().tool(nameless).connect().await else {
        panic!("a tool without a description was accepted");
    };
    assert_eq!(
        err.to_string(),
        "tool `calc` has no description: models choose tools by their descriptions"
    );
}
