//! Names reach exactly the device they name, or nothing: hidden devices never redirect a
//! command and are answered as unknown; a bare number never switches; rules match names as
//! lookups do; contradictory arguments are refused.

use serde_json::{Value, json};

use crate::harness::{GatewayHome, answer, eventually, lines, per_backend, session};

per_backend! {
async fn a_hidden_device_never_redirects_a_command_to_another_one(backend) {
    let home = TestHome::renamed(backend, &[
        (2, "Space Heater", "Bedroom"),
        (6, "Space Heater Fan", "Bedroom"),
    ])
    .await;
    let output = home
        .run(
            &["--read-deny", "name:Space Heater"],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "Space Heater", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "heater", "action": "off"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Bedroom Space Heater", "action": "off"}),
                ),
                ("get_device_status", json!({"deviceName": "Space Heater"})),
            ],
        )
        .await;
    let (error, text) = answer(&output, 2);
    assert!(error, "{text}");
    assert_eq!(
        text,
        "no Z-Wave device matches \"Space Heater\" (closest: \"Space Heater Fan\", \"Garage Light\", \"Office Temperature\"); list_zwave_devices shows every device"
    );
    for id in [3, 4] {
        let (error, text) = answer(&output, id);
        assert!(
            error && text.starts_with("no Z-Wave device matches"),
            "{id}: {text}"
        );
        assert!(!text.contains("node 2"), "{text}");
    }
    // A read names the device it resolved to: it is answered as were the heater absent.
    let (error, text) = answer(&output, 5);
    assert!(
        !error && text.starts_with("\"Space Heater Fan\" (node 6, Bedroom) is a switch"),
        "{text}"
    );
    assert_eq!(home.writes(), [], "nothing may be written");
    // The fan itself, by its full name, still works.
    let output = home
        .run(
            &["--read-deny", "name:Space Heater"],
            &[(
                "control_zwave_device",
                json!({"deviceName": "Space Heater Fan", "action": "off"}),
            )],
        )
        .await;
    assert!(!answer(&output, 2).0, "{}", answer(&output, 2).1);
    assert_eq!(
        home.writes(),
        [("6-37-0-targetValue".to_owned(), json!(false))]
    );
}

/// "Door" with the lock hidden is answered as with no lock at all: the two visible doors.
async fn a_hidden_device_among_several_matches_is_answered_as_an_absent_one(backend) {
    let door = [("get_device_status", json!({"deviceName": "Door"}))];
    let hidden = TestHome::start(backend).await;
    let with_hidden = hidden
        .run(&["--read-deny", "name:Front Door Lock"], &door)
        .await;
    let home = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let absent = TestHome::with_nodes(
        backend,
        home.into_iter().filter(|node| node["id"] != json!(8)).collect(),
    )
    .await;
    let without = absent.run(&[], &door).await;
    let expected = "\"Door\" matches 2 devices: \"Garage Door\" (node 11, Garage), \"Back Door Sensor\" (node 14, Kitchen); say which one by its full name";
    assert_eq!(answer(&with_hidden, 2), (true, expected.to_owned()));
    assert_eq!(answer(&without, 2), answer(&with_hidden, 2));
}

/// Node 3 named "node 7": `Node 7` names both, and switches neither.
async fn node_id_beside_a_device_named_like_it_is_ambiguous(backend) {
    let home = TestHome::renamed(backend, &[(3, "node 7", "")]).await;
    let output = home
        .run(
            &[],
            &[(
                "control_zwave_device",
                json!({"deviceName": "Node 7", "action": "on"}),
            )],
        )
        .await;
    assert_eq!(
        answer(&output, 2),
        (
            true,
            "\"Node 7\" matches 2 devices: \"node 7\" (node 3), \"Garage Light\" (node 7, Garage); say which one by its full name".to_owned()
        )
    );
    assert_eq!(home.writes(), [], "nothing may be written");
}

async fn a_hidden_device_and_an_unknown_one_get_the_same_answer(backend) {
    let home = TestHome::renamed(backend, &[]).await;
    let output = home
        .run(
            &["--read-deny", "node:7"],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "Node 7", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Node 9", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Garage Light", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Garage Lihgt", "action": "on"}),
                ),
            ],
        )
        .await;
    let hidden = answer(&output, 2).1;
    let unknown = answer(&output, 3).1;
    assert_eq!(hidden.replace("Node 7", "Node 9"), unknown);
    assert!(
        answer(&output, 4)
            .1
            .starts_with("no Z-Wave device matches \"Garage Light\" (closest: "),
        "{}",
        answer(&output, 4).1
    );
    for id in 2..=5 {
        let text = answer(&output, id).1;
        let suggested = text.split_once("(closest: ").map_or("", |(_, rest)| rest);
        assert!(
            !suggested.contains("Garage Light") && !text.contains("node 7"),
            "{text}"
        );
    }
    assert_eq!(home.writes(), []);
}

async fn a_bare_number_never_switches_an_unnamed_node(backend) {
    let home = TestHome::renamed(backend, &[]).await;
    let output = home
        .run(
            &[],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "6", "action": "off"}),
                ),
                ("get_device_status", json!({"deviceName": "6"})),
            ],
        )
        .await;
    assert_eq!(
        answer(&output, 2),
        (true, "\"6\" is only part of a device name (\"Node 6\" (node 6)); to switch a device, give its full name, \"location name\" or `Node <id>`".to_owned())
    );
    assert!(
        answer(&output, 3).1.starts_with("\"Node 6\" (node 6)"),
        "{}",
        answer(&output, 3).1
    );
    assert_eq!(home.writes(), []);
}

