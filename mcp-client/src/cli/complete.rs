//! `mcp-client complete prompt:NAME|template:URI ARGUMENT [TYPED] [--context NAME=VALUE…]`:
//! what a server offers for one argument of a prompt or a resource template, as a host would
//! show it while the person types. The values are a server's text: flattened and cut.

use std::process::ExitCode;

use rmcp::model::{CompletionInfo, Reference};

use super::{
    Stop, UsageError,
    prompts::parse_arguments,
    resources::{ServerArgs, ask_one, shown_short},
};

/// What the argument belongs to, as given: `prompt:NAME` or `template:URI_TEMPLATE`.
///
/// # Errors
/// Neither prefix, or nothing after it: the value, and the two forms.
pub(super) fn reference(given: &str) -> Result<Reference, UsageError> {
    let parsed = match given.split_once(':') {
        Some(("prompt", name)) if !name.is_empty() => Some(Reference::for_prompt(name)),
        Some(("template", uri)) if !uri.is_empty() => Some(Reference::for_resource(uri)),
        _ => None,
    };
    parsed.ok_or_else(|| {
        UsageError(format!(
            "`{}` names no prompt or resource template: write prompt:NAME (as `prompts` lists it) or template:URI (as `resources` lists it)",
            common::printable(&common::clip(given, 100))
        ))
    })
}

/// `mcp-client complete`: the values offered, one per line (`--json`: the server's answer).
pub(super) async fn complete(
    reference_given: &str,
    argument: &str,
    typed: &str,
    context: &[String],
    args: &ServerArgs,
    stop: &Stop,
) -> anyhow::Result<ExitCode> {
    let reference = reference(reference_given)?;
    let context = &parse_arguments(context)?;
    ask_one(
        args,
        stop,
        |server| async move { server.complete(reference, argument, typed, context).await },
        offered,
    )
    .await
}

/// The values offered, one per line, then how many there are when not all are shown.
fn offered(offered: &CompletionInfo) -> String {
    let mut lines: Vec<String> = offered.values.iter().map(|v| shown_short(v)).collect();
    let shown = offered.values.len();
    match offered.total {
        Some(total) if total as usize > shown => {
            lines.push(format!(
                "({shown} shown of {total}: type more to narrow them)"
            ));
        }
        _ if offered.has_more == Some(true) => {
            lines.push(format!(
                "({shown} shown, more match: type more to narrow them)"
            ));
        }
        _ if shown == 0 => lines.push("(nothing offered)".to_owned()),
        _ => {}
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_a_prompt_or_a_template_and_anything_else_is_named() {
        assert_eq!(
            reference("prompt:device_help").unwrap(),
            Reference::for_prompt("device_help")
        );
        assert_eq!(
            reference("template:zwave://devices/{nodeId}").unwrap(),
            Reference::for_resource("zwave://devices/{nodeId}")
        );
        for wrong in ["device_help", "prompt:", "tool:x"] {
            assert_eq!(
                reference(wrong).unwrap_err().to_string(),
                format!(
                    "`{wrong}` names no prompt or resource template: write prompt:NAME (as `prompts` lists it) or template:URI (as `resources` lists it)"
                )
            );
        }
    }
}
