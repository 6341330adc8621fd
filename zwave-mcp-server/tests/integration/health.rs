//! `get_zwave_health` through the binary, over each backend (the same bodies against the
//! simulated Z-Wave JS UI and the simulated zwave-js-server): the network's health dead and
//! weakest first in words, statistics that move after commands, a ping (answered, not
//! answered: dead, answered again: alive), the owner's exposure rules, and every refusal with
//! its words. The demo home has a dead light (node 7, last routed through Switch One) and a
//! motion sensor with a weak signal (node 5).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{Conversation, per_backend};

/// Calls `get_zwave_health` with `args` until `check` holds of its structured content (each
/// call a round trip: statistics events follow a command's result on the wire, and are read
/// in their turn), at most 10 s; returns that answer.
fn health_until(
    session: &mut Conversation,
    args: &Value,
    check: impl Fn(&Value) -> bool,
) -> (bool, String, Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (error, text, health) = session.call("get_zwave_health", args.clone());
        if !error && check(&health) {
            return (error, text, health);
        }
        assert!(
            Instant::now() < deadline,
            "never as expected: {text}\n{health}"
        );
    }
}

/// The one device of a single-device answer.
fn device(health: &Value) -> &Value {
    &health["devices"][0]
}

per_backend! {
async fn the_network_health_says_the_dead_and_the_weak_first_and_why(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    let (error, text, health) = session.call("get_zwave_health", json!({}));
    assert!(!error, "{text}");
    let dead = "Z-Wave network health (14 devices): 1 dead, 1 weak, 12 fine.\n\
        - \"Garage Light\" (node 7, Garage) is dead; last heard from 3 days ago; 31% of commands to it timed out (5 of 16); its last route went through Switch One at 40 kbit/s.\n\
        - \"Hallway Motion\" (node 5, Hallway) is weak: its signal is weak (-89 dBm); last heard from ";
    assert!(text.starts_with(dead), "{text}");
    assert!(
        text.ends_with("; its last route went through Switch One and Living Room Light at 40 kbit/s; battery 64%.\n\
            Fine: Back Door Sensor, Bedroom Blind, Bedside Remote, Front Door Lock, Garage Door, Hallway Siren, Living Room Light, Node 6, Office Temperature, Reading Lamp, Switch One, Thermostat."),
        "{text}"
    );
    assert_eq!(health["counts"], json!({"dead": 1, "weak": 1, "unknown": 0, "asleep": 0, "fine": 12}));
    let devices = health["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 14);
    let garage = &devices[0];
    assert_eq!(
        (&garage["nodeId"], &garage["condition"], &garage["status"], &garage["timedOut"], &garage["commandsSent"]),
        (&json!(7), &json!("dead"), &json!("Dead"), &json!(5), &json!(16))
    );
    assert_eq!(garage["route"], "through Switch One at 40 kbit/s");
    assert_eq!(garage["problems"], json!(["31% of commands to it timed out (5 of 16)"]));
    assert!(garage.get("statusSinceMs").is_none(), "dead since before it was first listed: {garage}");
    let motion = &devices[1];
    assert_eq!((&motion["nodeId"], &motion["condition"], &motion["signalDbm"]), (&json!(5), &json!("weak"), &json!(-89)));
    assert!(devices[2..].iter().all(|device| device["condition"] == "fine" && device["problems"] == json!([])));
    // The controller has nothing to say: no NAK, no collision, nothing lost.
    assert!(health.get("controller").is_none(), "{health}");
    session.finish();
}

async fn statistics_move_after_commands(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "0s"]));
    let switch = json!({"deviceName": "Switch One"});
    let (error, text, before) = session.call("get_zwave_health", switch.clone());
    assert!(!error, "{text}");
    assert!(text.starts_with("\"Switch One\" (node 2, Kitchen) is fine; last heard from "), "{text}");
    assert!(text.ends_with("; commands take 68 ms."), "{text}");
    let sent = device(&before)["commandsSent"].as_u64().unwrap();
    let seen = device(&before)["lastSeenMs"].as_i64().unwrap();
    assert_eq!(device(&before)["roundTripMs"], 67.5);

    let (error, text, _) = session.call("control_zwave_device", json!({"deviceName": "Switch One", "action": "on"}));
    assert!(!error, "{text}");
    let (_, _, after) = health_until(&mut session, &switch, |health| {
        device(health)["commandsSent"].as_u64() > Some(sent)
    });
    assert!(device(&after)["lastSeenMs"].as_i64().unwrap() > seen, "{after}");
    assert_eq!(device(&after)["condition"], "fine");
    session.finish();
}

