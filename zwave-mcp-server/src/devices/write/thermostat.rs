//! A thermostat's setpoint and mode: Thermostat Setpoint (67) `setpoint/<type>` (1 heating,
//! 2 cooling) and Thermostat Mode (64) `mode`, each confirmed by the device's own report of
//! that value (~5 s after the Set). zwave-js accepts a setpoint outside the device's range
//! (254) and the device reverts it ~5 s later; so a setpoint must lie inside the device's
//! min/max and inside the owner's band, and is refused, never clamped, when it does not.

use serde_json::{Value, json};

use super::{
    Action, ActionError, Expect, Limits, Request, Words, WritePlan, found, write_plan, writeable,
};
use crate::{
    devices::{cc, describe},
    network::{NodeInfo, Property, ValueInfo},
};

pub(super) fn plan(
    node: &NodeInfo,
    request: &Request,
    limits: &Limits,
) -> Result<WritePlan, ActionError> {
    match request.action {
        Action::SetMode => mode(node, request),
        _ => setpoint(node, request, limits),
    }
}

fn mode(node: &NodeInfo, request: &Request) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let Some(target) = writeable(node, cc::THERMOSTAT_MODE, "mode", None) else {
        return Err(ActionError::NoValue {
            device,
            what: "thermostat mode",
            action: request.action,
        });
    };
    let modes = state_names(target);
    let Some(given) = request.mode.as_deref() else {
        return Err(ActionError::Needs {
            device,
            action: request.action,
            what: format!("a mode: one of {modes}"),
        });
    };
    let Some(state) = target
        .states
        .iter()
        .flatten()
        .find(|state| folded(&state.text) == folded(given))
    else {
        return Err(ActionError::UnknownName {
            device,
            what: "mode",
            given: given.to_owned(),
            valid: format!("use one of {modes}"),
        });
    };
    let name = state.text.to_lowercase();
    let number = state.value.as_f64().unwrap_or(0.0);
    let mut plan = write_plan(
        node,
        target,
        state.value.clone(),
        target,
        Expect::Number(number),
        Words {
            infinitive: format!("set the mode to {name}"),
            past: format!("set to {name} mode"),
            already: format!("in {name} mode"),
            usual: "about 5 s",
        },
    );
    plan.echoes
        .push((target.key().as_str().to_owned(), state.value.clone()));
    Ok(plan)
}

fn setpoint(node: &NodeInfo, request: &Request, limits: &Limits) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let target = chosen_setpoint(node, request, &device)?;
    // The owner's band is in °C: applied to a setpoint in a unit taken for another, it would
    // let a temperature far outside it through, or none in it (°C read as °F). Never guessed.
    let Some(scale) = scale_of(target.unit.as_deref()) else {
        return Err(ActionError::UnknownUnit {
            device,
            which: setpoint_name(target),
            unit: target.unit.clone(),
            band: format!(
                "{}..{}",
                number(limits.setpoint_celsius.0),
                number(limits.setpoint_celsius.1)
            ),
        });
    };
    // As the device gives it (°C, ℉, …): the words match what get_device_status shows.
    let unit = target.unit.clone().unwrap_or_default();
    let band = if scale == Scale::Fahrenheit {
        let (low, high) = limits.setpoint_celsius;
        (low * 9.0 / 5.0 + 32.0, high * 9.0 / 5.0 + 32.0)
    } else {
        limits.setpoint_celsius
    };
    let device_range = (
        target.min.unwrap_or(f64::NEG_INFINITY),
        target.max.unwrap_or(f64::INFINITY),
    );
    let (low, high) = (device_range.0.max(band.0), device_range.1.min(band.1));
    let Some(value) = request.temperature else {
        return Err(ActionError::Needs {
            device,
            action: request.action,
            what: format!(
                "a temperature from {} to {} {unit}",
                number(low),
                number(high)
            ),
        });
    };
    if !value.is_finite() || value < low || value > high {
        let why = match (device_range.0 >= band.0, device_range.1 <= band.1) {
            (true, true) => "the device's range".to_owned(),
            (false, false) => format!(
                "the owner's band, --thermostat-band {}..{} °C",
                number(limits.setpoint_celsius.0),
                number(limits.setpoint_celsius.1)
            ),
            _ => format!(
                "the device's range, {}–{} {unit}, within the owner's band, --thermostat-band {}..{} °C",
                number(device_range.0),
                number(device_range.1),
                number(limits.setpoint_celsius.0),
                number(limits.setpoint_celsius.1)
            ),
        };
        return Err(ActionError::SetpointOutOfRange {
            device,
            value,
            unit,
            low,
            high,
            why,
        });
    }
    // Tenths are what thermostats take; 21.0 goes as 21.
    let value = (value * 10.0).round() / 10.0;
    let written = json_number(value);
    let which = setpoint_name(target);
    let text = format!("{} {unit}", number(value));
    let mut plan = write_plan(
        node,
        target,
        written.clone(),
        target,
        Expect::Number(value),
        Words {
            infinitive: format!("set the {which} to {text}"),
            past: format!("set to {text} ({which})"),
            already: format!("set to {text} ({which})"),
            usual: "about 5 s",
        },
    );
    plan.echoes
        .push((target.key().as_str().to_owned(), written));
    Ok(plan)
}

