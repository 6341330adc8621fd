//! The MCP tool surface: four Z-Wave tools on an rmcp `ServerHandler`.
//!
//! An unknown tool is a JSON-RPC error (rmcp). Arguments that do not deserialize come back as
//! an `isError` result from rmcp naming the valid values (MCP 2025-11-25 treats input
//! validation as a tool error the model can correct).
//! Everything the home or the gateway says (no such device, offline, level out of range,
//! broker down, write refused) is an `isError` result whose text names the device and what
//! would be valid, so the model can correct itself. Successful results carry readable text in
//! `content` and the same facts as `structuredContent`, described by each tool's output schema.
//!
//! | module | owns |
//! |---|---|
//! | `tools` | the four tools, device lookup with the owner's exposure rules applied |
//! | `types` | what the tools take and give: arguments and structured results, with schemas |
//! | `error` | `ToolError`: why a call failed, typed until it becomes an `isError` result |
//! | `cache` | list rows and the name directory, cached by node and list revision |
//! | `stale` | saying when read results come from the cache while a link is down |
//! | `bounded` | the transport wrapper that bounds requests in flight |
//! | `transport` | newline-delimited JSON-RPC on stdio, with `tools/call` typed directly |

pub(crate) mod bounded;
mod cache;
mod error;
mod stale;
mod tools;
pub(crate) mod transport;
mod types;

use std::{sync::Arc, time::Duration};

use rmcp::{
    ServerHandler,
    handler::server::router::tool::ToolRouter,
    model::{Implementation, ServerCapabilities, ServerConfig},
    tool_handler,
};

use crate::{devices::Exposure, gateway::Gateway};

/// The MCP server: tools over one gateway connection.
#[derive(Clone)]
pub struct ZwaveServer {
    gateway: Gateway,
    confirm_timeout: Duration,
    /// What the agent may see and switch.
    exposure: Arc<Exposure>,
    /// Device rows of `list_zwave_devices`, rebuilt only for devices that changed.
    rows: Arc<cache::RowCache>,
    /// Names of the devices the agent may see, normalized once per loaded node list.
    names: Arc<cache::DirectoryCache>,
    tool_router: ToolRouter<Self>,
}

impl ZwaveServer {
    /// A server whose tools act through `gateway`; switching waits up to `confirm_timeout`
    /// for the device to report its new state.
    pub fn new(gateway: Gateway, confirm_timeout: Duration) -> Self {
        Self {
            gateway,
            confirm_timeout,
            exposure: Arc::default(),
            rows: Arc::default(),
            names: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// Limits what the agent may see and switch; read-only takes the control tool away, so
    /// `tools/list` does not even offer it.
    pub fn with_exposure(mut self, exposure: Exposure) -> Self {
        if exposure.read_only {
            self.tool_router.remove_route("control_zwave_device");
        }
        self.exposure = Arc::new(exposure);
        self
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ZwaveServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("zwave-mcp-server", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Controls a Z-Wave home through Z-Wave JS UI. Call list_zwave_devices first to learn \
                 the device names; then control_zwave_device switches or dims a device, \
                 get_device_status tells whether it is on and reachable, and \
                 get_device_sensor_data returns its readings (temperature, humidity, motion, \
                 power, battery). Device names are matched exactly, then by location + name, then \
                 `Node <id>`, then by whole words; switching needs one of those, reads also \
                 accept a unique part of a name. An ambiguous name is refused with the candidates.",
            )
    }
}
