//! A 2026-07-28 server's questions through the library: a tool call answered with
//! `InputRequiredResult` is answered by the host's `Elicitor` and sent again with the answers
//! and the state, round after round, and the caller sees one call and one result; a server
//! that never finishes, or asks for what this client does not offer, ends the call with an
//! error that says so. And the tools a 2026-07-28 server adds are seen, through the
//! `subscriptions/listen` the session opens. Against the fake server's `modern` mode
//! (2026-07-28 only).

use std::sync::{Arc, Mutex};

use mcp_client::{
    ClientError, ServerConnection,
    connection::{ElicitAnswer, Elicitor, MAX_INPUT_ROUNDS, MAX_QUESTIONS_PER_ROUND},
};
use serde_json::{Map, json};

use crate::harness::fake;

/// An elicitor answering each field of a question with `<field>-answer`, keeping the messages.
fn answering(asked: &Arc<Mutex<Vec<String>>>) -> Elicitor {
    let asked = Arc::clone(asked);
    Arc::new(move |question| {
        asked.lock().unwrap().push(question.message.clone());
        let content: Map<String, serde_json::Value> = question
            .fields()
            .into_iter()
            .map(|(name, _)| (name.clone(), json!(format!("{name}-answer"))))
            .collect();
        Box::pin(async move { ElicitAnswer::Accept(content.into()) })
    })
}

async fn modern(asked: &Arc<Mutex<Vec<String>>>) -> ServerConnection {
    let connection =
        ServerConnection::new(fake("modern", &["modern"])).with_elicitor(Some(answering(asked)));
    let info = connection.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    connection
}

#[tokio::test]
async fn two_rounds_of_questions_are_answered_and_the_caller_sees_one_result() {
    let asked = Arc::default();
    let connection = modern(&asked).await;
    let result = connection.call_tool("asktwice", Map::new()).await.unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    // Each answer went back, and each state exactly as the server gave it.
    assert_eq!(
        text,
        "colour-answer in the room-answer; states seen: round-2:colour-answer"
    );
    assert_eq!(*asked.lock().unwrap(), ["Which colour?", "Which room?"]);
    connection.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_asking_is_cut_off_after_the_round_limit() {
    let asked = Arc::default();
    let connection = modern(&asked).await;
    let err = connection
        .call_tool("askforever", Map::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Unfinished { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "MCP server `modern` did not finish `tools/call askforever`: it asked for input {MAX_INPUT_ROUNDS} times without finishing the call; this client stops there, and the call was not completed"
        )
    );
    assert_eq!(asked.lock().unwrap().len(), MAX_INPUT_ROUNDS);
    connection.shutdown().await;
}

#[tokio::test]
async fn questions_this_client_does_not_offer_or_none_at_all_end_the_call() {
    let asked = Arc::default();
    let connection = modern(&asked).await;
    let err = connection
        .call_tool("asksampling", Map::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `modern` did not finish `tools/call asksampling`: it asked for `sampling/createMessage`, which this client does not offer (it only puts questions to the person)"
    );
    let err = connection
        .call_tool("askempty", Map::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `modern` did not finish `tools/call askempty`: it answered `input_required` with neither questions nor state to send back"
    );
    assert!(asked.lock().unwrap().is_empty());
    // The session is still good.
    assert!(connection.call_tool("other", Map::new()).await.is_ok());
    connection.shutdown().await;
}

#[tokio::test]
async fn tools_a_2026_07_28_server_adds_are_seen_through_its_subscription() {
    let connection = modern(&Arc::default()).await;
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.iter().map(|tool| tool.name.to_string()).collect()
    };
    let before = names(connection.tools().await.unwrap());
    assert!(!before.contains(&"grown".to_owned()), "{before:?}");
    let (generation, session) = (connection.generation(), connection.session().await);
    // The fake says `tools/list_changed` (on the subscription) before it answers the call.
    let grown = connection.call_tool("grow", Map::new()).await.unwrap();
    assert_eq!(grown.content[0].as_text().unwrap().text, "grown");
    let after = names(connection.tools().await.unwrap());
    assert!(after.contains(&"grown".to_owned()), "{after:?}");
    // Counted as a change of the tools, within the same session.
    assert_eq!(connection.generation(), generation + 1);
    assert_eq!(connection.session().await, session);
    connection.shutdown().await;
}

#[tokio::test]
async fn a_round_of_more_questions_than_a_person_answers_asks_none() {
    let asked = Arc::default();
    let connection = modern(&asked).await;
    let err = connection
        .call_tool("askmany", Map::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "MCP server `modern` did not finish `tools/call askmany`: it asked 17 questions at once; this client puts at most {MAX_QUESTIONS_PER_ROUND} to the person in one round, so none was asked"
        )
    );
    assert!(asked.lock().unwrap().is_empty());
    // At the bound, every question is asked (and the fake then asks again: the round limit).
    let mut sixteen = Map::new();
    sixteen.insert("count".into(), json!(MAX_QUESTIONS_PER_ROUND));
    let err = connection.call_tool("askmany", sixteen).await.unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("asked for input {MAX_INPUT_ROUNDS} times")),
        "{err}"
    );
    assert_eq!(
        asked.lock().unwrap().len(),
        MAX_QUESTIONS_PER_ROUND * MAX_INPUT_ROUNDS
    );
    connection.shutdown().await;
}
