//! The checker at 2026-07-28: our server passes it (the input-required checks on the demo
//! lock, which stays locked wherever no yes was given), and servers that get the revision
//! wrong fail each check that concerns them, so no check is one that cannot fail.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use protocol_tests::{
    Options, Protocol, ToolCall, Verdict,
    checks::{
        Report,
        input_required::{check_declined, check_replayed, check_round_trip, check_tampered},
    },
    session::Session,
    stateless::Stateless,
};
use serde_json::json;
use test_support::{
    fixture_path,
    peers::{PYTHON_SDK, python_venv},
    workspace_bin,
};

fn zwave(args: &[&str]) -> Vec<String> {
    std::iter::once(
        workspace_bin("zwave-mcp-server")
            .to_string_lossy()
            .into_owned(),
    )
    .chain(args.iter().map(|a| (*a).to_owned()))
    .collect()
}

fn stateless_fake(mode: &str) -> Vec<String> {
    let script = fixture_path("fake-servers/fake_stateless_server.py");
    vec![
        "python3".into(),
        script.to_string_lossy().into_owned(),
        mode.into(),
    ]
}

/// 2026-07-28 only, with `call` (tool and JSON arguments) as the input-required call.
fn at_2026(call: Option<(&str, &str)>) -> Options {
    Options {
        protocol: Protocol::Stateless,
        input_required_call: call.map(|(tool, args)| ToolCall::parse(tool, args).unwrap()),
    }
}

fn verdicts(report: &Report) -> Vec<(&str, Verdict)> {
    report
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.verdict))
        .collect()
}

fn evidence<'r>(report: &'r Report, name: &str) -> &'r str {
    &report
        .get(name)
        .unwrap_or_else(|| panic!("no check {name}: {}", report.text()))
        .evidence
}

const UNLOCK: (&str, &str) = (
    "control_zwave_device",
    r#"{"deviceName":"Front Door Lock","action":"unlock"}"#,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_passes_the_input_required_checks_on_the_demo_lock() {
    let command = zwave(&["--demo", "--allow-sensitive", "lock"]);
    let report = protocol_tests::run_with(&command, &at_2026(Some(UNLOCK))).await;
    let names: Vec<(&str, Verdict)> = [
        "2026-07-28 server/discover",
        "2026-07-28 caching hints",
        "2026-07-28 request _meta",
        "2026-07-28 input required: round trip",
        "2026-07-28 input required: replayed state",
        "2026-07-28 input required: tampered state",
        "2026-07-28 input required: declined",
        "2026-07-28 resultType",
        "2026-07-28 no requests to the client",
        "stdout is only JSON-RPC",
    ]
    .into_iter()
    .map(|name| (name, Verdict::Pass))
    .collect();
    assert_eq!(verdicts(&report), names, "{}", report.text());
    let round_trip = evidence(&report, "2026-07-28 input required: round trip");
    assert!(
        round_trip.starts_with(r#"`control_zwave_device` {"action":"unlock","deviceName":"Front Door Lock"} asked for `confirmation` (elicitation/create), a requestState; answered {"confirmation":{"action":"accept","content":{"confirm":true}}}, the state sent back as given: a result "Front Door Lock: the command to unlock was sent"#),
        "{round_trip}"
    );
    assert!(
        evidence(&report, "2026-07-28 input required: replayed state").starts_with(
            "refused: an isError result \"Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and that answer was used already"
        ),
        "{}",
        report.text()
    );
    assert!(
        evidence(&report, "2026-07-28 input required: tampered state")
            .ends_with("changed: refused with error -32602"),
        "{}",
        report.text()
    );
    assert_eq!(
        evidence(&report, "2026-07-28 input required: declined"),
        "every question declined; the call ended with an isError result \"Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and the user declined: nothing was sent.\" after 2 rounds"
    );
    // The tampered state's answer is a JSON-RPC error, not a result.
    assert_eq!(
        evidence(&report, "2026-07-28 resultType"),
        // One of them the read of the first resource listed (the home).
        "all 12 results: 9 complete, 3 input_required"
    );
}

/// Calibration: the official Python SDK 2.x's MCPServer, pinned, with one tool that asks for a
/// yes (`fixtures/peers/mcpserver_asks.py`), at both revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_mcpserver_gets_the_expected_verdicts() {
    let python = python_venv("mcp2", PYTHON_SDK)
        .to_string_lossy()
        .into_owned();
    let script = fixture_path("peers/mcpserver_asks.py")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[python, script]).await;
    let not_passed: Vec<(&str, Verdict)> = verdicts(&report)
        .into_iter()
        .filter(|(_, verdict)| *verdict != Verdict::Pass)
        .collect();
    assert_eq!(
        not_passed,
        [
            // At 2025-11-25, as FastMCP: no batch, unknown tools and lines that are no
            // requests answered the lenient way, no tool with required parameters (its one
            // parameter is the person's answer), nothing slow to cancel.
            ("batch under 2025-03-26", Verdict::Fail),
            ("unknown tool", Verdict::Warn),
            ("invalid arguments", Verdict::Skip),
            ("malformed JSON", Verdict::Warn),
            ("non-object line", Verdict::Warn),
            ("notifications/cancelled", Verdict::NotApplicable),
            // At 2026-07-28 it keeps no record of redeemed states.
            ("2026-07-28 input required: replayed state", Verdict::Warn),
        ],
        "{}",
        report.text()
    );
    // Its tool asked when the checker called it with no arguments, so that call was used.
    assert_eq!(
        evidence(&report, "2026-07-28 input required: round trip"),
        "`open_garage` {} asked for `__main__:approval` (elicitation/create), a requestState; answered {\"__main__:approval\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}, the state sent back as given: a result \"opened\" after 2 rounds"
    );
    assert!(
        evidence(&report, "2026-07-28 input required: tampered state")
            .ends_with("changed: refused with error -32602"),
        "{}",
        report.text()
    );
    assert_eq!(
        evidence(&report, "2026-07-28 input required: replayed state"),
        "the same requestState and answers succeeded twice (a result \"opened\"): a state that allows an action should be redeemed once"
    );
}

