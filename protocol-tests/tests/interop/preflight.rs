//! The README test command's preflight names each missing prerequisite and how to get it.

use std::{process::Command, time::Duration};

use test_support::{child, workspace_root};

#[test]
fn the_preflight_names_what_is_missing_and_how_to_get_it() {
    // A PATH with the shell, `id` and cargo only: no node, npm, openssl or setpriv.
    let bin = std::env::temp_dir().join(format!("preflight-path-{}", std::process::id()));
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bash", "id", "cargo"] {
        let found = child::output(
            Command::new("bash").args(["-c", &format!("command -v {tool}")]),
            Duration::from_secs(10),
        );
        let path = String::from_utf8(found.stdout).unwrap();
        let link = bin.join(tool);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(path.trim(), &link).unwrap();
    }
    let output = child::output(
        Command::new(bin.join("bash"))
            .arg(workspace_root().join("scripts/preflight.sh"))
            .env("PATH", &bin),
        Duration::from_secs(60),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        "scripts/preflight.sh: the tests cannot run on this machine yet; missing:"
    );
    for expected in [
        "  - python3 (needed for the fake MCP servers and the Python SDK peers): apt-get install python3 python3-venv",
        "  - node (needed for the TypeScript SDK peers (server-everything, inspector)): apt-get install nodejs",
        "  - npm (needed for installing the TypeScript SDK peers): apt-get install npm",
        "  - openssl (needed for the TLS broker tests' certificates): apt-get install openssl",
        "  - setpriv (needed for servers that die with a killed host (util-linux)): apt-get install util-linux",
    ] {
        assert!(lines.contains(&expected), "{expected}\nnot in:\n{stderr}");
    }
    assert!(
        !stderr.contains("cargo (needed"),
        "cargo was there: {stderr}"
    );
    let _ = std::fs::remove_dir_all(&bin);
}
