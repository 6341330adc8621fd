//! [`ZwaveServer`]: the rmcp `ServerHandler` that offers the five tools (six with
//! maintenance allowed) over one network
//! connection, with the owner's exposure rules and the caches the tools share.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::{
        prompt::PromptContext,
        router::{prompt::PromptRouter, tool::ToolRouter},
        tool::ToolCallContext,
    },
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation,
        JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig, SubscribeRequestParams,
        SubscriptionFilter, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
    tool_handler,
};

use super::{
    cache::{DirectoryCache, RowCache},
    commands::Commands,
    maintenance::{MAINTAIN, MaintenancePolicy, refusal},
    resources::Session,
    seal::QuestionSeal,
    sensitive::SensitivePolicy,
};
use crate::{
    audit::AuditTrail,
    auth::{Principal, Scope, Scopes, for_tool},
    devices::{Exposure, Limits},
    network::Network,
};

/// The MCP server: tools over one network connection.
#[derive(Clone)]
pub struct ZwaveServer {
    pub(super) network: Network,
    pub(super) confirm_timeout: Duration,
    /// What the agent may see and switch.
    pub(super) exposure: Arc<Exposure>,
    /// Device rows of `list_zwave_devices`, rebuilt only for devices that changed.
    pub(super) rows: Arc<RowCache>,
    /// Names of the devices the agent may see, normalized once per loaded node list.
    pub(super) names: Arc<DirectoryCache>,
    /// The last command to each device, for reads to say what became of it.
    pub(super) commands: Arc<Commands>,
    /// This session's subscriptions to resources: each session gets its own
    /// ([`ZwaveServer::for_session`]).
    pub(super) session: Arc<Session>,
    /// Places for `subscriptions/listen` streams, shared by every session of the process.
    pub(super) listens_in_all: Arc<tokio::sync::Semaphore>,
    /// The owner's limits on writes (a thermostat's band).
    pub(super) limits: Limits,
    /// What the owner allows of actions that open the home or silence an alarm.
    pub(super) sensitive: Arc<SensitivePolicy>,
    /// Questions asked by answering a call (2026-07-28): sealed, and redeemed once.
    pub(super) questions: Arc<QuestionSeal>,
    /// Whether upkeep operations are offered, and how long a call waits for one.
    pub(super) maintenance: Arc<MaintenancePolicy>,
    pub(super) tool_router: ToolRouter<Self>,
    pub(super) prompt_router: PromptRouter<Self>,
    /// Where every write and upkeep call is told, when the owner keeps a trail.
    pub(super) audit: Option<Arc<AuditTrail>>,
}

impl ZwaveServer {
    /// A server whose tools act through `network`; switching waits up to `confirm_timeout`
    /// for the device to report its new state.
    pub fn new(network: Network, confirm_timeout: Duration) -> Self {
        Self {
            network,
            confirm_timeout,
            exposure: Arc::default(),
            rows: Arc::default(),
            names: Arc::default(),
            commands: Arc::default(),
            session: Arc::default(),
            listens_in_all: Arc::new(tokio::sync::Semaphore::new(
                super::resources::MAX_LISTENS_IN_ALL,
            )),
            limits: Limits::default(),
            sensitive: Arc::default(),
            questions: Arc::default(),
            maintenance: Arc::default(),
            tool_router: Self::tool_router(),
            prompt_router: Self::prompt_router(),
            audit: None,
        }
    }

    /// With the audit trail every write and upkeep call is told to.
    #[must_use]
    pub fn with_audit(mut self, audit: Option<Arc<AuditTrail>>) -> Self {
        self.audit = audit;
        self
    }

    /// Limits what the agent may see and switch; read-only takes the control tool away, so
    /// `tools/list` does not even offer it.
    pub fn with_exposure(mut self, exposure: Exposure) -> Self {
        if exposure.read_only {
            self.tool_router.remove_route("control_zwave_device");
            self.tool_router.remove_route(MAINTAIN);
        }
        self.exposure = Arc::new(exposure);
        self
    }

    /// The same server for another session (over HTTP, each has its own): the caches are
    /// shared, the subscriptions are its own.
    #[must_use]
    pub fn for_session(&self) -> Self {
        Self {
            session: Arc::default(),
            ..self.clone()
        }
    }

