//! A colour light's colour: Color Switch (51) `targetColor`, an object of the channels to set
//! (`warmWhite`, `coldWhite`, `red`, `green`, `blue`, 0–255). zwave-js sets each channel's
//! `currentColor/<n>`, the compound `currentColor` and `hexColor` at once and the device sends
//! no report after it (`captures/classes/FACTS.md`); so each channel written is polled (a Get
//! per channel, `currentColor` needs its channel) and the write is confirmed when the device
//! reported every one of them.

use serde_json::{Map, Value, json};

use super::{Action, ActionError, Expect, Request, Words, WritePlan, found, writeable};
use crate::{
    devices::{cc, describe},
    network::{NodeInfo, ValueId, ValueKey},
};

/// The channels of Color Switch, by their number in `currentColor/<n>`.
const CHANNELS: [(&str, i64); 5] = [
    ("warmWhite", 0),
    ("coldWhite", 1),
    ("red", 2),
    ("green", 3),
    ("blue", 4),
];

/// Colours by name, as RGB.
const NAMED: [(&str, [u8; 3]); 12] = [
    ("red", [255, 0, 0]),
    ("green", [0, 255, 0]),
    ("blue", [0, 0, 255]),
    ("white", [255, 255, 255]),
    ("yellow", [255, 255, 0]),
    ("orange", [255, 128, 0]),
    ("purple", [128, 0, 255]),
    ("pink", [255, 102, 178]),
    ("cyan", [0, 255, 255]),
    ("magenta", [255, 0, 255]),
    ("turquoise", [64, 224, 208]),
    ("lime", [128, 255, 0]),
];

/// The coolest and warmest white a colour temperature may ask for, in kelvin.
const KELVIN: (u32, u32) = (2_700, 6_500);

/// The value a channel of `node` shows, as the device last reported it (`currentColor/<n>`).
pub fn color_channel(node: &NodeInfo, name: &str) -> Option<u64> {
    let (_, number) = CHANNELS.iter().find(|(channel, _)| *channel == name)?;
    found(node, cc::COLOR_SWITCH, "currentColor", Some(*number))?
        .value
        .as_ref()?
        .as_u64()
}

pub(super) fn plan(node: &NodeInfo, request: &Request) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let Some(target) = writeable(node, cc::COLOR_SWITCH, "targetColor", None) else {
        return Err(ActionError::NoValue {
            device,
            what: "colour",
            action: Action::SetColor,
        });
    };
    let Some(given) = request.color.as_deref().map(str::trim) else {
        return Err(ActionError::Needs {
            device,
            action: Action::SetColor,
            what:
                "a colour: a name (red, warm white, …), #rrggbb, or a white by kelvin (2700K–6500K)"
                    .to_owned(),
        });
    };
    let (channels, name) = channels_for(node, given, &device)?;
    let Written {
        value,
        checks,
        echoes,
        poll,
    } = written(node, &channels);
    let mut checks = checks.into_iter();
    let Some((first, expect)) = checks.next() else {
        return Err(ActionError::NoValue {
            device,
            what: "colour channel",
            action: Action::SetColor,
        });
    };
    Ok(WritePlan {
        target: target.value_id(node.id),
        value: Value::Object(value),
        current_key: first,
        expect,
        also: checks.collect(),
        poll,
        echoes,
        words: Words {
            infinitive: format!("set the colour to {name}"),
            past: format!("set to {name}"),
            already: name.clone(),
            usual: "only when asked: each colour channel is read back from the device",
        },
        sensitive: None,
    })
}

