//! Z-Wave JS UI's MQTT API envelope: requests, replies and their correlation.
//!
//! The API has no request id. Replies come on the request topic minus `/set` and echo the
//! whole request object as `origin`, and they can arrive out of order (two concurrent
//! `writeValue` replies were seen swapped), so each request carries our own `requestId` field
//! and replies are matched on `origin.requestId` and on the API they answer.
//!
//! Every client of the home sees every reply: several servers on one home are normal (two
//! hosts, or a restarted server whose predecessor's replies are still in flight). So ids carry
//! a random prefix drawn per [`PendingRequests`] (per process), and a reply on another API's
//! topic never completes a request, even with a matching id.

use std::{
    collections::HashMap,
    fmt,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

/// Correlation id of one API request: `zwave-mcp-<random prefix>-<n>`, unique across
/// processes and restarts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub String);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The payload published to `.../api/<api>/set`: `{"requestId": <id>, "args": [...]}`. Z-Wave
/// JS UI ignores `requestId` and echoes the whole object back in the reply's `origin`.
pub fn request_payload(request_id: &RequestId, args: Vec<Value>) -> Vec<u8> {
    serde_json::json!({ "requestId": request_id.0, "args": args })
        .to_string()
        .into_bytes()
}

/// The payload Z-Wave JS UI publishes on `.../api/<api>`.
#[derive(Debug, Clone, Deserialize)]
pub struct ApiReply {
    /// Whether the call ran (a `writeValue` can succeed here and still fail: see `status`).
    pub success: bool,
    /// "Success zwave api call", "Unknown API", "Z-Wave client not connected", ...
    #[serde(default)]
    pub message: String,
    /// The API's result, absent for some APIs; kept as text until its caller parses it (a full
    /// network's `getNodes` is megabytes: parsed straight into nodes, never into a `Value`).
    #[serde(default)]
    pub result: Option<Box<serde_json::value::RawValue>>,
    /// The request object as received.
    #[serde(default)]
    pub origin: Option<Value>,
}

impl ApiReply {
    /// The correlation id echoed in `origin.requestId`, if the request carried one.
    pub fn request_id(&self) -> Option<RequestId> {
        let id = self.origin.as_ref()?.get("requestId")?.as_str()?;
        Some(RequestId(id.to_owned()))
    }
}

/// Requests awaiting a reply, keyed by correlation id.
/// Invariant: an entry is removed on reply, on timeout (by the caller), or when the
/// connection is lost (`fail_all`); nothing else holds its `oneshot::Sender`.
#[derive(Debug)]
pub struct PendingRequests {
    /// Random, drawn once: what makes our ids differ from every other client's.
    prefix: String,
    next: AtomicU64,
    waiting: Mutex<HashMap<RequestId, Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    api: &'static str,
    reply: oneshot::Sender<ApiReply>,
}

impl Default for PendingRequests {
    fn default() -> Self {
        use std::hash::{BuildHasher as _, Hasher as _};
        // RandomState is seeded from the OS per process (and varies per instance).
        let random = std::hash::RandomState::new().build_hasher().finish();
        Self {
            prefix: format!("zwave-mcp-{random:016x}"),
            next: AtomicU64::new(0),
            waiting: Mutex::default(),
        }
    }
}

impl PendingRequests {
    /// Registers a new request to `api` and returns its id and the receiver of its reply.
    pub fn register(&self, api: &'static str) -> (RequestId, oneshot::Receiver<ApiReply>) {
        let id = RequestId(format!(
            "{}-{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed) + 1
        ));
        let (reply, receiver) = oneshot::channel();
        self.lock().insert(id.clone(), Waiting { api, reply });
        (id, receiver)
    }

    /// Hands a reply that came on `api`'s reply topic to its waiting request; returns false
    /// when nobody waits for it (a reply to another client, to a request that already timed
    /// out, or on another API's topic).
    pub fn complete(&self, api: &str, reply: ApiReply) -> bool {
        let Some(id) = reply.request_id() else {
            return false;
        };
        let mut waiting = self.lock();
        match waiting.get(&id) {
            Some(request) if request.api == api => {}
            _ => return false,
        }
        match waiting.remove(&id) {
            Some(request) => request.reply.send(reply).is_ok(),
            None => false,
        }
    }

    /// Forgets a request (after its timeout).
    pub fn forget(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    /// Drops every waiting request: their receivers see the connection as lost.
    pub fn fail_all(&self) {
        self.lock().clear();
    }

    /// Number of requests waiting.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no request is waiting.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Waiting>> {
        // A panic while holding this lock cannot leave the map inconsistent (single insert or
        // remove), so a poisoned lock is still usable.
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str) -> ApiReply {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_request_carries_our_id_and_the_positional_args() {
        let payload = request_payload(
            &RequestId("zwave-mcp-x-7".into()),
            vec![serde_json::json!({"nodeId": 5}), serde_json::json!(true)],
        );
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            r#"{"args":[{"nodeId":5},true],"requestId":"zwave-mcp-x-7"}"#
        );
    }

    #[test]
    fn replies_out_of_order_reach_their_own_requests() {
        let pending = PendingRequests::default();
        let (first, mut first_rx) = pending.register("writeValue");
        let (second, mut second_rx) = pending.register("writeValue");
        let second_reply = format!(
            r#"{{"success":true,"message":"ok","result":{{"status":254}},"origin":{{"requestId":"{second}","args":[]}}}}"#
        );
        let first_reply = format!(
            r#"{{"success":false,"message":"Args must be an array","origin":{{"requestId":"{first}","args":{{}}}}}}"#
        );
        assert!(pending.complete("writeValue", reply(&second_reply)));
        assert!(pending.complete("writeValue", reply(&first_reply)));
        assert!(second_rx.try_recv().unwrap().success);
        assert_eq!(
            first_rx.try_recv().unwrap().message,
            "Args must be an array"
        );
        assert!(pending.is_empty());
    }

    #[test]
    fn replies_without_our_id_are_ignored() {
        let pending = PendingRequests::default();
        let (_id, _rx) = pending.register("getNodes");
        assert!(!pending.complete(
            "getNodes",
            reply(r#"{"success":true,"origin":{"args":[]}}"#)
        ));
        assert!(!pending.complete(
            "getNodes",
            reply(r#"{"success":true,"origin":{"requestId":"other","args":[]}}"#)
        ));
        assert_eq!(pending.len(), 1);
    }

    #[test]
    fn ids_differ_between_processes_and_replies_must_come_on_their_apis_topic() {
        let (ours, theirs) = (PendingRequests::default(), PendingRequests::default());
        let (mine, mut mine_rx) = ours.register("writeValue");
        let (other, _) = theirs.register("writeValue");
        assert_ne!(mine, other, "two processes' first requests share an id");
        assert!(
            mine.0.starts_with("zwave-mcp-") && mine.0.ends_with("-1"),
            "{mine}"
        );
        let answer = format!(
            r#"{{"success":true,"result":{{"status":255}},"origin":{{"requestId":"{mine}","args":[]}}}}"#
        );
        // The same id on the pollValue reply topic is not our writeValue's reply.
        assert!(!ours.complete("pollValue", reply(&answer)));
        assert!(!theirs.complete("writeValue", reply(&answer)));
        assert!(ours.complete("writeValue", reply(&answer)));
        assert_eq!(
            mine_rx.try_recv().unwrap().result.unwrap().get(),
            r#"{"status":255}"#
        );
    }

    #[test]
    fn captured_replies_parse() {
        let text = r#"{"success":true,"message":"Success zwave api call","result":{"status":254},"args":[{"nodeId":2,"commandClass":37,"endpoint":0,"property":"targetValue"},true],"origin":{"args":[{"nodeId":2,"commandClass":37,"endpoint":0,"property":"targetValue"},true]}}"#;
        let parsed = reply(text);
        let result: Value = serde_json::from_str(parsed.result.unwrap().get()).unwrap();
        assert_eq!(result["status"], 254);
        assert_eq!(crate::network::write_status_name(4), "NotImplemented");
    }
}
