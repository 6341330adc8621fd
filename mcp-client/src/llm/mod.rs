//! LLM provider wire formats (Ollama/Qwen, OpenAI-compatible, Anthropic): tool definitions and
//! tool results, as pure functions.

pub mod format;