/// The setpoint the mode uses: heating for heat (and off: what it heats to when on again),
/// cooling for cool; a device with one setpoint uses that one.
fn chosen_setpoint<'a>(
    node: &'a NodeInfo,
    request: &Request,
    device: &str,
) -> Result<&'a ValueInfo, ActionError> {
    let mode = found(node, cc::THERMOSTAT_MODE, "mode", None);
    let mode_name = mode.and_then(ValueInfo::state_name).map(str::to_lowercase);
    let setpoints: Vec<(i64, &ValueInfo)> = node
        .values
        .values()
        .filter(|v| v.command_class == cc::THERMOSTAT_SETPOINT && v.writeable)
        .filter_map(|v| match &v.property_key {
            Some(Property::Number(kind)) => Some((*kind, v)),
            _ => None,
        })
        .collect();
    let wanted = match mode_name.as_deref() {
        Some("cool") => Some(2),
        Some("heat" | "off") | None => Some(1),
        _ => None,
    };
    let chosen = match (setpoints.as_slice(), wanted) {
        ([only], _) => Some(only.1),
        (_, Some(kind)) => setpoints.iter().find(|(k, _)| *k == kind).map(|(_, v)| *v),
        _ => {
            return Err(ActionError::WhichSetpoint {
                device: device.to_owned(),
                mode: mode_name.unwrap_or_else(|| "an unknown".to_owned()),
                modes: "\"heat\" or \"cool\"".to_owned(),
            });
        }
    };
    chosen.ok_or_else(|| ActionError::NoValue {
        device: device.to_owned(),
        what: "setpoint",
        action: request.action,
    })
}

/// Which setpoint `target` is, in words.
fn setpoint_name(target: &ValueInfo) -> &'static str {
    match &target.property_key {
        Some(Property::Number(2)) => "cooling setpoint",
        Some(Property::Number(1)) => "heating setpoint",
        _ => "setpoint",
    }
}

/// A temperature scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// °C.
    Celsius,
    /// °F.
    Fahrenheit,
}

/// The scale a setpoint's unit names: `°C` or `℃` (U+2103), `°F` or `℉` (U+2109), with or
/// without the degree sign, any case, as Unicode compatibility folds them (NFKC spells ℃ as
/// °C). Any other unit, or none, names none.
fn scale_of(unit: Option<&str>) -> Option<Scale> {
    use unicode_normalization::UnicodeNormalization as _;
    let folded: String = unit?
        .nfkc()
        .filter(|c| !c.is_whitespace() && *c != '°')
        .flat_map(char::to_lowercase)
        .collect();
    match folded.as_str() {
        "c" | "celsius" => Some(Scale::Celsius),
        "f" | "fahrenheit" => Some(Scale::Fahrenheit),
        _ => None,
    }
}

/// 21 → `21`, 21.5 → `21.5`.
fn json_number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 1e9 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// 21.0 → "21", 21.5 → "21.5".
fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

