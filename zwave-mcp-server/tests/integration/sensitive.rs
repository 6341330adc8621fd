//! The safety model of sensitive actions, through a real MCP client: unlocking a lock, opening a garage
//! door and silencing a siren are refused unless the owner allowed them, and then carried out
//! only after the person behind the client said yes through MCP elicitation. Every way a
//! person can not say yes (decline, dismiss, answer no, not answer, a client that cannot ask)
//! sends nothing; the simulated gateway's own record shows it.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient,
    model::{
        ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
        ElicitationCapability, ErrorData,
    },
    service::{RequestContext, RunningService},
};
use serde_json::{Value, json};
use zwave_mcp_server::{SensitivePolicy, ZwaveServer, devices::SensitiveClass};

use crate::harness::{Home, call, serve_with, text_of};

/// How the person behind the client answers.
#[derive(Clone, Copy)]
enum Person {
    Accepts,
    SaysNo,
    Declines,
    Dismisses,
    NeverAnswers,
}

/// Each question asked: its message and its schema.
type Asked = Arc<Mutex<Vec<(String, Value)>>>;

/// A client that declares elicitation and answers as `person` does, keeping each question.
#[derive(Clone)]
struct Asker {
    person: Person,
    asked: Asked,
    /// Before answering, the owner renames node 8 in Z-Wave JS UI and the server's list
    /// shows it (a person who took a minute to answer).
    renamed_meanwhile: Option<(zwave_mcp_server::sim::SimGateway, zwave_mcp_server::Network)>,
    /// Before answering, the siren (node 13) begins its fire alarm and the server sees it.
    alarm_meanwhile: Option<(zwave_mcp_server::sim::SimGateway, zwave_mcp_server::Network)>,
}

impl Asker {
    /// A client with `person` behind it; also what it was asked.
    fn new(person: Person) -> (Self, Asked) {
        let asked = Arc::default();
        let asker = Self {
            person,
            asked: Arc::clone(&asked),
            renamed_meanwhile: None,
            alarm_meanwhile: None,
        };
        (asker, asked)
    }
}

impl ClientHandler for Asker {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder()
                .enable_elicitation_with(ElicitationCapability::new())
                .build(),
            rmcp::model::Implementation::new("asker", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            self.asked.lock().unwrap().push((
                message.clone(),
                serde_json::to_value(requested_schema).unwrap(),
            ));
        }
        if let Some((sim, network)) = &self.renamed_meanwhile {
            sim.rename_node(8, "Back Door Lock", "Patio").await;
            network
                .wait_for_node(
                    zwave_mcp_server::network::NodeId(8),
                    |node| node.name == "Back Door Lock",
                    Duration::from_secs(10),
                )
                .await
                .expect("the server never saw the rename");
        }
        if let Some((sim, network)) = &self.alarm_meanwhile {
            sim.press(13, "121-0-toneId", json!(1)).await;
            network
                .wait_for_node(
                    zwave_mcp_server::network::NodeId(13),
                    |node| {
                        node.values
                            .get("121-0-toneId")
                            .is_some_and(|tone| tone.value == Some(json!(1)))
                    },
                    Duration::from_secs(10),
                )
                .await
                .expect("the server never saw the alarm");
        }
        Ok(match self.person {
            Person::Accepts => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
            }
            Person::SaysNo => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": false}))
            }
            Person::Declines => ElicitResult::new(ElicitationAction::Decline),
            Person::Dismisses => ElicitResult::new(ElicitationAction::Cancel),
            Person::NeverAnswers => std::future::pending().await,
        })
    }
}

/// The demo home's server with `policy`, and a client: `person` behind it, or none that can ask.
async fn serve<C: ClientHandler>(
    home: &Home,
    policy: SensitivePolicy,
    client: C,
) -> RunningService<RoleClient, C> {
    let server =
        ZwaveServer::new(home.network.clone(), Duration::from_secs(2)).with_sensitive(policy);
    serve_with(server, client).await
}

fn allowed(classes: &[&str]) -> SensitivePolicy {
    SensitivePolicy {
        allowed: classes
            .iter()
            .map(|class| {
                SensitiveClass::ALL
                    .into_iter()
                    .find(|known| known.name() == *class)
                    .unwrap()
            })
            .collect(),
        ask_timeout: Duration::from_millis(300),
        ..SensitivePolicy::default()
    }
}

