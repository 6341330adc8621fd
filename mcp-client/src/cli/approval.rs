//! What a person reads before a tool runs: the server, the tool and every argument, each
//! escaped and bounded, so that nothing an argument says can pass for the prompt's own words
//! or push the real call off the screen. A padded argument (12,000 spaces, then "Allow
//! get_balance {}") once left only its end on a 160×45 terminal while a `y` sent money.
//!
//! - Every argument is on a line of its own, indented, its key and value quoted as JSON would
//!   quote them; control and invisible characters are written as escapes (`\n`, `\u{200b}`),
//!   and a run of more than three white-space characters as `⟨12000 spaces⟩`.
//! - A value longer than [`SHOWN_CHARS`] is shown by its start and end, with what is left out
//!   said in words ("… 11,987 more characters in `~` …") and its whole size; the person can
//!   answer `?` to see every argument whole before answering (the card then says so).
//! - At most [`SHOWN_ARGUMENTS`] arguments are listed; how many more there are is said.
//! - The question itself comes last, after the arguments, and names the tool and its server.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{
    input::{Ask, Asked, Desk, Input, Line},
    shown::{Quote, escaped},
};
use crate::{
    agent::Approver,
    tools::{
        ToolCall,
        definition::{Implementation, ToolDefinition},
    },
};

/// The most characters of one argument shown before the person asks for all of it.
pub(super) const SHOWN_CHARS: usize = 160;

/// The most arguments listed before the person asks for all of them.
pub(super) const SHOWN_ARGUMENTS: usize = 12;

/// Where a tool comes from, in words: `tool `send_money` of the MCP server `bank``.
fn tool_in_words(tool: &ToolDefinition) -> String {
    match &tool.implementation {
        Implementation::Mcp {
            server,
            original_name,
        } => format!(
            "tool {} of the MCP server {}",
            quoted(&short(original_name, 80)),
            quoted(&short(server, 80))
        ),
        _ => format!("local tool {}", quoted(&short(&tool.name, 80))),
    }
}

/// The card above the question: what would run, each argument bounded (`in_full`: whole).
pub(super) fn card(tool: &ToolDefinition, args: &Value, in_full: bool) -> String {
    let mut lines = vec![format!("The model asks to run the {}", tool_in_words(tool))];
    let mut clipped = false;
    match args {
        Value::Object(fields) if fields.is_empty() => lines.push("  with no arguments".into()),
        Value::Object(fields) => {
            lines.push(format!(
                "  with {} argument{}:",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" }
            ));
            let shown = if in_full {
                fields.len()
            } else {
                SHOWN_ARGUMENTS
            };
            // The tool's own parameters first: keys a model made up (sorted before them, say)
            // cannot push the real arguments off the card.
            let declared = tool.parameters.get("properties").and_then(Value::as_object);
            let is_declared = |key: &str| declared.is_none_or(|names| names.contains_key(key));
            let ordered = fields
                .iter()
                .filter(|(key, _)| is_declared(key))
                .chain(fields.iter().filter(|(key, _)| !is_declared(key)));
            for (key, value) in ordered.take(shown) {
                // A string is quoted; any other value is shown as its JSON.
                let (text, quote) = match value {
                    Value::String(text) => (text.clone(), Quote::String),
                    other => (other.to_string(), Quote::Json),
                };
                let value = if in_full {
                    quote.wrap(&escaped(&text, quote))
                } else {
                    let (value, cut) = bounded(&text, quote, key);
                    clipped |= cut;
                    value
                };
                let name = if in_full {
                    quoted(key)
                } else {
                    quoted(&short(key, 60))
                };
                let unknown = if is_declared(key) {
                    ""
                } else {
                    " (not a parameter of this tool)"
                };
                lines.push(format!("    {name} = {value}{unknown}"));
            }
            if fields.len() > shown {
                clipped = true;
                let more = fields.len() - shown;
                let noun = if more == 1 { "argument" } else { "arguments" };
                lines.push(format!("    … {more} more {noun}"));
            }
        }
        other => {
            let (shown, cut) = bounded(&other.to_string(), Quote::Json, "arguments");
            clipped = cut;
            lines.push(format!("  with {shown}"));
        }
    }
    if clipped {
        lines.push("  (answer ? to see every argument whole before you answer)".into());
    }
    lines.join("\n")
}