/// Colour channels by name, each with the level written to it.
type Channels = Vec<(&'static str, u8)>;

/// Every colour channel the device reports (`currentColor` of that channel).
fn has_channel(node: &NodeInfo, name: &str) -> bool {
    CHANNELS
        .iter()
        .find(|(channel, _)| *channel == name)
        .and_then(|(_, n)| found(node, cc::COLOR_SWITCH, "currentColor", Some(*n)))
        .is_some()
}

/// The channel levels that show `given` on this device, and the colour's name; the channels
/// that would spoil it (the whites under a colour, the colours under a white) at 0.
fn channels_for(
    node: &NodeInfo,
    given: &str,
    device: &str,
) -> Result<(Channels, String), ActionError> {
    let has = |name: &str| has_channel(node, name);
    match wanted(given) {
        Some(Wanted::Rgb(rgb, name)) if has("red") && has("green") && has("blue") => {
            let mut channels = vec![("red", rgb[0]), ("green", rgb[1]), ("blue", rgb[2])];
            // The whites off, so the colour shows as asked.
            channels.extend(
                ["warmWhite", "coldWhite"]
                    .into_iter()
                    .filter(|w| has(w))
                    .map(|w| (w, 0)),
            );
            Ok((channels, name))
        }
        Some(Wanted::White { warm, cold, name }) if has("warmWhite") || has("coldWhite") => {
            let mut channels = Vec::new();
            match (has("warmWhite"), has("coldWhite")) {
                (true, true) => channels.extend([("warmWhite", warm), ("coldWhite", cold)]),
                // One white channel: it is the white there is.
                (true, false) => channels.push(("warmWhite", warm.max(cold))),
                _ => channels.push(("coldWhite", warm.max(cold))),
            }
            channels.extend(
                ["red", "green", "blue"]
                    .into_iter()
                    .filter(|c| has(c))
                    .map(|c| (c, 0)),
            );
            Ok((channels, name))
        }
        Some(Wanted::Rgb(..)) => Err(unknown(
            device.to_owned(),
            given,
            "it has no red, green and blue channels; ask for warm white or cool white",
        )),
        Some(Wanted::White { .. }) => Err(unknown(
            device.to_owned(),
            given,
            "it has no white channel; give a colour by name or #rrggbb (white is #ffffff)",
        )),
        None => Err(unknown(
            device.to_owned(),
            given,
            "use a name (red, green, blue, white, yellow, orange, purple, pink, cyan, magenta, turquoise, lime, warm white, cool white), #rrggbb, or a white by kelvin from 2700K to 6500K",
        )),
    }
}

/// What setting `channels` writes, checks, expects to hear back and asks the device for.
struct Written {
    /// The `targetColor` object written.
    value: Map<String, Value>,
    /// Each channel's `currentColor` and the level it should read.
    checks: Vec<(ValueKey, Expect)>,
    /// zwave-js's optimistic echoes of the write (the channels, the compound value, the hex).
    echoes: Vec<(String, Value)>,
    /// The values the device is asked for to confirm.
    poll: Vec<ValueId>,
}

fn written(node: &NodeInfo, channels: &[(&str, u8)]) -> Written {
    let mut value = Map::new();
    let mut checks = Vec::new();
    let mut echoes = Vec::new();
    let mut poll = Vec::new();
    for (channel, level) in channels {
        value.insert((*channel).to_owned(), json!(level));
        let number = CHANNELS
            .iter()
            .find(|(c, _)| c == channel)
            .map_or(0, |(_, n)| *n);
        if let Some(current) = found(node, cc::COLOR_SWITCH, "currentColor", Some(number)) {
            checks.push((current.key(), Expect::Number(f64::from(*level))));
            echoes.push((current.key().as_str().to_owned(), json!(level)));
            poll.push(current.value_id(node.id));
        }
    }
    // zwave-js's own compound value and hex, set at once too.
    if let Some(compound) = found(node, cc::COLOR_SWITCH, "currentColor", None) {
        let mut merged = compound.value.clone().unwrap_or_else(|| json!({}));
        for (channel, level) in channels {
            merged[*channel] = json!(level);
        }
        let hex = format!(
            "{:02x}{:02x}{:02x}",
            merged["red"].as_u64().unwrap_or(0),
            merged["green"].as_u64().unwrap_or(0),
            merged["blue"].as_u64().unwrap_or(0)
        );
        echoes.push((compound.key().as_str().to_owned(), merged));
        if let Some(hex_value) = found(node, cc::COLOR_SWITCH, "hexColor", None) {
            echoes.push((hex_value.key().as_str().to_owned(), json!(hex)));
        }
    }
    Written {
        value,
        checks,
        echoes,
        poll,
    }
}

fn unknown(device: String, given: &str, valid: &str) -> ActionError {
    ActionError::UnknownName {
        device,
        what: "colour",
        given: given.to_owned(),
        valid: valid.to_owned(),
    }
}

/// What a colour asked for is.
enum Wanted {
    /// An RGB colour and its name in words.
    Rgb([u8; 3], String),
    /// A white: how much of the warm and the cold channel.
    White { warm: u8, cold: u8, name: String },
}

/// "red", "#ff8800", "ff8800", "warm white", "cool white", "2700K".
fn wanted(given: &str) -> Option<Wanted> {
    let lower = given.to_lowercase();
    let words: String = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    match words.as_str() {
        "warm white" | "warm" | "soft white" => {
            return Some(Wanted::White {
                warm: 255,
                cold: 0,
                name: "warm white".to_owned(),
            });
        }
        "cool white" | "cold white" | "cool" | "daylight" => {
            return Some(Wanted::White {
                warm: 0,
                cold: 255,
                name: "cool white".to_owned(),
            });
        }
        _ => {}
    }
    if let Some((name, rgb)) = NAMED.iter().find(|(name, _)| *name == words) {
        return Some(Wanted::Rgb(*rgb, format!("{name} (#{})", hex(*rgb))));
    }
    if let Some(kelvin) = words
        .strip_suffix('k')
        .and_then(|number| number.trim().parse::<u32>().ok())
        .filter(|k| (KELVIN.0..=KELVIN.1).contains(k))
    {
        // 2700 K all warm, 6500 K all cold, linear between.
        let warm =
            (f64::from(KELVIN.1 - kelvin) / f64::from(KELVIN.1 - KELVIN.0) * 255.0).round() as u8;
        return Some(Wanted::White {
            warm,
            cold: 255 - warm,
            name: format!("white at {kelvin} K"),
        });
    }
    let digits = words.strip_prefix('#').unwrap_or(&words);
    if digits.len() == 6 && digits.chars().all(|c| c.is_ascii_hexdigit()) {
        let channel = |at: usize| u8::from_str_radix(&digits[at..at + 2], 16).ok();
        let rgb = [channel(0)?, channel(2)?, channel(4)?];
        return Some(Wanted::Rgb(rgb, format!("#{}", hex(rgb))));
    }
    None
}

fn hex(rgb: [u8; 3]) -> String {
    format!("{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Action, Expect, Limits, Request, lab, plan};

    fn set_color(color: &str) -> Request {
        Request {
            color: Some(color.to_owned()),
            ..Request::new(Action::SetColor)
        }
    }

    #[test]
    fn a_named_colour_sets_red_green_and_blue_with_the_whites_off_and_polls_each() {
        let green = plan(&lab::node(8), &set_color("Green"), &Limits::default()).unwrap();
        assert_eq!(green.target.to_string(), "8-51-0-targetColor");
        assert_eq!(
            green.value,
            json!({"red": 0, "green": 255, "blue": 0, "warmWhite": 0, "coldWhite": 0})
        );
        assert_eq!(green.current_key.as_str(), "51-0-currentColor-2");
        assert_eq!(green.expect, Expect::Number(0.0));
        assert_eq!(green.also.len(), 4, "every channel written is checked");
        assert_eq!(green.poll.len(), 5, "and read back");
        assert_eq!(green.words.infinitive, "set the colour to green (#00ff00)");
        assert!(
            green
                .echoes
                .contains(&("51-0-hexColor".to_owned(), json!("00ff00")))
        );
    }

    #[test]
    fn hex_kelvin_and_whites_are_understood_and_anything_else_is_refused_with_what_works() {
        let node = lab::node(8);
        let orange = plan(&node, &set_color("#FF8800"), &Limits::default()).unwrap();
        assert_eq!(orange.value["red"], 255);
        assert_eq!(orange.value["green"], 136);
        let warm = plan(&node, &set_color("warm white"), &Limits::default()).unwrap();
        assert_eq!(
            warm.value,
            json!({"warmWhite": 255, "coldWhite": 0, "red": 0, "green": 0, "blue": 0})
        );
        let kelvin = plan(&node, &set_color("4600K"), &Limits::default()).unwrap();
        assert_eq!(
            (
                kelvin.value["warmWhite"].clone(),
                kelvin.value["coldWhite"].clone()
            ),
            (json!(128), json!(127))
        );
        for bad in ["ultraviolet", "#12345", "9000K", ""] {
            let refused = plan(&node, &set_color(bad), &Limits::default())
                .unwrap_err()
                .to_string();
            assert!(refused.starts_with(&format!("\"Color Bulb\" (node 8, Living Room) has no colour \"{bad}\": use a name (red, ")), "{refused}");
        }
        let missing = plan(&node, &Request::new(Action::SetColor), &Limits::default()).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("action \"set_color\" needs a colour: a name"),
            "{missing}"
        );
    }

    #[test]
    fn a_megabyte_colour_is_quoted_cut_as_names_are() {
        let huge = "x".repeat(1_000_000);
        let refused = plan(&lab::node(8), &set_color(&huge), &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(
            refused.starts_with(&format!(
                "\"Color Bulb\" (node 8, Living Room) has no colour \"{}…\": use a name (red, ",
                "x".repeat(255)
            )),
            "{refused:.400}"
        );
        assert!(
            refused.chars().count() < 700,
            "{} characters",
            refused.chars().count()
        );
    }
}
