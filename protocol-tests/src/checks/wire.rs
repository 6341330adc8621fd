//! What every 2026-07-28 exchange must hold: caching hints on list results, the request
//! `_meta` the server must insist on, `resultType` on every result, and no request from the
//! server to the client (the revision has none on stdio).

use serde_json::{Value, json};

use super::{
    report::{Outcome, Verdict},
    response::error_code,
};
use crate::stateless::{REVISION, Stateless};

/// Most pages of one list followed.
const MAX_PAGES: usize = 50;

/// The list methods a capability of `server/discover` offers, with the key of their items.
const LISTS: [(&str, &str, &str); 4] = [
    ("tools", "tools/list", "tools"),
    ("prompts", "prompts/list", "prompts"),
    ("resources", "resources/list", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates"),
];

/// Every list the server's `capabilities` offer, each page with `ttlMs` (an integer ≥ 0) and
/// `cacheScope` ("public" or "private"), and `resources/read` of the first resource. Fills
/// `tools` with the tools listed.
pub(super) async fn check_caching(
    server: &mut Stateless,
    capabilities: &Value,
    tools: &mut Vec<Value>,
) -> Outcome {
    let mut seen = Vec::new();
    let mut problems = Vec::new();
    let mut first_resource = None;
    for (capability, method, key) in LISTS {
        if capabilities.get(capability).is_none() {
            continue;
        }
        let mut cursor: Option<Value> = None;
        for page in 1..=MAX_PAGES {
            let params = cursor
                .as_ref()
                .map_or_else(|| json!({}), |c| json!({"cursor": c}));
            let response = server.request(method, params).await;
            let Some(result) = response.as_ref().and_then(|r| r.get("result")) else {
                problems.push(format!(
                    "{method}: {}",
                    refusal(response.as_ref(), capability, server)
                ));
                break;
            };
            let items = result.get(key).and_then(Value::as_array);
            match (method, items) {
                ("tools/list", Some(items)) => tools.extend(items.iter().cloned()),
                ("resources/list", Some(items)) if first_resource.is_none() => {
                    first_resource = items.first().and_then(|r| r.get("uri")).cloned();
                }
                _ => {}
            }
            judge_hints(method, result, &mut seen, &mut problems);
            cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
            if cursor.is_none() {
                break;
            }
            if page == MAX_PAGES {
                problems.push(format!("{method}: more than {MAX_PAGES} pages"));
            }
        }
    }
    if let Some(uri) = first_resource {
        let method = "resources/read";
        let response = server.request(method, json!({"uri": uri})).await;
        match response.as_ref().and_then(|r| r.get("result")) {
            Some(result) => judge_hints(method, result, &mut seen, &mut problems),
            None => problems.push(format!(
                "{method} {uri}: {}",
                refusal(response.as_ref(), "resources", server)
            )),
        }
    }
    if !problems.is_empty() {
        (Verdict::Fail, problems.join("; "))
    } else if seen.is_empty() {
        (
            Verdict::NotApplicable,
            "the server offers no tools, prompts or resources to list".into(),
        )
    } else {
        (Verdict::Pass, seen.join(", "))
    }
}

/// Why a list the server offers gave no result.
fn refusal(response: Option<&Value>, capability: &str, server: &Stateless) -> String {
    match response {
        None => format!("no answer within {:?}", server.answer_timeout()),
        Some(r) => format!(
            "error {} although server/discover offers {capability}",
            error_code(r).unwrap_or_default()
        ),
    }
}

/// Notes one result's caching hints: what they are in `seen`, what is wrong in `problems`.
fn judge_hints(method: &str, result: &Value, seen: &mut Vec<String>, problems: &mut Vec<String>) {
    let ttl = result.get("ttlMs");
    let scope = result.get("cacheScope");
    let mut wrong = Vec::new();
    match ttl {
        None => wrong.push("no ttlMs".to_owned()),
        Some(ttl) if ttl.as_u64().is_none() => {
            wrong.push(format!("ttlMs is {ttl}, not an integer ≥ 0"));
        }
        Some(_) => {}
    }
    match scope.and_then(Value::as_str) {
        Some("public" | "private") => {}
        Some(_) | None => wrong.push(match scope {
            None => "no cacheScope".to_owned(),
            Some(scope) => format!("cacheScope is {scope}, not \"public\" or \"private\""),
        }),
    }
    if wrong.is_empty() {
        let hints = format!(
            "{method} (ttlMs {}, {})",
            ttl.cloned().unwrap_or_default(),
            scope.and_then(Value::as_str).unwrap_or_default()
        );
        if !seen.contains(&hints) {
            seen.push(hints);
        }
    } else {
        let problem = format!("{method}: {}", wrong.join(", "));
        if !problems.contains(&problem) {
            problems.push(problem);
        }
    }
}

/// The request `_meta` at 2026-07-28: without it, or without its protocol version or client
/// capabilities, a request is refused with -32602 (invalid params); without client info
/// (which clients should, not must, send) it is served.
pub(super) async fn check_request_meta(server: &mut Stateless) -> Outcome {
    let meta = server.meta().clone();
    let without = |key: &str| {
        let mut meta = meta.clone();
        if let Some(object) = meta.as_object_mut() {
            object.remove(&format!("io.modelcontextprotocol/{key}"));
        }
        json!({"_meta": meta})
    };
    let refused_cases = [
        ("without _meta", json!({})),
        ("without its protocolVersion", without("protocolVersion")),
        (
            "without its clientCapabilities",
            without("clientCapabilities"),
        ),
    ];
    let (mut failures, mut warnings) = (Vec::new(), Vec::new());
    let timeout = server.answer_timeout();
    for (case, params) in refused_cases {
        let response = server
            .session()
            .request("server/discover", Some(params), timeout)
            .await;
        match response.as_ref().map(|r| (r.get("result"), error_code(r))) {
            Some((None, Some(-32602))) => {}
            Some((None, code)) => warnings.push(format!(
                "{case}: refused with error {}, where {REVISION} says -32602 (invalid params)",
                code.unwrap_or_default()
            )),
            Some((Some(_), _)) => failures.push(format!(
                "{case}: answered, where {REVISION} requires error -32602 (invalid params)"
            )),
            None => failures.push(format!("{case}: no answer within {timeout:?}")),
        }
    }
    let response = server
        .session()
        .request("server/discover", Some(without("clientInfo")), timeout)
        .await;
    match &response {
        Some(r) if r.get("result").is_some() => {}
        Some(r) => warnings.push(format!(
            "without its clientInfo: refused with error {}; clientInfo is optional (clients should send it), so servers must not require it",
            error_code(r).unwrap_or_default()
        )),
        None => failures.push(format!("without its clientInfo: no answer within {timeout:?}")),
    }
    let all = || {
        failures
            .iter()
            .chain(&warnings)
            .cloned()
            .collect::<Vec<_>>()
    };
    if !failures.is_empty() {
        (
            Verdict::Fail,
            format!("server/discover {}", all().join("; ")),
        )
    } else if !warnings.is_empty() {
        (
            Verdict::Warn,
            format!("server/discover {}", all().join("; ")),
        )
    } else {
        (
            Verdict::Pass,
            "server/discover without _meta, without its protocolVersion and without its clientCapabilities: error -32602 each; without clientInfo: answered".into(),
        )
    }
}

/// The methods whose results may ask for input.
const MAY_ASK: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Every result the server answered at 2026-07-28 carries `resultType`: "complete", or
/// "input_required" for a method that may ask.
pub(super) fn check_result_type(server: &Stateless) -> Outcome {
    let mut problems = Vec::new();
    let (mut complete, mut asking) = (0, 0);
    for answered in server.answered() {
        let method = &answered.method;
        match answered.result.get("resultType") {
            Some(kind) if kind == "complete" => complete += 1,
            Some(kind) if kind == "input_required" && MAY_ASK.contains(&method.as_str()) => {
                asking += 1;
            }
            Some(kind) if kind == "input_required" => problems.push(format!(
                "{method}: input_required, which only {} may answer",
                MAY_ASK.join(", ")
            )),
            Some(kind) => problems.push(format!("{method}: resultType {kind}")),
            None => problems.push(format!("{method}: no resultType")),
        }
    }
    problems.dedup();
    if problems.is_empty() {
        (
            Verdict::Pass,
            format!(
                "all {} results: {complete} complete, {asking} input_required",
                complete + asking
            ),
        )
    } else {
        (
            Verdict::Fail,
            format!(
                "{} of {} results: {}",
                server.answered().len() - complete - asking,
                server.answered().len(),
                problems.join("; ")
            ),
        )
    }
}

/// No request from the server arrived: 2026-07-28 has none on stdio (a question is the
/// answer of the call that needs it, `input_required`).
pub(super) fn check_no_server_requests(server: &mut Stateless) -> Outcome {
    let exchanges = server.answered().len();
    let requests = server.session().server_requests();
    if requests.is_empty() {
        return (
            Verdict::Pass,
            format!("none in {exchanges} answered requests"),
        );
    }
    let named: Vec<String> = requests
        .iter()
        .map(|r| format!("{} (id {})", r.method, r.id))
        .collect();
    (
        Verdict::Fail,
        format!(
            "the server sent {} request{} to the client, which {REVISION} does not allow (ask with an input_required result instead): {}",
            requests.len(),
            if requests.len() == 1 { "" } else { "s" },
            named.join(", ")
        ),
    )
}
