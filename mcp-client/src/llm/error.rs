//! What can go wrong talking to a model, with what the user can do about it. Retry policy asks
//! the error ([`ProviderError::is_retryable`], [`ProviderError::retry_after`]), never its text;
//! what a message keeps of a provider's words is cut to one preview's length.

use std::time::Duration;

/// Characters of a provider's words (an error body, a frame that is not JSON) kept in messages.
#[cfg(feature = "providers")]
const MESSAGE_PREVIEW: usize = 300;

/// A failed model request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// Nothing answered at the address.
    #[error("cannot reach {provider} at {url} ({reason}): {hint}")]
    Unreachable {
        /// The provider's name.
        provider: &'static str,
        /// The address tried.
        url: String,
        /// What the connection said.
        reason: String,
        /// What to check.
        hint: String,
    },
    /// The provider answered with a redirect to another origin (scheme, host or port), or
    /// from https to plain http: not followed, so neither the key nor the conversation went
    /// there.
    #[error(
        "{provider} at {from} redirected the request to {to}, another address: it was not followed, and nothing was sent there (the API key and the conversation go only to the address given). If the provider moved, give its new address with --base-url (or {env_var})"
    )]
    Redirected {
        /// The provider's name.
        provider: &'static str,
        /// The address asked.
        from: String,
        /// Where the provider pointed.
        to: String,
        /// Where the base URL is read from.
        env_var: &'static str,
    },
    /// The provider needs a key and none is set.
    #[error("{provider} needs an API key: set {env_var}")]
    MissingKey {
        /// The provider's name.
        provider: &'static str,
        /// Where the key is read from.
        env_var: &'static str,
    },
    /// The key was refused (401/403). The key itself is never shown.
    #[error(
        "{provider} refused the request with status {status} ({message}): check the key in {env_var}"
    )]
    Unauthorized {
        /// The provider's name.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// Where the key is read from.
        env_var: &'static str,
    },
    /// The model does not exist there (404).
    #[error("{provider} has no model `{model}` ({message}){hint}")]
    ModelNotFound {
        /// The provider's name.
        provider: &'static str,
        /// The model asked for.
        model: String,
        /// The provider's message.
        message: String,
        /// What to do (e.g. `ollama pull`).
        hint: String,
    },
    /// Too many requests (429); retried with backoff, this is the last one.
    #[error(
        "{provider} is rate limiting (status 429: {message}); gave up after {}", attempts_made(*.attempts)
    )]
    RateLimited {
        /// The provider's name.
        provider: &'static str,
        /// The provider's message.
        message: String,
        /// The wait the provider asked for, if it said.
        retry_after: Option<Duration>,
        /// Attempts made.
        attempts: u32,
    },
    /// The provider failed (5xx, Anthropic's 529 "overloaded" included); retried with backoff.
    #[error(
        "{provider} failed with status {status} ({message}); gave up after {}", attempts_made(*.attempts)
    )]
    ServerError {
        /// The provider's name.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// The wait the provider asked for, if it said.
        retry_after: Option<Duration>,
        /// Attempts made.
        attempts: u32,
        /// How often the same request may be tried again: `None` as often as the retry
        /// policy says (502, 503, 504, 529: the server is busy or restarting), once for a bare
        /// 500, never for a 500 that is a validation error (the same request fails the same way).
        retries: Option<u32>,
    },
    /// The request was refused as malformed or unsupported (other 4xx).
    #[error("{provider} rejected the request with status {status}: {message}")]
    Rejected {
        /// The provider's name.
        provider: &'static str,
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider reported an error inside the response stream.
    #[error("{provider} reported an error mid-response: {message}")]
    Remote {
        /// The provider's name.
        provider: &'static str,
        /// The provider's message.
        message: String,
    },
    /// The response ended before the message was complete.
    #[error("the response from {provider} was cut off before the message was complete ({detail})")]
    StreamCut {
        /// The provider's name.
        provider: &'static str,
        /// What was missing or what the connection said.
        detail: String,
    },
    /// No answer, or no more data, in time.
    #[error("{provider} did not {what} within {timeout:?} (see {option})")]
    Timeout {
        /// The provider's name.
        provider: &'static str,
        /// What it did not do ("answer", "send more of its response").
        what: &'static str,
        /// The limit.
        timeout: Duration,
        /// The option that sets it.
        option: &'static str,
    },
    /// The response is not in the provider's format.
    #[error("{provider} sent something that is not its API's format ({detail})")]
    Protocol {
        /// The provider's name.
        provider: &'static str,
        /// What was wrong, with a preview.
        detail: String,
    },
}