async fn a_ping_says_whether_and_how_fast_and_a_dead_device_that_answers_is_alive_again(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    let ping = json!({"deviceName": "Switch One", "ping": true});
    let (error, text, health) = session.call("get_zwave_health", ping.clone());
    assert!(!error, "{text}");
    assert!(text.starts_with("\"Switch One\" (node 2, Kitchen) answered the ping in "), "{text}");
    assert!(text.contains(" ms.\n\"Switch One\" (node 2, Kitchen) is fine; "), "{text}");
    assert_eq!((&health["ping"]["answered"], &health["ping"]["aliveAgain"]), (&json!(true), &json!(false)));
    assert!(health["ping"]["tookMs"].as_f64().unwrap() > 0.0, "{health}");

    // It stops answering: the ping says so, and the driver marks it dead.
    home.set_answering(2, false);
    let (error, text, health) = session.call("get_zwave_health", ping.clone());
    assert!(!error, "not answering is an answer: {text}");
    assert!(text.starts_with("\"Switch One\" (node 2, Kitchen) did not answer the ping (Z-Wave JS gave up after "), "{text}");
    assert!(text.contains("): it is dead.\n\"Switch One\" (node 2, Kitchen) has been dead since "), "{text}");
    assert_eq!(health["ping"]["answered"], false);
    assert_eq!((&device(&health)["condition"], &device(&health)["status"]), (&json!("dead"), &json!("Dead")));
    assert!(device(&health)["statusSinceMs"].is_i64(), "{health}");
    let (_, status, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(status.contains("offline (node status Dead)"), "{status}");

    // It answers again: alive again, in the answer and the status (zwave-js counts nothing
    // against a node for a frame it did not acknowledge).
    home.set_answering(2, true);
    let (error, text, health) = session.call("get_zwave_health", ping);
    assert!(!error, "{text}");
    assert!(text.contains(" ms: it is alive again (Z-Wave JS had it dead).\n\"Switch One\" (node 2, Kitchen) is fine; last heard from "), "{text}");
    assert_eq!((&health["ping"]["answered"], &health["ping"]["aliveAgain"]), (&json!(true), &json!(true)));
    let (_, status, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(status.contains("online (node status Alive)"), "{status}");

    // The light dead since before the server started answers too.
    let (_, text, health) = session.call("get_zwave_health", json!({"deviceName": "Garage Light", "ping": true}));
    assert!(text.contains(": it is alive again (Z-Wave JS had it dead).\n\"Garage Light\" (node 7, Garage) is weak: 29% of commands to it timed out (5 of 17); last heard from "), "{text}");
    assert!(!text.contains("not heard from"), "it just answered: {text}");
    assert_eq!(health["ping"]["aliveAgain"], true);
    let pings = home.requests().into_iter().filter(|request| request == "pingNode" || request == "node.ping").count();
    assert_eq!(pings, 4);
    session.finish();
}

/// A hidden device is never reported, pinged, nor named as another's repeater; read-only
/// mode takes the control tool away and keeps the health read and the ping.
async fn hidden_devices_are_never_reported_pinged_or_named_and_read_only_may_ping(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&["--read-deny", "node:2", "--read-only"]));
    let (error, text, health) = session.call("get_zwave_health", json!({}));
    assert!(!error, "{text}");
    assert!(text.starts_with("Z-Wave network health (13 devices): 1 dead, 1 weak, 11 fine."), "{text}");
    assert!(!text.contains("Switch One"), "{text}");
    assert!(text.contains("its last route went through another device at 40 kbit/s."), "{text}");
    assert!(text.contains("its last route went through another device and Living Room Light at 40 kbit/s;"), "{text}");
    assert!(health["devices"].as_array().unwrap().iter().all(|device| device["nodeId"] != 2));
    // Asked for by name, it is a device this agent does not know of; nothing is sent.
    for args in [json!({"deviceName": "Switch One", "ping": true}), json!({"deviceName": "Node 2"})] {
        let (error, text, _) = session.call("get_zwave_health", args);
        assert!(error && !text.contains("node 2") && !text.contains("Kitchen"), "{text}");
    }
    // Read-only: a ping changes nothing on the device, so it is allowed.
    let (error, text, health) = session.call("get_zwave_health", json!({"deviceName": "Living Room Light", "ping": true}));
    assert!(!error && health["ping"]["answered"] == true, "{text}");
    let pinged: Vec<String> = home.requests().into_iter().filter(|request| request == "pingNode" || request == "node.ping").collect();
    assert_eq!(pinged.len(), 1, "only the visible device was pinged: {pinged:?}");
    session.finish();
}

