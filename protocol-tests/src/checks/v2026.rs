//! The run at 2026-07-28 (stateless), in order, in one server process: `server/discover`
//! first (a server that refuses it does not speak the revision), caching hints, the request
//! `_meta`, the input-required checks, and last what every exchange before had to hold.

use super::{
    Suite,
    discover::check_discover,
    input_required::{check_declined, check_replayed, check_round_trip, check_tampered, probe},
    report::Verdict,
    wire::{check_caching, check_no_server_requests, check_request_meta, check_result_type},
};
use crate::{
    options::{Options, Protocol},
    stateless::{REVISION, Stateless},
};

/// The check `name` at 2026-07-28.
fn named(name: &str) -> String {
    format!("{REVISION} {name}")
}

/// Runs the 2026-07-28 checks where the server offers the revision (or fails the first one,
/// when `options` asks for 2026-07-28 alone).
pub(super) async fn run(suite: &mut Suite, options: &Options) {
    let Some(session) = suite.session(REVISION) else {
        return;
    };
    let mut server = Stateless::new(session);
    let required = options.protocol == Protocol::Stateless;
    let (outcome, capabilities) = check_discover(&mut server, required).await;
    suite.record(&named("server/discover"), outcome);
    let Some(capabilities) = capabilities else {
        return;
    };
    let mut tools = Vec::new();
    let outcome = check_caching(&mut server, &capabilities, &mut tools).await;
    suite.record(&named("caching hints"), outcome);
    let outcome = check_request_meta(&mut server).await;
    suite.record(&named("request _meta"), outcome);
    input_required(suite, &mut server, options, &tools).await;
    suite.record(&named("resultType"), check_result_type(&server));
    suite.record(
        &named("no requests to the client"),
        check_no_server_requests(&mut server),
    );
}

/// The input-required checks, on the call the options name or on one of the checker's own
/// that asked.
async fn input_required(
    suite: &mut Suite,
    server: &mut Stateless,
    options: &Options,
    tools: &[serde_json::Value],
) {
    let call = match &options.input_required_call {
        Some(call) => call.clone(),
        None => match probe(server, tools).await {
            Ok(call) => call,
            Err(why) => {
                suite.record(&named("input required"), (Verdict::NotApplicable, why));
                return;
            }
        },
    };
    let (outcome, round_trip) = check_round_trip(server, &call).await;
    suite.record(&named("input required: round trip"), outcome);
    if !round_trip.asked {
        return;
    }
    let outcome = check_replayed(server, round_trip.replayable.as_ref()).await;
    suite.record(&named("input required: replayed state"), outcome);
    let outcome = check_tampered(server, &call).await;
    suite.record(&named("input required: tampered state"), outcome);
    let outcome = check_declined(server, &call).await;
    suite.record(&named("input required: declined"), outcome);
}
