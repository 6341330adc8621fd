//! The one interface the agent talks to ([`Provider`]: a request in, a stream of
//! [`StreamEvent`]s out). Its HTTP implementation for the three dialects is
//! `http_provider` (the `providers` feature); a host may bring its own.

use tokio::{sync::mpsc, task::JoinHandle};

use super::{error::ProviderError, event::StreamEvent, message::ChatRequest};

/// A model behind some API.
pub trait Provider: Send + Sync {
    /// Who and where, for logs and messages: `ollama qwen3 at http://…/api/chat`.
    fn describe(&self) -> String;
    /// Sends one request; its response arrives as events. Dropping the stream abandons the
    /// request (the connection is closed).
    fn chat(&self, request: &ChatRequest<'_>) -> EventStream;
}

/// The response to one request, as it arrives.
#[derive(Debug)]
pub struct EventStream {
    events: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
    task: Option<JoinHandle<()>>,
}

impl EventStream {
    /// A stream fed by whoever holds the sender; `task` (if any) is aborted when the stream
    /// is dropped.
    pub fn new(
        events: mpsc::Receiver<Result<StreamEvent, ProviderError>>,
        task: Option<JoinHandle<()>>,
    ) -> Self {
        Self { events, task }
    }

    /// The next event; `None` once the response is over (after `Finished` or an error).
    pub async fn next(&mut self) -> Option<Result<StreamEvent, ProviderError>> {
        self.events.recv().await
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