async fn every_refusal_says_why_and_sends_nothing(backend) {
    // Office Temperature (node 4), a battery sensor, asleep.
    let mut nodes = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let sensor = nodes.iter_mut().find(|node| node["id"] == 4).unwrap();
    sensor["status"] = json!("Asleep");
    let home = TestHome::with_nodes(backend, nodes).await;
    let mut session = Conversation::over(&mut home.command(&["--api-timeout", "2s"]));
    let (error, text, _) = session.call("get_zwave_health", json!({"ping": true}));
    assert_eq!((error, text.as_str()), (true, "ping needs deviceName: name the one device to ping (the whole network's health is read without pinging every device)"));
    let (error, text, _) = session.call("get_zwave_health", json!({"deviceName": "Office Temperature", "ping": true}));
    assert_eq!((error, text.as_str()), (true, "\"Office Temperature\" (node 4, Office) is asleep (a battery device): it answers only when it wakes up, so a ping would wait until then; nothing was sent. Ask without ping for when it was last heard from"));
    let (error, text, health) = session.call("get_zwave_health", json!({"deviceName": "Office Temperature"}));
    assert!(!error && text.starts_with("\"Office Temperature\" (node 4, Office) is asleep (a battery device: it answers when it wakes up); last heard from "), "{text}");
    assert!(text.ends_with("; battery 87%."), "{text}");
    assert_eq!(device(&health)["condition"], "asleep");
    let (error, text, _) = session.call("get_zwave_health", json!({"deviceName": "Garage Lihgt"}));
    assert!(error && text.starts_with("no Z-Wave device matches \"Garage Lihgt\""), "{text}");
    assert!(!home.requests().iter().any(|request| request == "pingNode" || request == "node.ping"));

    // The way to the home goes down: the ping is refused with why; the read says how old.
    home.go_down().await;
    let headline = match backend {
        Backend::Mqtt => "Z-Wave JS UI is offline since ",
        Backend::ZwaveJsServer => "zwave-js-server is unreachable since ",
    };
    let stale = session.call_until("get_zwave_health", &json!({}), crate::harness::CALL_UNTIL_LIMIT, |_, text| text.starts_with(headline)).1;
    assert!(stale.contains("; last known states:\nZ-Wave network health (14 devices): "), "{stale}");
    let (error, text, _) = session.call("get_zwave_health", json!({"deviceName": "Switch One", "ping": true}));
    let refusal = match backend {
        Backend::Mqtt => "could not ping \"Switch One\" (node 2, Kitchen): zwave-js-ui gateway `zwave-js-ui` is offline (its mqtt status topic says so): start Z-Wave JS UI, or check --gateway-name".to_owned(),
        Backend::ZwaveJsServer => "could not ping \"Switch One\" (node 2, Kitchen): cannot reach zwave-js-server at ".to_owned(),
    };
    assert!(error && text.starts_with(&refusal), "{text}");
    assert!(!home.requests().iter().any(|request| request == "pingNode" || request == "node.ping"));
    session.finish();
}
}

