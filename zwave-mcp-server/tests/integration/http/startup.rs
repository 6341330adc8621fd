//! HTTP configurations that cannot be served safely are refused at start: exit 2 as for a bad
//! flag, the message on stderr naming the flag, nothing on stdout, and nothing listening (no
//! "serving" line). The token never appears in a message about it.

use std::{process::Output, time::Duration};

use crate::harness::{TokenFile, http_command};

/// Runs the binary with `args` and `env`, expecting it to exit at once.
fn refused(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = http_command(args);
    command.envs(env.iter().copied());
    test_support::child::output(&mut command, Duration::from_secs(20))
}

/// Asserts `output` is a refusal at start saying `message`.
fn assert_refused_with(output: &Output, message: &str, case: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{case}: {stderr}");
    assert!(
        output.stdout.is_empty(),
        "{case} wrote to stdout: {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.contains(message), "{case}: {stderr}");
    assert!(!stderr.contains("serving MCP"), "{case} listened: {stderr}");
}

#[test]
fn an_address_other_machines_reach_needs_a_token() {
    for addr in [
        "0.0.0.0:0",
        "[::]:0",
        "192.0.2.10:0",
        "[::ffff:127.0.0.1]:0",
    ] {
        let output = refused(&["--demo", "--http", addr], &[]);
        let shown = addr.parse::<std::net::SocketAddr>().unwrap();
        assert_refused_with(
            &output,
            &format!(
                "--http {shown} is reachable from other machines, and no token is set: give --http-token-file FILE (or ZWAVE_MCP_HTTP_TOKEN), or bind to 127.0.0.1"
            ),
            addr,
        );
    }
    // An empty variable is no token either.
    let output = refused(
        &["--demo", "--http", "0.0.0.0:0"],
        &[("ZWAVE_MCP_HTTP_TOKEN", "")],
    );
    assert_refused_with(
        &output,
        "--http-token-file FILE",
        "empty ZWAVE_MCP_HTTP_TOKEN",
    );
}

#[test]
fn a_short_token_is_refused_with_its_length_and_never_shown() {
    let short = "s3cr3t-0nly";
    let file = TokenFile::new(short);
    let output = refused(
        &[
            "--demo",
            "--http",
            "0.0.0.0:0",
            "--http-token-file",
            &file.path(),
        ],
        &[],
    );
    assert_refused_with(
        &output,
        &format!(
            "the HTTP token from --http-token-file {} is 11 characters long; a token needs at least 16 (e.g. `openssl rand -hex 32`)",
            file.path()
        ),
        "short file",
    );
    assert!(!String::from_utf8_lossy(&output.stderr).contains(short));
    let output = refused(
        &["--demo", "--http", "127.0.0.1:0"],
        &[("ZWAVE_MCP_HTTP_TOKEN", short)],
    );
    assert_refused_with(
        &output,
        "the HTTP token from ZWAVE_MCP_HTTP_TOKEN is 11 characters long; a token needs at least 16 (e.g. `openssl rand -hex 32`)",
        "short variable",
    );
    assert!(!String::from_utf8_lossy(&output.stderr).contains(short));
    // Blank first line: the token is the first line, whatever follows.
    let blank = TokenFile::new("   \n0123456789abcdef0123456789abcdef");
    let output = refused(
        &[
            "--demo",
            "--http",
            "127.0.0.1:0",
            "--http-token-file",
            &blank.path(),
        ],
        &[],
    );
    assert_refused_with(&output, "is 0 characters long", "blank first line");
}

#[test]
fn a_token_given_twice_or_unreadable_is_refused() {
    let file = TokenFile::new("0123456789abcdef0123456789abcdef");
    let output = refused(
        &[
            "--demo",
            "--http",
            "127.0.0.1:0",
            "--http-token-file",
            &file.path(),
        ],
        &[("ZWAVE_MCP_HTTP_TOKEN", "fedcba9876543210fedcba9876543210")],
    );
    assert_refused_with(
        &output,
        "give the HTTP token either in ZWAVE_MCP_HTTP_TOKEN or in --http-token-file, not both",
        "twice",
    );
    let missing = file.dir().join("missing");
    let output = refused(
        &[
            "--demo",
            "--http",
            "127.0.0.1:0",
            "--http-token-file",
            missing.to_str().unwrap(),
        ],
        &[],
    );
    assert_refused_with(
        &output,
        &format!("cannot read --http-token-file {missing:?}: No such file or directory"),
        "missing file",
    );
}

#[test]
fn http_flags_without_http_are_refused() {
    let file = TokenFile::new("0123456789abcdef0123456789abcdef");
    for (args, flag) in [
        (
            &["--demo", "--http-token-file", &file.path()][..],
            "--http-token-file",
        ),
        (
            &["--demo", "--http-allowed-host", "home.example"],
            "--http-allowed-host",
        ),
        (
            &["--demo", "--http-allowed-origin", "https://app.example"],
            "--http-allowed-origin",
        ),
    ] {
        let output = refused(args, &[]);
        assert_refused_with(
            &output,
            &format!("{flag} applies to the HTTP transport only: add --http ADDR:PORT"),
            flag,
        );
    }
    for (args, message) in [
        (
            &[
                "--demo",
                "--http",
                "127.0.0.1:0",
                "--http-max-sessions",
                "0",
            ][..],
            "invalid value '0' for '--http-max-sessions <N>'",
        ),
        (
            &["--demo", "--http", "localhost:8123"],
            "invalid value 'localhost:8123' for '--http <ADDR:PORT>'",
        ),
    ] {
        let output = refused(args, &[]);
        assert_refused_with(&output, message, args[args.len() - 1]);
    }
}
