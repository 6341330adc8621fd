//! `completion/complete` and the prompts through the binary: devices offered by name, never a
//! hidden one; what a device takes; the prompts embed what they are about.

use serde_json::{Value, json};

use crate::harness::{Conversation, per_backend};

/// The values offered for `argument` typed as `value` in `device_help`, with `context`.
fn offered(session: &mut Conversation, argument: &str, value: &str, context: Value) -> Vec<String> {
    let answer = session.request(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "device_help"},
            "argument": {"name": argument, "value": value},
            "context": {"arguments": context},
        }),
    );
    serde_json::from_value(answer["result"]["completion"]["values"].clone())
        .unwrap_or_else(|err| panic!("{err}: {answer}"))
}

per_backend! {
    /// Names, "location name" and `Node <id>` are offered for what is typed; a hidden device
    /// is not; a device's actions are what it takes.
    async fn completions_offer_exposed_devices_and_what_they_take(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&["--read-deny", "node:3"]));
        let kitchen = offered(&mut session, "deviceName", "kit", json!({}));
        assert!(kitchen.contains(&"Kitchen Switch One".to_owned()), "{kitchen:?}");
        let living = offered(&mut session, "deviceName", "living", json!({}));
        assert!(!living.iter().any(|name| name.contains("Living Room Light")), "node 3 is hidden: {living:?}");
        assert!(living.contains(&"Living Room Thermostat".to_owned()), "{living:?}");
        assert!(!living.iter().any(|name| name.starts_with("Living Room Living Room")), "{living:?}");
        let nodes = offered(&mut session, "deviceName", "node 3", json!({}));
        assert!(!nodes.contains(&"Node 3".to_owned()), "{nodes:?}");
        assert_eq!(offered(&mut session, "action", "", json!({"deviceName": "Switch One"})), ["on", "off"]);
        assert!(offered(&mut session, "action", "", json!({"deviceName": "Living Room Light"})).len() == 14,
            "a hidden device is no device: every action is offered, as with none named");
        let unknown = session.request("completion/complete", json!({
            "ref": {"type": "ref/prompt", "name": "no_such_prompt"},
            "argument": {"name": "deviceName", "value": "k"},
        }));
        assert_eq!(unknown["result"]["completion"]["values"], json!([]), "{unknown}");
    }

    /// The overview embeds the home as it reads; device_help refuses a hidden device as an
    /// unknown one and a missing name naming the argument.
    async fn prompts_embed_the_home_and_refuse_what_is_not_there(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&["--read-deny", "node:3"]));
        let listed = session.request("prompts/list", json!({}));
        let names: Vec<&str> = listed["result"]["prompts"].as_array().unwrap().iter()
            .map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["device_help", "home_overview", "network_health", "secured_for_night"]);
        let overview = session.request("prompts/get", json!({"name": "home_overview"}));
        let messages = overview["result"]["messages"].as_array().unwrap();
        assert_eq!(messages[0]["content"]["resource"]["uri"], "zwave://home");
        let embedded = messages[0]["content"]["resource"]["text"].as_str().unwrap();
        assert!(embedded.contains("Switch One (node 2, Kitchen)"), "{embedded}");
        assert!(!embedded.contains("Living Room Light"), "{embedded}");

        let help = session.request("prompts/get", json!({"name": "device_help", "arguments": {"deviceName": "Switch One"}}));
        let asked = help["result"]["messages"][1]["content"]["text"].as_str().unwrap();
        assert!(asked.contains("It takes actions: \"on\" or \"off\"."), "{asked}");
        let hidden = session.request("prompts/get", json!({"name": "device_help", "arguments": {"deviceName": "Living Room Light"}}));
        let absent = session.request("prompts/get", json!({"name": "device_help", "arguments": {"deviceName": "Attic Fan"}}));
        assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
        assert!(hidden["error"]["message"].as_str().unwrap().contains("Living Room Light"), "{hidden}");
        assert!(absent["error"]["message"].as_str().unwrap().contains("Attic Fan"), "{absent}");
        let missing = session.request("prompts/get", json!({"name": "device_help"}));
        assert!(missing["error"]["message"].as_str().unwrap().contains("deviceName"), "{missing}");
        let unknown = session.request("prompts/get", json!({"name": "weather"}));
        assert_eq!(
            unknown["error"]["message"],
            "no prompt named \"weather\": the prompts are home_overview, secured_for_night, device_help, network_health"
        );
    }

    /// Found by the hostile review: read-only, a thermostat's modes were still offered and
    /// device_help still said what it takes.
    async fn a_device_the_agent_may_not_control_is_offered_nothing_to_ask_of_it(backend) {
        let home = TestHome::start(backend).await;
        let thermostat = json!({"deviceName": "Living Room Thermostat"});
        let mut session = Conversation::over(&mut home.command(&[]));
        assert!(!offered(&mut session, "mode", "", thermostat.clone()).is_empty());
        session.finish();
        let mut session = Conversation::over(&mut home.command(&["--read-only"]));
        assert_eq!(offered(&mut session, "mode", "", thermostat.clone()), Vec::<String>::new());
        assert_eq!(offered(&mut session, "action", "", thermostat.clone()), Vec::<String>::new());
        let help = session.request("prompts/get", json!({"name": "device_help", "arguments": thermostat}));
        let asked = help["result"]["messages"][1]["content"]["text"].as_str().unwrap();
        assert!(asked.contains("It takes no action from this assistant (it only reports)."), "{asked}");
        session.finish();
    }
}
