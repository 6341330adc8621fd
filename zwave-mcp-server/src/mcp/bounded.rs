//! A bound on requests in flight: rmcp reads requests as fast as they come and runs each at
//! once, so a client pipelining 100,000 calls would have 100,000 running (measured: RSS from
//! 10 MiB to 533 MiB). [`Bounded`] wraps the transport: a request is handed to rmcp only when
//! one of [`MAX_IN_FLIGHT`] places is free, and until then nothing more is read from stdin (the
//! pipe fills and the client waits). A place is freed once the request's response or error has
//! been written (rmcp may run sends concurrently: an answer waiting for a slow reader still
//! counts), or when the client cancels the request (a cancelled request gets no response).

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex, PoisonError},
};

use rmcp::{
    RoleServer,
    model::{ClientNotification, JsonRpcMessage, RequestId},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests running at once; more wait, unread, in the pipe.
pub const MAX_IN_FLIGHT: usize = 64;

/// A server transport that runs at most `limit` requests at once.
pub struct Bounded<T> {
    inner: T,
    places: Arc<Semaphore>,
    /// The place each running request holds, by id.
    held: Arc<Mutex<HashMap<RequestId, OwnedSemaphorePermit>>>,
    /// A request read but not yet admitted. Kept here, not in the `receive` future, because
    /// rmcp polls `receive` inside `select!`: a dropped future must not lose the message.
    waiting: Option<RxJsonRpcMessage<RoleServer>>,
}

impl<T> Bounded<T> {
    /// Wraps `inner`, admitting at most `limit` requests at once.
    pub fn new(inner: T, limit: usize) -> Self {
        Self {
            inner,
            places: Arc::new(Semaphore::new(limit.max(1))),
            held: Arc::default(),
            waiting: None,
        }
    }

    fn release(&self, id: &RequestId) -> Option<OwnedSemaphorePermit> {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Bounded<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let place = match &item {
            JsonRpcMessage::Response(response) => self.release(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref().and_then(|id| self.release(id)),
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
        if self.waiting.is_none() {
            let message = self.inner.receive().await?;
            if let JsonRpcMessage::Notification(notification) = &message
                && let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                && let Some(id) = &cancelled.params.request_id
            {
                drop(self.release(id));
            }
            if !matches!(message, JsonRpcMessage::Request(_)) {
                return Some(message);
            }
            self.waiting = Some(message);
        }
        // The semaphore is never closed; if it were, the request would go through unbounded
        // rather than be lost.
        let Ok(place) = Arc::clone(&self.places).acquire_owned().await else {
            return self.waiting.take();
        };
        let message = self.waiting.take()?;
        if let JsonRpcMessage::Request(request) = &message {
            self.held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(request.id.clone(), place);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
