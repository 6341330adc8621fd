//! ToolExecutor: every tool call goes through here: does the tool exist → (MCP tools:
//! normalize argument names) → validate the
//! parameters against its schema → run it with a timeout → a uniform outcome with the time
//! taken. Normalizing before validating is deliberate: validating first would refuse exactly
//! the calls normalization exists for (`device_name` where `deviceName` is required).
//!
//! Nothing a tool does can take the host down: a panicking handler becomes an error outcome,
//! a slow one is cut off at its timeout, and a batch always returns one outcome per call.

use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::Value;
use tokio::{sync::Semaphore, task::JoinSet};
use tracing::{debug, info, warn};

use super::{
    Normalizer, builtins,
    definition::Implementation,
    manager::{ManagedTool, ToolManager},
    outcome::{ToolCall, ToolError, ToolOutcome, one_per_call},
    redact::redact,
    validate::validate,
};
use crate::connection::{Progress, ProgressFn, pool::ServerPool};

/// Default time a tool may take (30 seconds).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Calls slower than this are logged as a warning.
pub const SLOW_CALL: Duration = Duration::from_millis(1000);
/// Calls of one batch running at once.
pub const DEFAULT_PARALLEL: usize = 8;

/// Receives the progress of one call of a batch, with the call's id.
pub type BatchProgressFn = Arc<dyn Fn(&str, Progress) + Send + Sync>;

type Work = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// Aborts a spawned task when dropped, so a caller that stops waiting (a cancelled
/// conversation) also stops the work, and an MCP request future dropped this way sends
/// `notifications/cancelled`.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One turn's calls, running: see [`ToolExecutor::start_all`].
pub struct RunningCalls {
    running: JoinSet<(usize, ToolOutcome)>,
    /// The calls' tool names, each taken when its outcome is handed out.
    names: Vec<Option<String>>,
}

impl RunningCalls {
    /// The next call to finish, with its index in the batch; `None` once every call has had
    /// its outcome. A call whose task ended without one gets a placeholder error, so every
    /// call gets exactly one outcome.
    pub async fn next(&mut self) -> Option<(usize, ToolOutcome)> {
        while let Some(joined) = self.running.join_next().await {
            match joined {
                Ok((index, outcome)) => {
                    self.names[index] = None;
                    return Some((index, outcome));
                }
                Err(err) => warn!(error = %err, "a tool call task ended without an outcome"),
            }
        }
        let (index, name) = self
            .names
            .iter_mut()
            .enumerate()
            .find_map(|(index, name)| name.take().map(|name| (index, name)))?;
        Some((
            index,
            ToolOutcome::placeholder(&name, "the call was not executed"),
        ))
    }
}

/// A handler the host registers for `internal` tools.
pub type InternalHandler = Arc<
    dyn Fn(JsonObject) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> + Send + Sync,
>;

/// The tools as last built: the local ones plus those of the servers connected then.
struct Catalog {
    /// The pool's generation the MCP tools were listed at (`None`: never listed here).
    generation: Option<u64>,
    manager: Arc<ToolManager>,
}

/// Runs tool calls.
#[derive(Clone)]
pub struct ToolExecutor {
    catalog: Arc<std::sync::RwLock<Catalog>>,
    mcp: Option<(ServerPool, Arc<Normalizer>)>,
    internal: Arc<HashMap<String, InternalHandler>>,
    default_timeout: Duration,
    parallel: usize,
}

impl ToolExecutor {
    /// An executor of `manager`'s tools with the default timeout (30 s).
    pub fn new(manager: ToolManager) -> Self {
        Self {
            catalog: Arc::new(std::sync::RwLock::new(Catalog {
                generation: None,
                manager: Arc::new(manager),
            })),
            mcp: None,
            internal: Arc::default(),
            default_timeout: DEFAULT_TIMEOUT,
            parallel: DEFAULT_PARALLEL,
        }
    }

    /// Runs MCP tools through `pool`, normalizing their arguments with `normalizer`.
    pub fn with_mcp(mut self, pool: ServerPool, normalizer: Normalizer) -> Self {
        self.mcp = Some((pool, Arc::new(normalizer)));
        self
    }

    /// Registers the handler of `internal` tools named `name`.
    pub fn with_internal(mut self, name: &str, handler: InternalHandler) -> Self {
        Arc::make_mut(&mut self.internal).insert(name.to_owned(), handler);
        self
    }

