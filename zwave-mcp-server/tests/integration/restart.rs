//! Z-Wave JS UI restarting under a running server, as the restart captures show it: driver
//! and gateway down, the gateway back with its driver still starting (every call answered "Z-Wave
//! client not connected"), the driver up with every node known but not interviewed, then the
//! interviews finishing one by one. Devices must become usable without restarting the server.

use serde_json::json;
use zwave_mcp_server::network::{NodeId, NodeStatus};

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_gateway_restart_devices_become_usable_as_their_interviews_finish() {
    let home = Home::basic().await;
    home.ok("list_zwave_devices", json!({})).await;
    home.sim.stop_zwave_js_ui().await;
    assert!(
        home.wait_until(
            |state| state.gateway_online == Some(false) && state.driver_ready == Some(false)
        )
        .await
    );
    home.sim.announce_online().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(true))
            .await
    );
    home.sim.driver_up_with_unready_nodes().await;
    // The reload after the driver came up finds every node unready.
    assert!(
        home.wait_until(|state| state.driver_ready == Some(true)
            && state
                .nodes
                .get(&NodeId(3))
                .is_some_and(|n| !n.ready && n.values.is_empty()))
            .await
    );
    let refused = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
        )
        .await;
    assert_eq!(
        refused,
        "\"Living Room Light\" (node 3, Living Room) is still being interviewed by Z-Wave JS (it restarted or the device was just added), so what it is is not known yet: try again in a few seconds"
    );
    let status = home
        .ok(
            "get_device_status",
            json!({"deviceName": "Living Room Light"}),
        )
        .await;
    assert_eq!(
        status["summary"],
        "being interviewed by Z-Wave JS (state not known yet)"
    );
    // Node 3's interview finishes: its status topic alone brings its values in, no tool call
    // and no server restart needed.
    home.sim.finish_interview(3).await;
    assert!(
        home.wait_until(|state| state
            .nodes
            .get(&NodeId(3))
            .is_some_and(|n| n.ready && !n.values.is_empty()))
            .await
    );
    let dimmed = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
        )
        .await;
    assert_eq!(dimmed["confirmed"], true, "{dimmed}");
    for node in [2, 4, 5, 6, 7] {
        home.sim.finish_interview(node).await;
    }
    assert!(
        home.wait_until(|state| state.nodes.values().all(|n| n.ready))
            .await
    );
    let list = home.ok("list_zwave_devices", json!({})).await;
    assert_eq!(list["devices"].as_array().unwrap().len(), 5, "{list}");
    assert_eq!(list["devices"][0]["kind"], "switch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_node_the_gateway_no_longer_has_reloads_the_list() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    // Removed while nobody watched: the real gateway then answers writeValue with
    // success: true and result.status 2.
    home.sim.forget_node(6);
    let message = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "off"}),
        )
        .await;
    assert!(
        message.starts_with("could not switch \"Node 6\": writing false to 6-37-0-targetValue failed with status 2 (Fail)"),
        "{message}"
    );
    assert!(
        home.wait_until(|state| !state.nodes.contains_key(&NodeId(6)))
            .await,
        "the node list was reloaded"
    );
    let list = home
        .ok("list_zwave_devices", json!({"includeInactive": true}))
        .await;
    assert!(
        list["devices"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["nodeId"] != 6),
        "{list}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_device_is_known_by_its_new_name_without_a_restart() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    // The owner renames and moves Switch One; its status now comes on a topic the server did
    // not know, which makes it reload the node list.
    home.sim.rename_node(2, "Coffee Maker", "Pantry").await;
    assert!(
        home.wait_until(|state| state
            .nodes
            .get(&NodeId(2))
            .is_some_and(|n| n.name == "Coffee Maker"))
            .await
    );
    let switched = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Pantry Coffee Maker", "action": "on"}),
        )
        .await;
    assert_eq!(switched["device"], "Coffee Maker");
    assert_eq!(switched["confirmed"], true, "{switched}");
    let gone = home
        .err("get_device_status", json!({"deviceName": "Switch One"}))
        .await;
    assert!(
        gone.starts_with("no Z-Wave device matches \"Switch One\""),
        "{gone}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_status_changes_costs_a_few_reloads_not_one_each() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    let get_nodes = || {
        home.sim
            .received()
            .iter()
            .filter(|r| r.api == "getNodes")
            .count()
    };
    let before = get_nodes();
    const FLAPS: usize = 101;
    for n in 0..FLAPS {
        let status = if n % 2 == 0 { "Asleep" } else { "Alive" };
        home.sim.set_node_status(2, status).await;
    }
    assert!(
        home.wait_until(|state| state.nodes[&NodeId(2)].status == Some(NodeStatus::Asleep))
            .await
    );
    // Waits for the reload under way, if any (one at a time).
    home.network.reload_nodes().await.unwrap();
    let reloads = get_nodes() - before;
    eprintln!("{FLAPS} status changes caused {reloads} getNodes calls");
    assert!(
        reloads < FLAPS / 4,
        "{reloads} reloads for {FLAPS} status changes"
    );
}
