//! Lock and unlock: Door Lock (98) `targetMode` 255 Secured / 0 Unsecured, confirmed by the
//! device's `currentMode` (its Operation Report comes ~5 s after the Set, after the driver's
//! verification); or Lock (118) `locked`, confirmed by its own report. Unlock is sensitive.

use serde_json::json;

use super::{
    Action, ActionError, Expect, Sensitive, Words, WritePlan, found, write_plan, writeable,
};
use crate::{
    devices::{cc, describe},
    network::NodeInfo,
};

pub(super) fn plan(node: &NodeInfo, action: Action) -> Result<WritePlan, ActionError> {
    let lock = action == Action::Lock;
    let words = Words {
        infinitive: if lock { "lock" } else { "unlock" }.to_owned(),
        past: if lock { "locked" } else { "unlocked" }.to_owned(),
        already: if lock { "locked" } else { "unlocked" }.to_owned(),
        usual: "about 5 s",
    };
    let mut plan = if let (Some(target), Some(current)) = (
        writeable(node, cc::DOOR_LOCK, "targetMode", None),
        found(node, cc::DOOR_LOCK, "currentMode", None),
    ) {
        let mode = if lock { 255 } else { 0 };
        let mut plan = write_plan(
            node,
            target,
            json!(mode),
            current,
            Expect::Number(f64::from(mode)),
            words,
        );
        plan.echoes
            .push((current.key().as_str().to_owned(), json!(mode)));
        plan
    } else if let Some(locked) = writeable(node, cc::LOCK, "locked", None) {
        let mut plan = write_plan(node, locked, json!(lock), locked, Expect::Bool(lock), words);
        plan.echoes
            .push((locked.key().as_str().to_owned(), json!(lock)));
        plan
    } else {
        return Err(ActionError::NoValue {
            device: describe(node),
            what: "lock mode",
            action,
        });
    };
    if !lock {
        plan.sensitive = Some(Sensitive::Unlock);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Action, Expect, Limits, Request, Sensitive, lab, plan};

    #[test]
    fn a_door_lock_is_locked_with_mode_255_and_unlocked_with_0_which_is_sensitive() {
        let lock = plan(
            &lab::node(5),
            &Request::new(Action::Lock),
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(lock.target.to_string(), "5-98-0-targetMode");
        assert_eq!(lock.value, json!(255));
        assert_eq!(lock.current_key.as_str(), "98-0-currentMode");
        assert_eq!(lock.expect, Expect::Number(255.0));
        assert_eq!(lock.echoes, [("98-0-currentMode".to_owned(), json!(255))]);
        assert_eq!(lock.sensitive, None);
        let unlock = plan(
            &lab::node(5),
            &Request::new(Action::Unlock),
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(unlock.value, json!(0));
        assert_eq!(unlock.expect, Expect::Number(0.0));
        assert_eq!(unlock.sensitive, Some(Sensitive::Unlock));
        assert_eq!(unlock.words.infinitive, "unlock");
    }

    #[test]
    fn a_lock_takes_nothing_but_lock_and_unlock() {
        let refused =
            plan(&lab::node(5), &Request::new(Action::On), &Limits::default()).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "\"Front Door Lock\" (node 5, Hallway) is a lock and cannot take action \"on\": use \"lock\" or \"unlock\""
        );
    }
}