/// What the gateway or server says to a ping is said as it came: Z-Wave JS UI's refusal, a
/// node it no longer has, zwave-js-server's silence (a ping changes nothing, so no "may have
/// been carried out").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_refused_or_unanswered_says_what_the_backend_said() {
    use crate::harness::{Backend, TestHome};
    let home = TestHome::start(Backend::Mqtt).await;
    let TestHome::Mqtt(gateway) = &home else {
        unreachable!()
    };
    let mut session = Conversation::over(&mut home.command(&[]));
    gateway
        .sim
        .set_refusal("pingNode", Some("Driver is not ready"));
    let ping = json!({"deviceName": "Switch One", "ping": true});
    let (error, text, _) = session.call("get_zwave_health", ping.clone());
    assert_eq!(
        (error, text.as_str()),
        (
            true,
            "could not ping \"Switch One\" (node 2, Kitchen): zwave-js-ui rejected `pingNode`: Driver is not ready"
        )
    );
    gateway.sim.set_refusal("pingNode", None);
    gateway.sim.forget_node(2);
    let (error, text, _) = session.call("get_zwave_health", ping);
    assert_eq!(
        (error, text.as_str()),
        (
            true,
            "could not ping \"Switch One\" (node 2, Kitchen): zwave-js-ui rejected `pingNode`: Cannot read properties of undefined (reading 'ping')"
        )
    );
    session.finish();

    let home = TestHome::start(Backend::ZwaveJsServer).await;
    let TestHome::ZwaveJsServer(server) = &home else {
        unreachable!()
    };
    server.set_unanswered("node.ping", true);
    let mut session = Conversation::over(&mut home.command(&["--api-timeout", "1s"]));
    let (error, text, _) = session.call(
        "get_zwave_health",
        json!({"deviceName": "Switch One", "ping": true}),
    );
    assert_eq!(
        (error, text.as_str()),
        (
            true,
            "could not ping \"Switch One\" (node 2, Kitchen): zwave-js-server did not answer `node.ping` within 1s"
        )
    );
    session.finish();
}

/// Z-Wave JS UI with "send events" on publishes each statistics update: the server keeps
/// them and reads the node list no more for them; with events off (its default), a health
/// read after a command of this server reads the list again, so its figures count it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mqtt_statistics_come_from_the_gateways_events_or_a_fresh_node_list() {
    use crate::harness::GatewayHome;
    use zwave_mcp_server::sim::SimOptions;
    let now = zwave_mcp_server::network::now_ms();
    for send_events in [true, false] {
        let home = GatewayHome::with_options(
            zwave_mcp_server::sim::home::demo_home(now),
            SimOptions {
                send_events,
                ..SimOptions::default()
            },
        )
        .await;
        let mut session = Conversation::over(&mut home.command(&[]));
        let switch = json!({"deviceName": "Switch One"});
        let (_, _, before) = session.call("get_zwave_health", switch.clone());
        let sent = device(&before)["commandsSent"].as_u64().unwrap();
        let lists = |home: &GatewayHome| {
            home.sim
                .received()
                .iter()
                .filter(|request| request.api == "getNodes")
                .count()
        };
        let listed = lists(&home);
        let (error, text, _) = session.call(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        );
        assert!(!error, "{text}");
        let (_, _, after) = health_until(&mut session, &switch, |health| {
            device(health)["commandsSent"].as_u64() == Some(sent + 1)
        });
        assert_eq!(device(&after)["condition"], "fine");
        let expected = if send_events { listed } else { listed + 1 };
        assert_eq!(lists(&home), expected, "send_events: {send_events}");
        session.finish();
    }
}
