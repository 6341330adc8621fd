//! How the HTTP transport refuses a request: its status and a JSON-RPC error saying why.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::{
    Response, StatusCode,
    header::{CONTENT_TYPE, HeaderValue},
};

/// An HTTP answer.
pub type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// A refusal: the status, and a JSON-RPC error without an id saying why (as the TypeScript
/// SDK's server answers; SDK clients show such an error's message to their user, where a
/// plain-text body becomes "Server returned an error response"). A server that is full says
/// so with the code of a busy stdio server; a request at fault gets "Invalid Request".
pub fn refusal(status: StatusCode, why: &str) -> HttpResponse {
    let code = if status == StatusCode::SERVICE_UNAVAILABLE {
        crate::transport::bounded::BUSY.0
    } else {
        -32600
    };
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": why}});
    json_refusal(status, body.to_string().into_bytes())
}

/// A refusal whose JSON-RPC error is written already.
pub fn json_refusal(status: StatusCode, body: Vec<u8>) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
