//! What can go wrong between this server and the home, over either backend, with the knob to
//! turn for each.

use std::time::Duration;

/// An error of the network layer. Messages are shown to the model and the user as they are.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum NetworkError {
    /// The MQTT broker cannot be reached (yet); the connection is retried in the background.
    #[error(
        "cannot reach the mqtt broker at {url}: {reason} (is the broker running? check --mqtt-url; retrying in the background)"
    )]
    BrokerUnreachable {
        /// The broker URL.
        url: String,
        /// The last connection error.
        reason: String,
    },
    /// Z-Wave JS UI's gateway status topic says it is offline (its last will was published).
    #[error(
        "zwave-js-ui gateway `{gateway}` is offline (its mqtt status topic says so): start Z-Wave JS UI, or check --gateway-name"
    )]
    GatewayOffline {
        /// The gateway name.
        gateway: String,
    },
    /// Z-Wave JS UI runs but its Z-Wave driver is not connected to the controller.
    #[error(
        "zwave-js-ui answered `{api}` with \"Z-Wave client not connected\": its Z-Wave driver is down; check the Z-Wave controller in Z-Wave JS UI"
    )]
    DriverDown {
        /// The API that was refused.
        api: &'static str,
    },
    /// No reply within the API timeout. The request was sent: a write may still arrive and
    /// take effect, and its message says so.
    #[error(
        "zwave-js-ui did not answer `{api}` within {timeout:?}{}: is gateway `{gateway}` running with its MQTT gateway enabled, and do --topic-prefix `{prefix}` and --gateway-name match its settings? (see --api-timeout)",
        may_still_arrive(api)
    )]
    Timeout {
        /// The API called.
        api: &'static str,
        /// The gateway name.
        gateway: String,
        /// The topic prefix.
        prefix: String,
        /// The timeout that passed.
        timeout: Duration,
    },
    /// The MQTT connection dropped while a request waited for its reply. The request is
    /// never sent again after the connection comes back (no late commands).
    #[error(
        "lost the mqtt connection while waiting for `{api}`: it may have reached zwave-js-ui before the connection dropped, but it will not be sent again; reconnecting in the background (check the device's state before trying again)"
    )]
    ConnectionLost {
        /// The API that was waiting.
        api: &'static str,
    },
    /// The MQTT client's queue is full; the request was not sent.
    #[error(
        "`{api}` was not sent: {queued} requests are already waiting for the mqtt connection; try again in a moment"
    )]
    Busy {
        /// The API refused.
        api: &'static str,
        /// The queue's size.
        queued: usize,
    },
    /// The topic of an API request cannot be published to (it holds an MQTT wildcard).
    #[error(
        "cannot publish to `{topic}`: an MQTT topic must not hold + or #; check --topic-prefix and --gateway-name"
    )]
    InvalidTopic {
        /// The topic.
        topic: String,
    },
    /// Z-Wave JS UI refused the call.
    #[error("zwave-js-ui rejected `{api}`: {message}")]
    Rejected {
        /// The API called.
        api: &'static str,
        /// Z-Wave JS UI's message.
        message: String,
    },
    /// `writeValue` ran but the device did not accept the value.
    #[error("writing {value} to {value_id} failed with status {status} ({status_name}){}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    WriteFailed {
        /// The value written.
        value: String,
        /// Where it was written (`<node>-<cc>-<endpoint>-<property>`).
        value_id: String,
        /// The `result.status` code.
        status: i64,
        /// The status' name.
        status_name: &'static str,
        /// Z-Wave JS UI's message, when it gave one.
        detail: Option<String>,
    },
    /// A command to zwave-js-server got no result, or a failure (the WebSocket backend).
    #[error(transparent)]
    ZwaveJsServer(#[from] crate::network::zwave_js_server::ZwaveJsServerError),
    /// The node a command was for is named or placed otherwise in Z-Wave JS than when the
    /// command's device was looked up (another client renamed it, or the owner did while a
    /// person was asked to confirm): the name may now mean another device, so nothing was sent.
    #[error(
        "nothing was sent: node {node} is now {now} in Z-Wave JS, not {was} as it was when the command's device was looked up (it was renamed since); find the device by its current name and ask again"
    )]
    Renamed {
        /// The node.
        node: super::NodeId,
        /// Its name and location as this server knew them.
        was: String,
        /// Its name and location now.
        now: String,
    },
    /// Before a write over zwave-js-server, asking for the node's name (the check that it is
    /// still the device the command's name was looked up as) failed or got no answer: the
    /// write was not sent.
    #[error(
        "nothing was sent: before writing, this server checks that node {node} still has the name it was found by, and that check failed: {reason}"
    )]
    NotChecked {
        /// The node.
        node: super::NodeId,
        /// Why the check failed.
        reason: Box<NetworkError>,
    },
    /// The call exists only on the other backend.
    #[error("`{api}` is Z-Wave JS UI's MQTT API; this server is connected to zwave-js-server")]
    NotOnThisBackend {
        /// The API called.
        api: &'static str,
    },
    /// The reply could not be understood.
    #[error("zwave-js-ui answered `{api}` with something unexpected: {reason}")]
    BadReply {
        /// The API called.
        api: &'static str,
        /// What was wrong with it.
        reason: String,
    },
}

