//! The addresses of the resources: `zwave://home` and `zwave://devices/{nodeId}`, parsed, and
//! the one refusal every address that names no resource gets (SEP-2164's shape).

use std::fmt;

use rmcp::ErrorData;

use crate::network::NodeId;

/// The whole home: every device the owner exposes.
pub(crate) const HOME_URI: &str = "zwave://home";

/// One device, by node id.
pub(crate) const DEVICE_TEMPLATE: &str = "zwave://devices/{nodeId}";

/// What a device's address starts with.
const DEVICE_PREFIX: &str = "zwave://devices/";

/// The largest node id Z-Wave has (Z-Wave Long Range goes to 4000).
const MAX_NODE_ID: u16 = 4000;

/// The longest address a refusal echoes back in its `data` (a browser's practical URL limit);
/// a longer one is refused without it, so a refusal never echoes a megabyte.
pub(crate) const MAX_ECHOED_URI_BYTES: usize = 2048;

/// A resource this server may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ResourceUri {
    /// `zwave://home`.
    Home,
    /// `zwave://devices/{nodeId}`.
    Device(NodeId),
}

impl ResourceUri {
    /// The resource `uri` names, when it has our shape; whether it exists is another question.
    pub(crate) fn parse(uri: &str) -> Option<Self> {
        if uri == HOME_URI {
            return Some(Self::Home);
        }
        let id = uri.strip_prefix(DEVICE_PREFIX)?;
        // Digits only: "+3", " 3" and "03" are not the address of node 3.
        if id.is_empty() || id.len() > 4 || id.starts_with('0') {
            return None;
        }
        if !id.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let id: u16 = id.parse().ok()?;
        (id <= MAX_NODE_ID).then_some(Self::Device(NodeId(id)))
    }
}

impl fmt::Display for ResourceUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Home => f.write_str(HOME_URI),
            Self::Device(id) => write!(f, "{DEVICE_PREFIX}{}", id.0),
        }
    }
}

/// The refusal of `uri`, which names no resource this client may see: Invalid params with the
/// address in `data.uri` (SEP-2164, 2026-07-28; the same at every revision). A hidden device
/// gets exactly this, word for word, as an absent one does.
pub(crate) fn not_found(uri: &str) -> ErrorData {
    let data = (uri.len() <= MAX_ECHOED_URI_BYTES).then(|| serde_json::json!({ "uri": uri }));
    let message = if ResourceUri::parse(uri).is_some() {
        "resource not found: no such device (resources/list and resources/templates/list say what there is)".to_owned()
    } else {
        format!(
            "resource not found: this server's resources are {HOME_URI} and {DEVICE_TEMPLATE} (a node id, 1-{MAX_NODE_ID})"
        )
    };
    ErrorData::invalid_params(message, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_shapes_parse_and_print_back() {
        assert_eq!(ResourceUri::parse("zwave://home"), Some(ResourceUri::Home));
        let device = ResourceUri::parse("zwave://devices/12").unwrap();
        assert_eq!(device, ResourceUri::Device(NodeId(12)));
        assert_eq!(device.to_string(), "zwave://devices/12");
        assert_eq!(ResourceUri::Home.to_string(), "zwave://home");
    }

    #[test]
    fn anything_else_is_no_resource() {
        for uri in [
            "zwave://home/",
            "zwave://devices/",
            "zwave://devices/0",
            "zwave://devices/012",
            "zwave://devices/+3",
            "zwave://devices/ 3",
            "zwave://devices/3/",
            "zwave://devices/4001",
            "zwave://devices/99999999999",
            "test://watched-resource",
            "ZWAVE://home",
            "",
        ] {
            assert_eq!(ResourceUri::parse(uri), None, "{uri:?}");
        }
    }

    #[test]
    fn a_refusal_names_the_uri_and_what_is_valid() {
        let refused = not_found("file:///etc/passwd");
        assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"uri": "file:///etc/passwd"}))
        );
        assert!(
            refused.message.contains("zwave://home"),
            "{}",
            refused.message
        );
        assert!(
            refused.message.contains("zwave://devices/{nodeId}"),
            "{}",
            refused.message
        );
        let absent = not_found("zwave://devices/77");
        assert!(
            absent.message.contains("no such device"),
            "{}",
            absent.message
        );
    }

    #[test]
    fn a_huge_uri_is_refused_without_being_echoed() {
        let huge = format!("zwave://{}", "x".repeat(1 << 20));
        let refused = not_found(&huge);
        assert_eq!(refused.data, None);
        assert!(refused.message.len() < 200);
    }
}
