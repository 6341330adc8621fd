//! `chat --watch URI`: resources the person watches while the session runs. Each is
//! subscribed to on the server that lists it ([`source`](super::source)), and each change is
//! shown as one short line on stderr naming that server (`[changed] URI (server `zwave`): its
//! text read again`), never written into a prompt: above the question being typed in the line
//! editor, and held back while an approval or a server's question is on the screen. A
//! resource is read again at most once per [`MIN_GAP`]: the changes told meanwhile are
//! counted and said with the next line. Changes never reach the model or the history.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
    time::Duration,
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

/// The least time between two reads of one resource: a server telling of changes in a loop
/// gets one line a second, not a line for each.
pub(super) const MIN_GAP: Duration = Duration::from_secs(1);

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
    for spec in uris {
        let asked = format!("--watch {}", shown_uri(spec));
        let (server, uri) = super::source::lister(host, spec, &asked).await?;
        let uri = &uri;
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
                "{asked}: cannot subscribe to it ({})",
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

/// Shows the changes of `uris` that `server` tells of, each read again at most once per
/// [`MIN_GAP`]: changes that come meanwhile are taken together and counted, and those the
/// broadcast dropped for a slow reader are counted too.
async fn show_changes(
    server: Arc<ServerConnection>,
    mut updates: broadcast::Receiver<ResourceUpdate>,
    uris: BTreeSet<String>,
    show: Show,
) {
    let mut last_read: BTreeMap<String, tokio::time::Instant> = BTreeMap::new();
    // Resources told of and not read since, with how many changes were told.
    let mut waiting: BTreeMap<String, u64> = BTreeMap::new();
    loop {
        let due = waiting
            .keys()
            .map(|uri| {
                last_read
                    .get(uri)
                    .map_or_else(tokio::time::Instant::now, |at| *at + MIN_GAP)
            })
            .min();
        let told = tokio::select! {
            told = updates.recv() => Some(told),
            () = sleep_until(due) => None,
        };
        let mut missed = 0;
        if let Some(first) = told {
            if matches!(first, Err(RecvError::Closed)) {
                return;
            }
            let (changed, lost) = pending(first, &mut updates);
            missed = lost;
            for (uri, count) in changed {
                if uris.contains(&uri) {
                    *waiting.entry(uri).or_default() += count;
                }
            }
        }
        let now = tokio::time::Instant::now();
        let ready: Vec<String> = waiting
            .keys()
            .filter(|uri| last_read.get(*uri).is_none_or(|at| now >= *at + MIN_GAP))
            .cloned()
            .collect();
        for uri in ready {
            let told = waiting.remove(&uri).unwrap_or(1);
            last_read.insert(uri.clone(), tokio::time::Instant::now());
            let line = match server.read_resource(&uri).await {
                Ok(read) => changed_line(server.name(), &uri, &read.contents),
                Err(err) => unreadable_line(server.name(), &uri, &err.to_string()),
            };
            show(&with_more(line, told));
        }
        if missed > 0 {
            show(&missed_line(missed));
        }
    }
}

/// Sleeps until `due`, or forever without one.
async fn sleep_until(due: Option<tokio::time::Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// `line`, saying how many more changes it stands for when `told` is more than one.
fn with_more(line: String, told: u64) -> String {
    match told {
        0 | 1 => line,
        2 => format!("{line} (and 1 more change since the last line)"),
        more => format!("{line} (and {} more changes since the last line)", more - 1),
    }
}

/// The line for a changed resource of `server` that could not be read again.
fn unreadable_line(server: &str, uri: &str, err: &str) -> String {
    format!(
        "[changed] {} (server `{}`; cannot read it: {})",
        shown_uri(uri),
        one_line(server, 100),
        one_line(err, SHOWN_CHARS)
    )
}

/// The line for the notices a flood made the client drop.
fn missed_line(missed: u64) -> String {
    format!("[changed] {missed} more changes not shown")
}

/// The resources named by `first` and by the notices waiting after it, each once with how
/// many notices named it, and how many notices the broadcast dropped meanwhile (a flood,
/// read too slowly).
fn pending(
    first: Result<ResourceUpdate, RecvError>,
    updates: &mut broadcast::Receiver<ResourceUpdate>,
) -> (BTreeMap<String, u64>, u64) {
    let mut changed = BTreeMap::new();
    let mut missed = 0;
    match first {
        Ok(update) => {
            *changed.entry(update.uri).or_default() += 1;
        }
        Err(RecvError::Lagged(count)) => missed += count,
        Err(RecvError::Closed) => {}
    }
    loop {
        match updates.try_recv() {
            Ok(update) => {
                *changed.entry(update.uri).or_default() += 1;
            }
            Err(TryRecvError::Lagged(count)) => missed += count,
            Err(TryRecvError::Empty | TryRecvError::Closed) => return (changed, missed),
        }
    }
}

/// The line for a changed resource of `server`: its URI and the server, then its contents
/// flattened onto one line and cut at [`SHOWN_CHARS`] (text a server wrote: no escape
/// sequences, no line breaks).
/// A resource read both ways (the facts as JSON, and in words as `text/plain`, as the Z-Wave
/// server's are) is shown in words: its JSON is left out (anything else stays).
pub(super) fn changed_line(server: &str, uri: &str, contents: &[ResourceContents]) -> String {
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
    let source = format!("{} (server `{}`)", shown_uri(uri), one_line(server, 100));
    if text.is_empty() {
        format!("[changed] {source}: (empty)")
    } else {
        format!("[changed] {source}: {text}")
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
        let kept = crate::connection::RESOURCE_UPDATES_KEPT as u64;
        assert_eq!(
            changed,
            BTreeMap::from([("r/0".to_owned(), kept / 2), ("r/1".to_owned(), kept / 2)])
        );
        assert_eq!(missed_line(missed), "[changed] 40 more changes not shown");
        // Nothing waiting: the next notice is the next change.
        sender.send(update("r/2")).unwrap();
        let first = updates.recv().await;
        assert_eq!(
            pending(first, &mut updates),
            (BTreeMap::from([("r/2".to_owned(), 1)]), 0)
        );
        assert_eq!(with_more("l".into(), 1), "l");
        assert_eq!(
            with_more("l".into(), 2),
            "l (and 1 more change since the last line)"
        );
        assert_eq!(
            with_more("l".into(), 430),
            "l (and 429 more changes since the last line)"
        );
    }

    #[test]
    fn a_change_is_one_short_line_without_escape_sequences() {
        let text = format!(
            "on\u{1b}[2J\n\n  level\t40\u{202e}{}",
            "x".repeat(SHOWN_CHARS)
        );
        let line = changed_line(
            "home",
            "zwave://devices/2\n\u{1b}]52;c;x\u{7}",
            &[ResourceContents::text(text, "r")],
        );
        assert!(
            !line.contains(['\u{1b}', '\n', '\t', '\u{7}', '\u{202e}']),
            "{line}"
        );
        assert!(
            line.starts_with(
                r"[changed] zwave://devices/2 ]52;c;x (server `home`): on[2J level 40\u{202e}xxx"
            ),
            "{line}"
        );
        assert!(line.ends_with("x…"), "{line}");
        assert_eq!(
            line.chars().count(),
            "[changed] zwave://devices/2 ]52;c;x (server `home`): "
                .chars()
                .count()
                + SHOWN_CHARS
                + 1
        );
        assert_eq!(
            unreadable_line(
                "home",
                "r",
                "MCP server `home` is restarting:\nnot connected"
            ),
            "[changed] r (server `home`; cannot read it: MCP server `home` is restarting: not connected)"
        );
        let blob = ResourceContents::blob("AAAA", "r");
        assert_eq!(
            changed_line("h", "r", &[blob]),
            "[changed] r (server `h`): (binary, 4 bytes of base64)"
        );
        assert_eq!(
            changed_line("h", "r", &[ResourceContents::text(" \n", "r")]),
            "[changed] r (server `h`): (empty)"
        );
        // Seen driving chat: the Z-Wave server's JSON filled the line; its words are shown.
        let both = [
            ResourceContents::text(r#"{"on": true}"#, "r").with_mime_type("application/json"),
            ResourceContents::text("Switch One is on.", "r").with_mime_type("text/plain"),
        ];
        assert_eq!(
            changed_line("h", "r", &both),
            "[changed] r (server `h`): Switch One is on."
        );
        // Only the JSON gives way: a picture beside the words is still said.
        let with_blob = [
            both[0].clone(),
            both[1].clone(),
            ResourceContents::blob("AAAA", "r"),
        ];
        assert_eq!(
            changed_line("h", "r", &with_blob),
            "[changed] r (server `h`): Switch One is on. (binary, 4 bytes of base64)"
        );
    }
}
