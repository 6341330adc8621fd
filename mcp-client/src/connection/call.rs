//! One `tools/call` on a live session: its timeout (reset by progress, within a total), its
//! cancellation when the caller stops waiting, the rounds of questions a 2026-07-28 server may
//! answer it with, and its answer as ours.
//!
//! On protocol 2026-07-28 a server does not send requests to the client: a call that needs the
//! person's answer comes back as `InputRequiredResult` (questions and an opaque state), and
//! the client calls again with the answers and the state. Questions go to the host's
//! [`Elicitor`](super::Elicitor), as `elicitation/create` does on earlier revisions; the caller
//! sees one call and one result.

use std::time::Duration;

use rmcp::{
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, InputRequest,
        InputRequiredResult, InputResponses, JsonObject, ServerResult,
    },
    service::PeerRequestOptions,
};
use tokio_util::sync::CancellationToken;

use super::{
    ClientError, ProgressFn,
    live::{EXIT_GRACE, Unanswered, service_error},
    session::Live,
};

/// With progress, a call may run this many times its timeout in total.
const MAX_TOTAL_FACTOR: u32 = 4;

/// Rounds of questions (`InputRequiredResult`) one call may take before it is given up: the
/// revision allows several (a form, then another that depends on it), never endless ones.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// Questions one round may ask: a person answers a few, not thousands (each is a prompt, and
/// each answer is kept until the call is sent again).
pub const MAX_QUESTIONS_PER_ROUND: usize = 16;

/// Calls the tool `name` on `live`, allowing `timeout` for each exchange (see
/// [`MAX_TOTAL_FACTOR`] with `progress`); the time the person takes to answer a question is
/// not the server's.
pub(super) async fn call_tool(
    live: &Live,
    timeout: Duration,
    name: &str,
    arguments: JsonObject,
    progress: Option<ProgressFn>,
) -> Result<CallToolResult, ClientError> {
    let mut params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    for _ in 0..MAX_INPUT_ROUNDS {
        match exchange(live, timeout, params.clone(), progress.clone()).await? {
            Answer::Done(result) => return Ok(result),
            Answer::Asks(asked) => {
                let (responses, state) = answer(live, name, asked).await?;
                params.input_responses = responses;
                params.request_state = state;
            }
        }
    }
    Err(ClientError::Unfinished {
        server: live.name.clone(),
        method: format!("tools/call {name}"),
        reason: format!(
            "it asked for input {MAX_INPUT_ROUNDS} times without finishing the call; this client stops there, and the call was not completed"
        ),
    })
}

/// Why an `input_required` answer without questions or state cannot be answered.
const NOTHING_ASKED: &str =
    "it answered `input_required` with neither questions nor state to send back";

/// What one exchange of a call ended with.
enum Answer {
    Done(CallToolResult),
    Asks(InputRequiredResult),
}

/// The answers to a round of questions (and the state to send back with them).
async fn answer(
    live: &Live,
    name: &str,
    asked: InputRequiredResult,
) -> Result<(Option<InputResponses>, Option<String>), ClientError> {
    let unfinished = |reason: String| ClientError::Unfinished {
        server: live.name.clone(),
        method: format!("tools/call {name}"),
        reason,
    };
    let requests = asked.input_requests.unwrap_or_default();
    if requests.is_empty() && asked.request_state.is_none() {
        return Err(unfinished(NOTHING_ASKED.into()));
    }
    if requests.len() > MAX_QUESTIONS_PER_ROUND {
        return Err(unfinished(format!(
            "it asked {} questions at once; this client puts at most {MAX_QUESTIONS_PER_ROUND} to the person in one round, so none was asked",
            requests.len()
        )));
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let InputRequest::Elicitation(request) = request else {
            return Err(unfinished(format!(
                "it asked for `{}`, which this client does not offer (it only puts questions to the person)",
                input_method(&request)
            )));
        };
        // Nobody waits for the answer once this future is dropped; the host's elicitor also
        // withdraws it when no call of this server runs any more.
        let withdrawn = CancellationToken::new();
        let _withdraw = withdrawn.clone().drop_guard();
        let result = live.handler.ask(request.params, withdrawn).await;
        let value = serde_json::to_value(result).map_err(|err| unfinished(err.to_string()))?;
        responses.insert(key, value);
    }
    Ok((
        (!responses.is_empty()).then_some(responses),
        asked.request_state,
    ))
}

/// The method an input request names, as the wire spells it.
fn input_method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "a kind of input this client does not know",
    }
}

/// One `tools/call` request and its answer.
async fn exchange(
    live: &Live,
    timeout: Duration,
    params: CallToolRequestParams,
    progress: Option<ProgressFn>,
) -> Result<Answer, ClientError> {
    let name = params.name.clone();
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
        Ok(ServerResult::CallToolResult(result)) => Ok(Answer::Done(result)),
        Ok(ServerResult::InputRequiredResult(asked)) => Ok(Answer::Asks(asked)),
        // rmcp types `input_required` without questions or state as no result it knows.
        Ok(ServerResult::CustomResult(custom))
            if custom
                .0
                .get("resultType")
                .and_then(serde_json::Value::as_str)
                == Some("input_required") =>
        {
            Err(ClientError::Unfinished {
                server: live.name.clone(),
                method,
                reason: NOTHING_ASKED.into(),
            })
        }
        Ok(other) => Err(ClientError::Refused {
            server: live.name.clone(),
            method: method.clone(),
            message: format!("unexpected answer {other:?}"),
        }),
        Err(err) => Err(service_error(live, &method, timeout, err).await),
    }
}
