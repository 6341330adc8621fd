//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `test_support::peers`) judges mcp-client as a client: `conformance client --requirements
//! REV` runs each client scenario a revision requires against a test server of its own, with
//! `mcp-conformance-client` (mcp-client's library, nothing else) as the client under test.
//! Every scored scenario must pass, the `auth/*` ones (OAuth, signed in headlessly) too;
//! there is no expected-failures file for the client.

use std::time::{Duration, Instant};

use test_support::{child, mosquitto::ScratchDir, peers::conformance_suite, workspace_bin};

use super::official_suite::strip_ansi;

/// The OAuth scenarios both revisions require.
const AUTH: [&str; 14] = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
];

/// The OAuth scenarios 2026-07-28 adds: the resource and the issuer checked, refresh tokens
/// asked for, a new authorization server registered with afresh.
const AUTH_2026: [&str; 11] = [
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
];

#[test]
fn the_official_suite_passes_the_client_at_2025_11_25() {
    let mut must_pass = vec![
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
    ];
    must_pass.extend(AUTH);
    judge("2025-11-25", &must_pass);
}

#[test]
fn the_official_suite_passes_the_client_at_2026_07_28() {
    let mut must_pass = vec![
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
    ];
    must_pass.extend(AUTH);
    must_pass.extend(AUTH_2026);
    judge("2026-07-28", &must_pass);
}

/// Runs what `revision` requires of a client and checks that every scenario in `must_pass`
/// ran and passed, and that no other scored scenario failed.
fn judge(revision: &str, must_pass: &[&str]) {
    let results = ScratchDir::new();
    let client = workspace_bin("mcp-conformance-client");
    let mut suite = conformance_suite();
    suite
        .args(["client", "--requirements", revision, "--command"])
        .arg(&client)
        .arg("--output-dir")
        .arg(results.path());
    let started = Instant::now();
    let output = child::output(&mut suite, Duration::from_secs(600));
    let took = started.elapsed();
    let stdout = strip_ansi(&String::from_utf8_lossy(&output.stdout));
    let summary = stdout
        .split_once("=== SUITE SUMMARY ===")
        .map_or(stdout.as_str(), |(_, summary)| summary)
        .trim()
        .to_owned();
    let report = || {
        format!(
            "{summary}\n\nthe suite's stderr:\n{}\n(ran {took:?}; each scenario's checks.json, and the client's stdout.txt and stderr.txt, are under {})",
            String::from_utf8_lossy(&output.stderr).trim(),
            results.path().display()
        )
    };
    let (scored, unscored) = summary
        .split_once("Not scored for")
        .unwrap_or((summary.as_str(), ""));
    let verdicts: Vec<(bool, &str)> = scored
        .lines()
        .filter_map(|line| {
            let (passed, rest) = match line.trim_start().split_once(' ')? {
                ("✓", rest) => (true, rest),
                ("✗", rest) => (false, rest),
                _ => return None,
            };
            Some((passed, rest.split_once(':')?.0))
        })
        .filter(|(_, name)| !unscored.contains(&format!(" {name} (")))
        .collect();
    for scenario in must_pass {
        assert!(
            verdicts.contains(&(true, scenario)),
            "{scenario} did not pass at {revision}:\n{}",
            report()
        );
    }
    let failed: Vec<&str> = verdicts
        .iter()
        .filter(|(passed, _)| !passed)
        .map(|(_, name)| *name)
        .collect();
    assert!(
        failed.is_empty(),
        "scored scenarios failed at {revision}: {failed:?}\n{}",
        report()
    );
    assert!(
        verdicts.len() >= must_pass.len(),
        "the suite ran too few scenarios:\n{}",
        report()
    );
}
