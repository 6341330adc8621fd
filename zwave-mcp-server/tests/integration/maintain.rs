//! `maintain_zwave_device` through the binary, over each backend (the same bodies against the
//! simulated Z-Wave JS UI and the simulated zwave-js-server): offered only with the owner's
//! leave and never read-only, a re-interview with its progress, a lifeline health check
//! rated round by round, a route rebuild, one operation per device at once, a cancelled
//! health check aborted, a re-interview that never ends bounded, and the refusals in words.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    Conversation, by_id, eventually, feed_blocking, messages, per_backend, session_listing_tools,
};

const ALLOW: &str = "--allow-maintenance";

fn maintain(device: &str, operation: &str) -> Value {
    json!({"deviceName": device, "operation": operation})
}

/// The names of the tools the binary with `args` lists.
async fn listed(home: &crate::harness::TestHome, args: &[&str]) -> Vec<String> {
    let output = feed_blocking(
        home.command(args),
        &session_listing_tools(&[]),
        Duration::from_secs(30),
    )
    .await;
    by_id(&messages(&output), 1)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether the server received a request named one of `names`.
fn received(home: &crate::harness::TestHome, names: &[&str]) -> bool {
    home.requests()
        .iter()
        .any(|request| names.contains(&request.as_str()))
}

/// The progress values of `token` grow, each past the last.
fn growing(progress: &[Value]) -> bool {
    progress
        .windows(2)
        .all(|pair| pair[1]["progress"].as_f64() > pair[0]["progress"].as_f64())
}

per_backend! {
async fn maintenance_is_offered_only_with_the_owners_leave_and_never_read_only(backend) {
    let home = TestHome::start(backend).await;
    let tools = listed(&home, &[]).await;
    assert_eq!(tools.len(), 5, "{tools:?}");
    assert!(!tools.iter().any(|tool| tool == "maintain_zwave_device"));
    assert!(listed(&home, &[ALLOW]).await.iter().any(|tool| tool == "maintain_zwave_device"));
    assert!(!listed(&home, &[ALLOW, "--read-only"]).await.iter().any(|tool| tool == "maintain_zwave_device"));

    let mut session = Conversation::over(&mut home.command(&[]));
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Switch One", "reinterview"));
    assert_eq!((error, text.as_str()), (true, "maintain_zwave_device is not offered: the owner of this server has not allowed upkeep operations (re-interview, health check, route rebuild); nothing was sent. The owner can allow them with --allow-maintenance (or ZWAVE_MCP_ALLOW_MAINTENANCE=true)"));
    session.finish();
    let mut session = Conversation::over(home.command(&["--read-only"]).env("ZWAVE_MCP_ALLOW_MAINTENANCE", "true"));
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Switch One", "check_health"));
    assert_eq!((error, text.as_str()), (true, "maintain_zwave_device is not offered: this server runs in read-only mode (--read-only), which never offers upkeep operations; nothing was sent"));
    session.finish();
    let mut session = Conversation::over(home.command(&[]).env("ZWAVE_MCP_ALLOW_MAINTENANCE", "true"));
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Switch One", "rebuild_routes"));
    assert!(!error, "the environment allows it too: {text}");
    session.finish();
    assert!(!received(&home, &["refreshInfo", "node.refresh_info", "checkLifelineHealth", "node.check_lifeline_health"]));
}

async fn a_reinterview_reports_its_progress_and_its_end(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let id = session.send_with_progress("maintain_zwave_device", maintain("Living Room Light", "reinterview"), "r1");
    let (error, text, result) = session.answer(id);
    assert!(!error, "{text}");
    assert!(text.starts_with("\"Living Room Light\" (node 3, Living Room) was re-interviewed in "), "{text}");
    assert!(text.ends_with("Complete): Z-Wave JS knows it afresh."), "{text}");
    assert_eq!((&result["outcome"], &result["operation"], &result["nodeId"]), (&json!("completed"), &json!("reinterview"), &json!(3)));
    let progress = session.progress("r1");
    assert_eq!(progress[0]["message"], "asked Z-Wave JS for a re-interview of \"Living Room Light\" (node 3, Living Room)");
    assert_eq!(progress[1]["message"], "Z-Wave JS began a re-interview of \"Living Room Light\" (node 3, Living Room)");
    let last = progress.last().unwrap()["message"].as_str().unwrap().to_owned();
    let expected = match backend {
        // Z-Wave JS UI: the stage and how far, from its node list.
        Backend::Mqtt => "interview of \"Living Room Light\" (node 3, Living Room): Complete (100%)",
        // zwave-js-server: each stage's event.
        Backend::ZwaveJsServer => "interview of \"Living Room Light\" (node 3, Living Room): Complete done",
    };
    assert_eq!(last, expected, "{progress:?}");
    assert!(growing(&progress), "{progress:?}");
    if backend == Backend::ZwaveJsServer {
        assert_eq!(result["stages"], json!(["ProtocolInfo", "NodeInfo", "CommandClasses", "OverwriteConfig", "Complete"]));
    }
    // The device reads as before.
    let (error, status, _) = session.call("get_device_status", json!({"deviceName": "Living Room Light"}));
    assert!(!error && status.contains("online (node status Alive)"), "{status}");
    session.finish();
}

async fn a_lifeline_health_check_rates_the_link(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let id = session.send_with_progress("maintain_zwave_device", maintain("Switch One", "check_health"), "h1");
    let (error, text, result) = session.answer(id);
    assert!(!error, "{text}");
    assert!(text.starts_with("The lifeline health check of \"Switch One\" (node 2, Kitchen) rated its link to the controller 9 of 10, good (its worst of 5 rounds, in "), "{text}");
    assert!(text.ends_with(" Its worst round: slowest ping 70 ms, no ping lost, 3 neighbours, signal 24 dB above the noise."), "{text}");
    assert_eq!((&result["rating"], &result["outcome"]), (&json!(9), &json!("completed")));
    assert_eq!(result["rounds"].as_array().unwrap().len(), 5);
    let progress = session.progress("h1");
    let rounds: Vec<&Value> = progress.iter().filter(|p| p["total"].as_f64() == Some(5.0)).collect();
    match backend {
        // Z-Wave JS UI tells its web UI the rounds, not its MQTT clients.
        Backend::Mqtt => assert!(rounds.is_empty(), "{progress:?}"),
        Backend::ZwaveJsServer => {
            assert_eq!(rounds.len(), 5, "{progress:?}");
            assert_eq!(rounds[0]["message"], "health check of \"Switch One\" (node 2, Kitchen): round 1 of 5 rated 9 of 10");
        }
    }
    // A device that does not answer: every ping lost.
    home.set_answering(2, false);
    let (error, text, result) = session.call("maintain_zwave_device", maintain("Switch One", "check_health"));
    assert!(!error, "{text}");
    assert!(text.contains("rated its link to the controller 0 of 10, unusable"), "{text}");
    assert!(text.contains("10 of 10 pings lost"), "{text}");
    assert_eq!(result["rating"], 0);
    session.finish();
}

async fn a_route_rebuild_says_what_the_controller_said(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let (error, text, result) = session.call("maintain_zwave_device", maintain("Switch One", "rebuild_routes"));
    assert!(!error && text.starts_with("The controller rebuilt the routes of \"Switch One\" (node 2, Kitchen) in "), "{text}");
    assert_eq!(result["outcome"], "completed");
    home.set_answering(2, false);
    let (error, text, result) = session.call("maintain_zwave_device", maintain("Switch One", "rebuild_routes"));
    assert!(!error && text.starts_with("The controller could not rebuild the routes of \"Switch One\" (node 2, Kitchen) (it answered that the rebuild failed, after "), "{text}");
    assert_eq!(result["outcome"], "failed");
    session.finish();
}

async fn one_operation_per_device_at_once_the_second_refused_naming_the_first(backend) {
    let home = TestHome::start(backend).await;
    home.set_health_round(Duration::from_millis(300));
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let id = session.send_with_progress("maintain_zwave_device", maintain("Switch One", "check_health"), "g1");
    // Its first progress: the check is claimed and under way.
    session.wait_for(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "g1");
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Switch One", "reinterview"));
    assert!(error && text.starts_with("\"Switch One\" (node 2, Kitchen) has a lifeline health check running since "), "{text}");
    assert!(text.ends_with(": one upkeep operation at a time per device; nothing was sent. Ask again when it has ended (this tool then tells how it ended)."), "{text}");
    assert!(!received(&home, &["refreshInfo", "node.refresh_info"]));
    // Another device is not held up.
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Living Room Light", "rebuild_routes"));
    assert!(!error, "{text}");
    let (error, text, _) = session.answer(id);
    assert!(!error, "{text}");
    session.finish();
}

async fn a_cancelled_health_check_is_aborted_and_its_end_told_later(backend) {
    let home = TestHome::start(backend).await;
    home.set_health_round(Duration::from_millis(400));
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let id = session.send_with_progress("maintain_zwave_device", maintain("Switch One", "check_health"), "c1");
    let check = ["checkLifelineHealth", "node.check_lifeline_health"];
    assert!(eventually(Duration::from_secs(10), || received(&home, &check)).await);
    session.send_message(&crate::harness::cancel(id));
    let abort = ["abortHealthCheck", "node.abort_health_check"];
    assert!(eventually(Duration::from_secs(10), || received(&home, &abort)).await, "{:?}", home.requests());
    home.set_health_round(Duration::from_millis(20));
    // Refused while the aborted check ends; then the next call tells what it found.
    let (error, text, result) = session.call_until("maintain_zwave_device", &maintain("Switch One", "check_health"), Duration::from_secs(20), |_, text| !text.contains("running since"));
    assert!(!error, "{text}");
    assert!(text.contains("\nEarlier: A lifeline health check asked at "), "{text}");
    assert!(text.contains(", after its caller stopped waiting: The lifeline health check of \"Switch One\" (node 2, Kitchen) "), "{text}");
    assert!(text.contains("aborted before its first round ended") || text.contains("done before it was aborted"), "{text}");
    assert!(result["earlier"].is_string(), "{result}");
    // The cancelled call got no answer (rmcp drops it, as MCP asks).
    let output = session.finish();
    assert!(!messages(&output).iter().any(|m| m["id"] == json!(id)));
}

async fn a_reinterview_that_never_ends_is_bounded_and_holds_nothing_else_up(backend) {
    let home = TestHome::start(backend).await;
    home.set_interview_stalls(3, true);
    let mut session = Conversation::over(&mut home.command(&[ALLOW, "--upkeep-timeout", "1s"]));
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Living Room Light", "reinterview"));
    assert_eq!((error, text.as_str()), (true, "A re-interview of \"Living Room Light\" (node 3, Living Room) did not end within 1.0 s (--upkeep-timeout): a re-interview cannot be aborted: Z-Wave JS goes on with it, and the next call on this device tells how it ended (get_device_status tells whether the device is ready). This server watches it up to 4.0 s in all."));
    let (error, text, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(!error, "{text}");
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Living Room Light", "check_health"));
    assert!(error && text.starts_with("\"Living Room Light\" (node 3, Living Room) has a re-interview running since "), "{text}");
    home.set_interview_stalls(3, false);
    let (error, text, _) = session.call_until("maintain_zwave_device", &maintain("Living Room Light", "rebuild_routes"), Duration::from_secs(20), |_, text| !text.contains("running since"));
    assert!(!error, "{text}");
    assert!(text.contains("\nEarlier: a re-interview asked at ") && text.ends_with(" of \"Living Room Light\" (node 3, Living Room) was not seen to end within 4.0 s."), "{text}");
    session.finish();
}

async fn a_reinterview_of_a_device_that_does_not_answer_fails_in_words(backend) {
    let home = TestHome::start(backend).await;
    home.set_answering(2, false);
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Switch One", "reinterview"));
    let said = match backend {
        Backend::Mqtt => "the device did not answer: Z-Wave JS marked it dead and gave the interview up",
        Backend::ZwaveJsServer => "The node is dead",
    };
    assert_eq!((error, text.as_str()), (true, format!("A re-interview of \"Switch One\" (node 2, Kitchen) failed: Z-Wave JS said the re-interview failed: {said}").as_str()));
    session.finish();
}

async fn hidden_and_uncontrollable_devices_are_never_maintained(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[ALLOW, "--read-deny", "node:2", "--control-deny", "node:3"]));
    let (error, hidden, _) = session.call("maintain_zwave_device", maintain("Switch One", "reinterview"));
    let (_, absent, _) = session.call("maintain_zwave_device", maintain("Switch Two", "reinterview"));
    assert!(error && hidden.starts_with("no Z-Wave device matches \"Switch One\""), "{hidden}");
    assert!(!hidden.contains("node 2") && !hidden.contains("Kitchen"), "{hidden}");
    assert_eq!(hidden.replace("Switch One", "X"), absent.replace("Switch Two", "X"), "a hidden device reads as an absent one");
    let (error, text, _) = session.call("maintain_zwave_device", maintain("Living Room Light", "check_health"));
    assert_eq!((error, text.as_str()), (true, "\"Living Room Light\" is not exposed to this agent for control, which upkeep needs: the owner of this server chose which devices it may control; nothing was sent"));
    assert!(!received(&home, &["refreshInfo", "node.refresh_info", "checkLifelineHealth", "node.check_lifeline_health"]));
    session.finish();
}
}