    /// With the owner's limits on writes.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// With the owner's leave for upkeep operations: `maintain_zwave_device` is listed only
    /// when allowed and not read-only (set the exposure first); a call to it otherwise is
    /// refused saying why.
    #[must_use]
    pub fn with_maintenance(mut self, policy: MaintenancePolicy) -> Self {
        self.maintenance = Arc::new(policy);
        if refusal(self.exposure.read_only, &self.maintenance).is_none()
            && !self.tool_router.has_route(MAINTAIN)
        {
            self.tool_router += Self::maintain_router();
        }
        self
    }

    /// A tool call, with the request's extensions held until the tool has ended: the
    /// request's place in the bound on requests in flight rides in them
    /// (`transport::bounded`), and the router drops the context once a tool has taken its
    /// arguments.
    async fn call_tool_told(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _place = context.extensions.clone();
        if let Some(refused) = request.arguments.as_ref().and_then(oversized_argument) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(refused)]).into());
        }
        // The HTTP gate refuses this with 403 already; a message it could not read (a batch)
        // is refused here.
        let needed = for_tool(&request.name);
        if !principal(&context).scopes().has(needed) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "the owner's grant to this client does not include `{}`, which {} needs: nothing was done",
                needed.name(),
                request.name
            ))])
            .into());
        }
        // Not listed unless allowed, but named in the README: a call says how to allow it.
        if request.name == MAINTAIN
            && let Some(refused) = refusal(self.exposure.read_only, &self.maintenance)
        {
            return Ok(CallToolResult::error(vec![ContentBlock::text(refused)]).into());
        }
        self.tool_router
            .call(ToolCallContext::new(self, request, context))
            .await
    }

    /// With what the owner allows of sensitive actions (none by default).
    #[must_use]
    pub fn with_sensitive(mut self, policy: SensitivePolicy) -> Self {
        self.sensitive = Arc::new(policy);
        self
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ZwaveServer {
    /// What `#[tool_handler]` would write, but told to the audit trail when the tool writes
    /// (or runs upkeep), whoever asked and whatever came of it.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(audit) = self
            .audit
            .clone()
            .filter(|_| for_tool(&request.name) != Scope::Read)
        else {
            return self.call_tool_told(request, context).await;
        };
        let who = who(&context);
        let what = format!(
            "{} {}",
            request.name,
            request
                .arguments
                .as_ref()
                .map(|args| serde_json::Value::Object(args.clone()).to_string())
                .unwrap_or_default()
        );
        let answer = self.call_tool_told(request, context).await;
        audit.record(&who, &what, &super::audit::outcome(&answer));
        answer
    }

    /// The tools the client's grant covers (every tool, for the owner and on stdio), with
    /// the caching hints of 2026-07-28: a list that depends on the client's grant is its own
    /// (`private`), the full list anyone's (`public`).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let principal = principal(&context);
        let granted = principal.scopes();
        let mut tools = self.tool_router.list_all();
        if granted != Scopes::ALL {
            tools.retain(|tool| granted.has(for_tool(&tool.name)));
        }
        let hints = context
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        let scope = match principal {
            Principal::Owner => CacheScope::Public,
            Principal::Client { .. } => CacheScope::Private,
        };
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms: hints.then_some(0),
            cache_scope: hints.then_some(scope),
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.resources().await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(Self::resource_templates())
    }

    /// An address that names nothing this client may see (an unknown one, an absent or hidden
    /// device) is refused with Invalid params naming it in `data.uri`, SEP-2164's shape
    /// (2026-07-28), at every revision.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read(&request.uri).await.map(Into::into)
    }

    /// 2025-11-25's subscriptions (2026-07-28 listens instead).
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_to(&request.uri, context).await
    }

    /// 2025-11-25's subscriptions (2026-07-28 listens instead).
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_from(&request.uri)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(self.listen_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.listen_on(context).await
    }

    /// A 2025-11-25 session is told when devices come, go or are renamed.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.session.watch(&self.viewer(), context.peer);
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.prompt_router.list_all(),
        ))
    }

    /// rmcp's router, but an unknown prompt is refused quoting at most 64 characters of its
    /// name (the router quotes it whole).
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.prompt_router.has_route(&request.name) {
            return Err(Self::unknown_prompt(&request.name));
        }
        let prompt = PromptContext::new(self, request.name, request.arguments, context);
        self.prompt_router.get_prompt(prompt).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.completion(&request).await
    }

    /// Declares every capability whose list methods it answers: rmcp answers `prompts/list`,
    /// `resources/list`, `resources/templates/list` and `completion/complete` with empty
    /// results, and a server that answers them must declare them (2026-07-28, SEP-2575: the
    /// capabilities `server/discover` returns match the handlers; the official conformance
    /// suite's `server-stateless` checks it for prompts, and its `caching` wants those lists
    /// answered).
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "zwave-mcp-server",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Controls a Z-Wave home through Z-Wave JS. Call list_zwave_devices first to learn \
                 the device names and kinds; then control_zwave_device carries out one action \
                 on a device (switch, dim, lock, open or close a blind, set a thermostat, \
                 sound a siren), get_device_status tells its state and whether it is reachable, and \
                 get_device_sensor_data returns its readings (temperature, humidity, motion, \
                 power, battery), and get_zwave_health tells which devices are dead or weak and \
                 why, and pings a device; when the owner allows it, maintain_zwave_device \
                 re-interviews a device, checks its link (rated 0-10) or rebuilds its routes, \
                 with progress. Device names are matched exactly (or as `Node <id>`), then by \
                 location + name, then by whole words; switching needs one of those, reads also \
                 accept a unique part of a name. An ambiguous name is refused with the candidates.",
            )
    }
}

