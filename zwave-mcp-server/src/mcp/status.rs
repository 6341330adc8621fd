//! What `get_device_status` says of a device, in facts and in words: shared by the tool and
//! by the device resource.

use super::types::DeviceStatus;
use crate::{
    devices::{self, DeviceKind},
    network::{NodeInfo, now_ms},
};

/// What `get_device_status` says of `node`: its status (not yet marked stale) and the text.
/// What `get_device_status` says of `node`; `stale`: a link to the devices is down, so its
/// status is only the last known one.
pub(super) fn device_status(node: &NodeInfo, stale: bool) -> (DeviceStatus, String) {
    let kind = DeviceKind::of(node);
    let last_active_age_seconds = node
        .last_active
        .map(|at| u64::try_from(now_ms().saturating_sub(at)).unwrap_or(0) / 1000);
    let status = DeviceStatus {
        device: devices::display_name(node),
        node_id: node.id.0,
        location: node.loc.clone(),
        kind,
        online: devices::is_online(node),
        node_status: devices::status_word(node).to_owned(),
        on: devices::is_on(node),
        level: (kind == DeviceKind::Dimmer)
            .then(|| devices::level(node).map(devices::percent_of_99))
            .flatten(),
        battery: devices::battery(node),
        last_active_ms: node.last_active,
        last_active_age_seconds,
        summary: devices::summary(node),
        last_command: None,
        stale: None,
    };
    let reachable = match (status.online, stale) {
        (true, false) => format!("online (node status {})", status.node_status),
        (false, false) => format!("offline (node status {})", status.node_status),
        (true, true) => format!("last known online (node status {})", status.node_status),
        (false, true) => format!("last known offline (node status {})", status.node_status),
    };
    let mut text = if !node.ready && kind == DeviceKind::Other {
        format!(
            "{} is still being interviewed by Z-Wave JS (it restarted or the device was just added): what it is and its state are not known yet; {reachable}.",
            devices::describe(node)
        )
    } else {
        format!(
            "{} is {}, {reachable}: {}.",
            devices::describe(node),
            kind.with_article(),
            status.summary
        )
    };
    if let Some(age) = last_active_age_seconds {
        text.push_str(&format!(" Last heard from {}.", devices::ago(age)));
    }
    (status, text)
}
