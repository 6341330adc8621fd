//! Sirens and chimes: Sound Switch (121) `toneId`: a tone's number (255 the device's
//! default) sounds it, 0 silences. zwave-js sets the tone at once; the device's report
//! follows its Get (~1 s), and it reports 0 again when the tone ends. Silencing is
//! sensitive (it can silence an alarm).

use serde_json::json;

use super::{
    Action, ActionError, Expect, Request, Sensitive, Words, WritePlan, thermostat::folded,
    write_plan, writeable,
};
use crate::{
    devices::{cc, describe},
    network::NodeInfo,
};

pub(super) fn plan(node: &NodeInfo, request: &Request) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let Some(tone) = writeable(node, cc::SOUND_SWITCH, "toneId", None) else {
        return Err(ActionError::NoValue {
            device,
            what: "tone",
            action: request.action,
        });
    };
    // The tones by name, without the device's "(10 sec)" and the off and default entries.
    let tones: Vec<(String, i64)> = tone
        .states
        .iter()
        .flatten()
        .filter_map(|state| Some((state.text.clone(), state.value.as_i64()?)))
        .filter(|(_, value)| (1..255).contains(value))
        .collect();
    let (value, name) = match (request.action, request.tone.as_deref()) {
        (Action::Silence, _) => (0, String::new()),
        (_, None) => (255, "its default tone".to_owned()),
        (_, Some(given)) => {
            let chosen = tones.iter().find(|(text, value)| {
                given.trim() == value.to_string()
                    || folded(base_name(text)) == folded(given)
                    || folded(text) == folded(given)
            });
            match chosen {
                Some((text, value)) => (*value, format!("\"{}\"", base_name(text))),
                None => {
                    let valid: Vec<String> = tones
                        .iter()
                        .map(|(text, value)| format!("\"{}\" ({value})", base_name(text)))
                        .collect();
                    return Err(ActionError::UnknownName {
                        device,
                        what: "tone",
                        given: given.to_owned(),
                        valid: if valid.is_empty() {
                            "it lists none: leave tone out for its default".to_owned()
                        } else {
                            format!("use one of {}", valid.join(", "))
                        },
                    });
                }
            }
        }
    };
    let silence = value == 0;
    let (expect, words) = if silence {
        (
            Expect::Number(0.0),
            Words {
                infinitive: "silence".to_owned(),
                past: "silenced".to_owned(),
                already: "silent".to_owned(),
                usual: "about 1 s",
            },
        )
    } else {
        (
            if value == 255 {
                Expect::NonZero
            } else {
                Expect::Number(value as f64)
            },
            Words {
                infinitive: format!("sound {name}"),
                past: format!("sounding {name}"),
                already: format!("sounding {name}"),
                usual: "about 1 s",
            },
        )
    };
    let mut plan = write_plan(node, tone, json!(value), tone, expect, words);
    plan.echoes
        .push((tone.key().as_str().to_owned(), json!(value)));
    if silence {
        plan.sensitive = Some(Sensitive::Silence);
    } else if ends_a_tone(node, tone, value) {
        plan.sensitive = Some(Sensitive::ReplaceTone);
    }
    Ok(plan)
}

/// Whether sounding tone `value` through `tone` ends another that sounds now: a siren plays
/// one tone at a time, so any tone it reports on any endpoint that is not silence (0), nor
/// this very tone on this very endpoint, would be cut short. A tone whose state is not known
/// may be an alarm, so it counts as sounding; 255 is the device's default tone, known when
/// the device reports `defaultToneId`.
fn ends_a_tone(node: &NodeInfo, tone: &crate::network::ValueInfo, value: i64) -> bool {
    let named = |value: &crate::network::ValueInfo, name: &str| {
        value.command_class == cc::SOUND_SWITCH
            && value.property == crate::network::Property::Name(name.to_owned())
    };
    let wanted = if value == 255 {
        node.values
            .values()
            .find(|v| named(v, "defaultToneId") && v.endpoint == tone.endpoint)
            .and_then(|v| v.value.as_ref()?.as_i64())
            .unwrap_or(255)
    } else {
        value
    };
    node.values
        .values()
        .filter(|v| named(v, "toneId"))
        .any(
            |sounding| match sounding.value.as_ref().and_then(serde_json::Value::as_i64) {
                Some(0) => false,
                Some(now) => !(now == wanted && sounding.endpoint == tone.endpoint),
                None => true,
            },
        )
}