    /// Sets the timeout of tools that have none of their own.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets how many calls of one batch run at once (at least 1).
    pub fn with_parallel(mut self, parallel: usize) -> Self {
        self.parallel = parallel.max(1);
        self
    }

    /// The tools, as of the last [`ToolExecutor::refresh`].
    pub fn manager(&self) -> Arc<ToolManager> {
        Arc::clone(
            &self
                .catalog
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .manager,
        )
    }

    /// Brings the MCP tools up to date when the pool says they may have changed: a server
    /// connected or restarted since the last listing (late, or after a crash), or sent
    /// `notifications/tools/list_changed`. Servers that are down are restarted in the
    /// background when their backoff has passed, to join at a later refresh. Local tools stay
    /// as they are. Returns whether the tools were listed again.
    pub async fn refresh(&self) -> bool {
        let Some((pool, _)) = &self.mcp else {
            return false;
        };
        pool.revive();
        let generation = pool.generation();
        let (listed, local) = {
            let catalog = self
                .catalog
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            (catalog.generation, catalog.manager.without_mcp())
        };
        if listed == Some(generation) {
            return false;
        }
        let mut manager = local;
        manager.add_mcp(&super::McpTools::discover(pool).await);
        debug!(
            generation,
            tools = manager.all().len(),
            "the tools were listed again"
        );
        *self
            .catalog
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Catalog {
            generation: Some(generation),
            manager: Arc::new(manager),
        };
        true
    }

    /// Runs one call. Never fails: every problem is an outcome with `success: false`.
    pub async fn execute(&self, name: &str, args: Value) -> ToolOutcome {
        self.execute_with_progress(name, args, None).await
    }

    /// [`ToolExecutor::execute`], with the progress an MCP server reports sent to `progress`.
    pub async fn execute_with_progress(
        &self,
        name: &str,
        args: Value,
        progress: Option<ProgressFn>,
    ) -> ToolOutcome {
        let started = Instant::now();
        let Some(tool) = self.manager().find(name).cloned() else {
            debug!(tool = name, "unknown tool requested");
            let unknown = ToolError::UnknownTool {
                name: name.to_owned(),
            };
            return ToolOutcome::new(name, Err(unknown), started);
        };
        // MCP tools: names are normalized before validation, or the very calls normalization
        // exists for (`device_name` for a required `deviceName`) would be refused.
        let args = self.normalize(&tool, args);
        let shown = args.as_object().map_or_else(|| args.to_string(), redact);
        // An MCP server may ask a person a question mid-call: their time is not the tool's.
        let connection = match (&tool.definition.implementation, &self.mcp) {
            (Implementation::Mcp { server, .. }, Some((pool, _))) => pool.get(server).cloned(),
            _ => None,
        };
        let waited_before = connection.as_ref().map(|c| c.waited_for_person());
        let outcome = match validate(&tool, args) {
            Err(problem) => ToolOutcome::new(name, Err(problem), started),
            Ok(parameters) => self.run(&tool, parameters, progress, started).await,
        };
        let answering = connection
            .zip(waited_before)
            .map_or(Duration::ZERO, |(c, before)| {
                c.waited_for_person().saturating_sub(before)
            });
        self.log(&tool, &shown, &outcome, answering);
        outcome
    }

    /// The arguments `name` would run with: an MCP tool's argument names normalized (static
    /// mappings, then the schema-checked snake_case → camelCase heuristic); others unchanged.
    /// What an approval prompt should show.
    pub fn normalized_arguments(&self, name: &str, args: Value) -> Value {
        match self.manager().find(name) {
            Some(tool) => self.normalize(tool, args),
            None => args,
        }
    }

    fn normalize(&self, tool: &ManagedTool, args: Value) -> Value {
        match (&tool.definition.implementation, &self.mcp, args) {
            (
                Implementation::Mcp {
                    server,
                    original_name,
                },
                Some((_, normalizer)),
                Value::Object(map),
            ) => Value::Object(normalizer.normalize(
                server,
                original_name,
                &tool.definition.parameters,
                map,
            )),
            (_, _, args) => args,
        }
    }

    /// Runs one turn's calls concurrently (at most 8 at once) and returns one outcome per call,
    /// in call order; a call that produced nothing gets a placeholder error.
    pub async fn execute_all(&self, calls: &[ToolCall]) -> Vec<ToolOutcome> {
        self.execute_all_with_progress(calls, None).await
    }