impl ProviderError {
    #[cfg(feature = "providers")]
    /// An error a server reported inside its response (`{"error": …}`): a bare string
    /// (Ollama), or an object with a `message` and maybe a `type` (OpenAI, Anthropic).
    pub(crate) fn in_stream(provider: &'static str, error: &serde_json::Value) -> Self {
        let text = |key: &str| error.get(key).and_then(serde_json::Value::as_str);
        let message = match (error.as_str(), text("type"), text("message")) {
            (Some(said), _, _) => said.to_owned(),
            (None, Some(kind), Some(message)) => format!("{kind}: {message}"),
            (None, None, Some(message)) => message.to_owned(),
            (None, _, None) => error.to_string(),
        };
        Self::Remote {
            provider,
            message: preview(&message),
        }
    }

    /// This error with `secret` (the configured API key) cut out of everything the provider
    /// or the connection said: a server that quotes the key back (in a 401 body, say) must
    /// not put it on the screen, in `--json` output or in the history. Keys shorter than 8
    /// characters (`x` for a local server) are not secrets and are left alone.
    #[must_use]
    pub fn without_secret(self, secret: &str) -> Self {
        if secret.chars().count() < 8 {
            return self;
        }
        let scrub = |text: String| text.replace(secret, "[API key]");
        match self {
            Self::Unreachable {
                provider,
                url,
                reason,
                hint,
            } => Self::Unreachable {
                provider,
                url: scrub(url),
                reason: scrub(reason),
                hint,
            },
            Self::Unauthorized {
                provider,
                status,
                message,
                env_var,
            } => Self::Unauthorized {
                provider,
                status,
                message: scrub(message),
                env_var,
            },
            Self::ModelNotFound {
                provider,
                model,
                message,
                hint,
            } => Self::ModelNotFound {
                provider,
                model,
                message: scrub(message),
                hint,
            },
            Self::RateLimited {
                provider,
                message,
                retry_after,
                attempts,
            } => Self::RateLimited {
                provider,
                message: scrub(message),
                retry_after,
                attempts,
            },
            Self::ServerError {
                provider,
                status,
                message,
                retry_after,
                attempts,
                retries,
            } => Self::ServerError {
                provider,
                status,
                message: scrub(message),
                retry_after,
                attempts,
                retries,
            },
            Self::Rejected {
                provider,
                status,
                message,
            } => Self::Rejected {
                provider,
                status,
                message: scrub(message),
            },
            Self::Remote { provider, message } => Self::Remote {
                provider,
                message: scrub(message),
            },
            Self::StreamCut { provider, detail } => Self::StreamCut {
                provider,
                detail: scrub(detail),
            },
            Self::Protocol { provider, detail } => Self::Protocol {
                provider,
                detail: scrub(detail),
            },
            Self::Redirected {
                provider,
                from,
                to,
                env_var,
            } => Self::Redirected {
                provider,
                from: scrub(from),
                to: scrub(to),
                env_var,
            },
            other @ (Self::MissingKey { .. } | Self::Timeout { .. }) => other,
        }
    }

