//! A storm of reports (the simulated gateway publishing 5,000 value reports a second) with 100
//! subscriptions: updates coalesced (at most one per resource per 250 ms), memory bounded,
//! tool calls answered meanwhile.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use serde_json::json;
use zwave_mcp_server::{network::now_ms, sim::home::sized_home};

use crate::harness::{Conversation, GatewayHome};

/// The coalescing interval the server keeps.
const COALESCE: Duration = Duration::from_millis(250);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_with_a_hundred_subscriptions_is_coalesced_and_tools_still_answer() {
    let home = GatewayHome::with_nodes(sized_home(102, now_ms())).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    for id in 2..=101 {
        let uri = format!("zwave://devices/{id}");
        let subscribed = session.request("resources/subscribe", json!({ "uri": uri }));
        assert_eq!(subscribed["result"], json!({}), "{uri}: {subscribed}");
    }
    let rss_before = test_support::child::peak_rss_kib(session.pid());

    let storm = home.sim.storm(5_000).unwrap();
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut calls = 0;
    // Two seconds' worth of reports, with a tool call after another meanwhile.
    while storm.published() < 10_000 {
        let asked = Instant::now();
        let (error, text, _) = session.call("list_zwave_devices", json!({}));
        slowest = slowest.max(asked.elapsed());
        calls += 1;
        assert!(!error, "{text}");
    }
    let published = storm.published();
    drop(storm);
    let took = started.elapsed();
    // Whatever the storm caused has been told by the answer to one more request after the
    // last round that could see it.
    let _ = session.request("resources/list", json!({}));
    let updates = session.take_notifications("notifications/resources/updated");

    let mut per_resource: HashMap<String, usize> = HashMap::new();
    for update in &updates {
        *per_resource
            .entry(update["params"]["uri"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    // One round a coalescing interval, plus the first and the one in flight at the end.
    let most = usize::try_from(took.as_millis() / COALESCE.as_millis()).unwrap() + 2;
    let busiest = per_resource.values().copied().max().unwrap_or(0);
    assert!(
        busiest <= most,
        "a resource got {busiest} updates in {took:?} ({most} at most): {per_resource:?}"
    );
    assert!(
        per_resource.len() >= 30,
        "the storm changes the readings of most of the devices: {per_resource:?}"
    );
    assert!(
        updates.len() < usize::try_from(published).unwrap() / 5,
        "{} updates for {published} reports",
        updates.len()
    );
    assert!(calls >= 5, "only {calls} tool calls answered in {took:?}");
    assert!(
        slowest < Duration::from_secs(2),
        "a tool call took {slowest:?} during the storm"
    );
    let rss_after = test_support::child::peak_rss_kib(session.pid());
    assert!(
        rss_after < rss_before + 32 * 1024,
        "peak memory grew from {rss_before} KiB to {rss_after} KiB in the storm"
    );
    eprintln!(
        "storm: {published} reports in {took:?}, {} updates over {} resources (busiest {busiest}), {calls} tool calls (slowest {slowest:?}), peak RSS {rss_before} -> {rss_after} KiB",
        updates.len(),
        per_resource.len()
    );
}
