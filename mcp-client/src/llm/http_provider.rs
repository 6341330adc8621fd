//! [`HttpProvider`]: the [`Provider`] of a model reached over HTTP in one of the three
//! dialects (Ollama, OpenAI-compatible, Anthropic), configured by a [`ProviderConfig`]: base
//! URLs checked before the first request, each dialect's headers, body and decoder.

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use tokio::sync::mpsc;

use super::{
    anthropic::{self, AnthropicDecoder},
    error::ProviderError,
    format::Dialect,
    http::{self, Endpoint, Framing, HttpSettings, secret_header},
    message::{ChatRequest, ToolChoice},
    ollama::{self, OllamaDecoder},
    openai::{self, OpenAiDecoder},
    provider::{EventStream, Provider},
};

/// Events buffered between the HTTP reader and the consumer.
const EVENT_BUFFER: usize = 64;
/// Anthropic requires `max_tokens`; this is used when none is configured.
const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// Where and how to reach a model.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The API's dialect.
    pub dialect: Dialect,
    /// The model's name.
    pub model: String,
    /// Base URL: Ollama's host, OpenAI's including the version (`…/v1`), Anthropic's without.
    pub base_url: String,
    /// The API key, if the provider needs one.
    pub api_key: Option<String>,
    /// Stream responses (on by default).
    pub stream: bool,
    /// Most tokens per answer (Anthropic needs one; others use theirs when unset).
    pub max_tokens: Option<u32>,
    /// Timeouts and retries.
    pub http: HttpSettings,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("dialect", &self.dialect)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("stream", &self.stream)
            .field("max_tokens", &self.max_tokens)
            .field("http", &self.http)
            .finish()
    }
}

impl ProviderConfig {
    /// A configuration with the dialect's conventional base URL and no key.
    pub fn new(dialect: Dialect, model: impl Into<String>) -> Self {
        Self {
            dialect,
            model: model.into(),
            base_url: dialect.default_base_url().to_owned(),
            api_key: None,
            stream: true,
            max_tokens: None,
            http: HttpSettings::default(),
        }
    }
}

/// A model reached over HTTP in one of the three dialects.
#[derive(Debug, Clone)]
pub struct HttpProvider {
    dialect: Dialect,
    endpoint: Endpoint,
    stream: bool,
    max_tokens: Option<u32>,
}

impl HttpProvider {
    /// Checks `config` and builds the HTTP client.
    ///
    /// # Errors
    /// A missing key where one is required, or a key or URL that cannot be used.
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let dialect = config.dialect;
        let provider = dialect.display_name();
        let base = normalize_base_url(dialect, &config.base_url);
        let key_env = dialect.key_env();
        let headers = dialect.headers(config.api_key.as_deref())?;
        let url = format!("{base}{}", dialect.path());
        let mut endpoint = Endpoint::new(provider, url, config.model.clone(), headers, config.http)
            .map_err(|message| ProviderError::Rejected {
                provider,
                status: 0,
                message,
            })?;
        endpoint.key_env = key_env;
        endpoint.base_env = dialect.base_url_env();
        endpoint.secret.clone_from(&config.api_key);
        endpoint.unreachable_hint = dialect.unreachable_hint(&base);
        endpoint.missing_model_hint = dialect.missing_model_hint(&config.model);
        Ok(Self {
            dialect,
            endpoint,
            stream: config.stream,
            max_tokens: config.max_tokens,
        })
    }

    /// The request body this provider sends for `request` (also used by tests).
    pub fn body(&self, request: &ChatRequest<'_>) -> serde_json::Value {
        let model = &self.endpoint.model;
        match self.dialect {
            Dialect::Ollama => {
                let mut body = ollama::body(model, request, self.stream);
                if let Some(max) = self.max_tokens {
                    body["options"] = serde_json::json!({"num_predict": max});
                }
                body
            }
            Dialect::OpenAi => openai::body(model, request, self.stream, self.max_tokens),
            Dialect::Anthropic => anthropic::body(
                model,
                request,
                self.stream,
                self.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
            ),
        }
    }
}

impl Provider for HttpProvider {
    fn describe(&self) -> String {
        format!(
            "{} {} at {}",
            self.dialect.name(),
            self.endpoint.model,
            self.endpoint.url
        )
    }