/// What a caller of an API that changes something must know when its answer did not come.
fn may_still_arrive(api: &str) -> &'static str {
    if api == "writeValue" {
        " (the command was sent and may still take effect: check the device's state before trying again)"
    } else {
        ""
    }
}

impl NetworkError {
    /// Whether the request was sent and its answer never came: it may have been carried out.
    pub fn may_have_arrived(&self) -> bool {
        match self {
            Self::Timeout { .. } | Self::ConnectionLost { .. } => true,
            Self::ZwaveJsServer(err) => err.may_have_run(),
            _ => false,
        }
    }

    /// Whether nothing was sent because the request it was for was cancelled first.
    pub fn was_cancelled(&self) -> bool {
        matches!(
            self,
            Self::ZwaveJsServer(crate::network::zwave_js_server::ZwaveJsServerError::Cancelled(_))
        )
    }

    /// Whether trying the same call again later may succeed without anyone changing anything.
    pub fn is_retryable(&self) -> bool {
        if let Self::NotChecked { reason, .. } = self {
            return reason.is_retryable();
        }
        matches!(
            self,
            Self::BrokerUnreachable { .. }
                | Self::Timeout { .. }
                | Self::ConnectionLost { .. }
                | Self::Busy { .. }
                | Self::DriverDown { .. }
                | Self::ZwaveJsServer(
                    crate::network::zwave_js_server::ZwaveJsServerError::Down { .. }
                        | crate::network::zwave_js_server::ZwaveJsServerError::Busy { .. }
                        | crate::network::zwave_js_server::ZwaveJsServerError::Lost(_)
                        | crate::network::zwave_js_server::ZwaveJsServerError::Timeout { .. }
                )
        )
    }
}

/// Names of a write's result statuses (zwave-js `SetValueStatus`, as both `writeValue` and
/// `node.set_value` answer them).
pub fn write_status_name(status: i64) -> &'static str {
    match status {
        0 => "NoDeviceSupport",
        1 => "Working",
        2 => "Fail",
        3 => "EndpointNotFound",
        4 => "NotImplemented",
        5 => "InvalidValue",
        254 => "SuccessUnsupervised",
        255 => "Success",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_and_a_lost_connection_say_what_happened_to_the_request() {
        let busy = NetworkError::Busy {
            api: "writeValue",
            queued: 64,
        };
        assert_eq!(
            busy.to_string(),
            "`writeValue` was not sent: 64 requests are already waiting for the mqtt connection; try again in a moment"
        );
        assert!(busy.is_retryable());
        let topic = NetworkError::InvalidTopic {
            topic: "#/_CLIENTS/ZWAVE_GATEWAY-zwave-js-ui/api/getNodes/set".into(),
        };
        assert_eq!(
            topic.to_string(),
            "cannot publish to `#/_CLIENTS/ZWAVE_GATEWAY-zwave-js-ui/api/getNodes/set`: an MQTT topic must not hold + or #; check --topic-prefix and --gateway-name"
        );
        assert!(!topic.is_retryable());
        assert_eq!(
            NetworkError::Timeout {
                api: "writeValue",
                gateway: "zwave-js-ui".into(),
                prefix: "zwave".into(),
                timeout: Duration::from_secs(3),
            }
            .to_string(),
            "zwave-js-ui did not answer `writeValue` within 3s (the command was sent and may still take effect: check the device's state before trying again): is gateway `zwave-js-ui` running with its MQTT gateway enabled, and do --topic-prefix `zwave` and --gateway-name match its settings? (see --api-timeout)"
        );
        assert_eq!(
            NetworkError::ConnectionLost { api: "writeValue" }.to_string(),
            "lost the mqtt connection while waiting for `writeValue`: it may have reached zwave-js-ui before the connection dropped, but it will not be sent again; reconnecting in the background (check the device's state before trying again)"
        );
    }

    #[test]
    fn a_write_whose_name_check_got_no_answer_says_nothing_was_sent() {
        use crate::network::{NodeId, zwave_js_server::ZwaveJsServerError};
        let unchecked = NetworkError::NotChecked {
            node: NodeId(8),
            reason: Box::new(NetworkError::ZwaveJsServer(ZwaveJsServerError::Timeout {
                command: "node.get_state".into(),
                after: Duration::from_secs(5),
            })),
        };
        assert_eq!(
            unchecked.to_string(),
            "nothing was sent: before writing, this server checks that node 8 still has the name it was found by, and that check failed: zwave-js-server did not answer `node.get_state` within 5s"
        );
        assert!(!unchecked.may_have_arrived());
        assert!(unchecked.is_retryable());
    }
}