/// The longest text a tool argument may hold, in characters: a device name's limit. Nothing a
/// device takes by name (a mode, a tone, a colour) nor a list filter is longer.
const MAX_ARGUMENT_CHARS: usize = crate::devices::MAX_NAME_CHARS;

/// Why `arguments` are refused before anything reads them, if one holds a text (a string or a
/// key, at any depth) longer than [`MAX_ARGUMENT_CHARS`]: serde's errors, which rmcp answers
/// with, quote the value in full (an unknown variant, a string where a number belongs), and a
/// refusal must not echo a megabyte. `deviceName` has its own refusal (it says how long).
fn oversized_argument(arguments: &JsonObject) -> Option<String> {
    fn chars(text: &str) -> usize {
        // Bytes first: a short text is not counted.
        if text.len() <= MAX_ARGUMENT_CHARS {
            text.len()
        } else {
            text.chars().count()
        }
    }
    fn longest(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::String(text) => chars(text),
            serde_json::Value::Array(items) => items.iter().map(longest).max().unwrap_or(0),
            serde_json::Value::Object(fields) => fields
                .iter()
                .map(|(key, value)| chars(key).max(longest(value)))
                .max()
                .unwrap_or(0),
            _ => 0,
        }
    }
    arguments
        .iter()
        .filter(|(key, _)| key.as_str() != "deviceName")
        .find_map(|(key, value)| {
            let long = chars(key).max(longest(value));
            (long > MAX_ARGUMENT_CHARS).then(|| {
                format!(
                    "argument {} holds a text {long} characters long; arguments are at most {MAX_ARGUMENT_CHARS} characters: nothing was done",
                    serde_json::Value::from(&*crate::network::text::echoed(key))
                )
            })
        })
}

/// Who sent the request of `context`: the principal the HTTP gate found, else the owner (on
/// stdio, the host that started the server; over HTTP without OAuth, the key's holder).
pub(super) fn principal(context: &RequestContext<RoleServer>) -> Principal {
    context
        .extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
        .unwrap_or(Principal::Owner)
}

/// Who sent the request of `context`, for the audit trail.
pub(super) fn who(context: &RequestContext<RoleServer>) -> String {
    let parts = context.extensions.get::<hyper::http::request::Parts>();
    match parts.and_then(|parts| parts.extensions.get::<Principal>()) {
        None if parts.is_none() => "the stdio host".to_owned(),
        None => Principal::Owner.label(),
        Some(principal) => principal.label(),
    }
}
