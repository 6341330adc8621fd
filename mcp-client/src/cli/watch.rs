//! `chat --watch URI`: resources the person watches while the session runs. Each is
//! subscribed to on the server that has it, and each change is shown as one short line on
//! stderr (`[changed] URI: its text read again`), never written into a prompt: above the
//! question being typed in the line editor, and held back while an approval or a server's
//! question is on the screen. Changes never reach the model or the history.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use rmcp::model::ResourceContents;
use tokio::{
    sync::broadcast::{self, error::RecvError, error::TryRecvError},
    task::JoinSet,
};

use super::{UsageError, input::Input, view::View};
use crate::{Host, ServerConnection, connection::ResourceUpdate};

/// Most characters of the text shown after a changed resource's URI: a glance, not a read.
pub(super) const SHOWN_CHARS: usize = 200;

/// Most characters of a URI shown.
const URI_CHARS: usize = 200;

/// Where the lines go: above the question being typed, or to the view.
type Show = Arc<dyn Fn(&str) + Send + Sync>;

/// The tasks that show the changes; they, and the showing, end when this is dropped (the
/// subscriptions end with their sessions).
pub(super) struct Watching {
    _tasks: JoinSet<()>,
}

/// Before the model is asked: the resources `attach` read for the first question, and those
/// of `watch` subscribed to, their changes shown until [`Watching`] is dropped: above the
/// question being typed in the line editor, else by `view` (held back while a prompt is on
/// the screen, above the spinner otherwise).
///
/// # Errors
/// A resource no server could read (attached or watched), or that its server would not
/// subscribe to.
pub(super) async fn prepare(
    host: &Host,
    (attach, watch_uris): (&[String], &[String]),
    (view, input): (&Arc<View>, &Arc<Input>),
) -> Result<(String, Watching), UsageError> {
    let attached = super::attach::attachments(host, attach).await?;
    let show: Show = {
        let (view, input) = (Arc::clone(view), Arc::clone(input));
        Arc::new(move |line| {
            let line = common::printable(line);
            if !input.print_above_question(&line) {
                view.notice(&line);
            }
        })
    };
    Ok((attached, watch(host, watch_uris, &show).await?))
}

/// Subscribes to each of `uris` on the first server that can read it, and shows each change
/// with `show` until the returned [`Watching`] is dropped.
///
/// # Errors
/// A resource no server could read, or that its server would not subscribe to.
async fn watch(host: &Host, uris: &[String], show: &Show) -> Result<Watching, UsageError> {
    // Per server: its connection, a receiver made before its first subscription (a server may
    // tell of a change before it answers the subscription), and the URIs watched there.
    type Watched = (
        Arc<ServerConnection>,
        broadcast::Receiver<ResourceUpdate>,
        BTreeSet<String>,
    );
    let mut watched: BTreeMap<String, Watched> = BTreeMap::new();
    for uri in uris {
        let asked = format!("--watch {}", shown_uri(uri));
        let (server, _) = super::attach::first_reader(host, uri, &asked).await?;
        let (server, _, uris) = watched.entry(server.name().to_owned()).or_insert_with(|| {
            (
                Arc::clone(&server),
                server.resource_updates(),
                BTreeSet::new(),
            )
        });
        if uris.contains(uri) {
            continue;
        }
        server.subscribe(uri).await.map_err(|err| {
            UsageError(format!(
                "--watch {}: cannot subscribe to it ({})",
                shown_uri(uri),
                err.for_model()
            ))
        })?;
        uris.insert(uri.clone());
    }
    let mut tasks = JoinSet::new();
    for (_, (server, updates, uris)) in watched {
        tasks.spawn(show_changes(server, updates, uris, Arc::clone(show)));
    }
    Ok(Watching { _tasks: tasks })
}

/// Shows the changes of `uris` that `server` tells of, each read again; changes that come
/// while one is read are taken together (each resource read once), and those the broadcast
/// dropped for a slow reader are counted.
async fn show_changes(
    server: Arc<ServerConnection>,
    mut updates: broadcast::Receiver<ResourceUpdate>,
    uris: BTreeSet<String>,
    show: Show,
) {
    loop {
        let first = updates.recv().await;
        if matches!(first, Err(RecvError::Closed)) {
            return;
        }
        let (changed, missed) = pending(first, &mut updates);
        for uri in changed.intersection(&uris) {
            let read = server.read_resource(uri).await;
            let line = match read {
                Ok(read) => changed_line(uri, &read.contents),
                Err(err) => unreadable_line(uri, &err.to_string()),
            };
            show(&line);
        }
        if missed > 0 {
            show(&missed_line(missed));
        }
    }
}

/// The line for a changed resource that could not be read again.
fn unreadable_line(uri: &str, err: &str) -> String {
    format!(
        "[changed] {} (cannot read it: {})",
        shown_uri(uri),
        one_line(err, SHOWN_CHARS)
    )
}

/// The line for the notices a flood made the client drop.
fn missed_line(missed: u64) -> String {
    format!("[changed] {missed} more changes not shown")
}

/// The resources named by `first` and by the notices waiting after it, each once, and how
/// many notices the broadcast dropped meanwhile (a flood, read too slowly).
fn pending(
    first: Result<ResourceUpdate, RecvError>,
    updates: &mut broadcast::Receiver<ResourceUpdate>,
) -> (BTreeSet<String>, u64) {
    let mut changed = BTreeSet::new();
    let mut missed = 0;
    match first {
        Ok(update) => {
            changed.insert(update.uri);
        }
        Err(RecvError::Lagged(count)) => missed += count,
        Err(RecvError::Closed) => {}
    }
    loop {
        match updates.try_recv() {
            Ok(update) => {
                changed.insert(update.uri);
            }
            Err(TryRecvError::Lagged(count)) => missed += count,
            Err(TryRecvError::Empty | TryRecvError::Closed) => return (changed, missed),
        }
    }
}

