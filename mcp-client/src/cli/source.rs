//! Which server a resource the person names (`chat --attach`, `--watch`) is taken from: only
//! one that lists it, in `resources/list` or by one of its templates, never merely one that
//! answers a read of it (a server can answer any URI, and with several servers the first in
//! name order would answer for all). The person may name the server: `SERVER:URI`. When no
//! server or several list it, the answer is a usage error that names them.

use std::sync::Arc;

use super::UsageError;
use crate::{Host, ServerConnection};

/// The server that lists `spec` (a URI, or `SERVER:URI`), and the URI. `asked` (such as
/// `--attach URI`) begins a refusal.
///
/// # Errors
/// No server lists it, several do, or the server named is not configured.
pub(super) async fn lister(
    host: &Host,
    spec: &str,
    asked: &str,
) -> Result<(Arc<ServerConnection>, String), UsageError> {
    let servers: Vec<&Arc<ServerConnection>> = host.pool().servers().collect();
    if let Some((name, uri)) = qualified(spec, |name| servers.iter().any(|s| s.name() == name)) {
        let server = servers
            .iter()
            .find(|server| server.name() == name)
            .expect("the name was found among the servers");
        return Ok((Arc::clone(server), uri.to_owned()));
    }
    let mut listing = Vec::new();
    let mut said = Vec::new();
    for server in servers {
        match lists(server, spec).await {
            Ok(true) => listing.push(Arc::clone(server)),
            Ok(false) => said.push(format!("`{}` does not list it", server.name())),
            Err(err) => said.push(format!("`{}`: {err}", server.name())),
        }
    }
    match listing.as_slice() {
        [one] => Ok((Arc::clone(one), spec.to_owned())),
        [] if said.is_empty() => Err(UsageError(format!("{asked}: no server is configured"))),
        [] => Err(UsageError(format!(
            "{asked}: no server lists it in its resources or their templates ({})",
            said.join("; ")
        ))),
        several => {
            // No server is suggested over the others: the person knows which one they meant.
            let names: Vec<String> = several.iter().map(|s| format!("`{}`", s.name())).collect();
            Err(UsageError(format!(
                "{asked}: {} all list it: say which one, as SERVER:{}",
                names.join(", "),
                common::printable(&common::clip(spec, 200))
            )))
        }
    }
}

/// `SERVER:URI` split, when `SERVER` is a configured server (`is_server`) and what follows is
/// a URI with a scheme of its own (`zwave://home` alone is no server `zwave` and `//home`).
fn qualified(spec: &str, is_server: impl Fn(&str) -> bool) -> Option<(&str, &str)> {
    let (name, uri) = spec.split_once(':')?;
    let scheme = uri.split_once(':')?.0;
    let is_scheme = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (is_scheme && is_server(name)).then_some((name, uri))
}

/// Whether `server` lists `uri`: a resource of that URI, or a template it fills.
async fn lists(server: &ServerConnection, uri: &str) -> Result<bool, String> {
    let resources = server.resources().await.map_err(|err| err.for_model())?;
    if resources.iter().any(|resource| resource.uri == uri) {
        return Ok(true);
    }
    // A server without templates says so with an error or an empty list: either is no match.
    let templates = server.resource_templates().await.unwrap_or_default();
    Ok(templates.iter().any(|template| {
        claims_a_scheme(&template.uri_template) && fills(&template.uri_template, uri)
    }))
}

/// Whether `template` names its scheme before any expression (`zwave://devices/{id}`): one
/// that begins with an expression (`{+x}`) would claim every URI of every server.
fn claims_a_scheme(template: &str) -> bool {
    let literal = template.split('{').next().unwrap_or_default();
    literal
        .split_once(':')
        .is_some_and(|(scheme, _)| !scheme.is_empty())
}

/// Whether `uri` is `template` (RFC 6570) with its expressions filled: `{name}` by one or more
/// characters up to the next `/`, `?` or `#`; any other expression (`{+path}`, `{?query}`) by
/// anything, the empty text too. Walked as a set of positions, so a template of many
/// expressions (a server writes it) costs its length times the URI's squared, never more.
fn fills(template: &str, uri: &str) -> bool {
    let uri: Vec<char> = uri.chars().collect();
    // `at[p]`: the template so far can end where the URI's position `p` is.
    let mut at = vec![false; uri.len() + 1];
    at[0] = true;
    let mut rest = template;
    while !rest.is_empty() {
        let mut next = vec![false; uri.len() + 1];
        if let Some(expression) = rest.strip_prefix('{') {
            let Some((expression, after)) = expression.split_once('}') else {
                return false;
            };
            let simple = expression.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            for start in (0..=uri.len()).filter(|&p| at[p]) {
                if !simple {
                    next[start..].iter_mut().for_each(|reached| *reached = true);
                    break;
                }
                for end in start + 1..=uri.len() {
                    if matches!(uri[end - 1], '/' | '?' | '#') {
                        break;
                    }
                    next[end] = true;
                }
            }
            rest = after;
        } else {
            let literal_end = rest.find('{').unwrap_or(rest.len());
            let literal: Vec<char> = rest[..literal_end].chars().collect();
            for start in (0..=uri.len()).filter(|&p| at[p]) {
                if uri[start..].starts_with(&literal) {
                    next[start + literal.len()] = true;
                }
            }
            rest = &rest[literal_end..];
        }
        at = next;
    }
    at[uri.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_is_filled_by_a_uri_of_its_shape_only() {
        assert!(fills("zwave://devices/{nodeId}", "zwave://devices/8"));
        assert!(!fills("zwave://devices/{nodeId}", "zwave://devices/"));
        assert!(!fills("zwave://devices/{nodeId}", "zwave://devices/8/x"));
        assert!(!fills("zwave://devices/{nodeId}", "zwave://home"));
        assert!(fills("file:///{+path}", "file:///a/b/c"));
        assert!(fills("a/{x}/b/{y}", "a/1/b/2"));
        assert!(!fills("a/{x}/b/{y}", "a/1/c/2"));
        assert!(fills("zwave://home", "zwave://home"));
        assert!(!fills("zwave://home{", "zwave://home"));
        assert!(fills("q{?a,b}", "q?a=1&b=2"));
        // A server's template of many expressions costs no more than its length says.
        let many = "{+a}".repeat(200);
        assert!(fills(
            &format!("{many}x"),
            &"y".repeat(2_000).replace("yy", "yx")
        ));
        assert!(!fills(&format!("{many}z"), &"y".repeat(2_000)));
    }

    #[test]
    fn a_template_counts_only_when_it_names_its_scheme() {
        assert!(claims_a_scheme("zwave://devices/{nodeId}"));
        assert!(claims_a_scheme("file:///{+path}"));
        // Found by the third hostile review: `{+x}` claimed every URI.
        assert!(!claims_a_scheme("{+x}"));
        assert!(!claims_a_scheme("{scheme}://{+rest}"));
        assert!(!claims_a_scheme(":{x}"));
    }

    #[test]
    fn a_server_is_named_only_before_a_uri_with_a_scheme_of_its_own() {
        let known = |name: &str| ["zwave", "analytics"].contains(&name);
        assert_eq!(qualified("zwave://home", known), None);
        assert_eq!(
            qualified("zwave:zwave://home", known),
            Some(("zwave", "zwave://home"))
        );
        assert_eq!(
            qualified("analytics:zwave://home", known),
            Some(("analytics", "zwave://home"))
        );
        assert_eq!(qualified("other:zwave://home", known), None);
        assert_eq!(qualified("zwave:", known), None);
        assert_eq!(qualified("zwave:1x:y", known), None);
    }
}
