//! A bound on requests in flight: rmcp reads requests as fast as they come and runs each at
//! once, so a client pipelining 100,000 calls would have 100,000 running (measured: RSS from
//! 10 MiB to 533 MiB). [`Bounded`] wraps the transport: a request is handed to rmcp only while
//! one of [`MAX_IN_FLIGHT`] places is free; one that comes while every place is taken is
//! answered at once with [`BUSY`] and never reaches rmcp.
//!
//! Reading never waits for a place: what the client sends that is no request (its answers to
//! the server's own requests, such as a person's yes to an `elicitation/create`, and
//! `notifications/cancelled`) is what frees the places, so it must reach rmcp while every
//! place is taken. A refusal is written before the next line is read: a client that sends
//! faster than it reads its answers is held back by the pipe, not by memory here.
//!
//! A place is freed when both are over: the request's handler (a cancelled request's handler
//! runs on to its end, and may be writing to a device), and its answer (written, however slow
//! the reader; or given up because the client cancelled the request). The handler's share
//! rides in the request's extensions, which rmcp hands to the handler and drops with it.
//!
//! A request whose id is that of a request still in flight is answered at once with an error
//! and never reaches rmcp: rmcp keys requests by id, so the second would take the first one's
//! place and one of the two answers would be lost.

use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError, Weak},
};

