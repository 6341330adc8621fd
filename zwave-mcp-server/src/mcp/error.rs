//! [`ToolError`]: every way a tool call can fail, typed until the edge, where it becomes an
//! `isError` result whose text names the device and what would be valid.

use rmcp::model::{CallToolResult, ContentBlock, ErrorData};

use crate::{
    devices::{ActionError, ResolveError},
    network::NetworkError,
};

/// Why a tool call did not do what was asked. The text (`Display`) is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    /// The backend (the broker, Z-Wave JS UI, zwave-js-server) or the driver could not answer (or refused).
    #[error(transparent)]
    Network(#[from] NetworkError),
    /// The device name matches no device, or several.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// The device exists, but the owner keeps it from this agent for switching.
    #[error(
        "\"{query}\" is not exposed to this agent for switching: the owner of this server chose which devices it may control"
    )]
    NotExposed {
        /// The name as the agent gave it, trimmed.
        query: String,
    },
    /// The action does not fit the device or its state.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The write failed, or was sent and never answered (it may then still take effect).
    #[error("{} \"{device}\": {source}", if source.may_have_arrived() { "no answer to the command for" } else { "could not switch" })]
    Write {
        /// The device's name.
        device: String,
        /// What the backend said.
        source: NetworkError,
    },
    /// A sensitive action the owner did not allow, or a person did not confirm.
    #[error("{0}")]
    Sensitive(String),
    /// A request the protocol itself refuses (from 2026-07-28: a request state that does not
    /// verify, a capability the client did not declare): a JSON-RPC error, not a tool result.
    #[error("{}", .0.message)]
    Protocol(ErrorData),
    /// A refresh was asked of a device that cannot answer.
    #[error(
        "{device} is offline (status {status}): its values cannot be refreshed; call again without refresh for the last known readings"
    )]
    OfflineRefresh {
        /// The device, described.
        device: String,
        /// Its node status.
        status: String,
    },
    /// A ping was asked of the whole network.
    #[error(
        "ping needs deviceName: name the one device to ping (the whole network's health is read without pinging every device)"
    )]
    PingWithoutDevice,
    /// A ping was asked of a sleeping battery device.
    #[error(
        "{device} is asleep (a battery device): it answers only when it wakes up, so a ping would wait until then; nothing was sent. Ask without ping for when it was last heard from"
    )]
    PingAsleep {
        /// The device, described.
        device: String,
    },
    /// An upkeep operation refused, failed, or not ended in time: its words, whole.
    #[error("{0}")]
    Upkeep(String),
    /// The ping could not be carried out (the link, the gateway or server said no).
    #[error("could not ping {device}: {source}")]
    Ping {
        /// The device, described.
        device: String,
        /// What the backend said.
        source: NetworkError,
    },
    /// The client cancelled the request before anything was written (the client never
    /// sees this: rmcp drops a cancelled request's answer).
    #[error("the client cancelled the request: nothing was written")]
    Cancelled,
    /// The result could not be encoded as JSON (a bug of this server).
    #[error("internal error while encoding the result: {0}")]
    Encode(String),
}

impl From<ToolError> for CallToolResult {
    fn from(error: ToolError) -> Self {
        Self::error(vec![ContentBlock::text(error.to_string())])
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn text(error: ToolError) -> String {
        let result = CallToolResult::from(error);
        assert_eq!(result.is_error, Some(true));
        result.content[0].as_text().unwrap().text.clone()
    }

    #[test]
    fn errors_become_is_error_results_in_the_models_words() {
        assert_eq!(
            text(ToolError::NotExposed {
                query: "Front Door".into()
            }),
            "\"Front Door\" is not exposed to this agent for switching: the owner of this server chose which devices it may control"
        );
        assert_eq!(
            text(ToolError::Write {
                device: "Switch One".into(),
                source: NetworkError::ConnectionLost { api: "writeValue" },
            }),
            format!(
                "no answer to the command for \"Switch One\": {}",
                NetworkError::ConnectionLost { api: "writeValue" }
            )
        );
        assert_eq!(
            text(ToolError::Write {
                device: "Switch One".into(),
                source: NetworkError::Busy {
                    api: "writeValue",
                    queued: 64
                },
            }),
            format!(
                "could not switch \"Switch One\": {}",
                NetworkError::Busy {
                    api: "writeValue",
                    queued: 64
                }
            )
        );
        assert_eq!(
            text(ToolError::OfflineRefresh {
                device: "\"Sensor\" (node 4)".into(),
                status: "Dead".into()
            }),
            "\"Sensor\" (node 4) is offline (status Dead): its values cannot be refreshed; call again without refresh for the last known readings"
        );
        let timeout = NetworkError::Timeout {
            api: "getNodes",
            gateway: "zwave-js-ui".into(),
            prefix: "zwave".into(),
            timeout: Duration::from_secs(5),
        };
        assert_eq!(text(ToolError::from(timeout.clone())), timeout.to_string());
        assert_eq!(
            text(ToolError::Cancelled),
            "the client cancelled the request: nothing was written"
        );
        assert_eq!(
            text(ToolError::Encode("key must be a string".into())),
            "internal error while encoding the result: key must be a string"
        );
    }
}
