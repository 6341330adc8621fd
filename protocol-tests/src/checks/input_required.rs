//! Questions at 2026-07-28 (`InputRequiredResult`): a call that asks is called again with the
//! answers ([`answers`](super::answers)) and its `requestState` sent back exactly, round after
//! round until it completes (the round trip); declining must end it too; a state with one
//! character changed must not succeed; the last round sent again should not succeed twice.
//! Each check asks a fresh question of the same call.

use rmcp::model::InputRequiredResult;
use serde_json::{Map, Value, json};

use super::{
    answers::{Reply, answer},
    report::{Outcome, Verdict},
    response::{error_code, show},
};
use crate::{options::ToolCall, stateless::Stateless};

/// Most rounds driven for one call (mcp-client's own limit).
const MAX_ROUNDS: usize = 8;

/// How the rounds of a call ended.
enum End {
    /// A result that asks nothing more.
    Complete(Value),
    /// A JSON-RPC error.
    Error(Value),
    /// No answer within the answer timeout.
    Silent,
    /// Still asking after [`MAX_ROUNDS`].
    StillAsking,
    /// A question the checker cannot answer, or an answer it cannot read.
    Unanswerable(String),
}

/// A call driven to its end.
struct Driven {
    /// The rounds sent, the first (without answers) included.
    rounds: usize,
    end: End,
    /// The params of the last round sent.
    last: Value,
    /// The answers sent in the second round (to the first question).
    first_answers: Option<Value>,
}

/// The params of one round of `call`: with the answers and the state of the question before.
fn round(call: &ToolCall, responses: Option<Map<String, Value>>, state: Option<&str>) -> Value {
    let mut params = json!({"name": call.tool, "arguments": call.arguments});
    if let Some(responses) = responses.filter(|r| !r.is_empty()) {
        params["inputResponses"] = Value::Object(responses);
    }
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    params
}

/// Reads `response` as a question: `Ok(None)` when it asks nothing.
fn question(response: &Value) -> Result<Option<InputRequiredResult>, String> {
    let Some(result) = response.get("result") else {
        return Ok(None);
    };
    if result.get("resultType") != Some(&json!("input_required")) {
        return Ok(None);
    }
    serde_json::from_value(result.clone())
        .map(Some)
        .map_err(|err| {
            format!(
                "an input_required result that does not read as one ({err}): {}",
                show(&Some(result.clone()))
            )
        })
}

/// Asks `call` afresh: the question, or the verdict on a call that does not ask.
async fn ask(server: &mut Stateless, call: &ToolCall) -> Result<InputRequiredResult, Outcome> {
    let response = server.request("tools/call", round(call, None, None)).await;
    let Some(response) = response else {
        return Err((
            Verdict::Fail,
            format!("no answer to {call} within {:?}", server.answer_timeout()),
        ));
    };
    match question(&response) {
        Ok(Some(asked)) => Ok(asked),
        Ok(None) => Err((
            Verdict::Fail,
            format!(
                "{call} answered without asking: {}; the input-required checks need a call that answers input_required (see --input-required-call)",
                show(&Some(response))
            ),
        )),
        Err(why) => Err((Verdict::Fail, format!("{call}: {why}"))),
    }
}

/// Answers `asked` with `reply`, round after round, until the call ends.
async fn drive(
    server: &mut Stateless,
    call: &ToolCall,
    mut asked: InputRequiredResult,
    reply: Reply,
) -> Driven {
    let mut rounds = 1;
    let mut first_answers = None;
    loop {
        let responses = match asked.input_requests.as_ref().map(|r| answer(r, reply)) {
            Some(Err(why)) => {
                return Driven {
                    rounds,
                    end: End::Unanswerable(why),
                    last: round(call, None, None),
                    first_answers,
                };
            }
            Some(Ok(responses)) => Some(responses),
            None => None,
        };
        let last = round(call, responses, asked.request_state.as_deref());
        if rounds == 1 {
            first_answers = last.get("inputResponses").cloned();
        }
        rounds += 1;
        let response = server.request("tools/call", last.clone()).await;
        let end = match response.as_ref().map(question) {
            None => End::Silent,
            Some(Err(why)) => End::Unanswerable(why),
            Some(Ok(Some(again))) if rounds < MAX_ROUNDS => {
                asked = again;
                continue;
            }
            Some(Ok(Some(_))) => End::StillAsking,
            Some(Ok(None)) => match response {
                Some(r) if r.get("error").is_some() => End::Error(r),
                Some(r) => End::Complete(r["result"].clone()),
                None => End::Silent,
            },
        };
        return Driven {
            rounds,
            end,
            last,
            first_answers,
        };
    }
}