/// The modes `node` takes by name, lowercase, as `set_mode` accepts them; none when it has no
/// writeable Thermostat Mode.
pub fn modes(node: &NodeInfo) -> Vec<String> {
    writeable(node, cc::THERMOSTAT_MODE, "mode", None)
        .into_iter()
        .flat_map(|mode| mode.states.iter().flatten())
        .map(|state| state.text.to_lowercase())
        .collect()
}

/// The names of a value's states, quoted, lowercase: `"off", "heat", "cool" or "auto"`.
fn state_names(value: &ValueInfo) -> String {
    let names: Vec<String> = value
        .states
        .iter()
        .flatten()
        .map(|state| format!("\"{}\"", state.text.to_lowercase()))
        .collect();
    match names.as_slice() {
        [] => "none (the device lists no modes)".to_owned(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A name as compared: letters and digits only, lowercase ("Energy heat" = "energy_heat").
pub(super) fn folded(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Action, Expect, Limits, Request, lab, plan};

    fn set_temperature(temperature: f64) -> Request {
        Request {
            temperature: Some(temperature),
            ..Request::new(Action::SetTemperature)
        }
    }

    #[test]
    fn a_setpoint_in_range_is_written_to_the_heating_setpoint_and_confirmed_by_its_report() {
        let plan = plan(&lab::node(6), &set_temperature(21.0), &Limits::default()).unwrap();
        assert_eq!(plan.target.to_string(), "6-67-0-setpoint-1");
        assert_eq!(plan.value, json!(21));
        assert_eq!(plan.current_key.as_str(), "67-0-setpoint-1");
        assert_eq!(plan.expect, Expect::Number(21.0));
        assert_eq!(plan.words.infinitive, "set the heating setpoint to 21 °C");
        let half =
            super::super::plan(&lab::node(6), &set_temperature(21.54), &Limits::default()).unwrap();
        assert_eq!(half.value, json!(21.5));
    }

    #[test]
    fn a_setpoint_outside_the_device_range_or_the_owner_band_is_refused_with_the_band() {
        // The device's heating range is 5–30 °C: 40 would be accepted by zwave-js and
        // silently reverted by the device.
        let refused = plan(&lab::node(6), &set_temperature(40.0), &Limits::default()).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "40 °C is outside what \"Thermostat\" (node 6, Living Room) may be set to: use 5 to 30 °C (the device's range)"
        );
        let narrow = Limits {
            setpoint_celsius: (16.0, 24.0),
        };
        let refused = plan(&lab::node(6), &set_temperature(25.0), &narrow).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "25 °C is outside what \"Thermostat\" (node 6, Living Room) may be set to: use 16 to 24 °C (the owner's band, --thermostat-band 16..24 °C)"
        );
        for bad in [f64::NAN, f64::INFINITY, -300.0] {
            assert!(plan(&lab::node(6), &set_temperature(bad), &Limits::default()).is_err());
        }
        let missing = plan(
            &lab::node(6),
            &Request::new(Action::SetTemperature),
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "action \"set_temperature\" needs a temperature from 5 to 30 °C for \"Thermostat\" (node 6, Living Room)"
        );
    }

    #[test]
    fn in_auto_mode_a_setpoint_needs_a_mode_that_says_which() {
        let mut node = lab::node(6);
        node.values.get_mut("64-0-mode").unwrap().value = Some(json!(3));
        assert_eq!(
            plan(&node, &set_temperature(21.0), &Limits::default())
                .unwrap_err()
                .to_string(),
            "\"Thermostat\" (node 6, Living Room) is in auto mode, which has no single setpoint: set its mode to \"heat\" or \"cool\" first, then the temperature"
        );
    }

    #[test]
    fn a_thermostat_without_a_writeable_mode_says_so() {
        let mut node = lab::node(6);
        node.values.get_mut("64-0-mode").unwrap().writeable = false;
        let request = Request {
            mode: Some("heat".into()),
            ..Request::new(Action::SetMode)
        };
        assert_eq!(
            plan(&node, &request, &Limits::default())
                .unwrap_err()
                .to_string(),
            "\"Thermostat\" (node 6, Living Room) has no writeable thermostat mode: action \"set_mode\" cannot be carried out on it"
        );
    }

    #[test]
    fn a_fahrenheit_thermostat_gets_the_band_in_fahrenheit() {
        let mut node = lab::node(6);
        let setpoint = node.values.get_mut("67-0-setpoint-1").unwrap();
        setpoint.unit = Some("°F".into());
        setpoint.min = Some(40.0);
        setpoint.max = Some(90.0);
        let plan = plan(&node, &set_temperature(72.0), &Limits::default()).unwrap();
        assert_eq!(plan.value, json!(72));
        assert_eq!(plan.words.infinitive, "set the heating setpoint to 72 °F");
        assert_eq!(
            super::super::plan(&node, &set_temperature(88.0), &Limits::default())
                .unwrap_err()
                .to_string(),
            "88 °F is outside what \"Thermostat\" (node 6, Living Room) may be set to: use 41 to 86 °F (the owner's band, --thermostat-band 5..30 °C)"
        );
    }

    #[test]
    fn a_mode_is_set_by_its_name_and_an_unknown_one_is_refused_with_the_modes() {
        let request = Request {
            mode: Some("Heat".into()),
            ..Request::new(Action::SetMode)
        };
        let plan = plan(&lab::node(6), &request, &Limits::default()).unwrap();
        assert_eq!(plan.target.to_string(), "6-64-0-mode");
        assert_eq!(plan.value, json!(1));
        assert_eq!(plan.expect, Expect::Number(1.0));
        let request = Request {
            mode: Some("turbo".into()),
            ..Request::new(Action::SetMode)
        };
        assert_eq!(
            super::super::plan(&lab::node(6), &request, &Limits::default())
                .unwrap_err()
                .to_string(),
            "\"Thermostat\" (node 6, Living Room) has no mode \"turbo\": use one of \"off\", \"heat\", \"cool\" or \"auto\""
        );
    }

    #[test]
    fn a_setpoint_in_a_unit_sign_is_read_by_its_scale_and_an_unknown_or_missing_unit_is_refused() {
        let with_unit = |unit: Option<&str>, min: f64, max: f64| {
            let mut node = lab::node(6);
            let setpoint = node.values.get_mut("67-0-setpoint-1").unwrap();
            setpoint.unit = unit.map(str::to_owned);
            setpoint.min = Some(min);
            setpoint.max = Some(max);
            node
        };
        let fahrenheit = with_unit(Some("℉"), 40.0, 90.0);
        assert_eq!(
            plan(&fahrenheit, &set_temperature(72.0), &Limits::default())
                .unwrap()
                .value,
            json!(72)
        );
        assert_eq!(
            plan(&fahrenheit, &set_temperature(88.0), &Limits::default())
                .unwrap_err()
                .to_string(),
            "88 ℉ is outside what \"Thermostat\" (node 6, Living Room) may be set to: use 41 to 86 ℉ (the owner's band, --thermostat-band 5..30 °C)"
        );
        assert_eq!(
            plan(
                &with_unit(Some("℃"), 5.0, 30.0),
                &set_temperature(40.0),
                &Limits::default()
            )
            .unwrap_err()
            .to_string(),
            "40 ℃ is outside what \"Thermostat\" (node 6, Living Room) may be set to: use 5 to 30 ℃ (the device's range)"
        );
        assert_eq!(
            plan(
                &with_unit(None, 5.0, 30.0),
                &set_temperature(21.0),
                &Limits::default()
            )
            .unwrap_err()
            .to_string(),
            "\"Thermostat\" (node 6, Living Room) does not say in which unit its heating setpoint is, so a temperature cannot be checked against the owner's band (--thermostat-band 5..30 °C): nothing was sent; Z-Wave JS learns the unit when the device reports the setpoint"
        );
        assert_eq!(
            plan(
                &with_unit(Some("K"), 278.0, 303.0),
                &set_temperature(294.0),
                &Limits::default()
            )
            .unwrap_err()
            .to_string(),
            "\"Thermostat\" (node 6, Living Room) gives its heating setpoint in \"K\", a unit this server does not know (it knows °C and °F), so a temperature cannot be checked against the owner's band (--thermostat-band 5..30 °C): nothing was sent"
        );
    }
}