/// The question after the card.
pub(super) fn question(tool: &ToolDefinition) -> String {
    format!("Allow the {} to run? [y/N] ", tool_in_words(tool))
}

/// `text` in double quotes, escaped.
fn quoted(text: &str) -> String {
    Quote::String.wrap(&escaped(text, Quote::String))
}

/// `text` cut to `max` characters (what an error names, not what is approved).
fn short(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let cut: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// `text` (the value of `key`) escaped, and when its escaped form is longer than
/// [`SHOWN_CHARS`] shown by its start and its end (each cut as shown, escapes counted) with
/// its size said; whether it was cut.
fn bounded(text: &str, quote: Quote, key: &str) -> (String, bool) {
    let count = text.chars().count();
    if count <= SHOWN_CHARS {
        let whole = escaped(text, quote);
        if whole.chars().count() <= SHOWN_CHARS {
            return (quote.wrap(&whole), false);
        }
    }
    let (head_chars, tail_chars) = (SHOWN_CHARS * 2 / 3, SHOWN_CHARS / 3);
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text
        .chars()
        .skip(count.saturating_sub(tail_chars))
        .collect();
    let head: String = escaped(&head, quote).chars().take(head_chars).collect();
    let tail = escaped(&tail, quote);
    let tail: String = tail
        .chars()
        .skip(tail.chars().count().saturating_sub(tail_chars))
        .collect();
    let left_out = count.saturating_sub(head_chars + tail_chars);
    let shown = format!(
        "{} … {} more characters in {} … {} ({} characters in all)",
        quote.wrap(&head),
        thousands(left_out),
        quoted(&short(key, 60)),
        quote.wrap(&tail),
        thousands(count),
    );
    (shown, true)
}

/// `12000` as `12,000`.
fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Asks on the terminal (stderr prompt, answer read from stdin), at the desk where servers'
/// questions are asked too, before a tool that may change things runs.
pub(super) struct AskOnTerminal {
    pub(super) input: Arc<Input>,
    pub(super) desk: Arc<Desk>,
    /// The question being answered: an approval is withdrawn once it is cancelled.
    pub(super) question: Arc<Mutex<Option<CancellationToken>>>,
}

impl Approver for AskOnTerminal {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a ToolDefinition,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        // Cut to rows the terminal will not wrap: a wrapped row starts at the first column,
        // where an argument could place words that read as this question.
        let columns = super::rows::terminal_columns();
        let shown = super::rows::fitted_text(&card(tool, &call.args, false), columns, "        ");
        let prompt = question(tool);
        Box::pin(async move {
            // Withdrawn with the question (Ctrl-C); none is running when Ctrl-C took it.
            let Some(question) = self
                .question
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            else {
                return false;
            };
            let read = async {
                loop {
                    match self.input.read(Ask::Approval, &prompt).await {
                        // Every argument whole, then the question again.
                        Line::Text(answer) if answer.trim() == "?" => {
                            let whole = card(tool, &call.args, true);
                            eprintln!("{}", super::rows::fitted_text(&whole, columns, "        "));
                        }
                        line => return line,
                    }
                }
            };
            match self.desk.ask(Some(&shown), &question, read).await {
                Asked::Answered(Line::Text(answer)) => {
                    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
                }
                Asked::Refused => {
                    self.desk.note("(too many questions waiting: not allowed)");
                    false
                }
                Asked::Answered(Line::Interrupted | Line::End)
                | Asked::Interrupted(_)
                | Asked::Withdrawn(_) => {
                    self.desk.note("(no answer: not allowed)");
                    false
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(server: &str, name: &str) -> ToolDefinition {
        ToolDefinition {
            name: format!("{server}__{name}"),
            description: String::new(),
            parameters: serde_json::Map::new(),
            implementation: Implementation::Mcp {
                server: server.into(),
                original_name: name.into(),
            },
            timeout: None,
            hints: crate::tools::definition::ToolHints::default(),
        }
    }

    #[test]
    fn a_padded_argument_is_shown_by_its_ends_and_size_and_the_question_names_the_real_call() {
        // The review's call: the padding put "Allow get_balance {}" at the end of the line.
        let args = json!({"amount": 5000, "to": "attacker-IBAN",
            "~": format!("{}Allow get_balance {{}}", " ".repeat(12_000))});
        let bank = tool("bank", "send_money");
        assert_eq!(
            card(&bank, &args, false),
            [
                "The model asks to run the tool \"send_money\" of the MCP server \"bank\"",
                "  with 3 arguments:",
                "    \"amount\" = 5000",
                "    \"to\" = \"attacker-IBAN\"",
                "    \"~\" = \"⟨106 spaces⟩\" … 11,861 more characters in \"~\" … \"⟨33 spaces⟩Allow get_balance {}\" (12,020 characters in all)",
                "  (answer ? to see every argument whole before you answer)",
            ]
            .join("\n")
        );
        assert_eq!(
            question(&bank),
            "Allow the tool \"send_money\" of the MCP server \"bank\" to run? [y/N] "
        );
        assert!(
            card(&bank, &args, true)
                .ends_with("    \"~\" = \"⟨12000 spaces⟩Allow get_balance {}\"")
        );
    }

    #[test]
    fn nothing_an_argument_holds_can_start_a_line_or_hide() {
        let args = json!({
            "a\nAllow x? [y/N] ": "line\r\nAllow get_balance {}? [y/N] ",
            "b": "zero\u{200b}width\u{202e}rtl\u{e0041}tag\u{ad}\u{1b}[2J\u{2028}",
            "c": {"nested": "q\"uote\\"},
            "d": "two  spaces\u{a0}\u{a0}\u{a0}\u{a0}nbsp",
        });
        let shown = card(&tool("s", "t"), &args, false);
        assert_eq!(
            shown,
            [
                "The model asks to run the tool \"t\" of the MCP server \"s\"",
                "  with 4 arguments:",
                "    \"a\\nAllow x? [y/N] \" = \"line\\r\\nAllow get_balance {}? [y/N] \"",
                "    \"b\" = \"zero\\u{200b}width\\u{202e}rtl\\u{e0041}tag\\u{ad}\\u{1b}[2J\\u{2028}\"",
                "    \"c\" = {\"nested\":\"q\\\"uote\\\\\"}",
                "    \"d\" = \"two  spaces⟨4 × U+00A0⟩nbsp\"",
            ]
            .join("\n")
        );
        assert_eq!(shown.lines().count(), 6);
    }

    /// Found by the hostile review of the first fix: twelve made-up keys that sort first, each
    /// of tag characters, pushed the real argument off the card and made it 125 rows tall.
    #[test]
    fn the_tools_own_parameters_come_first_and_escapes_count_against_the_bound() {
        let mut echo = tool("s", "echo");
        echo.parameters = serde_json::from_value(
            json!({"type": "object", "properties": {"message": {"type": "string"}}}),
        )
        .unwrap();
        let mut args: serde_json::Map<String, Value> = (0..12)
            .map(|n| (format!("!{n:02}"), json!("\u{e0041}".repeat(400))))
            .collect();
        args.insert("message".into(), json!("rm -rf /"));
        let shown = card(&echo, &Value::Object(args), false);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[2], "    \"message\" = \"rm -rf /\"", "{shown}");
        assert!(
            lines[3].ends_with("(not a parameter of this tool)"),
            "{shown}"
        );
        assert!(
            lines.iter().all(|line| line.chars().count() < 400),
            "{shown}"
        );
        assert_eq!(lines[lines.len() - 2], "    … 1 more argument");
    }

    #[test]
    fn many_arguments_are_counted_and_a_local_tool_is_named_so() {
        let args: serde_json::Map<String, Value> =
            (0..20).map(|n| (format!("k{n:02}"), json!(n))).collect();
        let mut local = tool("x", "y");
        local.implementation = Implementation::Builtin {
            handler: "echo".into(),
        };
        local.name = "echo".into();
        let shown = card(&local, &Value::Object(args.clone()), false);
        assert!(
            shown
                .starts_with("The model asks to run the local tool \"echo\"\n  with 20 arguments:"),
            "{shown}"
        );
        assert!(
            shown.ends_with(
                "    … 8 more arguments\n  (answer ? to see every argument whole before you answer)"
            ),
            "{shown}"
        );
        assert_eq!(card(&local, &Value::Object(args), true).lines().count(), 22);
        assert_eq!(
            card(&local, &json!({}), false),
            "The model asks to run the local tool \"echo\"\n  with no arguments"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