    /// [`ToolExecutor::execute_all`], with each call's progress sent to `progress` with its id.
    /// Dropping the returned future cancels every call still running.
    pub async fn execute_all_with_progress(
        &self,
        calls: &[ToolCall],
        progress: Option<BatchProgressFn>,
    ) -> Vec<ToolOutcome> {
        let mut running = self.start_all(calls, progress);
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        while let Some((index, outcome)) = running.next().await {
            outcomes[index] = Some(outcome);
        }
        one_per_call(calls, outcomes)
    }

    /// Starts one turn's calls concurrently (at most 8 at once); their outcomes come from
    /// [`RunningCalls::next`] as each finishes, so a caller cancelled midway still has the
    /// outcomes of the calls that did finish. Dropping it cancels every call still running.
    pub fn start_all(&self, calls: &[ToolCall], progress: Option<BatchProgressFn>) -> RunningCalls {
        let permits = Arc::new(Semaphore::new(self.parallel.max(1)));
        let mut running = JoinSet::new();
        for (index, call) in calls.iter().enumerate() {
            let executor = self.clone();
            let call = call.clone();
            let permits = Arc::clone(&permits);
            let progress = progress.clone().map(|report| {
                let id = call.id.clone();
                Arc::new(move |update: Progress| report(&id, update)) as ProgressFn
            });
            running.spawn(async move {
                // The semaphore is never closed, so a permit always comes.
                let _permit = permits.acquire_owned().await;
                (
                    index,
                    executor
                        .execute_with_progress(&call.name, call.args, progress)
                        .await,
                )
            });
        }
        RunningCalls {
            running,
            names: calls.iter().map(|call| Some(call.name.clone())).collect(),
        }
    }

    /// Runs a validated call with its timeout, isolating panics.
    async fn run(
        &self,
        tool: &ManagedTool,
        parameters: JsonObject,
        progress: Option<ProgressFn>,
        started: Instant,
    ) -> ToolOutcome {
        let name = tool.definition.name.clone();
        let timeout = tool.definition.timeout.unwrap_or(self.default_timeout);
        let work = self.work(tool, parameters, progress);
        let mut task = AbortOnDrop(tokio::spawn(work));
        let result = match tokio::time::timeout(timeout, &mut task.0).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) if join.is_panic() => {
                let payload = join.into_panic();
                let message = panic_message(payload.as_ref());
                warn!(tool = %name, panic = %message, "tool handler panicked");
                Err(ToolError::Panicked { name, message })
            }
            Ok(Err(join)) => Err(ToolError::NotRun(format!(
                "Tool '{name}' was cancelled: {join}"
            ))),
            Err(_) => {
                task.0.abort();
                Err(ToolError::TimedOut {
                    name,
                    after: timeout,
                })
            }
        };
        ToolOutcome::new(&tool.definition.name, result, started)
    }

    /// The call's work as a task future.
    fn work(
        &self,
        tool: &ManagedTool,
        parameters: JsonObject,
        progress: Option<ProgressFn>,
    ) -> Work {
        match &tool.definition.implementation {
            Implementation::Mock { response } => {
                info!(tool = %tool.definition.name, parameters = %redact(&parameters), "mock tool: parameters are not used");
                let response = response.clone();
                Box::pin(async move { Ok(response) })
            }
            Implementation::Builtin { handler } => match builtins::builtin(handler) {
                Some(run) => Box::pin(async move { run(&parameters).map_err(ToolError::Failed) }),
                None => {
                    let error =
                        ToolError::Misconfigured(format!("Builtin handler '{handler}' not found"));
                    Box::pin(async move { Err(error) })
                }
            },
            Implementation::Internal { handler } => match self.internal.get(handler) {
                // The handler is called here, outside the task that isolates panics: a handler
                // that panics before it returns its future is caught too.
                Some(run) => {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(parameters)))
                    {
                        Ok(work) => Box::pin(async move { work.await.map_err(ToolError::Failed) }),
                        Err(payload) => {
                            let error = ToolError::Panicked {
                                name: tool.definition.name.clone(),
                                message: panic_message(payload.as_ref()),
                            };
                            warn!(tool = %tool.definition.name, "internal tool handler panicked before returning");
                            Box::pin(async move { Err(error) })
                        }
                    }
                }
                None => {
                    let error =
                        ToolError::Misconfigured(format!("Internal handler '{handler}' not found"));
                    Box::pin(async move { Err(error) })
                }
            },
            Implementation::Mcp {
                server,
                original_name,
            } => {
                let Some((pool, _)) = self.mcp.clone() else {
                    let error = ToolError::Misconfigured(format!(
                        "MCP server `{server}` is not connected to this executor"
                    ));
                    return Box::pin(async move { Err(error) });
                };
                let (server, original) = (server.clone(), original_name.clone());
                Box::pin(async move {
                    let Some(connection) = pool.get(&server) else {
                        return Err(ToolError::Misconfigured(format!(
                            "MCP server `{server}` is not configured"
                        )));
                    };
                    let result = connection
                        .call_tool_with_progress(&original, parameters, progress)
                        .await
                        .map_err(|err| {
                            // The host's log keeps the server's stderr; the model gets one line.
                            // Info, not a warning: the caller gets the failure (a host shows
                            // it beside the call); the stderr tail is here for who asks.
                            info!(server = %server, error = %err.for_model(), stderr = ?err.stderr(), "MCP tool call failed");
                            ToolError::Server {
                                message: err.for_model(),
                                retryable: err.is_retryable(),
                            }
                        })?;
                    mcp_outcome(result)
                })
            }
        }
    }

    /// `answering`: the time the call waited for a person to answer its server's question,
    /// which is not counted as the tool's own.
    fn log(&self, tool: &ManagedTool, arguments: &str, outcome: &ToolOutcome, answering: Duration) {
        let name = &tool.definition.name;
        let took = Duration::from_millis(outcome.execution_time_ms).saturating_sub(answering);
        if took > SLOW_CALL {
            let duration_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
            if answering.is_zero() {
                warn!(tool = %name, duration_ms, "slow tool call");
            } else {
                let answering_ms = u64::try_from(answering.as_millis()).unwrap_or(u64::MAX);
                warn!(tool = %name, duration_ms, answering_ms, "slow tool call");
            }
        }
        match outcome.error() {
            None => info!(
                tool = %name,
                source = %tool.definition.source(),
                arguments,
                duration_ms = outcome.execution_time_ms,
                "tool call succeeded"
            ),
            // The caller gets the failure itself: a warning here doubled every ✗ a host shows.
            Some(error) => debug!(
                tool = %name,
                source = %tool.definition.source(),
                arguments,
                duration_ms = outcome.execution_time_ms,
                %error,
                "tool call failed"
            ),
        }
    }
}

