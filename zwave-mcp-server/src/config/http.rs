//! The remote-host flags: MCP Streamable HTTP instead of stdio, its token, the names and
//! origins it answers, and its bounds on sessions. What they become is `settings`' work.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use super::parse::{parse_duration, parse_issuer};

/// Environment variable holding the HTTP bearer token itself (never a flag: flags show in `ps`).
pub const TOKEN_ENV: &str = "ZWAVE_MCP_HTTP_TOKEN";

/// How remote MCP hosts reach the server.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Remote hosts (Streamable HTTP)")]
pub struct HttpFlags {
    /// Serve MCP Streamable HTTP at http://ADDR:PORT/mcp instead of stdio, for hosts on other
    /// machines (Home Assistant, Claude's and ChatGPT's connectors). Any address but loopback
    /// needs a token (--http-token-file); put a TLS reverse proxy in front for the internet.
    #[arg(long, env = "ZWAVE_MCP_HTTP", value_name = "ADDR:PORT")]
    pub http: Option<SocketAddr>,

    /// File whose first line is the bearer token every HTTP request must carry
    /// (`Authorization: Bearer TOKEN`). The token can also come from ZWAVE_MCP_HTTP_TOKEN; it
    /// is never a flag and never logged. Without a token (loopback only) sensitive actions are
    /// refused over HTTP: any local process could answer their question.
    #[arg(long, env = "ZWAVE_MCP_HTTP_TOKEN_FILE", value_name = "FILE")]
    pub http_token_file: Option<PathBuf>,

    /// A host name (or host:port) clients may reach the server by, besides localhost,
    /// 127.0.0.1, ::1 and the address bound: the name a reverse proxy forwards, or the box's
    /// name on the LAN. A request whose Host header is another is refused (403), against DNS
    /// rebinding. Repeat, or comma-separated.
    #[arg(
        long,
        env = "ZWAVE_MCP_HTTP_ALLOWED_HOST",
        value_delimiter = ',',
        value_name = "HOST"
    )]
    pub http_allowed_host: Vec<String>,

    /// A browser origin (scheme://host:port, `:*` for any port) allowed to call the server
    /// besides loopback ones. A request carrying another Origin header is refused (403);
    /// requests without one (programs, not web pages) are not. Repeat, or comma-separated.
    #[arg(
        long,
        env = "ZWAVE_MCP_HTTP_ALLOWED_ORIGIN",
        value_delimiter = ',',
        value_name = "ORIGIN"
    )]
    pub http_allowed_origin: Vec<String>,

    /// The most MCP sessions (the 2025-11-25 lifecycle's) alive at once, 1 to 10,000 (each
    /// holds some 66 KiB, at most 110 KiB with the largest capabilities and client info
    /// accepted, as measured); one more is refused (503) until one ends or expires. The
    /// 2026-07-28 lifecycle keeps no session. [default: 100]
    #[arg(
        long,
        env = "ZWAVE_MCP_HTTP_MAX_SESSIONS",
        value_parser = clap::value_parser!(u32).range(1..=10_000),
        value_name = "N"
    )]
    pub http_max_sessions: Option<u32>,

    /// A session with no request for this long ends; its client starts a new one.
    /// [default: 10m]
    #[arg(long, env = "ZWAVE_MCP_HTTP_SESSION_IDLE", value_parser = parse_duration, value_name = "DURATION")]
    pub http_session_idle: Option<Duration>,

    /// Be this server's own OAuth 2.1 authorization server, for hosts that sign in only with
    /// OAuth (Claude's and ChatGPT's connectors, Home Assistant). URL is the origin hosts
    /// reach the server at (https://home.example.com behind a TLS proxy; http only on
    /// loopback): the issuer and resource its tokens name. The owner approves each client on
    /// the page /oauth/authorize with the key of --http-token-file, which is needed.
    #[arg(long, env = "ZWAVE_MCP_OAUTH_ISSUER", value_parser = parse_issuer, value_name = "URL")]
    pub oauth_issuer: Option<String>,

    /// With --oauth-issuer: trust this CA (PEM) instead of the system's roots when fetching a
    /// client's metadata document (a client whose client_id is an https URL).
    #[arg(long, env = "ZWAVE_MCP_OAUTH_CLIENT_METADATA_CA", value_name = "FILE")]
    pub oauth_client_metadata_ca: Option<PathBuf>,

    /// With --oauth-issuer: fetch clients' metadata documents from loopback and private
    /// addresses too (by default only public addresses are fetched from, so that a client
    /// cannot make this server reach into the home's network).
    #[arg(long, env = "ZWAVE_MCP_OAUTH_CLIENT_METADATA_PRIVATE")]
    pub oauth_client_metadata_private: bool,

    /// Where the server keeps what outlives a run (0700; several servers behind one
    /// balancer share it): the audit trail of every write (audit.jsonl), and with
    /// --oauth-issuer the grants and their signing key. Given, the trail is kept on stdio too.
    /// [default with --oauth-issuer: $XDG_STATE_HOME/zwave-mcp-server, else
    /// ~/.local/state/zwave-mcp-server; without: none, no trail]
    #[arg(long, env = "ZWAVE_MCP_STATE_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// Sessions alive at once when `--http-max-sessions` is not given.
pub const DEFAULT_MAX_SESSIONS: u32 = 100;

/// How long a session may be idle when `--http-session-idle` is not given.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(600);