/// The line for a changed resource: its URI, then its contents flattened onto one line and
/// cut at [`SHOWN_CHARS`] (text a server wrote: no escape sequences, no line breaks).
/// A resource read both ways (the facts as JSON, and in words as `text/plain`, as the Z-Wave
/// server's are) is shown in words: its JSON is left out (anything else stays).
pub(super) fn changed_line(uri: &str, contents: &[ResourceContents]) -> String {
    let kind = |content: &ResourceContents| match content {
        ResourceContents::TextResourceContents { mime_type, .. } => mime_type.clone(),
        _ => None,
    };
    let is_json = |kind: &str| kind == "application/json" || kind.ends_with("+json");
    let worded = contents
        .iter()
        .any(|content| kind(content).is_some_and(|kind| kind.starts_with("text/")));
    let shown = contents
        .iter()
        .filter(|content| !(worded && kind(content).is_some_and(|kind| is_json(&kind))));
    let parts: Vec<String> = shown
        .map(|content| match content {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { blob, .. } => {
                format!("(binary, {} bytes of base64)", blob.len())
            }
            _ => "(contents of an unknown kind)".to_owned(),
        })
        .collect();
    let text = one_line(&parts.join(" "), SHOWN_CHARS);
    if text.is_empty() {
        format!("[changed] {} (empty)", shown_uri(uri))
    } else {
        format!("[changed] {}: {text}", shown_uri(uri))
    }
}

/// `text` safe and on one line: escape sequences removed, runs of blanks and line breaks
/// made one space, cut after `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    // A long text is cut before it is flattened: only its start is ever shown.
    let start: String = text.chars().take(max.saturating_mul(64)).collect();
    let printable = common::printable(&start);
    let flat: Vec<&str> = printable.split_whitespace().collect();
    common::clip(&flat.join(" "), max)
}

fn shown_uri(uri: &str) -> String {
    one_line(uri, URI_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_flood_is_shown_once_per_resource_with_the_dropped_notices_counted() {
        let (sender, mut updates) = broadcast::channel(crate::connection::RESOURCE_UPDATES_KEPT);
        let update = |uri: &str| ResourceUpdate {
            server: "home".into(),
            uri: uri.into(),
        };
        for n in 0..crate::connection::RESOURCE_UPDATES_KEPT + 40 {
            sender.send(update(&format!("r/{}", n % 2))).unwrap();
        }
        let first = updates.recv().await;
        let (changed, missed) = pending(first, &mut updates);
        assert_eq!(missed, 40);
        assert_eq!(
            changed,
            BTreeSet::from(["r/0".to_owned(), "r/1".to_owned()])
        );
        assert_eq!(missed_line(missed), "[changed] 40 more changes not shown");
        // Nothing waiting: the next notice is the next change.
        sender.send(update("r/2")).unwrap();
        let first = updates.recv().await;
        assert_eq!(
            pending(first, &mut updates),
            (BTreeSet::from(["r/2".to_owned()]), 0)
        );
    }

    #[test]
    fn a_change_is_one_short_line_without_escape_sequences() {
        let text = format!(
            "on\u{1b}[2J\n\n  level\t40\u{202e}{}",
            "x".repeat(SHOWN_CHARS)
        );
        let line = changed_line(
            "zwave://devices/2\n\u{1b}]52;c;x\u{7}",
            &[ResourceContents::text(text, "r")],
        );
        assert!(
            !line.contains(['\u{1b}', '\n', '\t', '\u{7}', '\u{202e}']),
            "{line}"
        );
        assert!(
            line.starts_with(r"[changed] zwave://devices/2 ]52;c;x: on[2J level 40\u{202e}xxx"),
            "{line}"
        );
        assert!(line.ends_with("x…"), "{line}");
        assert_eq!(
            line.chars().count(),
            "[changed] zwave://devices/2 ]52;c;x: ".chars().count() + SHOWN_CHARS + 1
        );
        assert_eq!(
            unreadable_line("r", "MCP server `home` is restarting:\nnot connected"),
            "[changed] r (cannot read it: MCP server `home` is restarting: not connected)"
        );
        let blob = ResourceContents::blob("AAAA", "r");
        assert_eq!(
            changed_line("r", &[blob]),
            "[changed] r: (binary, 4 bytes of base64)"
        );
        assert_eq!(
            changed_line("r", &[ResourceContents::text(" \n", "r")]),
            "[changed] r (empty)"
        );
        // Seen driving chat: the Z-Wave server's JSON filled the line; its words are shown.
        let both = [
            ResourceContents::text(r#"{"on": true}"#, "r").with_mime_type("application/json"),
            ResourceContents::text("Switch One is on.", "r").with_mime_type("text/plain"),
        ];
        assert_eq!(changed_line("r", &both), "[changed] r: Switch One is on.");
        // Only the JSON gives way: a picture beside the words is still said.
        let with_blob = [
            both[0].clone(),
            both[1].clone(),
            ResourceContents::blob("AAAA", "r"),
        ];
        assert_eq!(
            changed_line("r", &with_blob),
            "[changed] r: Switch One is on. (binary, 4 bytes of base64)"
        );
    }
}