/// A gateway that answers absurdly: a rating out of 0–10, none at all, a route rebuild's
/// answer that is no yes or no; each refused naming the value, nothing held up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_answers_are_refused_naming_the_value() {
    use crate::harness::{Backend, TestHome};
    let home = TestHome::start(Backend::Mqtt).await;
    let TestHome::Mqtt(gateway) = &home else {
        unreachable!()
    };
    let mut session = Conversation::over(&mut home.command(&[ALLOW]));
    for (answer, says) in [
        (
            json!({"rating": 99, "results": []}),
            "a rating of 99, where zwave-js rates 0 to 10",
        ),
        (
            json!({"results": "none"}),
            "no rating in {\"results\":\"none\"}",
        ),
        (json!(null), "no rating in null"),
    ] {
        gateway.sim.set_answer("checkLifelineHealth", Some(answer));
        let (error, text, _) = session.call(
            "maintain_zwave_device",
            maintain("Switch One", "check_health"),
        );
        assert_eq!(
            (error, text),
            (
                true,
                format!(
                    "A lifeline health check of \"Switch One\" (node 2, Kitchen) failed: the answer to `checkLifelineHealth` does not read: {says}"
                )
            )
        );
    }
    gateway
        .sim
        .set_answer("rebuildNodeRoutes", Some(json!("yes")));
    let (error, text, _) = session.call(
        "maintain_zwave_device",
        maintain("Switch One", "rebuild_routes"),
    );
    assert_eq!(
        (error, text.as_str()),
        (
            true,
            "A route rebuild of \"Switch One\" (node 2, Kitchen) failed: the answer to `rebuildNodeRoutes` does not read: expected whether it succeeded (true or false), got \"yes\""
        )
    );
    // Rounds with absurd figures: the rating stands, the figures are left unknown.
    gateway.sim.set_answer("checkLifelineHealth", Some(json!({"rating": 4, "results": [{"rating": 4, "latency": -3, "failedPingsNode": 1e9, "numNeighbors": "x"}]})));
    let (error, text, result) = session.call(
        "maintain_zwave_device",
        maintain("Switch One", "check_health"),
    );
    assert!(
        !error
            && text.contains(
                "rated its link to the controller 4 of 10, weak (its worst of 1 round, in "
            ),
        "{text}"
    );
    assert!(!text.contains("Its worst round"), "{text}");
    assert_eq!(result["rounds"], json!([{"rating": 4}]));
    session.finish();
}

