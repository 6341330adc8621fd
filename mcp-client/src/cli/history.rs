//! `mcp-client history list|show`: read the conversation store.

use std::{path::PathBuf, process::ExitCode};

use clap::Subcommand;

use super::{chat::history_path, emit};
use crate::{agent::Outcome, history::Store, llm::Message};

/// What to read from the history.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// One line per conversation, newest first: id, start, outcome, messages, tokens, title.
    List {
        /// The history database (default: $XDG_DATA_HOME/mcp-client/history.db).
        #[arg(long, env = "MCP_CLIENT_HISTORY")]
        history: Option<PathBuf>,
    },
    /// Every message, tool call and result of one conversation, each question's outcome after
    /// it.
    Show {
        /// The conversation's id.
        id: String,
        /// The history database (default: $XDG_DATA_HOME/mcp-client/history.db).
        #[arg(long, env = "MCP_CLIENT_HISTORY")]
        history: Option<PathBuf>,
        /// Print the messages as JSON lines.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `history` command.
///
/// # Errors
/// The database cannot be opened, or has no such conversation.
pub fn run(command: HistoryCommand) -> anyhow::Result<ExitCode> {
    match command {
        HistoryCommand::List { history } => {
            let path = history_path(history)?;
            if !path.exists() {
                // Nothing stored yet is an empty list, not an error; and nothing is created.
                eprintln!("no conversations yet ({} does not exist)", path.display());
                return Ok(ExitCode::SUCCESS);
            }
            let store = Store::open_read_only(&path)?;
            for c in store.list()? {
                emit(&format!(
                    "{}  {}  {:<20}  {} messages, {} tokens  {}",
                    c.id,
                    c.started_at.get(..19).unwrap_or(&c.started_at),
                    c.outcome.as_deref().unwrap_or("unfinished"),
                    c.messages,
                    c.usage
                        .map_or_else(|| "unknown".to_owned(), |u| u.total().to_string()),
                    common::clip(&c.title, 80),
                ));
            }
        }
        HistoryCommand::Show { id, history, json } => {
            let store = Store::open_read_only(&history_path(history)?)?;
            let stored = store.load(&id)?;
            if json {
                for (_, message) in &stored.messages {
                    emit(&serde_json::to_string(message)?);
                }
                return Ok(ExitCode::SUCCESS);
            }
            let c = &stored.summary;
            emit(&format!(
                "conversation {} with {} (started {})",
                c.id, c.provider, c.started_at
            ));
            // Each question's outcome right after its messages.
            let mut outcomes = stored
                .outcomes
                .iter()
                .zip(&stored.outcome_places)
                .peekable();
            for (index, (turn, message)) in stored.messages.iter().enumerate() {
                while let Some((outcome, _)) = outcomes.next_if(|(_, place)| **place <= index) {
                    emit(&describe_outcome(outcome));
                }
                for line in describe(*turn, message) {
                    emit(&line);
                }
            }
            for (outcome, _) in outcomes {
                emit(&describe_outcome(outcome));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_outcome(outcome: &Outcome) -> String {
    let tokens = outcome.usage.map_or_else(
        || "tokens unknown (the server did not say)".to_owned(),
        |u| format!("{} tokens in, {} out", u.input_tokens, u.output_tokens),
    );
    format!(
        "outcome: {} after {} turn{}, {tokens}{}",
        outcome.reason.as_str(),
        outcome.turns,
        if outcome.turns == 1 { "" } else { "s" },
        outcome
            .error
            .as_deref()
            .map(|e| format!(" — {e}"))
            .unwrap_or_default()
    )
}

fn describe(turn: u32, message: &Message) -> Vec<String> {
    match message {
        Message::System { text } => vec![format!("system: {}", common::clip(text, 200))],
        Message::User { text } => vec![format!("user: {text}")],
        Message::Assistant { text, tool_calls } => {
            let mut lines = Vec::new();
            if !text.is_empty() {
                lines.push(format!("assistant (turn {turn}): {text}"));
            }
            for call in tool_calls {
                lines.push(format!("  call {} {} {}", call.id, call.name, call.args));
            }
            lines
        }
        Message::ToolResults { results } => results
            .iter()
            .map(|r| {
                format!(
                    "  {} {} {}: {}",
                    if r.result.is_error { "✗" } else { "✓" },
                    r.call_id,
                    r.tool_name,
                    common::clip(&r.result.text, 200)
                )
            })
            .collect(),
    }
}
