//! [`Listing`]: every page of a paginated MCP list (`tools/list`, `resources/list`,
//! `resources/templates/list`, `prompts/list`), bounded: rmcp's `list_all_*` follow cursors
//! without end, and a server may send thousands of items.

use std::collections::HashSet;

use rmcp::{model::PaginatedRequestParams, service::ServiceError};
use tracing::warn;

/// Most pages of one list read; a server that keeps sending cursors is stopped there.
pub const MAX_PAGES: usize = 64;

/// One list to read, and its bound.
pub(super) struct Listing<'a> {
    /// The server's name, for the log.
    pub(super) server: &'a str,
    /// The request (`tools/list`).
    pub(super) method: &'a str,
    /// What it lists, plural (`tools`).
    pub(super) items: &'a str,
    /// Most items kept.
    pub(super) max: usize,
}

impl Listing<'_> {
    /// Every page `page` fetches (items and the next cursor), up to [`MAX_PAGES`] pages and
    /// `max` items, stopping at a cursor seen before; what is left out is logged.
    pub(super) async fn all<T, F, Fut>(&self, mut page: F) -> Result<Vec<T>, ServiceError>
    where
        F: FnMut(Option<PaginatedRequestParams>) -> Fut,
        Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
    {
        let (server, method) = (self.server, self.method);
        let mut items = Vec::new();
        let mut cursor = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let (listed, next) = page(Some(params)).await?;
            let room = self.max - items.len();
            if listed.len() > room {
                warn!(
                    server,
                    max = self.max,
                    "the server offers more {} than a host keeps; the rest are left out",
                    self.items
                );
                items.extend(listed.into_iter().take(room));
                return Ok(items);
            }
            items.extend(listed);
            match next {
                None => return Ok(items),
                Some(next) if !seen.insert(next.clone()) => {
                    warn!(server, cursor = %next.escape_debug(), "{method} sent a cursor it sent before; stopping there");
                    return Ok(items);
                }
                Some(next) => cursor = Some(next),
            }
        }
        warn!(
            server,
            pages = MAX_PAGES,
            "{method} has more pages than a host reads; the rest are left out"
        );
        Ok(items)
    }
}
