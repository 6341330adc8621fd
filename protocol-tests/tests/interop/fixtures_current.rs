//! Fixtures copied from live peers stay current: a change of the real tool surface fails here
//! (rewrite with `UPDATE_FIXTURES=1`).

use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Command, Stdio},
};

use serde_json::{Value, json};
use test_support::{fixture_path, workspace_bin};

#[test]
fn the_zwave_tools_fixture_matches_the_live_server() {
    let mut child = Command::new(workspace_bin("zwave-mcp-server"))
        .arg("--demo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    drop(stdin);
    let reply = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|line| serde_json::from_str::<Value>(&line.unwrap()).unwrap())
        .find(|message| message["id"] == 2)
        .expect("tools/list answered");
    child.wait().unwrap();
    let live = &reply["result"];
    let path = fixture_path("mcp/zwave-tools.json");
    if std::env::var_os("UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(live).unwrap() + "\n").unwrap();
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        &stored,
        live,
        "{} is out of date: rerun with UPDATE_FIXTURES=1",
        path.display()
    );
}
