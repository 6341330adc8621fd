//! The zwave-js-server connection against a scripted server on loopback that answers as the
//! recorded sessions did (`fixtures/zwave-js-server/`): the handshake and the whole state,
//! a command and its events, a schema the server does not speak, a dropped connection.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use zwave_mcp_server::{
    Network,
    network::zwave_js_server::{Link, Target, ZwaveJsServerClient, ZwaveJsServerError},
    network::{Backoff, NodeId, now_ms},
    sim::{ReportDelays, SimZwaveJsServer, home::demo_home},
};

use crate::harness::eventually;

/// How the scripted server behaves.
#[derive(Clone, Copy)]
struct Script {
    max_schema: u64,
    /// Close the connection instead of answering `node.set_value`.
    drop_on_set: bool,
    /// Never answer `node.get_state` (the name check before a write).
    mute_get_state: bool,
}

/// A scripted zwave-js-server; returns its URL and every command it received. With `tls`,
/// it speaks wss:// with that certificate.
async fn server(script: Script) -> (String, Arc<Mutex<Vec<Value>>>) {
    serve_scripted(script, None).await
}

async fn serve_scripted(
    script: Script,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let scheme = if tls.is_some() { "wss" } else { "ws" };
    let url = format!("{scheme}://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let state: Value = serde_json::from_str(&test_support::fixture_text(
        "zwave-js-server/start_listening.result.json",
    ))
    .unwrap();
    let state = state["result"].clone();
    let log = Arc::clone(&received);
    let state = Arc::new(state);
    tokio::spawn(async move {
        let mut connections = 0;
        while let Ok((stream, _)) = listener.accept().await {
            connections += 1;
            // Each connection on its own: one client must not hold up the next.
            let (tls, state, log) = (tls.clone(), Arc::clone(&state), Arc::clone(&log));
            tokio::spawn(async move {
                match tls {
                    None => {
                        let socket = tokio_tungstenite::accept_async(stream).await.unwrap();
                        answer(socket, script, connections, &state, &log).await;
                    }
                    Some(acceptor) => {
                        // A client that refuses the certificate ends here.
                        let Ok(stream) = acceptor.accept(stream).await else {
                            return;
                        };
                        let socket = tokio_tungstenite::accept_async(stream).await.unwrap();
                        answer(socket, script, connections, &state, &log).await;
                    }
                }
            });
        }
    });
    (url, received)
}

