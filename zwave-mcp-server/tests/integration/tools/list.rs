//! `list_zwave_devices`: which nodes are devices, inactive ones, filters.

use serde_json::json;

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_devices_but_not_the_controller_or_virtual_nodes() {
    let home = Home::start().await;
    let list = home.ok("list_zwave_devices", json!({})).await;
    let names: Vec<&str> = list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Switch One",
            "Living Room Light",
            "Office Temperature",
            "Hallway Motion",
            "Node 6",
            "Front Door Lock",
            "Thermostat",
            "Bedroom Blind",
            "Garage Door",
            "Reading Lamp",
            "Hallway Siren",
            "Back Door Sensor",
            "Bedside Remote"
        ]
    );
    assert_eq!(list["hiddenInactive"], 1);
    let (is_error, text) = home.text("list_zwave_devices", json!({})).await;
    assert!(!is_error);
    assert_eq!(
        text,
        "13 Z-Wave devices:\n\
         - Switch One (node 2, Kitchen): switch, off, 12.34 kWh, 0 W\n\
         - Living Room Light (node 3, Living Room): dimmer, off\n\
         - Office Temperature (node 4, Office): sensor, 21.5 °C, 45 %, battery 87%\n\
         - Hallway Motion (node 5, Hallway): sensor, 120 Lux, motion sensor status: idle, battery 64%\n\
         - Node 6 (node 6): switch, on\n\
         - Front Door Lock (node 8, Entrance): lock, locked, door closed, bolt locked\n\
         - Thermostat (node 9, Living Room): thermostat, heat to 20 °C, 19.5 °C now, idle\n\
         - Bedroom Blind (node 10, Bedroom): cover, closed\n\
         - Garage Door (node 11, Garage): cover, closed\n\
         - Reading Lamp (node 12, Living Room): colour light, off\n\
         - Hallway Siren (node 13, Hallway): siren, silent\n\
         - Back Door Sensor (node 14, Kitchen): sensor, water alarm sensor status: idle, battery 87%\n\
         - Bedside Remote (node 15, Bedroom): sensor, battery 90%\n\
         1 offline device not shown (includeInactive: true lists them)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_includes_inactive_devices_and_filters_by_name_or_location() {
    let home = Home::start().await;
    let all = home
        .ok("list_zwave_devices", json!({"includeInactive": true}))
        .await;
    let garage = &all["devices"][5];
    assert_eq!(garage["name"], "Garage Light");
    assert_eq!(garage["online"], false);
    assert_eq!(garage["status"], "Dead");
    assert_eq!(garage["state"], "offline (Dead)");
    assert_eq!(garage["kind"], "switch");

    let kitchen = home
        .ok("list_zwave_devices", json!({"filter": "KITCHEN"}))
        .await;
    assert_eq!(kitchen["devices"].as_array().unwrap().len(), 2);
    assert_eq!(kitchen["devices"][0]["nodeId"], 2);
    assert_eq!(kitchen["devices"][1]["nodeId"], 14);
    let lights = home
        .ok(
            "list_zwave_devices",
            json!({"filter": "light", "includeInactive": true}),
        )
        .await;
    assert_eq!(lights["devices"].as_array().unwrap().len(), 2);

    let (is_error, text) = home
        .text("list_zwave_devices", json!({"filter": "attic"}))
        .await;
    assert!(!is_error);
    assert_eq!(text, "No Z-Wave device matches \"attic\".");
}
