//! One `tools/call` on a live session: its timeout (reset by progress, within a total), its
//! cancellation when the caller stops waiting, and its answer as ours.

use std::time::Duration;

use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, JsonObject,
        ServerResult,
    },
    service::PeerRequestOptions,
};

use super::{
    ClientError, ProgressFn,
    live::{EXIT_GRACE, Unanswered, service_error},
    session::Live,
};

/// With progress, a call may run this many times its timeout in total.
const MAX_TOTAL_FACTOR: u32 = 4;

/// Calls the tool `name` on `live`, allowing `timeout` (see [`MAX_TOTAL_FACTOR`] with
/// `progress`).
pub(super) async fn call_tool(
    live: &Live,
    timeout: Duration,
    name: &str,
    arguments: JsonObject,
    progress: Option<ProgressFn>,
) -> Result<CallToolResult, ClientError> {
    let method = format!("tools/call {name}");
    let mut options = PeerRequestOptions::no_options();
    // rmcp times the request out and sends notifications/cancelled for it. Progress resets
    // the timeout, but never beyond a total of MAX_TOTAL_FACTOR × the timeout.
    options.timeout = Some(timeout);
    let reset_on_progress = progress.is_some();
    if reset_on_progress {
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(timeout.saturating_mul(MAX_TOTAL_FACTOR));
    }
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    // The request is sent from this future (no task per call: a task costs two
    // cross-thread wake-ups per call). If the caller stops waiting once the request is
    // queued, `Unanswered` tells the server with `notifications/cancelled` when dropped;
    // before that, nothing was queued and there is nothing to cancel. rmcp itself cancels
    // only the requests its timeout ends.
    let exchange = async {
        let handle = live.peer.send_request_with_option(request, options).await?;
        let _registration = progress.map(|callback| {
            live.handler
                .track_progress(handle.progress_token.clone(), callback)
        });
        let unanswered = Unanswered::new(live, handle.id.clone());
        let response = handle.await_response().await;
        unanswered.answered();
        response
    };
    // rmcp's timeout starts once the request is handed over; handing it over can itself
    // block (a server that stops reading stdin fills the pipe). The caller's deadline
    // covers both.
    let budget = if reset_on_progress {
        timeout.saturating_mul(MAX_TOTAL_FACTOR)
    } else {
        timeout
    } + EXIT_GRACE;
    let Ok(outcome) = tokio::time::timeout(budget, exchange).await else {
        return Err(ClientError::Timeout {
            server: live.name.clone(),
            method,
            timeout,
        });
    };
    match outcome {
        Ok(ServerResult::CallToolResult(result)) => Ok(result),
        Ok(other) => Err(ClientError::Refused {
            server: live.name.clone(),
            method: method.clone(),
            message: format!("unexpected answer {other:?}"),
        }),
        Err(err) => Err(service_error(live, &method, timeout, err).await),
    }
}
