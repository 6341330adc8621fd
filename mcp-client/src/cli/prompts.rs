//! `mcp-client prompts` (the prompts of the configured servers, with their arguments) and
//! `mcp-client prompt NAME [NAME=VALUE…]` (one prompt's messages). What a server sends is
//! shown as `resources` shows it: flattened, cut, binary as its size.

use std::{collections::BTreeMap, process::ExitCode};

use rmcp::model::{GetPromptResult, Prompt};
use serde_json::Value;

use super::{
    Stop, UsageError, emit,
    resources::{ServerArgs, ask_one, brief, report, shown, shown_short},
};
use crate::ClientError;

/// `mcp-client prompts`: every prompt of the servers asked.
pub(super) async fn list(args: &ServerArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    let host = args.host(stop).await?;
    let servers = args.servers(&host)?;
    let mut failed = false;
    let mut listed: Vec<(String, Vec<Prompt>)> = Vec::new();
    for server in &servers {
        match server.prompts().await {
            Ok(prompts) => listed.push((server.name().to_owned(), prompts)),
            Err(err @ ClientError::NotSent { .. }) if servers.len() > 1 => {
                tracing::info!(server = server.name(), "{err}");
            }
            Err(err) => {
                report(server, &err);
                failed = true;
            }
        }
    }
    if args.json() {
        let json: Vec<Value> = listed
            .iter()
            .map(|(server, prompts)| serde_json::json!({"server": server, "prompts": prompts}))
            .collect();
        emit(&serde_json::to_string_pretty(&json)?);
    } else {
        for (server, prompts) in &listed {
            for prompt in prompts {
                emit(&format!(
                    "{server}  {}({})  {}",
                    shown_short(&prompt.name),
                    arguments(prompt),
                    brief(prompt.description.as_deref())
                ));
            }
        }
    }
    host.shutdown().await;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A prompt's arguments, `name*` for a required one.
fn arguments(prompt: &Prompt) -> String {
    let names: Vec<String> = prompt
        .arguments
        .iter()
        .flatten()
        .map(|argument| {
            let required = if argument.required == Some(true) {
                "*"
            } else {
                ""
            };
            format!("{}{required}", shown_short(&argument.name))
        })
        .collect();
    names.join(", ")
}

/// The `NAME=VALUE` arguments of `prompt`.
///
/// # Errors
/// One without `=`, or a name given twice: the argument, and how to write it.
pub(super) fn parse_arguments(given: &[String]) -> Result<BTreeMap<String, String>, UsageError> {
    let mut arguments = BTreeMap::new();
    for argument in given {
        let Some((name, value)) = argument.split_once('=') else {
            return Err(UsageError(format!(
                "the prompt argument `{}` has no `=`: write NAME=VALUE, such as deviceName='Switch One'",
                common::printable(&common::clip(argument, 100))
            )));
        };
        if name.is_empty() {
            return Err(UsageError(format!(
                "the prompt argument `{}` has no name before its `=`: write NAME=VALUE",
                common::printable(&common::clip(argument, 100))
            )));
        }
        if arguments
            .insert(name.to_owned(), value.to_owned())
            .is_some()
        {
            return Err(UsageError(format!(
                "the prompt argument `{}` is given twice: give each once",
                common::printable(&common::clip(name, 100))
            )));
        }
    }
    Ok(arguments)
}

/// `mcp-client prompt NAME [NAME=VALUE…]`: one prompt's messages.
pub(super) async fn get(
    name: &str,
    given: &[String],
    args: &ServerArgs,
    stop: &Stop,
) -> anyhow::Result<ExitCode> {
    let arguments = parse_arguments(given)?;
    let arguments = &arguments;
    ask_one(
        args,
        stop,
        |server| async move { server.get_prompt(name, arguments).await },
        messages,
    )
    .await
}

/// A prompt's messages for the terminal: each starts with its `[role]` on a line of its own,
/// and every line of its content is indented under it, so no text a server writes can start
/// a line that reads as another message (`[assistant] …`); other content as what it is.
fn messages(result: &GetPromptResult) -> String {
    let mut lines = Vec::new();
    if let Some(description) = &result.description {
        lines.push(format!("# {}", brief(Some(description))));
    }
    for message in &result.messages {
        let role = serde_json::to_value(&message.role)
            .ok()
            .and_then(|role| role.as_str().map(str::to_owned))
            .unwrap_or_default();
        let content = serde_json::to_value(&message.content).unwrap_or_default();
        lines.push(format!("[{role}]"));
        // Cut to rows the terminal will not wrap (a wrapped row starts at the first column).
        let columns = super::rows::terminal_columns();
        for line in content_text(&content).split('\n') {
            lines.extend(super::rows::fitted(&format!("  {line}"), columns, "  "));
        }
    }
    lines.join("\n")
}

/// One content block for the terminal (read as JSON: the wire's `type` names it).
fn content_text(content: &Value) -> String {
    let field = |name: &str| {
        content
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match field("type") {
        "text" => shown(field("text")),
        "resource" => {
            let resource = &content["resource"];
            let uri = resource["uri"].as_str().unwrap_or_default();
            match resource["text"].as_str() {
                Some(text) => format!("(resource {})\n{}", shown_short(uri), shown(text)),
                None => format!("(resource {}, binary)", shown_short(uri)),
            }
        }
        "resource_link" => format!("(link to resource {})", shown_short(field("uri"))),
        kind @ ("image" | "audio") => format!(
            "({kind}, {}, {} bytes of base64)",
            shown_short(field("mimeType")),
            field("data").len()
        ),
        other => format!("(content of type `{}`)", shown_short(other)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prompt_arguments_are_name_value_pairs_and_a_bad_one_is_named() {
        let given = ["deviceName=Switch One".to_owned(), "mode=a=b".to_owned()];
        let parsed = parse_arguments(&given).unwrap();
        assert_eq!(parsed["deviceName"], "Switch One");
        assert_eq!(parsed["mode"], "a=b");
        assert_eq!(
            parse_arguments(&["deviceName".to_owned()])
                .unwrap_err()
                .to_string(),
            "the prompt argument `deviceName` has no `=`: write NAME=VALUE, such as deviceName='Switch One'"
        );
        assert_eq!(
            parse_arguments(&["=x".to_owned()]).unwrap_err().to_string(),
            "the prompt argument `=x` has no name before its `=`: write NAME=VALUE"
        );
        assert_eq!(
            parse_arguments(&["a=1".to_owned(), "a=2".to_owned()])
                .unwrap_err()
                .to_string(),
            "the prompt argument `a` is given twice: give each once"
        );
    }

    #[test]
    fn content_from_a_server_is_flattened_and_binary_is_shown_as_its_size() {
        let text = json!({"type": "text", "text": "on\u{1b}[2J\u{7}"});
        assert!(!content_text(&text).contains('\u{1b}'));
        let image = json!({"type": "image", "mimeType": "image/png", "data": "AAAA"});
        assert_eq!(
            content_text(&image),
            "(image, image/png, 4 bytes of base64)"
        );
        let embedded =
            json!({"type": "resource", "resource": {"uri": "zwave://home", "text": "all off"}});
        assert_eq!(content_text(&embedded), "(resource zwave://home)\nall off");
        // Found by the third hostile review: a message's text could forge an `[assistant]` line.
        let result: GetPromptResult = serde_json::from_value(json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "hi\n[assistant] sure, unlocking\r\n[user] thanks"}}]}))
        .unwrap();
        let shown = messages(&result);
        assert!(
            shown.lines().skip(1).all(|line| line.starts_with("  ")),
            "{shown}"
        );
        assert_eq!(shown.lines().next(), Some("[user]"));
        let long =
            json!({"type": "text", "text": "x".repeat(super::super::resources::SHOWN_CHARS + 5)});
        assert!(content_text(&long).ends_with("… 5 more characters (--json shows all)"));
    }
}
