//! The conversation as every provider sees it, before any wire format: system and user text,
//! assistant turns (text plus tool calls), and one result per tool call.

use serde::{Deserialize, Serialize};

use crate::tools::{definition::ToolDefinition, outcome::ToolCall, results::ModelResult};

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model (sent first; Anthropic takes it as the top-level `system`).
    System {
        /// The instructions.
        text: String,
    },
    /// What the person said, or a follow-up prompt of a policy.
    User {
        /// The text.
        text: String,
    },
    /// A model turn: its text and every tool call it made, in order.
    Assistant {
        /// The text (may be empty when the turn only calls tools).
        text: String,
        /// The calls, each with its id.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The results of the previous assistant turn's calls: exactly one per call id, in call order.
    ToolResults {
        /// The results.
        results: Vec<ToolResult>,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into() }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System { text: text.into() }
    }
}

/// The result of one tool call, as the model reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// What the model reads, already normalized to text (`Error: ...` on failure).
    #[serde(flatten)]
    pub result: ModelResult,
}

/// Tokens a provider reported for one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt, the history, the tool definitions).
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl Usage {
    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Adds `other` to this.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// Whether the model may call tools in this request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must answer in text (tools stripped after the last refinement).
    None,
    /// The model must call a tool, any of those offered (OpenAI `"required"`, Anthropic
    /// `{"type": "any"}`).
    Required,
    /// The model must call this tool (small models that never choose a call by themselves
    /// need this; llama.cpp's own chat templates use tools only when one is named).
    Tool(String),
}

impl ToolChoice {
    /// Whether the request offers tools at all.
    pub fn offers_tools(&self) -> bool {
        !matches!(self, Self::None)
    }
}

impl std::str::FromStr for ToolChoice {
    type Err = String;

    /// `auto`, `required`, `none` or a tool's name.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "auto" => Self::Auto,
            "none" => Self::None,
            "required" => Self::Required,
            "" => {
                return Err(
                    "expected auto, required, none or a tool's name (e.g. control_zwave_device)"
                        .to_owned(),
                );
            }
            name => Self::Tool(name.to_owned()),
        })
    }
}

/// One request to a model.
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    /// The conversation so far (a `System` message first, if any).
    pub messages: &'a [Message],
    /// The tools offered.
    pub tools: &'a [ToolDefinition],
    /// Whether they may be called.
    pub tool_choice: ToolChoice,
}