    fn chat(&self, request: &ChatRequest<'_>) -> EventStream {
        let body = serde_json::to_vec(&self.body(request)).unwrap_or_default();
        // Anthropic keeps the tools of an answer-only request with tool_choice none; some
        // servers implementing its API refuse that (LiteLLM): they get the request without tools.
        let fallback = (self.dialect == Dialect::Anthropic
            && request.tool_choice == ToolChoice::None
            && !request.tools.is_empty())
        .then(|| {
            serde_json::to_vec(&anthropic::body_without_tools(
                &self.endpoint.model,
                request,
                self.stream,
                self.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
            ))
            .unwrap_or_default()
        });
        let (sender, receiver) = mpsc::channel(EVENT_BUFFER);
        let endpoint = self.endpoint.clone();
        let framing = match (self.stream, self.dialect) {
            (false, _) => Framing::Whole,
            (true, Dialect::Ollama) => Framing::Ndjson,
            (true, Dialect::OpenAi | Dialect::Anthropic) => Framing::Sse,
        };
        let task = match self.dialect {
            Dialect::Ollama => tokio::spawn(http::drive(
                endpoint,
                body,
                None,
                framing,
                OllamaDecoder::default(),
                sender,
            )),
            Dialect::OpenAi => tokio::spawn(http::drive(
                endpoint,
                body,
                None,
                framing,
                OpenAiDecoder::default(),
                sender,
            )),
            Dialect::Anthropic => tokio::spawn(http::drive(
                endpoint,
                body,
                fallback,
                framing,
                AnthropicDecoder::default(),
                sender,
            )),
        };
        EventStream::new(receiver, Some(task))
    }
}

/// Whether `url` can work as `dialect`'s base URL (as normalized: a scheme may be left out):
/// http or https, a host, and a port that is a number when one is written. The error names
/// the value and shows an example.
///
/// # Errors
/// What is wrong with it, in words.
pub fn check_base_url(dialect: Dialect, url: &str) -> Result<(), String> {
    let normalized = normalize_base_url(dialect, url);
    let example = match dialect {
        Dialect::Ollama => "http://127.0.0.1:11434",
        Dialect::OpenAi => "http://127.0.0.1:8080/v1",
        Dialect::Anthropic => "https://api.anthropic.com",
    };
    let problem = match reqwest::Url::parse(&normalized) {
        Err(err) => Some(err.to_string()),
        Ok(parsed) if !matches!(parsed.scheme(), "http" | "https") => Some(format!(
            "the scheme `{}` is not http or https",
            parsed.scheme()
        )),
        Ok(parsed) if parsed.host_str().is_none_or(str::is_empty) => {
            Some("it names no host".to_owned())
        }
        Ok(_) => {
            // The URL standard reads `host:` as the default port; nobody means that.
            let authority = normalized.split_once("://").map_or("", |(_, rest)| {
                rest.split(['/', '?', '#']).next().unwrap_or("")
            });
            authority
                .ends_with(':')
                .then(|| "its port is empty".to_owned())
        }
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(format!(
            "the base URL `{url}` cannot work: {problem}; give one such as {example}"
        )),
    }
}

