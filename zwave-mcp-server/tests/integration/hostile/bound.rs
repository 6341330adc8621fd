//! Cancellation and request ids within the bound on requests in flight: a cancelled command
//! keeps its place until its handler has ended, a cancellation that comes before the write
//! stops it, and a request reusing the id of one in flight is refused at once.

use std::time::Duration;

use serde_json::{Value, json};

use super::{GatewayHome, answer, cancel, control, lines, messages, session};

/// The server's bound on requests in flight (`mcp::bounded::MAX_IN_FLIGHT`, private to it).
const PLACES: usize = 64;

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
    let timeout = Duration::from_secs(2);
    let mut server = test_support::child::Live::start(&mut home.command(&["--api-timeout", "2s"]));
    server.send(lines(&session(&[])).as_bytes());
    let first: Vec<Value> = (1..=PLACES)
        .map(|n| control(n, "Switch One", "on"))
        .collect();
    server.send(lines(&first).as_bytes());
    assert!(
        home.writes_arrive(PLACES, Duration::from_secs(20)).await,
        "the first {PLACES} writes never arrived"
    );
    // Cancelling them must not let the next ones in while their handlers still wait.
    let mut next: Vec<Value> = (1..=PLACES).map(cancel).collect();
    next.extend((PLACES + 1..=2 * PLACES).map(|n| control(n, "Switch One", "off")));
    server.send(lines(&next).as_bytes());
    assert!(
        home.writes_arrive(2 * PLACES, Duration::from_secs(30))
            .await,
        "the second {PLACES} writes never arrived"
    );
    let output = server.finish(Duration::from_secs(30));
    let mut at: Vec<std::time::Instant> = home
        .sim
        .received()
        .into_iter()
        .filter(|request| request.api == "writeValue")
        .map(|request| request.at)
        .collect();
    at.sort();
    assert_eq!(at.len(), 2 * PLACES);
    // A place is free only once a handler ended, at least the API timeout after its write:
    // any PLACES + 1 writes span at least that (half of it, for the way to the gateway).
    for (earlier, later) in at.iter().zip(&at[PLACES..]) {
        assert!(
            *later - *earlier >= timeout / 2,
            "{} writes within {:?}: a cancelled request gave up its place while it ran\n{}",
            PLACES + 1,
            *later - *earlier,
            String::from_utf8_lossy(&output.stderr)
        );
    }
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