/// A route rebuild the gateway or server never answers: the caller's wait ends in words, and
/// the operation's own bound ends it; the next call on the device says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_never_answered_ends_at_its_bound_and_the_next_call_says_so() {
    use crate::harness::{Backend, TestHome};
    for backend in [Backend::Mqtt, Backend::ZwaveJsServer] {
        let home = TestHome::start(backend).await;
        match &home {
            TestHome::Mqtt(gateway) => gateway
                .sim
                .set_delay("rebuildNodeRoutes", Duration::from_secs(600)),
            TestHome::ZwaveJsServer(server) => {
                server.set_unanswered("controller.rebuild_node_routes", true)
            }
        }
        let mut session = Conversation::over(&mut home.command(&[ALLOW, "--upkeep-timeout", "1s"]));
        let (error, text, _) = session.call(
            "maintain_zwave_device",
            maintain("Switch One", "rebuild_routes"),
        );
        assert!(error && text.starts_with("A route rebuild of \"Switch One\" (node 2, Kitchen) did not end within 1.0 s (--upkeep-timeout): a route rebuild cannot be aborted"), "{backend:?}: {text}");
        let (error, text, _) = session.call_until(
            "maintain_zwave_device",
            &maintain("Switch One", "check_health"),
            Duration::from_secs(20),
            |_, text| !text.contains("running since"),
        );
        assert!(!error, "{backend:?}: {text}");
        assert!(
            text.contains("\nEarlier: a route rebuild asked at ")
                && text.ends_with(
                    " of \"Switch One\" (node 2, Kitchen) was not seen to end within 4.0 s."
                ),
            "{backend:?}: {text}"
        );
        session.finish();
    }
}

