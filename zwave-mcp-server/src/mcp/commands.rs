//! What became of the last command sent to each device, so that a later read tells it: a
//! command is confirmed only by the device itself (a report received after Z-Wave JS's
//! acknowledgement, or a supervised Set that succeeded), and a device whose report contradicts
//! the command (a stuck relay) is said to have not changed, never shown as switched.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
    time::Instant,
};

use crate::{
    devices::{self, Expect},
    network::{NodeId, NodeInfo},
};

/// A write Z-Wave JS acknowledged, as the log of commands keeps it to judge later reports by.
#[derive(Debug, Clone)]
pub(super) struct AckedCommand {
    /// Which command this is: a later one to the same device has a higher number.
    pub seq: u64,
    /// The key of the value the device reports its state in.
    pub current_key: String,
    /// What that value must become.
    pub expect: Expect,
    /// Other values the device must report as they must become (a colour's channels).
    pub also: Vec<(String, Expect)>,
    /// "switch on", "dim to 40%".
    pub verb: String,
    /// When Z-Wave JS's answer came (this process's clock): only later reports count.
    pub acked: Instant,
    /// The same instant, epoch ms, to show.
    pub acked_ms: i64,
    /// A supervised Set succeeded (status 255): the device itself said it did it.
    pub supervised: bool,
    /// The device confirmed it: what it reports later (a siren's tone ending, a thermostat
    /// someone turned) is not held against the command.
    pub settled: bool,
}

/// What the device's own reports say of a command. The answer's
/// [`Outcome`](super::types::Outcome) is built from it and adds what this report alone cannot
/// tell: a later command that superseded this one.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Reported {
    /// The device reported the new state (or a supervised Set succeeded).
    Confirmed,
    /// The device reported, after the command, a state that is not the one asked for.
    Contradicted {
        /// Its state, in words.
        state: String,
    },
    /// No report from the device since the command.
    Pending,
}

impl AckedCommand {
    /// What became of this command, by what `node` has reported since.
    pub fn reported(&self, node: &NodeInfo) -> Reported {
        if self.supervised || self.settled {
            return Reported::Confirmed;
        }
        // Each value the device must report: one that contradicts decides at once; all of
        // them accepting, reported after the acknowledgement, confirm.
        let mut pending = false;
        for (key, expect) in self.values() {
            let Some(reported) = node
                .values
                .get(key)
                .filter(|value| value.seen_at.is_some_and(|at| at > self.acked))
            else {
                pending = true;
                continue;
            };
            match &reported.value {
                Some(value) if expect.accepts(value) => {}
                // A garage door still opening: on its way, not yet there.
                Some(value) if expect.in_transit(value) => pending = true,
                _ => {
                    return Reported::Contradicted {
                        state: devices::summary(node),
                    };
                }
            }
        }
        if pending {
            Reported::Pending
        } else {
            Reported::Confirmed
        }
    }

    /// Each value the device must report, with what it must become: the state value first.
    pub fn values(&self) -> impl Iterator<Item = (&str, Expect)> {
        std::iter::once((self.current_key.as_str(), self.expect)).chain(
            self.also
                .iter()
                .map(|(key, expect)| (key.as_str(), *expect)),
        )
    }

    /// What a read says of this command, when there is anything to say.
    pub fn note(&self, node: &NodeInfo, now_ms: i64) -> Option<String> {
        let at = clock(self.acked_ms);
        let ago =
            devices::ago(u64::try_from(now_ms.saturating_sub(self.acked_ms)).unwrap_or(0) / 1000);
        match self.reported(node) {
            Reported::Confirmed => None,
            Reported::Contradicted { state } => Some(format!(
                "{} did not change: it still reports {state}; the command to {} was acknowledged at {at} ({ago}).",
                devices::display_name(node),
                self.verb
            )),
            Reported::Pending => Some(format!(
                "The command to {} was acknowledged at {at} ({ago}); the device has not reported its new state since.",
                self.verb
            )),
        }
    }
}

/// `18:31:02`, local time.
pub(super) fn clock(epoch_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(epoch_ms)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| "an unknown time".to_owned())
}

/// The last command to each device.
#[derive(Debug, Default)]
pub(super) struct Commands {
    last: Mutex<HashMap<NodeId, AckedCommand>>,
    next: std::sync::atomic::AtomicU64,
}

impl Commands {
    /// A number for a new command, higher than every earlier one.
    pub fn next_seq(&self) -> u64 {
        self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    /// Records `command` as the last one to `node`, unless a later one was recorded already.
    pub fn record(&self, node: NodeId, command: AckedCommand) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        match last.get(&node) {
            Some(newer) if newer.seq > command.seq => {}
            _ => {
                last.insert(node, command);
            }
        }
    }

