//! The backend flags: where the home is (Z-Wave JS UI's MQTT gateway on a broker, or
//! zwave-js-server's WebSocket API) and how to reach it. What they become, the connection
//! settings, is `settings`' work; this file only declares them.

use std::path::PathBuf;

use crate::network::{MqttUrl, ZwaveJsUrl};

use super::parse::{gateway_name, topic_prefix};

/// Environment variable holding the MQTT password.
pub const PASSWORD_ENV: &str = "ZWAVE_MCP_MQTT_PASSWORD";

/// Where the home is, and how to reach it.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Backend")]
pub struct BackendFlags {
    /// MQTT broker that Z-Wave JS UI publishes to: mqtt://host:port (mqtts:// for TLS).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_MQTT_URL",
        default_value = "mqtt://127.0.0.1:1883"
    )]
    pub mqtt_url: MqttUrl,

    /// zwave-js-server's WebSocket API instead of the MQTT gateway: ws://host:3000 (wss:// for
    /// TLS). Home Assistant's Z-Wave JS add-on serves it on port 3000; in Z-Wave JS UI it is
    /// Settings → Home Assistant → WS Server.
    #[arg(
        long,
        env = "ZWAVE_MCP_ZWAVE_JS_URL",
        value_name = "URL",
        conflicts_with_all = ["mqtt_url", "mqtt_username", "mqtt_password_file", "mqtt_ca_file", "mqtt_client_id", "demo"]
    )]
    pub zwave_js_url: Option<ZwaveJsUrl>,

    /// CA certificate (PEM) that signed zwave-js-server's certificate, for wss:// URLs
    /// (default: the system's trusted roots).
    #[arg(long, env = "ZWAVE_MCP_ZWAVE_JS_CA_FILE", requires = "zwave_js_url")]
    pub zwave_js_ca_file: Option<PathBuf>,

    /// MQTT user name, when the broker requires authentication.
    #[arg(long, global = true, env = "ZWAVE_MCP_MQTT_USERNAME")]
    pub mqtt_username: Option<String>,

    /// File whose first line is the MQTT password (read at start-up). The password can also come
    /// from ZWAVE_MCP_MQTT_PASSWORD; it is never a flag (flags show in `ps`) and never logged.
    #[arg(long, env = "ZWAVE_MCP_MQTT_PASSWORD_FILE")]
    pub mqtt_password_file: Option<PathBuf>,

    /// CA certificate (PEM) that signed the broker's certificate, for mqtts:// URLs
    /// (default: the system's trusted roots).
    #[arg(long, env = "ZWAVE_MCP_MQTT_CA_FILE")]
    pub mqtt_ca_file: Option<PathBuf>,

    /// MQTT client id of this server; must differ from the gateway's `ZWAVE_GATEWAY-<name>`.
    #[arg(long, env = "ZWAVE_MCP_MQTT_CLIENT_ID")]
    pub mqtt_client_id: Option<String>,

    /// Topic prefix set in Z-Wave JS UI (Settings → MQTT → Prefix).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_TOPIC_PREFIX",
        default_value = "zwave",
        value_parser = topic_prefix
    )]
    pub topic_prefix: String,

    /// Gateway name set in Z-Wave JS UI (Settings → MQTT → Name).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_GATEWAY_NAME",
        default_value = "zwave-js-ui",
        value_parser = gateway_name
    )]
    pub gateway_name: String,
}