    #[cfg(feature = "providers")]
    /// The end of a response: fine when it said it was complete (`done`), else
    /// [`ProviderError::StreamCut`] saying what never came.
    pub(crate) fn unless_done(
        done: bool,
        provider: &'static str,
        missing: &str,
    ) -> Result<(), Self> {
        if done {
            Ok(())
        } else {
            Err(Self::StreamCut {
                provider,
                detail: missing.to_owned(),
            })
        }
    }

    /// Whether the same request may succeed if sent again (429, 5xx): only such errors are retried.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. } => true,
            Self::ServerError { retries, .. } => *retries != Some(0),
            _ => false,
        }
    }

    /// How often the same request may be tried again at most, when the error limits it
    /// (a bare 500: once).
    pub fn retry_limit(&self) -> Option<u32> {
        match self {
            Self::ServerError { retries, .. } => *retries,
            _ => None,
        }
    }

    /// How long the provider asked us to wait before retrying, if it said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::ServerError { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }

    #[cfg(feature = "providers")]
    /// What went wrong with one attempt, for the warning that announces the next: without
    /// the "gave up" of the final error.
    pub(crate) fn attempt_failure(&self) -> String {
        match self {
            Self::RateLimited { message, .. } => format!("status 429: {message}"),
            Self::ServerError {
                status, message, ..
            } => format!("status {status}: {message}"),
            other => other.to_string(),
        }
    }

    #[cfg(feature = "providers")]
    /// Records the number of attempts made on a retryable error.
    pub(crate) fn with_attempts(mut self, made: u32) -> Self {
        if let Self::RateLimited { attempts, .. } | Self::ServerError { attempts, .. } = &mut self {
            *attempts = made;
        }
        self
    }
}

/// "1 attempt", "4 attempts".
fn attempts_made(attempts: u32) -> String {
    if attempts == 1 {
        "1 attempt".to_owned()
    } else {
        format!("{attempts} attempts")
    }
}

#[cfg(feature = "providers")]
/// At most [`MESSAGE_PREVIEW`] characters, on one line: what a message keeps of a provider's
/// words.
pub(crate) fn preview(text: &str) -> String {
    common::clip(text, MESSAGE_PREVIEW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_inside_a_response_reads_in_each_dialects_shape() {
        let said = |error: serde_json::Value| ProviderError::in_stream("P", &error).to_string();
        assert_eq!(
            said(serde_json::json!("model runner has unexpectedly stopped")),
            "P reported an error mid-response: model runner has unexpectedly stopped"
        );
        assert_eq!(
            said(serde_json::json!({"message": "context too long"})),
            "P reported an error mid-response: context too long"
        );
        assert_eq!(
            said(serde_json::json!({"type": "overloaded_error", "message": "Overloaded"})),
            "P reported an error mid-response: overloaded_error: Overloaded"
        );
        assert_eq!(
            said(serde_json::json!({"code": 7})),
            "P reported an error mid-response: {\"code\":7}"
        );
    }

    #[test]
    fn a_retry_warning_says_what_failed_and_the_final_error_how_often() {
        let failed = |attempts| ProviderError::ServerError {
            provider: "llama.cpp",
            status: 500,
            message: "messages.1.content: Input should be a valid string".into(),
            retry_after: None,
            attempts,
            retries: Some(0),
        };
        assert_eq!(
            failed(1).attempt_failure(),
            "status 500: messages.1.content: Input should be a valid string"
        );
        assert_eq!(
            failed(1).to_string(),
            "llama.cpp failed with status 500 (messages.1.content: Input should be a valid string); gave up after 1 attempt"
        );
        assert!(failed(4).to_string().ends_with("gave up after 4 attempts"));
        let limited = ProviderError::RateLimited {
            provider: "Anthropic",
            message: "slow down".into(),
            retry_after: None,
            attempts: 2,
        };
        assert_eq!(limited.attempt_failure(), "status 429: slow down");
        assert_eq!(
            limited.to_string(),
            "Anthropic is rate limiting (status 429: slow down); gave up after 2 attempts"
        );
    }
}