/// One connection, answered as recorded.
async fn answer<S>(
    mut socket: tokio_tungstenite::WebSocketStream<S>,
    script: Script,
    connections: u32,
    state: &Value,
    log: &Mutex<Vec<Value>>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let version = json!({"type": "version", "homeId": 2119630849, "driverVersion": "15.29.0",
        "serverVersion": "3.10.2", "minSchemaVersion": 0, "maxSchemaVersion": script.max_schema});
    socket
        .send(Message::text(version.to_string()))
        .await
        .unwrap();
    while let Some(Ok(frame)) = socket.next().await {
        // Pings are answered by tungstenite as it reads; only commands are the script's.
        let Message::Text(text) = frame else { continue };
        let command: Value = serde_json::from_str(&text).unwrap();
        log.lock().unwrap().push(command.clone());
        let id = command["messageId"].clone();
        let result = |result: Value| {
            Message::text(
                json!({"type": "result", "success": true, "messageId": id, "result": result})
                    .to_string(),
            )
        };
        match command["command"].as_str().unwrap() {
            "set_api_schema" => socket.send(result(json!({}))).await.unwrap(),
            "start_listening" => socket.send(result(state.clone())).await.unwrap(),
            "node.get_state" if script.mute_get_state => {}
            "node.get_state" => {
                let node = state["state"]["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|node| node["nodeId"] == command["nodeId"])
                    .cloned()
                    .unwrap_or_default();
                socket.send(result(json!({"state": node}))).await.unwrap();
            }
            "node.set_value" if script.drop_on_set && connections == 1 => break,
            "node.set_value" => {
                // As recorded for unsupervised Sets: the result, then zwave-js's optimistic
                // update of the target and the current value.
                socket
                    .send(result(json!({"result": {"status": 254}})))
                    .await
                    .unwrap();
                for property in ["targetValue", "currentValue"] {
                    let event = json!({"type": "event", "event": {"source": "node",
                        "event": "value updated", "nodeId": command["nodeId"],
                        "args": {"commandClass": 38, "endpoint": 0, "property": property,
                                 "newValue": command["value"], "prevValue": 0}}});
                    socket.send(Message::text(event.to_string())).await.unwrap();
                }
            }
            _ => {
                let refused = json!({"type": "result", "success": false, "messageId": id,
                    "errorCode": "unknown_command", "message": ""});
                socket
                    .send(Message::text(refused.to_string()))
                    .await
                    .unwrap();
            }
        }
    }
}

const QUICK: Backoff = Backoff::exponential(Duration::from_millis(20), Duration::from_millis(100));

/// Waits until the link is as `wanted` says.
async fn link_until(client: &ZwaveJsServerClient, wanted: impl Fn(&Link) -> bool) -> Link {
    let mut link = client.link();
    tokio::time::timeout(Duration::from_secs(10), link.wait_for(|now| wanted(now)))
        .await
        .expect("the link never got there")
        .map(|seen| seen.clone())
        .unwrap()
}

fn set_dimmer(level: u64) -> Value {
    json!({"nodeId": 3, "valueId": {"commandClass": 38, "endpoint": 0, "property": "targetValue"}, "value": level})
}

#[tokio::test]
async fn it_listens_commands_get_results_and_events_keep_the_cache() {
    let (url, received) = server(Script {
        max_schema: 50,
        drop_on_set: false,
        mute_get_state: false,
    })
    .await;
    let client = ZwaveJsServerClient::connect(Target::new(&url, None).unwrap(), QUICK);
    let link = link_until(&client, |link| matches!(link, Link::Listening { .. })).await;
    assert_eq!(
        link,
        Link::Listening {
            server: "3.10.2".into(),
            driver: "15.29.0".into()
        }
    );
    assert_eq!(client.with_nodes(|nodes| nodes.len()), 15);
    let result = client
        .request("node.set_value", set_dimmer(40), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(result, json!({"result": {"status": 254}}));
    let refused = client
        .request("node.frobnicate", json!({}), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "zwave-js-server refused `node.frobnicate`: unknown_command"
    );
    // The events sent before that result are in the cache by the time it is.
    assert_eq!(
        client.with_nodes(|nodes| nodes[&NodeId(3)].values["38-0-targetValue"].value.clone()),
        Some(json!(40))
    );
    // The handshake as recorded: the schema first, then the state; ids unique per process.
    let sent = received.lock().unwrap().clone();
    assert_eq!(sent[0]["command"], "set_api_schema");
    assert_eq!(sent[0]["schemaVersion"], 44);
    assert_eq!(sent[1]["command"], "start_listening");
    let id = sent[2]["messageId"].as_str().unwrap();
    assert!(
        id.starts_with(&format!("zm-{}-", std::process::id())),
        "{id}"
    );
}

/// The gateway over zwave-js-server: zwave-js's optimistic update, which comes after an
/// unsupervised write's result, is not the device's report. Taken for one, it would confirm a
/// device that did nothing (the real driver's stuck-switch case, `zwave_js_server::home`).
#[tokio::test]
async fn the_optimistic_update_after_a_write_is_not_a_report() {
    let (url, _) = server(Script {
        max_schema: 50,
        drop_on_set: false,
        mute_get_state: false,
    })
    .await;
    let network = Network::connect_zwave_js_server(
        Target::new(&url, None).unwrap(),
        QUICK,
        Duration::from_secs(5),
    );
    network.ensure_nodes().await.unwrap();
    let level = "38-0-currentValue";
    let before = network.value(NodeId(3), level);
    assert_ne!(before, Some(json!(40)));
    let id = network.node(NodeId(3)).unwrap().values["38-0-targetValue"].value_id(NodeId(3));
    let acknowledged = std::time::Instant::now();
    assert_eq!(network.write_value(&id, json!(40)).await.unwrap(), 254);
    // A round trip after the write: its answer comes after the optimistic update.
    let poll = network.poll_value(&id).await.unwrap_err();
    assert_eq!(
        poll.to_string(),
        "zwave-js-server refused `node.poll_value`: unknown_command"
    );
    assert_eq!(network.value(NodeId(3), level), before);
    assert_eq!(
        network
            .wait_for_report(NodeId(3), level, acknowledged, Duration::ZERO)
            .await,
        None
    );
}

/// Another client renames the device a name pointed at: zwave-js-server says nothing of it,
/// so the cache still has the old name. The write checks the node's name first, sends
/// nothing, and the list is read again.
#[tokio::test]
async fn a_write_to_a_node_renamed_by_another_client_is_not_sent() {
    let home = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let server = zwave_mcp_server::sim::SimZwaveJsServer::start(
        "127.0.0.1:0",
        home,
        zwave_mcp_server::sim::ReportDelays::FAST,
    )
    .await
    .unwrap();
    let network = Network::connect_zwave_js_server(
        Target::new(server.url(), None).unwrap(),
        QUICK,
        Duration::from_secs(5),
    );
    network.ensure_nodes().await.unwrap();
    let id = network.node(NodeId(3)).unwrap().values["38-0-targetValue"].value_id(NodeId(3));
    let other = ZwaveJsServerClient::connect(Target::new(server.url(), None).unwrap(), QUICK);
    link_until(&other, |link| matches!(link, Link::Listening { .. })).await;
    other
        .request(
            "node.set_name",
            json!({"nodeId": 3, "name": "Desk Lamp", "updateCC": false}),
            Duration::from_secs(5),
        )
        .await
        .unwrap();
    let refused = network.write_value(&id, json!(40)).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "nothing was sent: node 3 is now \"Desk Lamp\" (Living Room) in Z-Wave JS, not \"Living Room Light\" (Living Room) as it was when the command's device was looked up (it was renamed since); find the device by its current name and ask again"
    );
    assert!(server.writes().is_empty());
    // Read again: the new name is known, and a write goes through.
    let mut changes = network.state();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while changes.nodes[&NodeId(3)].name != "Desk Lamp" {
        assert!(std::time::Instant::now() < deadline, "never read again");
        tokio::time::sleep(Duration::from_millis(20)).await;
        changes = network.state();
    }
    assert_eq!(network.write_value(&id, json!(40)).await.unwrap(), 254);
    assert_eq!(server.writes().len(), 1);
}

/// A write zwave-js-server never answers (its driver waits on the device): once the caller
/// gave up, the write stays in flight for the echo window only. The lock, locked by hand after
/// that, reports the mode the write asked for: the report is stored, not taken for the write's
/// echo (which kept the old state shown for ever, and every such write's bytes with it).
#[tokio::test]
async fn a_write_never_answered_does_not_swallow_the_devices_next_report() {
    let server = SimZwaveJsServer::start("127.0.0.1:0", demo_home(now_ms()), ReportDelays::FAST)
        .await
        .unwrap();
    let network = Network::connect_zwave_js_server(
        Target::new(server.url(), None).unwrap(),
        QUICK,
        Duration::from_millis(300),
    );
    // Not `ensure_nodes`: it would wait only the 300 ms given to commands.
    assert!(eventually(Duration::from_secs(5), || network.has_nodes()).await);
    let mode = "98-0-currentMode";
    // The demo's lock is locked: someone unlocks it by hand first.
    server.report(8, mode, json!(0));
    assert!(
        eventually(Duration::from_secs(2), || network.value(NodeId(8), mode)
            == Some(json!(0)))
        .await
    );

    server.set_unanswered("node.set_value", true);
    let lock = network.node(NodeId(8)).unwrap();
    let target = lock.values["98-0-targetMode"].value_id(NodeId(8));
    let echoes = vec![(mode.to_owned(), json!(255))];
    let timed_out = network
        .write_value_to(
            Some(&lock),
            &target,
            json!(255),
            echoes,
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        timed_out.to_string(),
        "zwave-js-server did not answer `node.set_value` within 300ms; it may have been carried out"
    );
    // Past the echo window (1 s), someone locks it by hand.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    server.report(8, mode, json!(255));
    assert!(
        eventually(Duration::from_secs(2), || network.value(NodeId(8), mode)
            == Some(json!(255)))
        .await,
        "the lock's report was taken for the echo of the write that timed out"
    );
    // What the server received: the name check and the one write, nothing again.
    let commands: Vec<String> = server
        .received()
        .iter()
        .map(|command| command["command"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        commands,
        [
            "set_api_schema",
            "start_listening",
            "node.get_state",
            "node.set_value"
        ]
    );
}

/// zwave-js-server stopped as by SIGSTOP: TCP stays open and nothing answers, not even a
/// ping. Its silence is noticed: the link goes down (commands are refused, nothing is sent),
/// and once it runs again the connection is made again and the whole state read again.
#[tokio::test]
async fn a_frozen_server_is_noticed_by_its_silence_and_connected_to_again() {
    // Slow enough that the first Down is seen before the next attempt replaces it.
    const SLOW: Backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(1));
    let server = SimZwaveJsServer::start("127.0.0.1:0", demo_home(now_ms()), ReportDelays::FAST)
        .await
        .unwrap();
    let target = Target::new(server.url(), None)
        .unwrap()
        .with_liveness(Duration::from_millis(100), Duration::from_millis(500));
    let client = ZwaveJsServerClient::connect(target, SLOW);
    link_until(&client, |link| matches!(link, Link::Listening { .. })).await;
    // Quiet but alive: its pongs keep the link up.
    let mut link = client.link();
    let _ = link.borrow_and_update();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!link.has_changed().unwrap(), "{:?}", *link.borrow());

    server.freeze();
    let frozen = std::time::Instant::now();
    let Link::Down { why, .. } =
        link_until(&client, |link| matches!(link, Link::Down { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(
        why,
        "zwave-js-server stopped answering: nothing from it, not even a pong, for 500ms (is it stopped or hung, or the network down?)"
    );
    assert!(
        frozen.elapsed() < Duration::from_secs(3),
        "{:?}",
        frozen.elapsed()
    );
    let refused = client
        .request(
            "node.get_state",
            json!({"nodeId": 2}),
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ZwaveJsServerError::Down { .. }),
        "{refused}"
    );

    server.thaw();
    link_until(&client, |link| matches!(link, Link::Listening { .. })).await;
    // What the server received: two handshakes, and nothing sent while it was frozen.
    let commands: Vec<String> = server
        .received()
        .iter()
        .map(|command| command["command"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        commands,
        [
            "set_api_schema",
            "start_listening",
            "set_api_schema",
            "start_listening"
        ]
    );
}

/// A write first checks the device's name (`node.get_state`, a round trip): a cancellation
/// that comes during the check stops the write before it is sent.
#[tokio::test]
async fn a_write_cancelled_while_its_device_is_checked_is_not_sent() {
    let server = SimZwaveJsServer::start("127.0.0.1:0", demo_home(now_ms()), ReportDelays::FAST)
        .await
        .unwrap();
    server.set_delay("node.get_state", Duration::from_millis(500));
    let network = Network::connect_zwave_js_server(
        Target::new(server.url(), None).unwrap(),
        QUICK,
        Duration::from_secs(5),
    );
    network.ensure_nodes().await.unwrap();
    let node = network.node(NodeId(3)).unwrap();
    let id = node.values["38-0-targetValue"].value_id(NodeId(3));
    let cancelled = CancellationToken::new();
    let echoes = vec![("38-0-currentValue".to_owned(), json!(40))];
    let write = network.write_value_to(Some(&node), &id, json!(40), echoes, &cancelled);
    let cancel = async {
        let checking = || {
            server
                .received()
                .iter()
                .any(|command| command["command"] == "node.get_state")
        };
        assert!(eventually(Duration::from_secs(5), checking).await);
        cancelled.cancel();
    };
    let (written, ()) = tokio::join!(write, cancel);
    let refused = written.unwrap_err();
    assert!(refused.was_cancelled(), "{refused}");
    assert_eq!(
        refused.to_string(),
        "`node.set_value` was not sent: the request it was for was cancelled"
    );
    // Well after the check's answer: still no write.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(server.writes().is_empty(), "{:?}", server.received());
}

/// The name check before a write got no answer: the write was never sent, and the refusal
/// says so (it is no "may have been carried out").
#[tokio::test]
async fn a_write_whose_name_check_is_not_answered_is_not_sent_and_says_so() {
    let (url, received) = server(Script {
        max_schema: 50,
        drop_on_set: false,
        mute_get_state: true,
    })
    .await;
    let network = Network::connect_zwave_js_server(
        Target::new(&url, None).unwrap(),
        QUICK,
        Duration::from_secs(1),
    );
    network.ensure_nodes().await.unwrap();
    let id = network.node(NodeId(3)).unwrap().values["38-0-targetValue"].value_id(NodeId(3));
    let refused = network.write_value(&id, json!(40)).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "nothing was sent: before writing, this server checks that node 3 still has the name it was found by, and that check failed: zwave-js-server did not answer `node.get_state` within 1s"
    );
    assert!(!refused.may_have_arrived());
    assert!(
        received
            .lock()
            .unwrap()
            .iter()
            .all(|command| command["command"] != "node.set_value")
    );
}

#[tokio::test]
async fn a_server_without_our_schema_is_refused_with_what_to_upgrade() {
    let (url, received) = server(Script {
        max_schema: 30,
        drop_on_set: false,
        mute_get_state: false,
    })
    .await;
    let client = ZwaveJsServerClient::connect(Target::new(&url, None).unwrap(), QUICK);
    let Link::Down { why, .. } =
        link_until(&client, |link| matches!(link, Link::Down { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(
        why,
        "zwave-js-server 3.10.2 speaks API schemas 0–30, and this server speaks 44: upgrade zwave-js-server (or Z-Wave JS UI / the Z-Wave JS add-on)"
    );
    let refused = client
        .request("node.set_value", set_dimmer(40), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ZwaveJsServerError::Down { .. }),
        "{refused}"
    );
    assert!(received.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_command_whose_connection_drops_is_lost_never_sent_again() {
    let (url, received) = server(Script {
        max_schema: 50,
        drop_on_set: true,
        mute_get_state: false,
    })
    .await;
    let client = ZwaveJsServerClient::connect(Target::new(&url, None).unwrap(), QUICK);
    link_until(&client, |link| matches!(link, Link::Listening { .. })).await;
    let lost = client
        .request("node.set_value", set_dimmer(66), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert_eq!(
        lost.to_string(),
        "the connection to zwave-js-server was lost before `node.set_value` was answered; it may have been carried out"
    );
    // Told after the link went down (so this waits for the next connection, not the old
    // one); it comes back, reads the whole state again, and the lost command is not among
    // what the new connection received.
    link_until(&client, |link| matches!(link, Link::Listening { .. })).await;
    let sets = received
        .lock()
        .unwrap()
        .iter()
        .filter(|command| command["command"] == "node.set_value")
        .count();
    assert_eq!(sets, 1);
    let commands: Vec<String> = received
        .lock()
        .unwrap()
        .iter()
        .map(|command| command["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        commands,
        [
            "set_api_schema",
            "start_listening",
            "node.set_value",
            "set_api_schema",
            "start_listening"
        ]
    );
}

#[tokio::test]
async fn wss_is_checked_against_the_ca_given_and_refused_without_it() {
    let (acceptor, files, _dir) = crate::harness::tls_acceptor("ws");
    let script = Script {
        max_schema: 50,
        drop_on_set: false,
        mute_get_state: false,
    };
    let (url, _) = serve_scripted(script, Some(acceptor)).await;
    assert!(url.starts_with("wss://127.0.0.1:"), "{url}");

    let ca = std::fs::read(&files.ca).unwrap();
    let trusted = ZwaveJsServerClient::connect(Target::new(&url, Some(&ca)).unwrap(), QUICK);
    link_until(&trusted, |link| matches!(link, Link::Listening { .. })).await;
    assert_eq!(trusted.with_nodes(|nodes| nodes.len()), 15);

    // The system's roots do not know the test CA.
    let untrusted = ZwaveJsServerClient::connect(Target::new(&url, None).unwrap(), QUICK);
    let Link::Down { why, .. } =
        link_until(&untrusted, |link| matches!(link, Link::Down { .. })).await
    else {
        unreachable!()
    };
    assert!(
        why.starts_with(&format!(
            "TLS with {} failed: invalid peer certificate",
            &url[6..]
        )),
        "{why}"
    );
}

/// A port that takes the connection and never answers the handshake (a wrong service, a
/// stalled proxy) is given up after 5 s, and tried again.
#[tokio::test]
async fn a_handshake_that_never_ends_is_given_up() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let client = ZwaveJsServerClient::connect(Target::new(&url, None).unwrap(), QUICK);
    let Link::Down { why, .. } =
        link_until(&client, |link| matches!(link, Link::Down { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(
        why,
        format!("the WebSocket handshake with {url} got no answer within 5s")
    );
    drop(listener);
}

#[test]
fn urls_that_cannot_work_are_refused_with_an_example() {
    assert_eq!(
        Target::new("http://hub:3000", None)
            .unwrap_err()
            .to_string(),
        "\"http://hub:3000\" is not a WebSocket URL: expected ws://host:port or wss://host:port (zwave-js-server listens on 3000)"
    );
    assert_eq!(
        Target::new("ws://:3000", None).unwrap_err().to_string(),
        "\"ws://:3000\" has no usable host and port: expected e.g. ws://192.168.1.10:3000"
    );
    assert!(Target::new("ws://hub:99999", None).is_err());
    assert_eq!(
        Target::new("wss://hub:3000", Some(b"not a certificate"))
            .unwrap_err()
            .to_string(),
        "the CA file holds no usable PEM certificate"
    );
    assert!(Target::new("ws://[::1]:3000", None).is_ok());
    assert!(Target::new("ws://hub", None).is_ok());
}