per_backend! {
/// Found by the third hostile review: a device the owner marked sensitive was rebuilt with
/// nobody asked, though every action on a marked device needs a person's yes.
async fn upkeep_of_a_device_the_owner_marked_waits_for_a_persons_yes(backend) {
    let home = TestHome::start(backend).await;
    let args = [ALLOW, "--sensitive-device", "name:Front Door Lock"];
    const MARKED: &str = "the owner marked this device sensitive";
    // A client that cannot ask: refused, nothing sent; an unmarked device is not asked about.
    let mut session = Conversation::over(&mut home.command(&args));
    let (error, said, _) = session.call("maintain_zwave_device", maintain("Front Door Lock", "rebuild_routes"));
    assert!(error, "{said}");
    assert_eq!(said, format!("Starting a route rebuild of \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and this client cannot ask its user (it did not declare MCP elicitation). Use a client that can: {MARKED}, so a person is asked even under --sensitive-without-confirmation: nothing was sent."));
    assert!(!received(&home, &["rebuildNodeRoutes", "controller.rebuild_node_routes"]), "{:?}", home.requests());
    let (error, said, _) = session.call("maintain_zwave_device", maintain("Switch One", "reinterview"));
    assert!(!error, "{said}");
    session.finish();
    // A client that asks its person: a no sends nothing, a yes starts it.
    let mut session = Conversation::started(&mut home.command(&args));
    session.send_message(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "asker", "version": "1"}}}));
    session.wait_for(|m| m["id"] == 0);
    session.send_message(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut last_asked = Value::Null;
    for (answer, outcome) in [
        (json!({"action": "decline"}), Some("the user declined")),
        (json!({"action": "accept", "content": {"confirm": true}}), None),
    ] {
        let id = session.send("maintain_zwave_device", maintain("Front Door Lock", "check_health"));
        let asked = session.wait_for(|m| m["method"] == "elicitation/create" && m["id"] != last_asked);
        last_asked = asked["id"].clone();
        assert_eq!(
            asked["params"]["message"],
            format!("Start a lifeline health check of \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it ({MARKED}; it keeps the device busy for up to minutes).")
        );
        session.send_message(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": answer}));
        let (error, said, _) = session.answer(id);
        let checks = ["checkLifelineHealth", "node.check_lifeline_health"];
        match outcome {
            Some(why) => {
                assert!(error, "{said}");
                assert_eq!(said, format!("Starting a lifeline health check of \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and {why}: nothing was sent."));
                assert!(!received(&home, &checks), "{:?}", home.requests());
            }
            None => {
                assert!(!error, "{said}");
                assert!(received(&home, &checks), "{:?}", home.requests());
            }
        }
    }
    session.finish();
}
}