/// What a question asks: `key: method` for each request, and whether it has a state.
fn asked_summary(asked: &InputRequiredResult) -> String {
    let mut parts: Vec<String> = asked
        .input_requests
        .iter()
        .flatten()
        .map(|(key, request)| {
            let method = serde_json::to_value(request)
                .ok()
                .and_then(|r| r.get("method").cloned())
                .unwrap_or_default();
            format!("`{key}` ({})", method.as_str().unwrap_or("?"))
        })
        .collect();
    if asked.request_state.is_some() {
        parts.push("a requestState".into());
    }
    parts.join(", ")
}

/// A result, as evidence: its `isError` and its first text, clipped.
fn complete(result: &Value) -> String {
    let text = result
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .map(|t| format!(" \"{}\"", common::clip(t, 160)))
        .unwrap_or_default();
    if result.get("isError") == Some(&json!(true)) {
        format!("an isError result{text}")
    } else {
        format!("a result{text}")
    }
}

fn is_success(result: &Value) -> bool {
    result.get("isError") != Some(&json!(true))
}

/// What the round trip leaves to the checks after it.
#[derive(Debug, Clone, Default)]
pub struct RoundTrip {
    /// The call asked (else the other input-required checks have nothing to answer).
    pub asked: bool,
    /// The params of the last round, when the call succeeded: for [`check_replayed`].
    pub replayable: Option<Value>,
}

/// The checker's own call that may ask: the first tool, with no arguments (the call the
/// 2025-11-25 checks make too). `Err` says why there is none.
pub(super) async fn probe(server: &mut Stateless, tools: &[Value]) -> Result<ToolCall, String> {
    let Some(tool) = tools
        .first()
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
    else {
        return Err("no --input-required-call given, and the server lists no tools".into());
    };
    let call = ToolCall {
        tool: tool.to_owned(),
        arguments: Map::new(),
    };
    let response = server.request("tools/call", round(&call, None, None)).await;
    let answered = match &response {
        None => format!("no answer within {:?}", server.answer_timeout()),
        Some(r) if r.pointer("/result/resultType") == Some(&json!("input_required")) => {
            return Ok(call);
        }
        Some(r) => match r.get("result") {
            Some(result) => complete(result),
            None => format!("error {}", error_code(r).unwrap_or_default()),
        },
    };
    Err(format!(
        "no --input-required-call given, and {call} did not ask for input: {answered}"
    ))
}

/// The round trip: every question accepted with its form's defaults, each `requestState`
/// sent back as given, until the call completes.
pub async fn check_round_trip(server: &mut Stateless, call: &ToolCall) -> (Outcome, RoundTrip) {
    let asked = match ask(server, call).await {
        Ok(asked) => asked,
        Err(outcome) => return (outcome, RoundTrip::default()),
    };
    let summary = asked_summary(&asked);
    let driven = drive(server, call, asked, Reply::Accept).await;
    let rounds = driven.rounds;
    let outcome = match &driven.end {
        End::Complete(result) => (
            Verdict::Pass,
            format!(
                "{call} asked for {summary}; answered {}, the state sent back as given: {} after {rounds} rounds",
                driven
                    .first_answers
                    .as_ref()
                    .map_or_else(|| "nothing".into(), |a| common::clip(&a.to_string(), 120)),
                complete(result)
            ),
        ),
        End::Error(error) => (
            Verdict::Warn,
            format!(
                "{call} asked for {summary}; the accepted answers got error {} after {rounds} rounds (the checker fills a required field without a default with true, its first choice, its minimum or the shortest string): {}",
                error_code(error).unwrap_or_default(),
                show(&Some(error.clone()))
            ),
        ),
        End::Silent => (
            Verdict::Fail,
            format!(
                "{call} asked for {summary}; no answer within {:?} to round {rounds}",
                server.answer_timeout()
            ),
        ),
        End::StillAsking => (
            Verdict::Fail,
            format!("{call} still asks after {MAX_ROUNDS} rounds, each answer accepted"),
        ),
        End::Unanswerable(why) => (Verdict::Fail, format!("{call}: {why}")),
    };
    let succeeded = matches!(&driven.end, End::Complete(result) if is_success(result));
    let round_trip = RoundTrip {
        asked: true,
        replayable: succeeded.then_some(driven.last),
    };
    (outcome, round_trip)
}