/// The lock's state and the last command sent to it, as `get_device_status` tells them.
async fn lock_status(server: &mut Stateless) -> (String, Option<String>) {
    let response = server
        .request(
            "tools/call",
            json!({"name": "get_device_status", "arguments": {"deviceName": "Front Door Lock"}}),
        )
        .await
        .unwrap();
    let status = &response["result"]["structuredContent"];
    (
        status["summary"].as_str().unwrap().to_owned(),
        status["lastCommand"].as_str().map(str::to_owned),
    )
}

/// Waits (bounded) until the lock reported its state after the last command, and returns it.
async fn settled(server: &mut Stateless) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (summary, last_command) = lock_status(server).await;
        if last_command.is_none() {
            return summary;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the lock did not report within 20 s: {last_command:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Nothing was sent to the lock: no command awaits its report, and it reports locked (a
/// command sent would show as the last command until the lock reports, then as its state).
async fn assert_untouched(server: &mut Stateless, after: &str) {
    let (summary, last_command) = lock_status(server).await;
    assert_eq!(last_command, None, "a command was sent after {after}");
    assert!(
        summary.starts_with("locked"),
        "after {after} the lock is {summary}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_input_required_checks_leave_the_lock_locked_where_no_yes_was_given() {
    let command = zwave(&["--demo", "--allow-sensitive", "lock"]);
    let session = Session::start(&command, "lock", Arc::default()).unwrap();
    let mut server = Stateless::new(session);
    let call = ToolCall::parse(UNLOCK.0, UNLOCK.1).unwrap();
    assert_untouched(&mut server, "starting").await;

    let (verdict, evidence) = check_tampered(&mut server, &call).await;
    assert_eq!(verdict, Verdict::Pass, "{evidence}");
    assert_untouched(&mut server, "a tampered state").await;
    let (verdict, evidence) = check_declined(&mut server, &call).await;
    assert_eq!(verdict, Verdict::Pass, "{evidence}");
    assert_untouched(&mut server, "a declined question").await;

    // The round trip's yes unlocks: the witness can tell.
    let ((verdict, evidence), round_trip) = check_round_trip(&mut server, &call).await;
    assert_eq!(verdict, Verdict::Pass, "{evidence}");
    assert!(settled(&mut server).await.starts_with("unlocked"));
    let lock = json!({"name": "control_zwave_device",
        "arguments": {"deviceName": "Front Door Lock", "action": "lock"}});
    let locked = server.request("tools/call", lock).await.unwrap();
    assert_eq!(locked["result"]["isError"], false, "{locked}");
    assert!(settled(&mut server).await.starts_with("locked"));

    let (verdict, evidence) = check_replayed(&mut server, round_trip.replayable.as_ref()).await;
    assert_eq!(verdict, Verdict::Pass, "{evidence}");
    assert_untouched(&mut server, "a replayed state").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_does_not_ask_fails_the_round_trip_and_ends_the_input_required_checks() {
    // Without --allow-sensitive lock the server refuses to unlock outright.
    let report = protocol_tests::run_with(&zwave(&["--demo"]), &at_2026(Some(UNLOCK))).await;
    let round_trip = report.get("2026-07-28 input required: round trip").unwrap();
    assert_eq!(round_trip.verdict, Verdict::Fail);
    assert!(
        round_trip.evidence.starts_with(r#"`control_zwave_device` {"action":"unlock","deviceName":"Front Door Lock"} answered without asking: {"#)
            && round_trip.evidence.ends_with("; the input-required checks need a call that answers input_required (see --input-required-call)"),
        "{}",
        round_trip.evidence
    );
    assert!(
        report
            .get("2026-07-28 input required: tampered state")
            .is_none()
    );
    assert_eq!(report.count(Verdict::Fail), 1, "{}", report.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_trusts_any_state_fails_the_tampered_check_and_warns_on_a_replay() {
    // No call given: the checker's own call of the first tool asked, and is used.
    let report = protocol_tests::run_with(&stateless_fake("asks"), &at_2026(None)).await;
    let got: BTreeMap<&str, Verdict> = verdicts(&report).into_iter().collect();
    assert_eq!(
        got,
        BTreeMap::from([
            ("2026-07-28 server/discover", Verdict::Pass),
            ("2026-07-28 caching hints", Verdict::Pass),
            ("2026-07-28 request _meta", Verdict::Warn),
            ("2026-07-28 input required: round trip", Verdict::Pass),
            ("2026-07-28 input required: replayed state", Verdict::Warn),
            ("2026-07-28 input required: tampered state", Verdict::Fail),
            ("2026-07-28 input required: declined", Verdict::Pass),
            ("2026-07-28 resultType", Verdict::Pass),
            ("2026-07-28 no requests to the client", Verdict::Pass),
            ("stdout is only JSON-RPC", Verdict::Pass),
        ]),
        "{}",
        report.text()
    );
    assert_eq!(
        evidence(&report, "2026-07-28 input required: tampered state"),
        "the requestState with the character at byte 4 changed and the answers accepted: a result \"approved with state apprAve:5\"; a server must refuse a state that does not verify"
    );
    assert_eq!(
        evidence(&report, "2026-07-28 input required: replayed state"),
        "the same requestState and answers succeeded twice (a result \"approved with state approve:2\"): a state that allows an action should be redeemed once"
    );
    assert_eq!(
        evidence(&report, "2026-07-28 request _meta"),
        "server/discover without _meta: refused with error -32600, where 2026-07-28 says -32602 (invalid params); without its protocolVersion: refused with error -32600, where 2026-07-28 says -32602 (invalid params); without its clientCapabilities: refused with error -32600, where 2026-07-28 says -32602 (invalid params); without its clientInfo: refused with error -32600; clientInfo is optional (clients should send it), so servers must not require it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_gets_the_wire_wrong_fails_each_wire_check() {
    let report = protocol_tests::run_with(&stateless_fake("lax"), &at_2026(None)).await;
    let failed: Vec<&str> = report
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Fail)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        failed,
        [
            "2026-07-28 server/discover",
            "2026-07-28 caching hints",
            "2026-07-28 request _meta",
            "2026-07-28 input required: round trip",
            "2026-07-28 resultType",
            "2026-07-28 no requests to the client",
        ],
        "{}",
        report.text()
    );
    for (check, said) in [
        (
            "server/discover",
            "no resultType (\"complete\"); supportedVersions [\"2025-11-25\"] lacks 2026-07-28, the revision of the request it answered",
        ),
        (
            "caching hints",
            "tools/list: no ttlMs, cacheScope is \"everyone\", not \"public\" or \"private\"; prompts/list: error -32601 although server/discover offers prompts; resources/list: ttlMs is -5, not an integer ≥ 0",
        ),
        (
            "request _meta",
            "server/discover without _meta: answered, where 2026-07-28 requires error -32602 (invalid params); without its protocolVersion: answered, where 2026-07-28 requires error -32602 (invalid params); without its clientCapabilities: answered, where 2026-07-28 requires error -32602 (invalid params)",
        ),
        (
            "input required: round trip",
            "`ask` {}: an input_required result that does not read as one (InputRequiredResult requires at least one of inputRequests or requestState): {\"resultType\":\"input_required\"}",
        ),
        (
            "resultType",
            "4 of 6 results: server/discover: no resultType; tools/list: no resultType; resources/list: input_required, which only tools/call, prompts/get, resources/read may answer; resources/templates/list: resultType \"done\"",
        ),
        (
            "no requests to the client",
            "the server sent 2 requests to the client, which 2026-07-28 does not allow (ask with an input_required result instead): elicitation/create (id \"q10\"), elicitation/create (id \"q11\")",
        ),
    ] {
        assert_eq!(evidence(&report, &format!("2026-07-28 {check}")), said);
    }
}

/// The input-required checks' verdicts and evidence on the `asks` fake's `tool`.
async fn input_required_on(tool: &str) -> Vec<(String, Verdict, String)> {
    let report =
        protocol_tests::run_with(&stateless_fake("asks"), &at_2026(Some((tool, "{}")))).await;
    report
        .checks
        .into_iter()
        .filter(|c| c.name.contains("input required"))
        .map(|c| {
            (
                c.name.replace("2026-07-28 input required: ", ""),
                c.verdict,
                c.evidence,
            )
        })
        .collect()
}

fn owned(checks: &[(&str, Verdict, &str)]) -> Vec<(String, Verdict, String)> {
    checks
        .iter()
        .map(|(n, v, e)| ((*n).to_owned(), *v, (*e).to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_the_checker_cannot_finish_fail_the_round_trip() {
    assert_eq!(
        input_required_on("askforever").await,
        owned(&[
            (
                "round trip",
                Verdict::Fail,
                "`askforever` {} still asks after 8 rounds, each answer accepted"
            ),
            (
                "replayed state",
                Verdict::NotApplicable,
                "the round trip did not succeed, so a replay of it shows nothing"
            ),
            (
                "tampered state",
                Verdict::Pass,
                "the requestState with the character at byte 3 changed: asked again"
            ),
            (
                "declined",
                Verdict::Warn,
                "`askforever` {} still asks after 8 rounds, each question declined (a declined question should end the call)"
            ),
        ])
    );
    let sampling = "`asksampling` {}: `llm` asks for sampling/createMessage, which the client did not declare (its capabilities: form elicitation only)";
    assert_eq!(
        input_required_on("asksampling").await,
        owned(&[
            ("round trip", Verdict::Fail, sampling),
            (
                "replayed state",
                Verdict::NotApplicable,
                "the round trip did not succeed, so a replay of it shows nothing"
            ),
            (
                "tampered state",
                Verdict::NotApplicable,
                "`asksampling` {} asked without a requestState: nothing to alter"
            ),
            ("declined", Verdict::Fail, sampling),
        ])
    );
    let refused = input_required_on("refuseanswers").await;
    assert_eq!(refused[0].1, Verdict::Warn, "{refused:?}");
    assert!(
        refused[0].2.starts_with("`refuseanswers` {} asked for `confirmation` (elicitation/create), a requestState; the accepted answers got error -32602 after 2 rounds (the checker fills a required field without a default with true, its first choice, its minimum or the shortest string): {\"error\""),
        "{refused:?}"
    );
    assert_eq!(
        refused[2..],
        owned(&[
            (
                "tampered state",
                Verdict::Pass,
                "the requestState with the character at byte 4 changed: refused with error -32602"
            ),
            (
                "declined",
                Verdict::Pass,
                "every question declined; the call ended with error -32602 after 2 rounds"
            ),
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_fails_each_check_at_the_round_it_stopped() {
    let session = Session::start(&stateless_fake("asks"), "quiet", Arc::default()).unwrap();
    let mut server = Stateless::new(session);
    // Answered once the interpreter has started; then every wait is short.
    let discovered = server.request("server/discover", json!({})).await;
    assert!(discovered.is_some_and(|d| d.get("result").is_some()));
    let mut server = server.with_answer_timeout(Duration::from_millis(300));
    // `goquiet` asks, then never answers a retried round.
    let quiet = ToolCall::parse("goquiet", "{}").unwrap();
    let ((verdict, evidence), round_trip) = check_round_trip(&mut server, &quiet).await;
    assert_eq!(
        (verdict, evidence.as_str()),
        (
            Verdict::Fail,
            "`goquiet` {} asked for `confirmation` (elicitation/create), a requestState; no answer within 300ms to round 2"
        )
    );
    assert!(round_trip.asked && round_trip.replayable.is_none());
    assert_eq!(
        check_tampered(&mut server, &quiet).await,
        (
            Verdict::Fail,
            "no answer within 300ms to the requestState with the character at byte 3 changed"
                .into()
        )
    );
    assert_eq!(
        check_declined(&mut server, &quiet).await,
        (
            Verdict::Fail,
            "every question declined; no answer within 300ms to round 2".into()
        )
    );
    let retried = json!({"name": "goquiet", "arguments": {}, "requestState": "quiet:1"});
    assert_eq!(
        check_replayed(&mut server, Some(&retried)).await,
        (
            Verdict::Fail,
            "no answer to the replayed round within 300ms".into()
        )
    );
    // `hang` answers nothing at all.
    let hang = ToolCall::parse("hang", "{}").unwrap();
    assert_eq!(
        check_round_trip(&mut server, &hang).await.0,
        (Verdict::Fail, "no answer to `hang` {} within 300ms".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_2025_11_25_is_a_note_at_both_revisions_and_a_failure_at_2026_07_28_alone() {
    let script = fixture_path("fake-servers/fake_mcp_server.py");
    let clean: Vec<String> = vec![
        "python3".into(),
        script.to_string_lossy().into_owned(),
        "clean".into(),
    ];
    let report = protocol_tests::run_with(&clean, &at_2026(None)).await;
    assert_eq!(
        verdicts(&report),
        [
            ("2026-07-28 server/discover", Verdict::Fail),
            ("stdout is only JSON-RPC", Verdict::Pass),
        ],
        "{}",
        report.text()
    );
    assert_eq!(
        evidence(&report, "2026-07-28 server/discover"),
        "refused (error -32601: Method not found): the server does not speak 2026-07-28"
    );
    let both = protocol_tests::run_with(
        &clean,
        &Options {
            protocol: Protocol::Both,
            input_required_call: None,
        },
    )
    .await;
    let discover = both.get("2026-07-28 server/discover").unwrap();
    assert_eq!(discover.verdict, Verdict::Note, "{}", both.text());
    assert_eq!(
        discover.evidence,
        "refused (error -32601: Method not found): a 2025-11-25 server; the 2026-07-28 checks do not apply"
    );
    assert_eq!(
        both.get("initialize 2025-11-25").unwrap().verdict,
        Verdict::Pass
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_to_server_discover_fails_it() {
    let report = protocol_tests::run_with(&stateless_fake("mute"), &at_2026(None)).await;
    let discover = report.get("2026-07-28 server/discover").unwrap();
    assert_eq!(discover.verdict, Verdict::Fail);
    assert_eq!(
        discover.evidence,
        "no answer within 10s: a server answers every request, with an error for a method it does not know"
    );
    assert_eq!(report.checks.len(), 2, "{}", report.text());
}