async fn unlock<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
) -> rmcp::model::CallToolResult {
    act(
        client,
        json!({"deviceName": "Front Door Lock", "action": "unlock"}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sensitive_actions_are_refused_unless_the_owner_allowed_them() {
    let home = Home::start().await;
    let (asker, asked) = Asker::new(Person::Accepts);
    let client = serve(&home, SensitivePolicy::default(), asker).await;
    let refused = unlock(&client).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text_of(&refused),
        "Unlocking \"Front Door Lock\" (node 8, Entrance) is a sensitive action (it opens the home) and the owner of this server has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive lock (or ZWAVE_MCP_ALLOW_SENSITIVE=lock); a person will then be asked to confirm each time."
    );
    for (device, action, class) in [
        ("Garage Door", "open", "garage"),
        ("Hallway Siren", "silence", "siren"),
    ] {
        let refused = act(&client, json!({"deviceName": device, "action": action})).await;
        assert!(
            text_of(&refused).contains(&format!("--allow-sensitive {class}")),
            "{}",
            text_of(&refused)
        );
    }
    assert!(
        asked.lock().unwrap().is_empty(),
        "nobody is asked about what is not allowed"
    );
    assert!(
        !home
            .sim
            .received()
            .iter()
            .any(|request| request.api == "writeValue"),
        "nothing was written"
    );
    // Locking, closing and sounding are not sensitive.
    let locked = call(
        &client_with(&home, SensitivePolicy::default()).await,
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "lock"}),
    )
    .await;
    assert_eq!(locked.is_error, Some(false), "{}", text_of(&locked));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_unlock_is_written_only_after_the_person_says_yes() {
    let home = Home::start().await;
    let (asker, asked) = Asker::new(Person::Accepts);
    let client = serve(&home, allowed(&["lock"]), asker).await;
    let unlocked = unlock(&client).await;
    assert_eq!(unlocked.is_error, Some(false), "{}", text_of(&unlocked));
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].0,
        "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
    );
    assert_eq!(asked[0].1["required"], json!(["confirm"]));
    assert_eq!(asked[0].1["properties"]["confirm"]["type"], "boolean");
    assert_eq!(home.sim.value(8, "98-0-targetMode"), Some(json!(0)));
    assert_eq!(
        unlocked.structured_content.as_ref().unwrap()["outcome"],
        "confirmed",
        "the lock's Operation Report confirms it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_but_yes_sends_nothing() {
    let home = Home::start().await;
    for (person, why) in [
        (Person::SaysNo, "the user answered no"),
        (Person::Declines, "the user declined"),
        (Person::Dismisses, "the user dismissed the question"),
        (Person::NeverAnswers, "nobody answered within 300ms"),
    ] {
        let client = serve(&home, allowed(&["lock"]), Asker::new(person).0).await;
        let refused = unlock(&client).await;
        assert_eq!(refused.is_error, Some(true));
        assert_eq!(
            text_of(&refused),
            format!(
                "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and {why}: nothing was sent."
            )
        );
    }
    let cannot_ask = unlock(&client_with(&home, allowed(&["lock"])).await).await;
    assert_eq!(
        text_of(&cannot_ask),
        "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and this client cannot ask its user (it did not declare MCP elicitation). Use a client that can, or the owner can start the server with --sensitive-without-confirmation, which lets any agent do it unasked: nothing was sent."
    );
    assert!(
        !home
            .sim
            .received()
            .iter()
            .any(|request| request.api == "writeValue"),
        "nothing was written"
    );
    assert_eq!(home.sim.value(8, "98-0-targetMode"), Some(json!(255)));
}

