//! The sessions of the 2025-11-25 lifecycle: rmcp's in-memory session manager, with a cap on
//! how many are alive at once and each session's transport under the same bound on requests
//! in flight as stdio's ([`Bounded`]). Idle sessions end after the configured time (rmcp's
//! keep-alive).

use futures_util::Stream;
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_server::{
        RestoreOutcome, SessionId, SessionManager,
        session::{
            ServerSseMessage,
            local::{LocalSessionManager, LocalSessionManagerError, SessionConfig},
        },
    },
};

use crate::transport::bounded::{Bounded, MAX_IN_FLIGHT};

use super::HttpSettings;

/// rmcp's session manager, capped, with bounded transports.
pub struct Sessions {
    inner: LocalSessionManager,
    max: usize,
}

/// Why a session was not made or used.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    /// Every place is taken.
    #[error("{0} MCP sessions are open, the most this server keeps (--http-max-sessions)")]
    Full(usize),
    /// rmcp's own.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl Sessions {
    /// Sessions as `settings` bound them.
    pub fn new(settings: &HttpSettings) -> Self {
        let mut config = SessionConfig::default();
        config.keep_alive = Some(settings.session_idle);
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        Self {
            inner,
            max: settings.max_sessions,
        }
    }

    /// Whether no more session can be opened now.
    pub async fn full(&self) -> bool {
        self.inner.sessions.read().await.len() >= self.max
    }

    /// The most sessions alive at once (`--http-max-sessions`).
    pub fn max(&self) -> usize {
        self.max
    }

    /// How many sessions are alive.
    pub async fn count(&self) -> usize {
        self.inner.sessions.read().await.len()
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = Bounded<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // The gate refuses a new session when full (with 503); this catches the ones that
        // raced past it.
        if self.full().await {
            return Err(SessionsError::Full(self.max));
        }
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, Bounded::new(transport, MAX_IN_FLIGHT)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Sessions live in this process only (no session store): a client whose session is
        // gone starts a new one.
        Ok(RestoreOutcome::NotSupported)
    }
}