/// A base URL as each ecosystem writes it: `OLLAMA_HOST` may lack the scheme
/// (`0.0.0.0:11434`), and a trailing `/` is dropped.
fn normalize_base_url(dialect: Dialect, url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let url = if url.contains("://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    };
    match dialect {
        // Ollama's own client reads a bind-everything address as the local host.
        Dialect::Ollama => url.replace("://0.0.0.0", "://127.0.0.1"),
        _ => url,
    }
}

impl Dialect {
    /// The headers that carry `key` (and, for Anthropic, the API version).
    ///
    /// # Errors
    /// Anthropic without a key, or a key that cannot be a header.
    fn headers(self, key: Option<&str>) -> Result<Vec<(HeaderName, HeaderValue)>, ProviderError> {
        let provider = self.display_name();
        let header = |value: &str| {
            secret_header(value).map_err(|problem| ProviderError::Rejected {
                provider,
                status: 0,
                message: format!("{problem} (check {})", self.key_env()),
            })
        };
        Ok(match (self, key) {
            (Self::Ollama, _) | (Self::OpenAi, None) => Vec::new(),
            (Self::OpenAi, Some(key)) => {
                vec![(
                    reqwest::header::AUTHORIZATION,
                    header(&format!("Bearer {key}"))?,
                )]
            }
            (Self::Anthropic, None) => {
                return Err(ProviderError::MissingKey {
                    provider,
                    env_var: self.key_env(),
                });
            }
            (Self::Anthropic, Some(key)) => vec![
                (HeaderName::from_static("x-api-key"), header(key)?),
                (
                    HeaderName::from_static("anthropic-version"),
                    HeaderValue::from_static(anthropic::API_VERSION),
                ),
            ],
        })
    }

    /// What to check when nothing answers at `base`.
    fn unreachable_hint(self, base: &str) -> String {
        match self {
            Self::Ollama => format!(
                "is Ollama running at {base}? (start it with `ollama serve`, or set OLLAMA_HOST)"
            ),
            Self::OpenAi => format!(
                "is the server running at {base}? (set --base-url or OPENAI_BASE_URL; it includes the version, e.g. http://127.0.0.1:8000/v1)"
            ),
            Self::Anthropic => {
                format!("check the network and the base URL {base} (ANTHROPIC_BASE_URL)")
            }
        }
    }

    /// What to do when the server has no model `model`.
    fn missing_model_hint(self, model: &str) -> String {
        match self {
            Self::Ollama => format!(": pull it with `ollama pull {model}`"),
            Self::OpenAi => {
                ": check --model, or the URL (it must include the version, e.g. …/v1)".into()
            }
            Self::Anthropic => ": check --model".into(),
        }
    }

    /// The path appended to the base URL.
    fn path(self) -> &'static str {
        match self {
            Self::Ollama => "/api/chat",
            Self::OpenAi => "/chat/completions",
            Self::Anthropic => "/v1/messages",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_that_cannot_work_are_refused_with_an_example() {
        assert_eq!(
            check_base_url(Dialect::OpenAi, "http://127.0.0.1:/v1").unwrap_err(),
            "the base URL `http://127.0.0.1:/v1` cannot work: its port is empty; give one such as http://127.0.0.1:8080/v1"
        );
        assert_eq!(
            check_base_url(Dialect::Ollama, "http://127.0.0.1:99999").unwrap_err(),
            "the base URL `http://127.0.0.1:99999` cannot work: invalid port number; give one such as http://127.0.0.1:11434"
        );
        assert_eq!(
            check_base_url(Dialect::Anthropic, "ftp://example.com").unwrap_err(),
            "the base URL `ftp://example.com` cannot work: the scheme `ftp` is not http or https; give one such as https://api.anthropic.com"
        );
        assert!(check_base_url(Dialect::OpenAi, "http://").is_err());
        for good in [
            "http://127.0.0.1:8080/v1",
            "0.0.0.0:11434",
            "https://api.anthropic.com",
            "http://[::1]:8080/v1",
        ] {
            assert_eq!(check_base_url(Dialect::Ollama, good), Ok(()), "{good}");
        }
    }

    #[test]
    fn base_urls_follow_each_ecosystem() {
        assert_eq!(
            normalize_base_url(Dialect::Ollama, "0.0.0.0:11434"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            normalize_base_url(Dialect::OpenAi, "http://localhost:8000/v1/"),
            "http://localhost:8000/v1"
        );
        let provider = HttpProvider::new(ProviderConfig::new(Dialect::OpenAi, "m")).unwrap();
        assert_eq!(
            provider.describe(),
            "openai m at https://api.openai.com/v1/chat/completions"
        );
    }

    #[test]
    fn anthropic_without_a_key_says_which_variable_to_set() {
        let error =
            HttpProvider::new(ProviderConfig::new(Dialect::Anthropic, "claude")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Anthropic needs an API key: set ANTHROPIC_API_KEY"
        );
    }

    #[test]
    fn keys_never_show_in_debug_output() {
        let mut config = ProviderConfig::new(Dialect::Anthropic, "claude");
        config.api_key = Some("sk-secret-123".into());
        let provider = HttpProvider::new(config.clone()).unwrap();
        assert!(!format!("{config:?}{provider:?}").contains("sk-secret"));
    }
}