/// The last round of a successful round trip sent again, exactly: it should not succeed a
/// second time (a state that allows an action allows it once).
pub async fn check_replayed(server: &mut Stateless, last: Option<&Value>) -> Outcome {
    let Some(last) = last else {
        return (
            Verdict::NotApplicable,
            "the round trip did not succeed, so a replay of it shows nothing".into(),
        );
    };
    let response = server.request("tools/call", last.clone()).await;
    match response.as_ref().map(|r| (r, question(r))) {
        None => (
            Verdict::Fail,
            format!(
                "no answer to the replayed round within {:?}",
                server.answer_timeout()
            ),
        ),
        Some((r, _)) if r.get("error").is_some() => (
            Verdict::Pass,
            format!("refused: error {}", error_code(r).unwrap_or_default()),
        ),
        Some((_, Ok(Some(_)))) => (Verdict::Pass, "asked again instead".into()),
        Some((_, Err(why))) => (Verdict::Fail, why),
        Some((r, Ok(None))) if is_success(&r["result"]) => (
            Verdict::Warn,
            format!(
                "the same requestState and answers succeeded twice ({}): a state that allows an action should be redeemed once",
                complete(&r["result"])
            ),
        ),
        Some((r, Ok(None))) => (
            Verdict::Pass,
            format!("refused: {}", complete(&r["result"])),
        ),
    }
}

/// `state` with its middle character changed (to `A`, or `B` where it was `A`), and where.
fn tamper(state: &str) -> (String, usize) {
    let middle = state
        .char_indices()
        .nth(state.chars().count() / 2)
        .map_or(0, |(at, _)| at);
    let mut tampered = state.to_owned();
    if let Some(old) = state[middle..].chars().next() {
        let new = if old == 'A' { "B" } else { "A" };
        tampered.replace_range(middle..middle + old.len_utf8(), new);
    }
    (tampered, middle)
}

/// The question's answers accepted, with its `requestState` altered by one character: the
/// server must refuse (an error, an isError result, or asking again), never succeed.
pub async fn check_tampered(server: &mut Stateless, call: &ToolCall) -> Outcome {
    let asked = match ask(server, call).await {
        Ok(asked) => asked,
        Err(outcome) => return outcome,
    };
    let Some(state) = asked.request_state.as_deref() else {
        return (
            Verdict::NotApplicable,
            format!("{call} asked without a requestState: nothing to alter"),
        );
    };
    let responses = match asked
        .input_requests
        .as_ref()
        .map(|r| answer(r, Reply::Accept))
    {
        Some(Err(why)) => return (Verdict::Fail, format!("{call}: {why}")),
        Some(Ok(responses)) => Some(responses),
        None => None,
    };
    let (tampered, at) = tamper(state);
    let response = server
        .request("tools/call", round(call, responses, Some(&tampered)))
        .await;
    let changed = format!("the requestState with the character at byte {at} changed");
    match response.as_ref().map(|r| (r, question(r))) {
        None => (
            Verdict::Fail,
            format!(
                "no answer within {:?} to {changed}",
                server.answer_timeout()
            ),
        ),
        Some((r, _)) if r.get("error").is_some() => (
            Verdict::Pass,
            format!(
                "{changed}: refused with error {}",
                error_code(r).unwrap_or_default()
            ),
        ),
        Some((_, Ok(Some(_)))) => (Verdict::Pass, format!("{changed}: asked again")),
        Some((_, Err(why))) => (Verdict::Fail, why),
        Some((r, Ok(None))) if is_success(&r["result"]) => (
            Verdict::Fail,
            format!(
                "{changed} and the answers accepted: {}; a server must refuse a state that does not verify",
                complete(&r["result"])
            ),
        ),
        Some((r, Ok(None))) => (
            Verdict::Pass,
            format!("{changed}: refused with {}", complete(&r["result"])),
        ),
    }
}

/// Every question declined: the call must still end, with a result or an error.
pub async fn check_declined(server: &mut Stateless, call: &ToolCall) -> Outcome {
    let asked = match ask(server, call).await {
        Ok(asked) => asked,
        Err(outcome) => return outcome,
    };
    let driven = drive(server, call, asked, Reply::Decline).await;
    let rounds = driven.rounds;
    match driven.end {
        End::Complete(result) => (
            Verdict::Pass,
            format!(
                "every question declined; the call ended with {} after {rounds} rounds",
                complete(&result)
            ),
        ),
        End::Error(error) => (
            Verdict::Pass,
            format!(
                "every question declined; the call ended with error {} after {rounds} rounds",
                error_code(&error).unwrap_or_default()
            ),
        ),
        End::Silent => (
            Verdict::Fail,
            format!(
                "every question declined; no answer within {:?} to round {rounds}",
                server.answer_timeout()
            ),
        ),
        End::StillAsking => (
            Verdict::Warn,
            format!(
                "{call} still asks after {MAX_ROUNDS} rounds, each question declined (a declined question should end the call)"
            ),
        ),
        End::Unanswerable(why) => (Verdict::Fail, format!("{call}: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tampering_changes_one_character_in_the_middle() {
        assert_eq!(tamper("round-1"), ("rouAd-1".to_owned(), 3));
        assert_eq!(tamper("xxAxx"), ("xxBxx".to_owned(), 2));
        assert_eq!(tamper("aé€b"), ("aéAb".to_owned(), 3));
        assert_eq!(tamper(""), (String::new(), 0));
    }
}
