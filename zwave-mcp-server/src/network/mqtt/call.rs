//! One API call over MQTT: refused at once while the broker is down or the gateway offline,
//! published only on a live connection, answered by the reply with our request id or by a
//! timeout that names the gateway and prefix to check.

use rumqttc::QoS;
use serde_json::{Value, value::RawValue};
use tracing::debug;

use super::{
    LinkState, NetworkError, api,
    core::{now_ms, read, write},
    shared::{CLIENT_QUEUE, Shared},
};

/// Calls `api` with `args` and returns its `result` parsed (`Null` when the gateway sent none).
pub(in crate::network) async fn call(
    shared: &Shared,
    api: &'static str,
    args: Vec<Value>,
) -> Result<Value, NetworkError> {
    match call_raw(shared, api, args).await? {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|err| NetworkError::BadReply {
            api,
            reason: err.to_string(),
        }),
        None => Ok(Value::Null),
    }
}

/// [`call`], waiting at most `timeout` for the answer instead of the API timeout: for
/// operations whose answer comes when they end (a health check, a route rebuild).
pub(in crate::network) async fn call_within(
    shared: &Shared,
    api: &'static str,
    args: Vec<Value>,
    timeout: std::time::Duration,
) -> Result<Value, NetworkError> {
    match call_raw_within(shared, api, args, timeout).await? {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|err| NetworkError::BadReply {
            api,
            reason: err.to_string(),
        }),
        None => Ok(Value::Null),
    }
}

/// [`call`], with the result as the gateway sent it (`None` when it sent none).
pub(in crate::network) async fn call_raw(
    shared: &Shared,
    api: &'static str,
    args: Vec<Value>,
) -> Result<Option<Box<RawValue>>, NetworkError> {
    call_raw_within(shared, api, args, shared.settings.api_timeout).await
}

/// [`call_raw`], waiting at most `timeout` for the answer.
async fn call_raw_within(
    shared: &Shared,
    api: &'static str,
    args: Vec<Value>,
    timeout: std::time::Duration,
) -> Result<Option<Box<RawValue>>, NetworkError> {
    let settings = &shared.settings;
    wait_while_connecting(shared).await;
    {
        let state = read(&shared.core.state);
        match &state.link {
            LinkState::Connected => {}
            LinkState::Connecting => {
                return Err(NetworkError::BrokerUnreachable {
                    url: settings.url.to_string(),
                    reason: "not connected yet".into(),
                });
            }
            LinkState::Down { reason } => {
                return Err(NetworkError::BrokerUnreachable {
                    url: settings.url.to_string(),
                    reason: reason.clone(),
                });
            }
        }
        if state.gateway_online == Some(false) {
            return Err(NetworkError::GatewayOffline {
                gateway: settings.gateway_name.clone(),
            });
        }
    }
    let (request_id, reply) = shared.pending.register(api);
    let topic = format!("{}/api/{api}/set", shared.gateway_topic);
    let payload = api::request_payload(&request_id, args);
    debug!(api, %request_id, "api request");
    let driver_reports = {
        let _gate = shared
            .send_gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let state = read(&shared.core.state);
        let driver_reports = state.driver_reports;
        let down = match &state.link {
            LinkState::Connected => None,
            LinkState::Connecting => Some("not connected yet".to_owned()),
            LinkState::Down { reason } => Some(reason.clone()),
        };
        drop(state);
        if let Some(reason) = down {
            shared.pending.forget(&request_id);
            return Err(NetworkError::BrokerUnreachable {
                url: settings.url.to_string(),
                reason,
            });
        }
        // try_publish: a full queue is an error at once, never a wait that could end after
        // the caller gave up. rumqttc says the same for a topic it refuses: tell them apart.
        let refused_topic = topic.contains(['+', '#']).then(|| topic.clone());
        if let Err(err) = shared
            .client
            .try_publish(topic, QoS::AtLeastOnce, false, payload)
        {
            shared.pending.forget(&request_id);
            if let Some(topic) = refused_topic {
                return Err(NetworkError::InvalidTopic { topic });
            }
            debug!(api, error = %err, "the mqtt client's queue is full");
            return Err(NetworkError::Busy {
                api,
                queued: CLIENT_QUEUE,
            });
        }
        driver_reports
    };
    let reply = match tokio::time::timeout(timeout, reply).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(_)) => return Err(NetworkError::ConnectionLost { api }),
        Err(_) => {
            shared.pending.forget(&request_id);
            return Err(NetworkError::Timeout {
                api,
                gateway: settings.gateway_name.clone(),
                prefix: settings.topic_prefix.clone(),
                timeout,
            });
        }
    };
    if reply.success {
        Ok(reply.result)
    } else if reply.message == "Z-Wave client not connected" {
        let mut state = write(&shared.core.state);
        // Unless the driver's own status came after this request was sent: then that is newer.
        if state.driver_reports == driver_reports {
            state.driver_ready = Some(false);
            state.driver_down_since.get_or_insert_with(now_ms);
        }
        drop(state);
        Err(NetworkError::DriverDown { api })
    } else {
        Err(NetworkError::Rejected {
            api,
            message: super::text::clean(&reply.message, super::text::MAX_TEXT_CHARS).into_owned(),
        })
    }
}

/// While the first connection attempt is under way, waits for its outcome (at most the API
/// timeout), so a call made right after start-up is not refused needlessly.
async fn wait_while_connecting(shared: &Shared) {
    let mut changes = shared.core.changes.subscribe();
    let deadline = tokio::time::Instant::now() + shared.settings.api_timeout;
    while read(&shared.core.state).link == LinkState::Connecting {
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            return;
        }
    }
}
