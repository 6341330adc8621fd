//! Upkeep operations on one node, over either backend: a re-interview (`refreshInfo` /
//! `node.refresh_info`), a lifeline health check (`checkLifelineHealth` /
//! `node.check_lifeline_health`, abortable with `abortHealthCheck` / `node.abort_health_check`)
//! and a route rebuild (`rebuildNodeRoutes` / `controller.rebuild_node_routes`).
//!
//! ```text
//!   Network::start_upkeep ──▶ UpkeepBook: one operation per node, at most MAX_RUNNING at once
//!        │ a task of its own, bounded (its caller may stop waiting; the task still ends)
//!        ▼
//!   reinterview / lifeline / routes ──▶ the backend's call ──▶ progress: the driver's events
//!        │                                                     (zwave-js-server), or the node
//!        ▼                                                     list read again (Z-Wave JS UI)
//!   UpkeepRun: progress, the outcome, abort ── an outcome nobody waits for any more is kept
//!                                              for the next call on that node
//! ```
//!
//! What the real software does is recorded in `reference/zwave-js-ui/captures/upkeep/FACTS.md`:
//! Z-Wave JS UI answers `refreshInfo` at once and shows the interview only in its node list
//! (`interviewStage`, `interviewProgress`); zwave-js-server answers `node.refresh_info` at once
//! and sends the interview's events; health-check progress reaches zwave-js-server's caller
//! only (Z-Wave JS UI sends it to its web UI alone); neither can stop a re-interview or a
//! route rebuild.
//!
//! | module | owns |
//! |---|---|
//! | `book` | [`UpkeepBook`]: which operation runs on which node, and outcomes that came late |
//! | `signals` | [`UpkeepSignal`]: what the backends hear of an operation under way |
//! | `outcome` | [`Upkeep`], [`UpkeepOutcome`], [`LifelineRound`], [`UpkeepError`], reading a check's summary |
//! | `run` | [`Network::start_upkeep`](crate::network::Network::start_upkeep): the task, its bound |
//! | `reinterview` | a re-interview and its stages |
//! | `lifeline` | a lifeline health check, its rounds, and its abort |
//! | `routes` | a route rebuild |

mod book;
mod lifeline;
mod outcome;
mod reinterview;
mod routes;
mod run;
mod signals;

pub use book::{LateOutcome, MAX_RUNNING, Running, UpkeepBook};
pub use outcome::{LifelineRound, Upkeep, UpkeepError, UpkeepOutcome, UpkeepResult};
pub use run::{UpkeepProgress, UpkeepRun, WATCHED_FOR};
pub use signals::UpkeepSignal;