async fn deny_rules_hide_names_written_with_other_spaces_case_or_unicode_forms(backend) {
    let home =
        TestHome::renamed(backend, &[(2, "Front  Door Light", ""), (3, "Hall\u{a0}Lamp", "")]).await;
    let output = home
        .run(
            &[
                "--read-deny",
                "name:front door light",
                "--read-deny",
                "name:Ｈａｌｌ Lamp",
            ],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "Front Door Light", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Hall Lamp", "action": "on"}),
                ),
                ("list_zwave_devices", json!({"includeInactive": true})),
            ],
        )
        .await;
    for id in [2, 3] {
        let (error, text) = answer(&output, id);
        assert!(
            error && text.starts_with("no Z-Wave device matches"),
            "{text}"
        );
    }
    let list = answer(&output, 4).1;
    assert!(!list.contains("Door") && !list.contains("Lamp"), "{list}");
    assert_eq!(home.writes(), []);
}

async fn on_at_level_0_is_refused_not_turned_into_off(backend) {
    let home = TestHome::renamed(backend, &[]).await;
    let output = home
        .run(
            &[],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "Living Room Light", "action": "on", "level": 0}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Switch One", "action": "off", "level": 40}),
                ),
            ],
        )
        .await;
    assert_eq!(
        answer(&output, 2),
        (true, "action \"on\" with level 0 contradicts itself for \"Living Room Light\" (node 3, Living Room): use \"off\" (or level 0) to switch off, \"on\" or \"dim\" with a level from 1 to 100 to switch on".to_owned())
    );
    assert!(
        answer(&output, 3)
            .1
            .starts_with("action \"off\" with level 40 contradicts itself")
    );
    assert_eq!(home.writes(), []);
}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_that_match_nothing_or_move_with_a_rename_are_logged_on_every_load() {
    let home = GatewayHome::renamed(&[]).await;
    let mut server = test_support::child::Live::start(&mut home.command(&[
        "--read-deny",
        "name:Garage Light",
        "--control-deny",
        "name:Front Door Lock",
    ]));
    server.send(lines(&session(&[("list_zwave_devices", json!({}))])).as_bytes());
    let sim = home.sim.clone();
    let loads = move || {
        sim.received()
            .iter()
            .filter(|r| r.api == "getNodes")
            .count()
    };
    assert!(eventually(std::time::Duration::from_secs(10), || loads() >= 1).await);
    // The owner renames the garage light, and gives its old name to the kitchen switch.
    home.sim.rename_node(7, "Garage Lamp", "Garage").await;
    home.sim.rename_node(2, "Garage Light", "Kitchen").await;
    // A name the old list does not know: the server reloads the list before answering.
    server.send(
        format!(
            "{}\n",
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_device_status","arguments":{"deviceName":"Garage Lamp"}}})
        )
        .as_bytes(),
    );
    let output = server.finish(std::time::Duration::from_secs(30));
    assert!(!answer(&output, 3).0, "{}", answer(&output, 3).1);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("exposure rule \"control deny name:front door lock\" matches no device: check it against list_zwave_devices, or name the device by node:<id>"),
        "{stderr}"
    );
    assert!(
        stderr.contains("exposure rule \"read deny name:garage light\" now also matches \"Garage Light\" (node 2, Kitchen) and no longer \"Garage Lamp\" (node 7, Garage)")
            || stderr.contains("exposure rule \"read deny name:garage light\" now also matches nothing and no longer \"Garage Lamp\" (node 7, Garage)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_unknown_names_cost_the_gateway_a_handful_of_node_list_loads() {
    let home = GatewayHome::renamed(&[]).await;
    let calls: Vec<(&str, serde_json::Value)> = (0..1_000)
        .map(|n| {
            if n % 2 == 0 {
                (
                    "get_device_status",
                    json!({"deviceName": "Kitchen Toaster"}),
                )
            } else {
                (
                    "control_zwave_device",
                    json!({"deviceName": "Kitchen Toaster", "action": "on"}),
                )
            }
        })
        .collect();
    let started = std::time::Instant::now();
    let mut server = test_support::child::Live::start(&mut home.command(&[]));
    server.send(lines(&session(&[])).as_bytes());
    let _ = server.read_line(std::time::Duration::from_secs(20));
    // In waves of 32, each answered before the next is sent: never more in flight than the
    // server's 64 places (a call past them is refused as busy, and would look up nothing).
    for (wave, chunk) in calls.chunks(32).enumerate() {
        let first = 2 + 32 * wave;
        let requests: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(at, (tool, args))| {
                json!({"jsonrpc": "2.0", "id": first + at,
                "method": "tools/call", "params": {"name": tool, "arguments": args}})
            })
            .collect();
        server.send(lines(&requests).as_bytes());
        for _ in chunk {
            let reply: Value =
                serde_json::from_str(&server.read_line(std::time::Duration::from_secs(30)))
                    .unwrap();
            let text = reply["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                reply["result"]["isError"] == true
                    && text.starts_with("no Z-Wave device matches \"Kitchen Toaster\""),
                "{reply}"
            );
        }
    }
    server.finish(std::time::Duration::from_secs(30));
    let floors =
        started.elapsed().as_secs() / zwave_mcp_server::network::MISS_RELOAD_FLOOR.as_secs();
    let loads = home
        .sim
        .received()
        .iter()
        .filter(|r| r.api == "getNodes")
        .count();
    // The first load, then at most one per 5 s for names not found.
    let most = 2 + usize::try_from(floors).unwrap();
    assert!(
        loads <= most,
        "{loads} getNodes for 1,000 unknown names in {:?}",
        started.elapsed()
    );
    assert!(
        loads >= 2,
        "a name not found reloads the list once: {loads}"
    );
}
