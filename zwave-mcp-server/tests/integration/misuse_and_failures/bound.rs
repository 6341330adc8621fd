//! Cancellation and request ids within the bound on requests in flight: a cancelled command
//! keeps its place until its handler has ended, a cancellation that comes before the write
//! stops it, a request reusing the id of one in flight is refused at once, a request past
//! the bound is refused at once, and a person's answers are read while every place waits
//! for one.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{GatewayHome, answer, cancel, control, eventually, lines, messages, session};

/// The server's bound on requests in flight (`transport::bounded::MAX_IN_FLIGHT`, private to it).
const PLACES: usize = 64;
/// The error of a request past the bound (`transport::bounded::BUSY`).
const BUSY: i64 = -32000;

/// The next stdout line of `server` as JSON.
fn next(server: &mut test_support::child::Live, within: Duration) -> Value {
    let line = server.read_line(within);
    serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line:?}"))
}

/// The answer to request `id`, skipping any other line (answers to refused requests).
fn answer_to(server: &mut test_support::child::Live, id: u64, within: Duration) -> Value {
    loop {
        let message = next(server, within);
        if message["id"] == json!(id) {
            return message;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cancelled_before_its_write_is_never_written() {
    let home = GatewayHome::renamed(&[]).await;
    // The node list comes late: the command waits for it, and its cancellation arrives first.
    home.sim.set_delay("getNodes", Duration::from_secs(1));
    let mut input = session(&[]);
    input.push(control(2, "Switch One", "on"));
    input.push(cancel(2));
    input.push(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_device_status", "arguments": {"deviceName": "Switch One"}}}),
    );
    let output = home.run_lines(&[], &input).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!answer(&output, 3).0, "{stderr}");
    assert!(
        messages(&output)
            .iter()
            .all(|message| message["id"] != json!(2)),
        "a cancelled request gets no answer"
    );
    assert_eq!(home.writes(), [], "{stderr}");
    assert!(
        stderr.contains("not writing: the client cancelled the request"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_commands_keep_their_places_until_their_handlers_end() {
    let home = GatewayHome::renamed(&[]).await;
    // Writes reach the gateway but are never answered within the API timeout.
    home.sim.set_delay("writeValue", Duration::from_secs(60));
    // Long enough that the handlers surely still run when the next command comes.
    let timeout = Duration::from_secs(5);
    let mut server = test_support::child::Live::start(&mut home.command(&["--api-timeout", "5s"]));
    server.send(lines(&session(&[])).as_bytes());
    let _ = next(&mut server, Duration::from_secs(20));
    let first: Vec<Value> = (1..=PLACES)
        .map(|n| control(n, "Switch One", "on"))
        .collect();
    server.send(lines(&first).as_bytes());
    assert!(
        home.writes_arrive(PLACES, Duration::from_secs(20)).await,
        "the first {PLACES} writes never arrived"
    );
    // Cancelled, their handlers still wait for the gateway: the next command finds no place
    // and is refused at once (the cancellations are read before it: one pipe, in order).
    let mut next_lines: Vec<Value> = (1..=PLACES).map(cancel).collect();
    let mut id = PLACES as u64 + 1;
    next_lines.push(control(id, "Switch One", "off"));
    server.send(lines(&next_lines).as_bytes());
    let refused = answer_to(&mut server, id, Duration::from_secs(5));
    assert_eq!(refused["error"]["code"], BUSY, "{refused}");
    // Asked again until a handler ended and gave its place up (each a round trip; the
    // pause only spaces the attempts).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        id += 1;
        server.send(lines(&[control(id, "Switch One", "off")]).as_bytes());
        let reply = answer_to(&mut server, id, Duration::from_secs(30));
        if reply["error"]["code"] != BUSY {
            assert!(reply.get("result").is_some(), "{reply}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no place was ever freed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = server.finish(Duration::from_secs(30));
    let mut at: Vec<std::time::Instant> = home
        .sim
        .received()
        .into_iter()
        .filter(|request| request.api == "writeValue")
        .map(|request| request.at)
        .collect();
    at.sort();
    assert_eq!(at.len(), PLACES + 1, "refused commands write nothing");
    // A place is free only once a handler ended, at least the API timeout after its write
    // (half of it, for the way to the gateway).
    assert!(
        at[PLACES] - at[0] >= timeout / 2,
        "a write {:?} after the first: a cancelled request gave up its place while it ran\n{}",
        at[PLACES] - at[0],
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Issue: 64 calls waiting for a person blocked the person's answers (stdin was no longer
/// read). Now: 64 unlocks, each asked; one request more is refused at once; the 64 yeses are
/// read and every unlock carried out, long before the question's timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_answers_are_read_while_every_place_waits_for_one() {
    let home = GatewayHome::with_nodes(zwave_mcp_server::sim::home::demo_home(
        zwave_mcp_server::network::now_ms(),
    ))
    .await;
    // Supervised: each unlock is confirmed by its write's result, with no read-back poll.
    home.sim.set_supervised(8, true);
    // Two minutes to answer: anything answered within the test's limits was read at once.
    let mut server = test_support::child::Live::start(&mut home.command(&[
        "--allow-sensitive",
        "lock",
        "--ask-timeout",
        "120s",
        "--confirm-timeout",
        "0s",
    ]));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "person", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    server.send(lines(&[initialize, initialized]).as_bytes());
    let _ = next(&mut server, Duration::from_secs(20));
    let unlocks: Vec<Value> = (1..=PLACES)
        .map(|n| control(n, "Front Door Lock", "unlock"))
        .collect();
    server.send(lines(&unlocks).as_bytes());
    // Every place is taken by a handler waiting for its question's answer.
    let mut questions = Vec::new();
    while questions.len() < PLACES {
        let message = next(&mut server, Duration::from_secs(20));
        assert_eq!(message["method"], "elicitation/create", "{message}");
        questions.push(message["id"].clone());
    }
    // One request more: answered at once, not queued behind the person.
    server.send(lines(&[json!({"jsonrpc": "2.0", "id": 1000, "method": "tools/list"})]).as_bytes());
    let refused = next(&mut server, Duration::from_secs(5));
    assert_eq!(refused["id"], 1000, "{refused}");
    assert_eq!(refused["error"]["code"], BUSY, "{refused}");
    // The client cancels the first half: their questions are withdrawn and their places
    // freed at once, not when the questions time out.
    let cancels: Vec<Value> = (1..=PLACES / 2).map(cancel).collect();
    server.send(lines(&cancels).as_bytes());
    let mut attempt = 2000;
    loop {
        attempt += 1;
        server.send(
            lines(&[json!({"jsonrpc": "2.0", "id": attempt, "method": "tools/list"})]).as_bytes(),
        );
        let answer = loop {
            let message = next(&mut server, Duration::from_secs(10));
            if message["id"] == json!(attempt) {
                break message;
            }
        };
        if answer.get("result").is_some() {
            break;
        }
        assert_eq!(answer["error"]["code"], BUSY, "{answer}");
        assert!(
            attempt < 2000 + 10_000,
            "no place was freed by the cancellations"
        );
    }
    // The person says yes to each.
    let yes: Vec<Value> = questions
        .iter()
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id,
            "result": {"action": "accept", "content": {"confirm": true}}})
        })
        .collect();
    let asked = std::time::Instant::now();
    server.send(lines(&yes).as_bytes());
    let mut unlocked = std::collections::BTreeSet::new();
    while unlocked.len() < PLACES / 2 {
        let message = next(&mut server, Duration::from_secs(30));
        if message.get("method").is_some() {
            continue; // the server's notices of the questions it withdrew
        }
        let id = message["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("{message}"));
        let text = message["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!text.contains("needs a person's yes"), "{id}: {text}");
        unlocked.insert(id);
    }
    assert!(
        asked.elapsed() < Duration::from_secs(60),
        "the answers waited {:?}",
        asked.elapsed()
    );
    assert_eq!(
        unlocked,
        (PLACES as u64 / 2 + 1..=PLACES as u64).collect::<std::collections::BTreeSet<u64>>()
    );
    assert_eq!(
        home.writes().len(),
        PLACES / 2,
        "every yes to a request not cancelled carried its unlock out, and only those"
    );
    server.finish(Duration::from_secs(30));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_the_id_of_one_in_flight_is_refused_and_no_answer_is_lost() {
    let home = GatewayHome::renamed(&[]).await;
    home.sim.set_delay("writeValue", Duration::from_secs(60));
    let mut input = session(&[]);
    input.extend((0..100).map(|_| control(1, "Switch One", "on")));
    let output = home.run_lines(&["--api-timeout", "3s"], &input).await;
    let replies: Vec<Value> = messages(&output)
        .into_iter()
        .filter(|message| message["id"] == json!(1))
        .collect();
    assert_eq!(replies.len(), 100, "one answer per request: {replies:?}");
    let refused: Vec<&Value> = replies
        .iter()
        .filter(|reply| reply.get("error").is_some())
        .collect();
    assert_eq!(refused.len(), 99, "{replies:?}");
    assert_eq!(
        refused[0]["error"],
        json!({"code": -32600, "message": "request id 1 is already in use by a request in flight: give every request an id of its own"})
    );
    assert_eq!(home.writes().len(), 1, "only the first request may write");

    // Two reads with one id: both are answered, neither answer is lost.
    let status = |id: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "get_device_status", "arguments": {"deviceName": "Switch One"}}})
    };
    home.sim.set_delay("getNodes", Duration::from_secs(1));
    let mut input = session(&[]);
    input.extend([status(5), status(5)]);
    let output = home.run_lines(&[], &input).await;
    let replies: Vec<Value> = messages(&output)
        .into_iter()
        .filter(|message| message["id"] == json!(5))
        .collect();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert_eq!(
        replies
            .iter()
            .filter(|reply| reply.get("result").is_some())
            .count(),
        1
    );
}

/// Over zwave-js-server a command first checks its device's name (`node.get_state`, a round
/// trip): a cancellation that comes during the check stops the write; the server's record
/// holds the check and no write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cancelled_while_its_device_is_checked_is_never_written() {
    use crate::harness::{Backend, TestHome};
    let home = TestHome::renamed(Backend::ZwaveJsServer, &[]).await;
    let TestHome::ZwaveJsServer(server) = &home else {
        unreachable!()
    };
    server.set_delay("node.get_state", Duration::from_secs(2));
    let mut binary = test_support::child::Live::start(&mut home.command(&[]));
    binary.send(lines(&session(&[])).as_bytes());
    binary.send(lines(&[control(2, "Switch One", "on")]).as_bytes());
    let checking = || {
        server
            .received()
            .iter()
            .any(|command| command["command"] == "node.get_state")
    };
    assert!(
        eventually(Duration::from_secs(10), checking).await,
        "the name check never began"
    );
    binary.send(lines(&[cancel(2)]).as_bytes());
    // Past the check's answer, with time for a write to arrive if one were sent.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let output = binary.finish(Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let commands: Vec<String> = server
        .received()
        .iter()
        .map(|command| command["command"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        commands,
        ["set_api_schema", "start_listening", "node.get_state"],
        "{stderr}"
    );
    assert!(
        messages(&output)
            .iter()
            .all(|message| message["id"] != json!(2)),
        "a cancelled request gets no answer"
    );
    assert!(
        stderr.contains(
            "not writing: the client cancelled the request while the device's name was checked"
        ),
        "{stderr}"
    );
}
