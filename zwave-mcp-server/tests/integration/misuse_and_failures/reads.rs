//! Reads over each backend: the device list, a device's status and its readings (asked of
//! the device with `refresh`) say the same things whichever way the home is reached.

use serde_json::json;

use crate::harness::{Conversation, per_backend};

per_backend! {
async fn the_list_the_status_and_the_readings_say_the_same(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    let (error, list, structured) = session.call("list_zwave_devices", json!({"includeInactive": true}));
    assert!(!error, "{list}");
    for line in [
        "- Switch One (node 2, Kitchen): switch, off, 12.34 kWh, 0 W",
        "- Living Room Light (node 3, Living Room): dimmer, off",
        "- Office Temperature (node 4, Office): sensor, 21.5 °C, 45 %, battery 87%",
        "- Node 6 (node 6): switch, on",
        "- Front Door Lock (node 8, Entrance): lock, locked, door closed, bolt locked",
        "- Thermostat (node 9, Living Room): thermostat, heat to 20 °C, 19.5 °C now, idle",
        "- Bedroom Blind (node 10, Bedroom): cover, closed",
        "- Garage Door (node 11, Garage): cover, closed",
        "- Reading Lamp (node 12, Living Room): colour light, off",
        "- Hallway Siren (node 13, Hallway): siren, silent",
        "- Back Door Sensor (node 14, Kitchen): sensor, water alarm sensor status: idle, battery 87%",
        "- Bedside Remote (node 15, Bedroom): sensor, battery 90%",
    ] {
        assert!(list.contains(line), "{line:?} not in {list}");
    }
    assert_eq!(structured["devices"].as_array().map(Vec::len), Some(14), "{structured}");
    let (error, status, _) = session.call("get_device_status", json!({"deviceName": "Garage Light"}));
    assert!(!error && status.contains("offline"), "{status}");
    let (error, text, data) = session.call(
        "get_device_sensor_data",
        json!({"deviceName": "Office Temperature", "refresh": true}),
    );
    assert!(!error, "{text}");
    assert_eq!(data["refreshed"], true, "{text}");
    assert!(data["refreshErrors"].as_array().is_none_or(Vec::is_empty), "{data}");
    let readings: Vec<(String, String)> = data["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["label"].as_str().unwrap_or_default().to_owned(), r["value"].to_string()))
        .collect();
    assert!(readings.contains(&("Air temperature".to_owned(), "21.5".to_owned())), "{readings:?}");
    session.finish();
}
}