use rmcp::{
    RoleServer,
    model::{
        ClientNotification, ErrorCode, ErrorData, GetExtensions as _, JsonRpcMessage, RequestId,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests running at once; one more is refused with [`BUSY`].
pub const MAX_IN_FLIGHT: usize = 64;

/// The error a request gets when every place is taken: JSON-RPC's first implementation-defined
/// server error (rmcp's own are -32002 and -32020..=-32022; -32000 is free).
pub const BUSY: ErrorCode = ErrorCode(-32000);

/// One request's place: freed when the last share of it is dropped.
#[derive(Debug)]
struct Place(#[expect(dead_code, reason = "held for its drop")] OwnedSemaphorePermit);

/// The handler's share of its request's place, carried in the request's extensions.
#[derive(Debug, Clone)]
struct HandlerShare(#[expect(dead_code, reason = "held for its drop")] Arc<Place>);

/// A server transport that runs at most `limit` requests at once.
pub struct Bounded<T> {
    inner: T,
    places: Arc<Semaphore>,
    limit: usize,
    /// The answer's share of each request's place, by id, until its answer is written or the
    /// client cancels it.
    unanswered: Arc<Mutex<HashMap<RequestId, Arc<Place>>>>,
    /// Every admitted request's place, weakly: alive while its handler or answer is.
    in_flight: HashMap<RequestId, Weak<Place>>,
    /// A refusal being written (`true` once written). Kept here, not in the `receive` future,
    /// because rmcp polls `receive` inside `select!`: a dropped future must neither lose the
    /// refusal nor leave half a line on stdout.
    refusing: Option<Pin<Box<dyn Future<Output = bool> + Send>>>,
}

impl<T> Bounded<T> {
    /// Wraps `inner`, admitting at most `limit` requests at once.
    pub fn new(inner: T, limit: usize) -> Self {
        Self {
            inner,
            places: Arc::new(Semaphore::new(limit.max(1))),
            limit: limit.max(1),
            unanswered: Arc::default(),
            in_flight: HashMap::new(),
            refusing: None,
        }
    }

    fn answered(&self, id: &RequestId) -> Option<Arc<Place>> {
        self.unanswered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }

    fn is_in_flight(&self, id: &RequestId) -> bool {
        self.in_flight
            .get(id)
            .is_some_and(|place| place.strong_count() > 0)
    }
}

/// The most characters of a JSON-RPC error's message.
const MAX_ERROR_CHARS: usize = 1024;

/// `error` as a client may read it: its message and the texts of its data escaped and cut,
/// as every refusal quotes what a client sent (rmcp's own errors quote a method name or a
/// value whole: a 901,000-character method came back in a 903,061-byte line, and invisible
/// characters as they were).
fn quoted_safely(error: &mut rmcp::model::ErrorData) {
    use crate::network::text::{clean, clean_json};
    if let std::borrow::Cow::Owned(cleaned) = clean(&error.message, MAX_ERROR_CHARS) {
        error.message = cleaned.into();
    }
    if let Some(data) = &mut error.data {
        clean_json(data);
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Bounded<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Error(error) = &mut item {
            quoted_safely(&mut error.error);
        }
        let place = match &item {
            JsonRpcMessage::Response(response) => self.answered(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref().and_then(|id| self.answered(id)),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let sending = self.inner.send(item);
        async move {
            let sent = sending.await;
            drop(place);
            sent
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(refusal) = self.refusing.as_mut() {
                let written = refusal.await;
                self.refusing = None;
                if !written {
                    return None;
                }
            }
            let message = self.inner.receive().await?;
            if let JsonRpcMessage::Notification(notification) = &message
                && let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                && let Some(id) = &cancelled.params.request_id
            {
                // rmcp drops a cancelled request's answer: its share goes now; the
                // handler's share stays until the handler ends.
                drop(self.answered(id));
            }
            // Answers to the server's own requests and notifications go through whatever
            // the places: they are what frees them.
            let mut request = match message {
                JsonRpcMessage::Request(request) => request,
                other => return Some(other),
            };
            if self.is_in_flight(&request.id) {
                tracing::warn!(id = %request.id, "refused a request reusing the id of one in flight");
                let refusal = ErrorData::invalid_request(
                    format!(
                        "request id {} is already in use by a request in flight: give every request an id of its own",
                        request.id
                    ),
                    None,
                );
                self.refuse(refusal, request.id);
                continue;
            }
            // Never a wait: a request past the bound is answered now, and reading goes on.
            let Ok(permit) = Arc::clone(&self.places).try_acquire_owned() else {
                tracing::warn!(id = %request.id, limit = self.limit, "refused a request: every place is taken");
                let refusal = ErrorData::new(
                    BUSY,
                    format!(
                        "Server busy: {} requests are already in flight (some may be waiting for a person's answer); send this one again once one of them is answered",
                        self.limit
                    ),
                    None,
                );
                self.refuse(refusal, request.id);
                continue;
            };
            let place = Arc::new(Place(permit));
            request
                .request
                .extensions_mut()
                .insert(HandlerShare(Arc::clone(&place)));
            // At most `limit` are alive: forgetting the others now and then keeps this small.
            if self.in_flight.len() >= 4 * self.limit {
                self.in_flight.retain(|_, place| place.strong_count() > 0);
            }
            self.in_flight
                .insert(request.id.clone(), Arc::downgrade(&place));
            self.unanswered
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(request.id.clone(), place);
            return Some(JsonRpcMessage::Request(request));
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl<T: Transport<RoleServer>> Bounded<T> {
    /// Answers request `id` with `error`; written before anything more is read.
    fn refuse(&mut self, error: ErrorData, id: RequestId) {
        let sending = self
            .inner
            .send(TxJsonRpcMessage::<RoleServer>::error(error, Some(id)));
        self.refusing = Some(Box::pin(async move { sending.await.is_ok() }));
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ErrorCode, ErrorData};
    use serde_json::json;

    use super::*;

    #[test]
    fn an_error_quotes_what_a_client_sent_escaped_and_cut() {
        let method = format!("x\u{e0041}\u{200b}\n{}", "m".repeat(900_000));
        let mut error = ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            Some(json!({"uri": "zwave://devices/8\u{ad}", "n": 1})),
        );
        quoted_safely(&mut error);
        assert!(
            error
                .message
                .starts_with("Method not found: x\\u{e0041}\\u{200b}\\nmmm"),
            "{}",
            &error.message[..60]
        );
        // Cut at the limit of characters sent (its escapes may add a few).
        assert!(error.message.chars().count() < MAX_ERROR_CHARS + 64);
        assert_eq!(
            error.data,
            Some(json!({"uri": "zwave://devices/8\\u{ad}", "n": 1}))
        );
        let mut plain = ErrorData::invalid_params("deviceName is missing", None);
        quoted_safely(&mut plain);
        assert_eq!(plain.message, "deviceName is missing");
    }
}
