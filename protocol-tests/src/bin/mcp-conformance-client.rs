//! `mcp-conformance-client`: mcp-client's library as the client under test of the official MCP
//! conformance suite (`conformance client --command mcp-conformance-client`).
//!
//! The suite starts a test server for one scenario and runs this program with the server's URL
//! as the last argument, the scenario in `MCP_CONFORMANCE_SCENARIO`, scenario data (JSON) in
//! `MCP_CONFORMANCE_CONTEXT` and the revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`. It does
//! what a host does with a server: connect at that revision (`initialize` up to 2025-11-25,
//! `server/discover` from 2026-07-28), list the tools and call each, answering every question
//! the server asks with the defaults its form gives. The suite judges the traffic.
//!
//! The `auth/*` scenarios protect their server with OAuth: the client signs in as a host
//! without a person would, following the authorization server's redirect itself
//! ([`follow_redirects`](mcp_client::transport::http::oauth::follow_redirects)), with the
//! pre-registered client of the context when it gives one, the suite's Client ID Metadata
//! Document where its authorization server takes them, and the client-credentials grant for
//! the scenarios of that extension.
//!
//! Exit status: 0 when the session ran to its end (a call the server refused with a JSON-RPC
//! error is its answer, shown on stderr), 1 with the reason on stderr otherwise.

use std::{process::ExitCode, sync::Arc, time::Duration};

use mcp_client::{
    ClientError, ServerConfig, ServerConnection,
    connection::{ElicitAnswer, Elicitation, Elicitor, RetryPolicy, lifecycle},
    transport::{
        HttpEndpoint,
        http::oauth::{OAuthGrant, OAuthOptions, OAuthSettings, headless_authorizer},
    },
};

/// The Client ID Metadata Document the suite's authorization servers expect as client id.
const CONFORMANCE_CLIENT_METADATA: &str = "https://conformance-test.local/client-metadata.json";
use serde_json::{Map, Value};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("mcp-conformance-client: {reason}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let url = std::env::args()
        .skip(1)
        .last()
        .ok_or("give the server's URL as the last argument")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = context()?;
    let mut endpoint = HttpEndpoint::new("under-test", url);
    if scenario.starts_with("auth/") {
        endpoint.oauth = Some(oauth_settings(&scenario, &context));
    }
    let mut config = ServerConfig::http(endpoint);
    config.retry = RetryPolicy {
        attempts: 1,
        ..RetryPolicy::default()
    };
    config.init_timeout = Duration::from_secs(20);
    config.call_timeout = Duration::from_secs(20);
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        config.protocol_version = Some(lifecycle::parse(&version)?);
    }
    let connection = ServerConnection::new(config)
        .with_elicitor(Some(defaults_elicitor()))
        .with_oauth(OAuthOptions {
            authorizer: Some(headless_authorizer()),
            token_dir: None,
        });
    let outcome = session(&connection, &context).await;
    connection.shutdown().await;
    outcome.map_err(|err| format!("scenario `{scenario}`: {err}"))
}

/// How an `auth/*` scenario signs in: the context's client (`client_id`, `client_secret`)
/// when it gives one, with the client-credentials grant for that extension's scenarios.
fn oauth_settings(scenario: &str, context: &Value) -> OAuthSettings {
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    let grant = if scenario.contains("client-credentials") {
        OAuthGrant::ClientCredentials
    } else {
        OAuthGrant::AuthorizationCode
    };
    let mut settings = OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CONFORMANCE_CLIENT_METADATA.to_owned()),
        ..OAuthSettings::default()
    };
    settings.grant = grant;
    settings
}

/// `MCP_CONFORMANCE_CONTEXT` as JSON (an empty object when unset).
fn context() -> Result<Value, String> {
    match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .map_err(|err| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {err}")),
        _ => Ok(Value::Object(Map::new())),
    }
}

/// Connect, list the tools, call each one (the calls the context names, when it names some).
async fn session(connection: &ServerConnection, context: &Value) -> Result<(), String> {
    connection.connect().await.map_err(|err| err.to_string())?;
    let tools = connection.tools().await.map_err(|err| err.to_string())?;
    let calls: Vec<(String, Map<String, Value>)> = match context["toolCalls"].as_array() {
        Some(named) => named
            .iter()
            .filter_map(|call| {
                let name = call["name"].as_str()?.to_owned();
                let arguments = call["arguments"].as_object().cloned().unwrap_or_default();
                Some((name, arguments))
            })
            .collect(),
        None => tools
            .iter()
            .map(|tool| {
                let schema = Value::Object((*tool.input_schema).clone());
                (tool.name.to_string(), arguments_for(&schema))
            })
            .collect(),
    };
    for (name, arguments) in calls {
        match connection.call_tool(&name, arguments).await {
            Ok(_) => {}
            // The server's own answer (its error) ends that call, not the session.
            Err(refused @ ClientError::Refused { .. }) => eprintln!("{refused}"),
            Err(err) => return Err(format!("calling `{name}`: {err}")),
        }
    }
    Ok(())
}

/// Arguments that satisfy `schema`'s required properties: each its default, else a value of
/// its type.
fn arguments_for(schema: &Value) -> Map<String, Value> {
    let properties = schema["properties"].as_object();
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|name| {
            let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
            (name.to_owned(), value_for(property))
        })
        .collect()
}

/// A value `property` accepts: its default, its first allowed value, or one of its type.
fn value_for(property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = property["enum"]
        .as_array()
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    match property["type"].as_str() {
        Some("number" | "integer") => Value::from(1),
        Some("boolean") => Value::Bool(true),
        Some("object") => Value::Object(arguments_for(property)),
        Some("array") => Value::Array(Vec::new()),
        _ => Value::from("test"),
    }
}

/// Answers every question with the defaults its form gives (SEP-1034): accepted, each
/// property that has a default set to it, and a required one without a default to a value
/// of its type.
fn defaults_elicitor() -> Elicitor {
    Arc::new(|question: Elicitation| {
        let mut content = arguments_for(&question.schema);
        for (name, property) in question.fields() {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
        Box::pin(async move { ElicitAnswer::Accept(Value::Object(content)) })
    })
}
