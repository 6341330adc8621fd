//! The person's yes on MCP 2026-07-28, through rmcp's client on the `server/discover`
//! lifecycle over an in-memory pipe (the stdio server's code path): a sensitive action is
//! answered with the question (`InputRequiredResult`), never with a request to the client, and
//! only the call retried with an accept + `confirm: true` on the state of that same question,
//! fresh and never used, writes. The simulated gateway's record of writes is the witness.

use std::time::Duration;

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt as _, RoleClient, ServiceExt as _,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
        ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, InputRequiredResult,
        ProtocolVersion,
    },
    service::{RequestContext, RunningService},
};
use serde_json::{Value, json};
use zwave_mcp_server::{SensitivePolicy, ZwaveServer, devices::SensitiveClass};

use crate::harness::{Home, text_of};

/// A 2026-07-28 client that declares elicitation and fails the test if the server ever sends
/// it a request.
#[derive(Clone)]
struct Asking;

impl ClientHandler for Asking {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation_with(ElicitationCapability::new())
                .build(),
            rmcp::model::Implementation::new("asking", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        panic!("the server sent a request to a 2026-07-28 client");
    }
}

fn allowed(classes: &[&str], ask_timeout: Duration) -> SensitivePolicy {
    SensitivePolicy {
        allowed: classes
            .iter()
            .map(|class| {
                SensitiveClass::ALL
                    .into_iter()
                    .find(|known| known.name() == *class)
                    .unwrap()
            })
            .collect(),
        ask_timeout,
        devices: vec!["name:switch one".parse().unwrap()],
        ..SensitivePolicy::default()
    }
}

/// The demo home's server with `policy`, and `client` on the 2026-07-28 lifecycle.
async fn serve<C: ClientHandler>(
    home: &Home,
    policy: SensitivePolicy,
    client: C,
) -> RunningService<RoleClient, C> {
    let server =
        ZwaveServer::new(home.network.clone(), Duration::from_secs(2)).with_sensitive(policy);
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client
        .serve_with_lifecycle(
            client_io,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
}

/// One `tools/call` round of the control tool with `args`, and the answer and state sent back.
async fn round<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    args: Value,
    answer: Option<Value>,
    state: Option<&str>,
) -> CallToolResponse {
    try_round(client, args, answer, state).await.unwrap()
}

/// [`round`], when the request may be refused with a JSON-RPC error.
async fn try_round<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    args: Value,
    answer: Option<Value>,
    state: Option<&str>,
) -> Result<CallToolResponse, rmcp::ServiceError> {
    let Value::Object(arguments) = args else {
        panic!("tool arguments must be an object")
    };
    let mut params = CallToolRequestParams::new("control_zwave_device").with_arguments(arguments);
    if let Some(answer) = answer {
        params = params.with_input_responses([("confirmation".to_owned(), answer)].into());
    }
    params.request_state = state.map(str::to_owned);
    tokio::time::timeout(Duration::from_secs(20), client.call_tool_once(params))
        .await
        .expect("the call is answered within 20 s")
}

/// Asserts that the request was refused with the JSON-RPC error `code` (2026-07-28's rules
/// for a request state that does not verify and a capability not declared), saying `why`.
fn assert_rejected(
    answer: Result<CallToolResponse, rmcp::ServiceError>,
    code: rmcp::model::ErrorCode,
    why: &str,
) -> ErrorData {
    let Err(rmcp::ServiceError::McpError(error)) = answer else {
        panic!("expected a JSON-RPC error, got {answer:?}")
    };
    assert_eq!(error.code, code, "{error:?}");
    assert_eq!(
        error.message,
        format!("{UNLOCKING} needs a person's yes, and {why}: nothing was sent.")
    );
    error
}

fn question(response: CallToolResponse) -> InputRequiredResult {
    match response {
        CallToolResponse::InputRequired(question) => question,
        other => panic!("expected a question, got {other:?}"),
    }
}

fn result(response: CallToolResponse) -> CallToolResult {
    match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a result, got {other:?}"),
    }
}

fn unlock() -> Value {
    json!({"deviceName": "Front Door Lock", "action": "unlock"})
}

fn yes() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

fn writes(home: &Home) -> usize {
    home.sim
        .received()
        .iter()
        .filter(|request| request.api == "writeValue")
        .count()
}

/// The state of a new question about `args`.
async fn asked<C: ClientHandler>(client: &RunningService<RoleClient, C>, args: Value) -> String {
    question(round(client, args, None, None).await)
        .request_state
        .expect("a question carries its state")
}

/// Asserts that `response` refuses with `why`, the device being the lock.
fn assert_refused(response: CallToolResponse, what: &str, why: &str) {
    let refused = result(response);
    assert_eq!(refused.is_error, Some(true), "{}", text_of(&refused));
    assert_eq!(
        text_of(&refused),
        format!("{what} needs a person's yes, and {why}: nothing was sent.")
    );
}