/// The demo home's server with `policy`, and a client that cannot ask a person.
async fn client_with(home: &Home, policy: SensitivePolicy) -> RunningService<RoleClient, ()> {
    serve(home, policy, ()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_confirmation_the_owner_lets_an_allowed_action_through_unasked() {
    let home = Home::start().await;
    let policy = SensitivePolicy {
        without_confirmation: true,
        ..allowed(&["lock"])
    };
    let unlocked = unlock(&client_with(&home, policy).await).await;
    assert_eq!(unlocked.is_error, Some(false), "{}", text_of(&unlocked));
    assert_eq!(home.sim.value(8, "98-0-targetMode"), Some(json!(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_the_owner_marked_sensitive_needs_a_persons_yes_for_anything() {
    let home = Home::start().await;
    let policy = SensitivePolicy {
        devices: vec!["name:switch one".parse().unwrap()],
        ..allowed(&[])
    };
    let (asker, asked) = Asker::new(Person::Accepts);
    let client = serve(&home, policy.clone(), asker).await;
    let on = act(&client, json!({"deviceName": "Switch One", "action": "on"})).await;
    assert_eq!(on.is_error, Some(false), "{}", text_of(&on));
    assert_eq!(
        asked.lock().unwrap()[0].0,
        "Switch on \"Switch One\" (node 2, Kitchen)? An AI agent asks for it (the owner marked this device sensitive)."
    );
    // Other devices are not asked about.
    let dimmed = act(
        &client,
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 30}),
    )
    .await;
    assert_eq!(dimmed.is_error, Some(false), "{}", text_of(&dimmed));
    assert_eq!(asked.lock().unwrap().len(), 1);
    // A client that cannot ask: nothing is sent.
    let refused = call(
        &client_with(&home, policy).await,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "off"}),
    )
    .await;
    assert_eq!(
        text_of(&refused),
        "Commanding \"Switch One\" (node 2, Kitchen) needs a person's yes, and this client cannot ask its user (it did not declare MCP elicitation). Use a client that can: the owner marked this device sensitive, so a person is asked even under --sensitive-without-confirmation: nothing was sent."
    );
    assert_eq!(home.sim.value(2, "37-0-targetValue"), Some(json!(true)));
}

/// Calls the control tool through any client.
async fn act<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    args: Value,
) -> rmcp::model::CallToolResult {
    call(client, "control_zwave_device", args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_renamed_while_the_person_was_asked_is_not_written() {
    let home = Home::start().await;
    let client = serve(
        &home,
        allowed(&["lock"]),
        Asker {
            renamed_meanwhile: Some((home.sim.clone(), home.network.clone())),
            ..Asker::new(Person::Accepts).0
        },
    )
    .await;
    let refused = unlock(&client).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text_of(&refused),
        "could not switch \"Front Door Lock\": nothing was sent: node 8 is now \"Back Door Lock\" (Patio) in Z-Wave JS, not \"Front Door Lock\" (Entrance) as it was when the command's device was looked up (it was renamed since); find the device by its current name and ask again"
    );
    assert!(
        !home
            .sim
            .received()
            .iter()
            .any(|request| request.api == "writeValue"),
        "nothing was written"
    );
}

/// The log never says a write was made that was refused before it was sent.
#[tokio::test(flavor = "current_thread")]
async fn a_write_refused_for_a_rename_is_not_logged_as_written() {
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let logs = Captured::default();
    let sink = logs.clone();
    // This thread runs every task of the test (a current-thread runtime): it sees them all.
    let _capture = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || sink.clone())
            .finish(),
    );
    let home = Home::start().await;
    let client = serve(
        &home,
        allowed(&["lock"]),
        Asker {
            renamed_meanwhile: Some((home.sim.clone(), home.network.clone())),
            ..Asker::new(Person::Accepts).0
        },
    )
    .await;
    assert_eq!(unlock(&client).await.is_error, Some(true));
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        !logged.contains("value written") && !logged.contains("writing value"),
        "{logged}"
    );
    assert!(
        logged.contains("the write failed or got no answer")
            && logged.contains("nothing was sent: node 8 is now \"Back Door Lock\" (Patio)"),
        "{logged}"
    );
}

/// A person asked about a doorbell on a marked siren says yes
/// after the siren began an alarm; the doorbell would now end it, which is another question
/// (and a class the owner did not allow). Nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_whose_state_changed_while_the_person_was_asked_is_not_written() {
    let home = Home::start().await;
    let policy = SensitivePolicy {
        devices: vec!["node:13".parse().unwrap()],
        ..allowed(&[])
    };
    let (asker, asked) = Asker::new(Person::Accepts);
    let client = serve(
        &home,
        policy,
        Asker {
            alarm_meanwhile: Some((home.sim.clone(), home.network.clone())),
            ..asker
        },
    )
    .await;
    let refused = act(
        &client,
        json!({"deviceName": "Hallway Siren", "action": "sound", "tone": "Doorbell"}),
    )
    .await;
    assert_eq!(asked.lock().unwrap().len(), 1, "the person was asked");
    assert_eq!(refused.is_error, Some(true));
    let said = text_of(&refused);
    assert!(
        said.starts_with("nothing was sent: \"Hallway Siren\" (node 13, Hallway) changed while the command was being confirmed (it now reports ")
            && said.ends_with("so what would be carried out is not what was asked about; ask again"),
        "{said}"
    );
    assert!(
        !home
            .sim
            .received()
            .iter()
            .any(|request| request.api == "writeValue"),
        "nothing was written"
    );
}
