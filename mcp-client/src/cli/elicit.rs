//! A server's question to the person at the terminal (MCP elicitation), as `chat` asks it:
//! at the [`Desk`], one question at a time — the server's name and message on stderr, then
//! one prompt per field of its form (a yes/no for a boolean, a choice for an enum, a line
//! otherwise), read by the one reader of stdin. Never answered for them: `--yes` approves
//! tool calls, not a server's questions; without a terminal the question is declined.
//!
//! A question is answered "cancel" when the person dismisses it (Ctrl-C, the end of input) or
//! when it is withdrawn (the call that asked it ended, or the server stopped waiting), asked
//! or not; "decline" when [`MOST_QUESTIONS`] are already at the desk. "Accept" goes only with
//! something the person typed: a form without fields is asked as a yes/no (servers ask
//! "proceed?" that way, and act on the accept alone), and a form left empty is declined.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::input::{Ask, Asked, Desk, Input, Line, MOST_QUESTIONS};
use crate::connection::{ElicitAnswer, Elicitation, Elicitor};

/// Asks on the terminal through `input`, one question at a time at `desk`.
pub(super) fn on_terminal(input: Arc<Input>, desk: Arc<Desk>) -> Elicitor {
    Arc::new(move |question: Elicitation| {
        let (input, desk) = (Arc::clone(&input), Arc::clone(&desk));
        Box::pin(async move {
            let server = common::clip(&question.server, 100);
            let words = format!("{server} asks: {}", common::clip(&question.message, 1_000));
            // Its rows after the first indented: no row of it starts at the first column.
            let words = super::rows::fitted_text(&words, super::rows::terminal_columns(), "    ");
            let asked = desk
                .ask(Some(&words), &question.withdrawn, form(&input, &question))
                .await;
            match asked {
                Asked::Answered(ElicitAnswer::Cancel) | Asked::Interrupted(true) => {
                    desk.note("(no answer: dismissed)");
                    ElicitAnswer::Cancel
                }
                Asked::Answered(answer) => answer,
                Asked::Interrupted(false) => {
                    desk.note(&format!(
                        "({server}'s question dismissed before it was asked)"
                    ));
                    ElicitAnswer::Cancel
                }
                Asked::Withdrawn(true) => {
                    desk.note("(withdrawn: nothing waits for this answer any more)");
                    ElicitAnswer::Cancel
                }
                Asked::Withdrawn(false) => {
                    desk.note(&format!(
                        "({server}'s question was not asked: nothing waited for its answer any more)"
                    ));
                    ElicitAnswer::Cancel
                }
                Asked::Refused => {
                    desk.note(&format!(
                        "mcp-client: {server} asked a question while {MOST_QUESTIONS} were waiting: declined ({})",
                        common::clip(&question.message, 300)
                    ));
                    ElicitAnswer::Decline
                }
            }
        })
    })
}

/// Declines every question, saying so: there is no terminal to ask on.
pub(super) fn without_terminal() -> Elicitor {
    Arc::new(|question: Elicitation| {
        eprintln!(
            "mcp-client: {} asked a question and there is no terminal to ask it on: declined ({})",
            common::printable(&common::clip(&question.server, 100)),
            common::printable(&common::clip(&question.message, 300))
        );
        Box::pin(std::future::ready(ElicitAnswer::Decline))
    })
}

/// Asks for each field of the form, in the server's order; Ctrl-C or the end of input dismisses
/// the whole question.
async fn form(input: &Input, question: &Elicitation) -> ElicitAnswer {
    let (schema, fields) = (&question.schema, question.fields());
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Every prompt starts with the server's name: a label cannot pass for the client's own
    // question ("mcp-client: Allow …? [y/N]").
    let server = common::printable(&common::clip(&question.server, 60)).into_owned();
    if fields.is_empty() {
        // Nothing to fill in: the accept is the whole answer, so it needs an explicit yes.
        let prompt = format!("  [{server}] Answer yes? [y/N] ");
        return match input.read(Ask::Approval, &prompt).await {
            Line::Text(text) if is_yes(text.trim()) => {
                ElicitAnswer::Accept(Value::Object(Map::new()))
            }
            Line::Text(_) => ElicitAnswer::Decline,
            Line::Interrupted | Line::End => ElicitAnswer::Cancel,
        };
    }
    let mut content = Map::new();
    for (name, field) in fields {
        let label = field["title"]
            .as_str()
            .or_else(|| field["description"].as_str())
            .unwrap_or(name);
        // Escaped as an approval's arguments are (blank runs counted) and cut to one row:
        // a label that wrapped could start a row with words that read as another question.
        let escaped = super::shown::escaped(label, super::shown::Quote::Json);
        let room = super::rows::terminal_columns().saturating_sub(server.chars().count() + 20);
        let label = format!(
            "[{server}] {}",
            super::rows::clipped_to(&escaped, room.max(20))
        );
        match ask_field(input, &label, field, required.contains(&name.as_str())).await {
            Field::Value(value) => {
                content.insert(name.clone(), value);
            }
            Field::Skipped => {}
            Field::Dismissed => return ElicitAnswer::Cancel,
        }
    }
    if content.is_empty() {
        // Every field skipped: the person gave no answer, and an empty accept is not one.
        return ElicitAnswer::Decline;
    }
    ElicitAnswer::Accept(Value::Object(content))
}

/// Only an explicit yes is yes.
fn is_yes(text: &str) -> bool {
    matches!(text, "y" | "Y" | "yes" | "Yes" | "YES")
}

enum Field {
    Value(Value),
    Skipped,
    Dismissed,
}

/// One field: up to three tries at an answer that fits.
async fn ask_field(input: &Input, label: &str, field: &Value, required: bool) -> Field {
    let choices: Vec<&str> = field["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let kind = field["type"].as_str().unwrap_or("string");
    let prompt = match (kind, choices.is_empty()) {
        ("boolean", _) => format!("  {}? [y/N] ", label.trim_end_matches(['.', '?'])),
        (_, false) => common::printable(&format!(
            "  {label} ({}): ",
            common::clip(&choices.join(", "), 300)
        ))
        .into_owned(),
        _ => format!("  {label}: "),
    };
    for _ in 0..3 {
        let text = match input.read(Ask::Approval, &prompt).await {
            Line::Text(text) => text.trim().to_owned(),
            Line::Interrupted | Line::End => return Field::Dismissed,
        };
        let value = match kind {
            "boolean" => Some(Value::Bool(is_yes(&text))),
            _ if text.is_empty() && !required => return Field::Skipped,
            "integer" => text.parse::<i64>().ok().map(Value::from),
            "number" => text
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(Value::from),
            _ if !choices.is_empty() => choices
                .iter()
                .find(|choice| choice.eq_ignore_ascii_case(&text))
                .map(|choice| Value::String((*choice).to_owned())),
            _ if text.is_empty() => None,
            _ => Some(Value::String(text)),
        };
        match value {
            Some(value) => return Field::Value(value),
            None => eprintln!(
                "  (not a valid {}: try again)",
                common::printable(&common::clip(kind, 40))
            ),
        }
    }
    Field::Dismissed
}