const UNLOCKING: &str = "Unlocking \"Front Door Lock\" (node 8, Entrance)";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_the_question_is_the_answer_and_only_the_retried_yes_unlocks() {
    let home = Home::start().await;
    let client = serve(&home, allowed(&["lock"], Duration::from_secs(60)), Asking).await;
    let asked = question(round(&client, unlock(), None, None).await);
    let wire = serde_json::to_value(&asked).unwrap();
    assert_eq!(wire["resultType"], "input_required", "{wire}");
    let form = &wire["inputRequests"]["confirmation"];
    assert_eq!(form["method"], "elicitation/create", "{wire}");
    assert_eq!(
        form["params"]["message"],
        "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
    );
    assert_eq!(
        form["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );
    assert_eq!(
        form["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    assert_eq!(writes(&home), 0, "asking writes nothing");
    let state = asked.request_state.unwrap();
    let unlocked = result(round(&client, unlock(), Some(yes()), Some(&state)).await);
    assert_eq!(unlocked.is_error, Some(false), "{}", text_of(&unlocked));
    assert_eq!(home.sim.value(8, "98-0-targetMode"), Some(json!(0)));
    assert_eq!(writes(&home), 1);
    // The same yes again: one yes is one write.
    assert_refused(
        round(&client, unlock(), Some(yes()), Some(&state)).await,
        UNLOCKING,
        "that answer was used already: one yes allows one command (call again without it to be asked again)",
    );
    assert_eq!(writes(&home), 1, "a replayed yes writes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_every_answer_but_a_fresh_yes_to_the_same_call_sends_nothing() {
    let home = Home::start().await;
    let client = serve(&home, allowed(&["lock"], Duration::from_secs(60)), Asking).await;
    for (answer, why) in [
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            "the user answered no",
        ),
        (json!({"action": "decline"}), "the user declined"),
        (
            json!({"action": "cancel"}),
            "the user dismissed the question",
        ),
        (json!({"action": "accept"}), "the answer did not say yes"),
        (
            json!({"action": "accept", "content": {"confirm": "true"}}),
            "the answer did not say yes",
        ),
    ] {
        let state = asked(&client, unlock()).await;
        assert_refused(
            round(&client, unlock(), Some(answer), Some(&state)).await,
            UNLOCKING,
            why,
        );
    }
    // A state without an answer, and an answer without a state.
    let state = asked(&client, unlock()).await;
    assert_refused(
        round(&client, unlock(), None, Some(&state)).await,
        UNLOCKING,
        "the retried call carried no answer to the question",
    );
    assert_refused(
        round(&client, unlock(), Some(yes()), None).await,
        UNLOCKING,
        "the answer came without the request state of its question (call again without an answer to be asked)",
    );
    // A state altered by one character, or made up.
    let state = asked(&client, unlock()).await;
    let mut tampered = state.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    for forged in [
        String::from_utf8(tampered).unwrap(),
        "rs1.e30.AAAA".to_owned(),
    ] {
        assert_rejected(
            try_round(&client, unlock(), Some(yes()), Some(&forged)).await,
            rmcp::model::ErrorCode::INVALID_PARAMS,
            "the request state sent back does not verify (it was altered, or sealed by another server process: a replica, or this server before a restart; call again without it to be asked again)",
        );
    }
    // The yes to a question about another call: another device, another action.
    let switch_on = json!({"deviceName": "Switch One", "action": "on"});
    let switch_off = json!({"deviceName": "Switch One", "action": "off"});
    let other_call = "the answer was given to another call (another device, action or arguments, or the device was renamed or moved since)";
    let about_switch = asked(&client, switch_on.clone()).await;
    assert_refused(
        round(&client, unlock(), Some(yes()), Some(&about_switch)).await,
        UNLOCKING,
        other_call,
    );
    assert_refused(
        round(&client, switch_off, Some(yes()), Some(&about_switch)).await,
        "Commanding \"Switch One\" (node 2, Kitchen)",
        other_call,
    );
    assert_eq!(writes(&home), 0, "nothing was written");
    assert_eq!(home.sim.value(8, "98-0-targetMode"), Some(json!(255)));
    // The unspent state still answers its own call.
    let on = result(round(&client, switch_on, Some(yes()), Some(&about_switch)).await);
    assert_eq!(on.is_error, Some(false), "{}", text_of(&on));
    assert_eq!(writes(&home), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_yes_after_the_ask_timeout_sends_nothing() {
    let home = Home::start().await;
    let timeout = Duration::from_millis(5);
    let client = serve(&home, allowed(&["lock"], timeout), Asking).await;
    let state = asked(&client, unlock()).await;
    // Waits on the clock, bounded: the question's time runs out.
    let lapsed = std::time::Instant::now() + timeout + Duration::from_millis(2);
    while std::time::Instant::now() < lapsed {
        tokio::task::yield_now().await;
    }
    assert_refused(
        round(&client, unlock(), Some(yes()), Some(&state)).await,
        UNLOCKING,
        "nobody answered within 5ms",
    );
    assert_eq!(writes(&home), 0, "nothing was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_a_client_that_cannot_ask_is_refused_unasked() {
    let home = Home::start().await;
    let client = serve(&home, allowed(&["lock"], Duration::from_secs(60)), ()).await;
    let refused = assert_rejected(
        try_round(&client, unlock(), None, None).await,
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can, or the owner can start the server with --sensitive-without-confirmation, which lets any agent do it unasked",
    );
    assert_eq!(
        refused.data,
        Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}))
    );
    // What is not sensitive is carried out at once.
    let locked = result(
        round(
            &client,
            json!({"deviceName": "Front Door Lock", "action": "lock"}),
            None,
            None,
        )
        .await,
    );
    assert_eq!(locked.is_error, Some(false), "{}", text_of(&locked));
    assert_eq!(writes(&home), 1, "only the locking");
}