/// A panic's message, when it has one.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// An MCP result: `isError` results are failures with their text; others are the result.
fn mcp_outcome(result: CallToolResult) -> Result<Value, ToolError> {
    if result.is_error == Some(true) {
        return Err(ToolError::Failed(error_text(&result)));
    }
    serde_json::to_value(&result)
        .map_err(|err| ToolError::Failed(format!("cannot encode the tool's result: {err}")))
}

/// The text of an `isError` result, its text blocks joined by lines.
pub(crate) fn error_text(result: &CallToolResult) -> String {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    if text.is_empty() {
        "the tool reported an error without a message".into()
    } else {
        text.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, Tool};
    use serde_json::json;

    use super::*;
    use crate::tools::McpTools;

    /// A manager offering one MCP tool `echo` of server `home`.
    fn one_mcp_tool() -> ToolManager {
        let schema = json!({"type": "object"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let tool = Tool::new("echo", "Echoes", Arc::new(schema));
        let mut manager = ToolManager::new();
        manager.add_mcp(&McpTools::build(vec![("home".into(), None, vec![tool])]));
        manager
    }

    #[tokio::test]
    async fn an_mcp_tool_without_its_server_is_a_misconfiguration_named_as_such() {
        let outcome = ToolExecutor::new(one_mcp_tool())
            .execute("echo", json!({}))
            .await;
        assert_eq!(
            outcome.error(),
            Some(&ToolError::Misconfigured(
                "MCP server `home` is not connected to this executor".into()
            ))
        );
        let outcome = ToolExecutor::new(one_mcp_tool())
            .with_mcp(ServerPool::new(Vec::new()), Normalizer::with_builtins())
            .execute("echo", json!({}))
            .await;
        assert_eq!(
            outcome.error_text().as_deref(),
            Some("MCP server `home` is not configured")
        );
    }

    #[test]
    fn an_error_result_reads_as_its_text_or_says_it_has_none() {
        let two = CallToolResult::error(vec![
            ContentBlock::text("no such device"),
            ContentBlock::text("try list"),
        ]);
        assert_eq!(error_text(&two), "no such device\ntry list");
        assert_eq!(
            error_text(&CallToolResult::error(Vec::new())),
            "the tool reported an error without a message"
        );
    }
}
