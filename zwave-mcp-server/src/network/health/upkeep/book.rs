//! [`UpkeepBook`]: which upkeep operation runs on which node (one at a time per node, at most
//! [`MAX_RUNNING`] at once), and the outcomes that came after their callers stopped waiting,
//! kept until the next call on that node tells them.

use std::collections::HashMap;

use super::{Upkeep, UpkeepError, UpkeepOutcome};
use crate::network::NodeId;

/// Most upkeep operations running at once over the whole network: each keeps the controller
/// busy (a health check sends tens of frames a round), and a home's other commands share it.
pub const MAX_RUNNING: usize = 4;

/// An operation running on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Which.
    pub operation: Upkeep,
    /// Since when, epoch milliseconds.
    pub since_ms: i64,
    /// Whether its caller stopped waiting for it (it runs on, watched, until it ends or its
    /// bound passes).
    pub unwatched: bool,
}

/// An outcome that came after its caller stopped waiting.
#[derive(Debug, Clone)]
pub struct LateOutcome {
    /// Which operation.
    pub operation: Upkeep,
    /// When it was asked for, epoch milliseconds.
    pub asked_ms: i64,
    /// When it ended, epoch milliseconds.
    pub ended_ms: i64,
    /// How it ended.
    pub outcome: Result<UpkeepOutcome, UpkeepError>,
}

/// Operations running, by node, and late outcomes not told yet.
/// Invariant: a node is in `running` from its claim until its operation's task ends (the
/// task's claim removes it when dropped); nothing else removes it.
#[derive(Debug, Default)]
pub struct UpkeepBook {
    running: HashMap<NodeId, Running>,
    /// Oldest first, at most [`MAX_LATE`] per node.
    late: HashMap<NodeId, Vec<LateOutcome>>,
}

/// Late outcomes kept per node, at most: the oldest goes first.
pub const MAX_LATE: usize = 4;

impl UpkeepBook {
    /// Notes `operation` as running on `node` from `now_ms`.
    ///
    /// # Errors
    /// [`UpkeepError::Busy`] naming what runs on the node, or [`UpkeepError::TooMany`].
    pub fn claim(
        &mut self,
        node: NodeId,
        operation: Upkeep,
        now_ms: i64,
    ) -> Result<(), UpkeepError> {
        if let Some(running) = self.running.get(&node) {
            return Err(UpkeepError::Busy {
                node,
                running: running.operation,
                since_ms: running.since_ms,
            });
        }
        if self.running.len() >= MAX_RUNNING {
            return Err(UpkeepError::TooMany { limit: MAX_RUNNING });
        }
        self.running.insert(
            node,
            Running {
                operation,
                since_ms: now_ms,
                unwatched: false,
            },
        );
        Ok(())
    }

    /// What runs on `node`, if anything.
    pub fn running(&self, node: NodeId) -> Option<&Running> {
        self.running.get(&node)
    }

    /// The caller of the operation on `node` stopped waiting for it.
    pub fn unwatched(&mut self, node: NodeId) {
        if let Some(running) = self.running.get_mut(&node) {
            running.unwatched = true;
        }
    }

    /// The operation on `node` ended.
    pub(crate) fn release(&mut self, node: NodeId) {
        self.running.remove(&node);
    }

    /// Keeps an outcome nobody waited for, for the next call on `node` (at most [`MAX_LATE`]
    /// per node: the oldest goes).
    pub(crate) fn keep_late(&mut self, node: NodeId, late: LateOutcome) {
        let kept = self.late.entry(node).or_default();
        kept.push(late);
        if kept.len() > MAX_LATE {
            kept.remove(0);
        }
    }

    /// The late outcomes on `node` not told yet (oldest first), now told.
    pub fn take_late(&mut self, node: NodeId) -> Vec<LateOutcome> {
        self.late.remove(&node).unwrap_or_default()
    }

    /// Late outcomes taken by a call that then told no one (it was cancelled): back for the
    /// next call, before any that came meanwhile.
    pub fn untold(&mut self, node: NodeId, mut late: Vec<LateOutcome>) {
        if late.is_empty() {
            return;
        }
        let kept = self.late.entry(node).or_default();
        late.append(kept);
        let over = late.len().saturating_sub(MAX_LATE);
        late.drain(..over);
        *kept = late;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn late(asked_ms: i64) -> LateOutcome {
        LateOutcome {
            operation: Upkeep::Reinterview,
            asked_ms,
            ended_ms: asked_ms + 1,
            outcome: Err(UpkeepError::NotEnded {
                operation: Upkeep::Reinterview,
                after: std::time::Duration::from_secs(1),
            }),
        }
    }

    fn asked(kept: &[LateOutcome]) -> Vec<i64> {
        kept.iter().map(|late| late.asked_ms).collect()
    }

    /// Found by the hostile review: a late outcome taken by a call that was then cancelled
    /// was lost (rmcp answers no cancelled call), and a newer one replaced an older.
    #[test]
    fn late_outcomes_are_kept_in_order_bounded_and_given_back_when_untold() {
        let mut book = UpkeepBook::default();
        book.keep_late(NodeId(2), late(1));
        let taken = book.take_late(NodeId(2));
        assert_eq!(asked(&taken), [1]);
        assert!(book.take_late(NodeId(2)).is_empty());
        // The call that took it is cancelled; meanwhile its own operation ended late too.
        book.keep_late(NodeId(2), late(2));
        book.untold(NodeId(2), taken);
        assert_eq!(asked(&book.take_late(NodeId(2))), [1, 2]);
        for at in 1..=6 {
            book.keep_late(NodeId(3), late(at));
        }
        assert_eq!(asked(&book.take_late(NodeId(3))), [3, 4, 5, 6]);
        book.keep_late(NodeId(3), late(9));
        book.untold(NodeId(3), (5..=8).map(late).collect());
        assert_eq!(asked(&book.take_late(NodeId(3))), [6, 7, 8, 9]);
    }

    #[test]
    fn one_operation_per_node_and_a_bound_over_all() {
        let mut book = UpkeepBook::default();
        book.claim(NodeId(2), Upkeep::Reinterview, 10).unwrap();
        let busy = book
            .claim(NodeId(2), Upkeep::CheckLifeline, 20)
            .unwrap_err();
        assert!(
            matches!(
                busy,
                UpkeepError::Busy {
                    running: Upkeep::Reinterview,
                    since_ms: 10,
                    ..
                }
            ),
            "{busy:?}"
        );
        for node in 3..=MAX_RUNNING as u16 + 1 {
            book.claim(NodeId(node), Upkeep::RebuildRoutes, 30).unwrap();
        }
        let err = book
            .claim(NodeId(99), Upkeep::RebuildRoutes, 40)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "4 upkeep operations are running already; at most 4 run at once: try again when one has ended"
        );
        book.release(NodeId(2));
        book.claim(NodeId(2), Upkeep::CheckLifeline, 50).unwrap();
        assert_eq!(
            book.running(NodeId(2)).map(|r| r.operation),
            Some(Upkeep::CheckLifeline)
        );
    }
}
