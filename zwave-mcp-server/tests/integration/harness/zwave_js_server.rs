//! The real zwave-js-server (from npm, on zwave-js's mock controller): connecting a client of
//! our own to it, another client that names nodes, and waiting on a client's cache.

use std::time::Duration;

use serde_json::Value;
use test_support::zwave_js::ZwaveJsServer;
use zwave_mcp_server::network::{
    Backoff, NodeId,
    zwave_js_server::{Link, Target, ZwaveJsServerClient},
};

/// Reconnection backoff short enough for tests.
const QUICK: Backoff = Backoff::exponential(Duration::from_millis(50), Duration::from_millis(500));

/// A client of `server`, once it listens (at most 60 s).
pub async fn listening(server: &ZwaveJsServer) -> ZwaveJsServerClient {
    let client = ZwaveJsServerClient::connect(Target::new(&server.url, None).unwrap(), QUICK);
    let mut link = client.link();
    tokio::time::timeout(
        Duration::from_secs(60),
        link.wait_for(|link| matches!(link, Link::Listening { .. })),
    )
    .await
    .unwrap_or_else(|_| panic!("never listening:\n{}", server.logs()))
    .unwrap();
    client
}

/// Another client of the same server (a Home Assistant, a Z-Wave JS UI), which names nodes:
/// returned once every node of the mock network is interviewed.
pub async fn other_client(server: &ZwaveJsServer) -> ZwaveJsServerClient {
    let client = listening(server).await;
    // Until every node is interviewed, a name set now may be replaced by its `ready` state.
    cache_until(&client, Duration::from_secs(120), server, |client| {
        client.with_nodes(|nodes| nodes.len() == 15 && nodes.values().all(|node| node.ready))
    })
    .await;
    client
}

/// The value `key` of `node` in `client`'s cache.
pub fn cached_value(client: &ZwaveJsServerClient, node: u16, key: &str) -> Option<Value> {
    client.with_nodes(|nodes| {
        nodes
            .get(&NodeId(node))
            .and_then(|node| node.values.get(key))
            .and_then(|value| value.value.clone())
    })
}

/// Waits until `check` holds of `client`'s cache (looked at after each change), at most
/// `limit`; past it, fails with what the cache holds and the server's logs.
pub async fn cache_until(
    client: &ZwaveJsServerClient,
    limit: Duration,
    server: &ZwaveJsServer,
    check: impl Fn(&ZwaveJsServerClient) -> bool,
) {
    let mut changes = client.changes();
    let waited = tokio::time::timeout(limit, async {
        while !check(client) {
            changes
                .changed()
                .await
                .expect("the client stopped before its cache showed it");
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "not within {limit:?}; nodes (id, ready, status, values): {:?}\n{}",
        client.with_nodes(|nodes| nodes
            .values()
            .map(|node| (
                node.id.0,
                node.ready,
                node.status.clone(),
                node.values.len()
            ))
            .collect::<Vec<_>>()),
        server.logs()
    );
}