/// "Doorbell (3 sec)" → "Doorbell".
/// The tones `node` takes by name, as `sound` accepts them (without the device's "(10 sec)"),
/// in the device's order; none when it has no Sound Switch.
pub fn tones(node: &NodeInfo) -> Vec<String> {
    writeable(node, cc::SOUND_SWITCH, "toneId", None)
        .into_iter()
        .flat_map(|tone| tone.states.iter().flatten())
        .filter(|state| state.value.as_i64().is_some_and(|v| (1..255).contains(&v)))
        .map(|state| base_name(&state.text).to_owned())
        .collect()
}

fn base_name(text: &str) -> &str {
    text.split(" (").next().unwrap_or(text).trim()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Action, Expect, Limits, Request, Sensitive, lab, plan};
    use crate::network::NodeInfo;

    fn sound(tone: Option<&str>) -> Request {
        Request {
            tone: tone.map(str::to_owned),
            ..Request::new(Action::Sound)
        }
    }

    #[test]
    fn a_siren_sounds_a_tone_by_name_or_number_or_its_default_and_silences_with_0() {
        let node = lab::node(9);
        let default = plan(&node, &sound(None), &Limits::default()).unwrap();
        assert_eq!(default.target.to_string(), "9-121-0-toneId");
        assert_eq!(
            (default.value.clone(), default.expect),
            (json!(255), Expect::NonZero)
        );
        let doorbell = plan(&node, &sound(Some("doorbell")), &Limits::default()).unwrap();
        assert_eq!(
            (doorbell.value.clone(), doorbell.expect),
            (json!(2), Expect::Number(2.0))
        );
        assert_eq!(doorbell.words.infinitive, "sound \"Doorbell\"");
        assert_eq!(
            plan(&node, &sound(Some("3")), &Limits::default())
                .unwrap()
                .value,
            json!(3)
        );
        assert_eq!(
            plan(&node, &sound(Some("chime")), &Limits::default())
                .unwrap_err()
                .to_string(),
            "\"Siren\" (node 9, Hallway) has no tone \"chime\": use one of \"Fire alarm\" (1), \"Doorbell\" (2), \"Burglar alarm\" (3)"
        );
        let silence = plan(&node, &Request::new(Action::Silence), &Limits::default()).unwrap();
        assert_eq!(silence.value, json!(0));
        assert_eq!(silence.sensitive, Some(Sensitive::Silence));
    }

    #[test]
    fn a_tone_sounding_on_any_endpoint_makes_another_one_sensitive() {
        let mut node = lab::node(9);
        node.values.get_mut("121-0-toneId").unwrap().value = Some(json!(0));
        let mut second = node.values["121-0-toneId"].clone();
        second.endpoint = 2;
        second.value = Some(json!(3));
        node.values.insert(second.key(), second);
        let doorbell =
            |node: &NodeInfo| plan(node, &sound(Some("Doorbell")), &Limits::default()).unwrap();
        assert_eq!(doorbell(&node).sensitive, Some(Sensitive::ReplaceTone));
        node.values.get_mut("121-2-toneId").unwrap().value = Some(json!(0));
        assert_eq!(doorbell(&node).sensitive, None);
        node.values.get_mut("121-2-toneId").unwrap().value = None;
        assert_eq!(
            doorbell(&node).sensitive,
            Some(Sensitive::ReplaceTone),
            "not known: maybe an alarm"
        );
    }
}