    /// Marks command `seq` to `node` confirmed by its device, if it is still the last: what
    /// the device reports later is not held against it.
    pub fn settle(&self, node: NodeId, seq: u64) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(command) = last.get_mut(&node).filter(|command| command.seq == seq) {
            command.settled = true;
        }
    }

    /// The last command to `node`.
    pub fn last(&self, node: NodeId) -> Option<AckedCommand> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&node)
            .cloned()
    }

    /// What reads should say of `node`'s last command, if anything; of a confirmed command,
    /// nothing (the state says it all). The last command to each device is kept (one per
    /// node: at most 232), so a later command can tell that it superseded it.
    pub fn note(&self, node: &NodeInfo, now_ms: i64) -> Option<String> {
        // A read never settles a command: what the cache shows may be zwave-js's optimistic
        // echo of another client's write; only the device's answer to a Get settles one.
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.get(&node.id)?.note(node, now_ms)
    }

    /// Whether any command is remembered (reads skip the lookups when none is).
    pub fn is_empty(&self) -> bool {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::sim::home::demo_node;

    fn switched_on(acked: Instant) -> AckedCommand {
        AckedCommand {
            seq: 1,
            current_key: "37-0-currentValue".into(),
            expect: Expect::Bool(true),
            also: Vec::new(),
            verb: "switch on".into(),
            acked,
            acked_ms: 0,
            supervised: false,
            settled: false,
        }
    }

    fn reported(node: &mut NodeInfo, value: serde_json::Value, at: Instant) {
        let slot = node.values.get_mut("37-0-currentValue").unwrap();
        slot.value = Some(value);
        slot.seen_at = Some(at);
    }

    #[test]
    fn only_a_report_after_the_acknowledgement_decides() {
        let acked = Instant::now();
        let command = switched_on(acked);
        let mut node = demo_node(2);
        // A value seen before the acknowledgement (the optimistic echo) decides nothing.
        reported(
            &mut node,
            json!(true),
            acked.checked_sub(Duration::from_millis(1)).unwrap(),
        );
        assert_eq!(command.reported(&node), Reported::Pending);
        let later = acked + Duration::from_millis(1);
        reported(&mut node, json!(false), later);
        assert_eq!(
            command.reported(&node),
            Reported::Contradicted {
                state: "off, 12.34 kWh, 0 W".into()
            }
        );
        assert!(
            command
                .note(&node, 12_000)
                .unwrap()
                .starts_with("Switch One did not change: it still reports off, 12.34 kWh, 0 W; the command to switch on was acknowledged at ")
        );
        reported(&mut node, json!(true), later);
        assert_eq!(command.reported(&node), Reported::Confirmed);
        assert_eq!(command.note(&node, 12_000), None);
        let supervised = AckedCommand {
            supervised: true,
            ..switched_on(Instant::now())
        };
        assert_eq!(supervised.reported(&demo_node(2)), Reported::Confirmed);
    }

    #[test]
    fn a_settled_command_stays_confirmed_whatever_the_device_reports_later() {
        let commands = Commands::default();
        let acked = Instant::now();
        commands.record(NodeId(2), switched_on(acked));
        let mut node = demo_node(2);
        let later = acked + Duration::from_millis(1);
        reported(&mut node, json!(true), later);
        assert_eq!(commands.note(&node, 0), None, "confirmed: nothing to say");
        // A read does not settle it: what it saw may have been another client's echo, and the
        // device's report that it is still off says so.
        reported(&mut node, json!(false), later + Duration::from_millis(1));
        assert!(
            commands
                .note(&node, 0)
                .unwrap()
                .contains("did not change: it still reports off"),
            "{:?}",
            commands.note(&node, 0)
        );
        // A command settled by the device's answer to a Get stays confirmed: someone switching
        // it off by hand later does not undo that it was carried out.
        commands.settle(NodeId(2), 1);
        assert_eq!(commands.note(&node, 0), None);
        let other = Commands::default();
        other.record(NodeId(2), switched_on(acked));
        other.settle(NodeId(2), 1);
        assert_eq!(
            other.last(NodeId(2)).unwrap().reported(&node),
            Reported::Confirmed
        );
        other.settle(NodeId(2), 7);
    }

    #[test]
    fn a_later_command_is_never_replaced_by_an_earlier_one() {
        let commands = Commands::default();
        let (first, second) = (commands.next_seq(), commands.next_seq());
        let acked = Instant::now();
        commands.record(
            NodeId(2),
            AckedCommand {
                seq: second,
                ..switched_on(acked)
            },
        );
        commands.record(
            NodeId(2),
            AckedCommand {
                seq: first,
                ..switched_on(acked)
            },
        );
        assert_eq!(commands.last(NodeId(2)).unwrap().seq, second);
        let node = demo_node(2);
        assert!(
            commands
                .note(&node, 0)
                .unwrap()
                .starts_with("The command to switch on was acknowledged at ")
        );
        assert!(!commands.is_empty());
    }
}
