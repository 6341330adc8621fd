//! JSON-RPC batches, which MCP 2025-03-26 (and only it) requires servers to accept: an array
//! of messages on one line, answered by one array of the responses to its requests.
//!
//! The transport hands a batch's messages to rmcp one by one and opens a [`Batches`] entry
//! with the ids of its requests; each response to one of them is held there instead of being
//! written, and the array is written when the last one came in. A request the client cancels
//! gets no response (rmcp drops it): the batch then completes without it. An element that is
//! refused before typing (not JSON-RPC) is answered inside the array too.

use std::collections::HashMap;

use rmcp::model::RequestId;

/// The batches whose responses are still being collected.
#[derive(Debug, Default)]
pub(crate) struct Batches {
    open: Vec<Batch>,
}

#[derive(Debug)]
struct Batch {
    /// How many responses each request id of the batch still owes (ids may repeat).
    awaiting: HashMap<RequestId, usize>,
    /// The responses so far, each one serialized JSON-RPC message.
    replies: Vec<Vec<u8>>,
}

impl Batch {
    /// The array line, once nothing is awaited.
    fn line_if_done(&mut self) -> Option<Vec<u8>> {
        if !self.awaiting.is_empty() || self.replies.is_empty() {
            return None;
        }
        let mut line = b"[".to_vec();
        for (at, reply) in self.replies.iter().enumerate() {
            if at > 0 {
                line.push(b',');
            }
            line.extend_from_slice(reply);
        }
        line.extend_from_slice(b"]\n");
        Some(line)
    }
}

/// What opening a batch gives.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Opened {
    /// Its responses will be collected.
    Collecting,
    /// It holds no request: this is its answer (the refusals inside it), or nothing at all
    /// (a batch of notifications only).
    Done(Option<Vec<u8>>),
}

impl Batches {
    /// Opens a batch awaiting the responses to `requests`, already holding `refusals` (the
    /// answers to its elements that were refused).
    pub fn open(&mut self, requests: Vec<RequestId>, refusals: Vec<Vec<u8>>) -> Opened {
        let mut batch = Batch {
            awaiting: HashMap::new(),
            replies: refusals,
        };
        for id in requests {
            *batch.awaiting.entry(id).or_default() += 1;
        }
        if batch.awaiting.is_empty() {
            return Opened::Done(batch.line_if_done());
        }
        self.open.push(batch);
        Opened::Collecting
    }

    /// Takes a response to `id`: `Err(reply)` when no open batch awaits it (write it alone);
    /// `Ok(Some(line))` when it completes its batch; `Ok(None)` when the batch waits on.
    pub fn answer(&mut self, id: &RequestId, reply: Vec<u8>) -> Result<Option<Vec<u8>>, Vec<u8>> {
        let Some(at) = self
            .open
            .iter()
            .position(|batch| batch.awaiting.contains_key(id))
        else {
            return Err(reply);
        };
        let batch = &mut self.open[at];
        batch.replies.push(reply);
        Ok(self.settle(at, id))
    }

    /// The client cancelled `id`: its batch no longer waits for it. Returns the batch's line
    /// if that completed it.
    pub fn cancel(&mut self, id: &RequestId) -> Option<Vec<u8>> {
        let at = self
            .open
            .iter()
            .position(|batch| batch.awaiting.contains_key(id))?;
        self.settle(at, id)
    }

    /// One response fewer owed for `id` in batch `at`; closes the batch when it is done.
    fn settle(&mut self, at: usize, id: &RequestId) -> Option<Vec<u8>> {
        let batch = &mut self.open[at];
        if let Some(owed) = batch.awaiting.get_mut(id) {
            *owed -= 1;
            if *owed == 0 {
                batch.awaiting.remove(id);
            }
        }
        if !batch.awaiting.is_empty() {
            return None;
        }
        let mut done = self.open.swap_remove(at);
        // A batch whose every request was cancelled owes nothing at all.
        done.line_if_done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn a_batch_is_written_once_its_last_response_came() {
        let mut batches = Batches::default();
        assert_eq!(
            batches.open(vec![id(1), id(2)], vec![b"{\"refused\":0}".to_vec()]),
            Opened::Collecting
        );
        assert_eq!(batches.answer(&id(2), b"{\"id\":2}".to_vec()), Ok(None));
        assert_eq!(
            batches.answer(&id(9), b"{\"id\":9}".to_vec()),
            Err(b"{\"id\":9}".to_vec())
        );
        assert_eq!(
            batches.answer(&id(1), b"{\"id\":1}".to_vec()),
            Ok(Some(b"[{\"refused\":0},{\"id\":2},{\"id\":1}]\n".to_vec()))
        );
        assert!(batches.open.is_empty());
    }

    #[test]
    fn cancelled_requests_and_repeated_ids_complete_a_batch() {
        let mut batches = Batches::default();
        batches.open(vec![id(1), id(1), id(2)], vec![]);
        assert_eq!(batches.answer(&id(1), b"a".to_vec()), Ok(None));
        assert_eq!(batches.cancel(&id(2)), None);
        assert_eq!(
            batches.answer(&id(1), b"b".to_vec()),
            Ok(Some(b"[a,b]\n".to_vec()))
        );
        batches.open(vec![id(3)], vec![]);
        assert_eq!(
            batches.cancel(&id(3)),
            None,
            "nothing is owed for a cancelled batch"
        );
        assert!(batches.open.is_empty());
    }

    #[test]
    fn a_batch_without_requests_is_answered_at_once() {
        let mut batches = Batches::default();
        assert_eq!(batches.open(vec![], vec![]), Opened::Done(None));
        assert_eq!(
            batches.open(vec![], vec![b"e".to_vec()]),
            Opened::Done(Some(b"[e]\n".to_vec()))
        );
    }
}
