//! The protocol's edge, through the binary: every line that cannot be taken is answered, ids
//! come back exactly as sent or are refused, and a key twice never picks a device.

use serde_json::{Value, json};

use crate::harness::{GatewayHome, lines, messages, session};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_cannot_be_taken_are_answered_and_a_key_twice_switches_nothing() {
    let home = GatewayHome::renamed(&[]).await;
    let mut input = lines(&session(&[])).into_bytes();
    input.extend_from_slice(b"this is not json\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"x\":\"\xff\"}\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#);
    input.push(b'\n');
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"control_zwave_device","arguments":{"deviceName":"Garage Light","deviceName":"Switch One","action":"on"}}}"#);
    input.push(b'\n');
    // Longer than the 4 MiB line limit: dropped unread, answered.
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":""#);
    input.resize(input.len() + 5 * 1024 * 1024, b'x');
    input.extend_from_slice(b"\"}}\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    input.push(b'\n');
    let output = tokio::task::spawn_blocking({
        let mut command = home.command(&[]);
        move || test_support::child::run(&mut command, &input, std::time::Duration::from_secs(30))
    })
    .await
    .unwrap();
    let replies: Vec<Value> = messages(&output)
        .into_iter()
        .filter(|message| message["id"] != json!(0))
        .collect();
    assert_eq!(
        replies,
        [
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not JSON (expected ident at line 1 column 2)"}}),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not UTF-8"}}),
            json!({"jsonrpc":"2.0","id":1.0,"error":{"code":-32600,"message":"Invalid request: the id 1.0 is neither a string nor an integer, as MCP requires"}}),
            json!({"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid request: the key \"deviceName\" appears twice in one object; send every key once"}}),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is longer than 4194304 bytes and was not read"}}),
            json!({"jsonrpc":"2.0","id":9,"result":{}}),
        ]
    );
    // The id comes back as sent, byte for byte.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(r#""id":1.0,"#), "{stdout}");
    assert_eq!(home.writes(), []);
}

/// A session agreeing on `version`, then `batch` as one line; the lines the server wrote after
/// its `initialize` answer.
async fn batch_after(home: &GatewayHome, version: &str, batch: &Value) -> Vec<String> {
    let input = format!(
        "{}\n{}\n{batch}\n",
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":version,"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    let output = tokio::task::spawn_blocking({
        let mut command = home.command(&[]);
        move || {
            test_support::child::run(
                &mut command,
                input.as_bytes(),
                std::time::Duration::from_secs(30),
            )
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    let agreed: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(agreed["result"]["protocolVersion"], version, "{stdout}");
    lines[1..].to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_answered_in_one_array_under_2025_03_26_and_refused_otherwise() {
    let home = GatewayHome::renamed(&[]).await;
    let batch = json!([
        {"jsonrpc":"2.0","id":"a","method":"ping"},
        {"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"control_zwave_device","arguments":{"deviceName":"Switch One","action":"on"}}},
        {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nobody"}},
        {"hello":1},
        {"jsonrpc":"2.0","id":2.5,"method":"ping"}
    ]);
    let lines = batch_after(&home, "2025-03-26", &batch).await;
    assert_eq!(lines.len(), 1, "one line answers the batch: {lines:?}");
    let replies: Vec<Value> = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(replies.len(), 4, "{replies:?}");
    let by_id = |id: Value| replies.iter().find(|reply| reply["id"] == id).cloned();
    assert_eq!(
        by_id(json!("a")),
        Some(json!({"jsonrpc":"2.0","id":"a","result":{}}))
    );
    let switched = by_id(json!("b")).unwrap();
    assert_eq!(switched["result"]["isError"], json!(false), "{switched}");
    assert_eq!(by_id(json!(2.5)).unwrap()["error"]["code"], json!(-32600));
    assert!(
        replies.iter().any(|reply| reply
            == &json!({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request"}})),
        "{replies:?}"
    );
    assert_eq!(
        home.writes(),
        [("2-37-0-targetValue".to_owned(), json!(true))]
    );

    let lines = batch_after(&home, "2025-11-25", &batch).await;
    assert_eq!(
        lines,
        [
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a batch (a JSON array of messages) is accepted only under MCP protocol version 2025-03-26; send one message per line"}}"#
        ]
    );
    assert_eq!(home.writes().len(), 1, "nothing of the refused batch ran");
    let lines = batch_after(&home, "2025-03-26", &json!([])).await;
    assert_eq!(
        lines,
        [
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: an empty batch"}}"#
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lists_the_server_answers_are_declared_and_an_unknown_resource_is_refused_by_its_uri() {
    let home = GatewayHome::renamed(&[]).await;
    let long_uri = format!("file:///{}", "x".repeat(3000));
    let mut messages = session(&[]);
    messages.extend([
        json!({"jsonrpc":"2.0","id":"prompts","method":"prompts/list"}),
        json!({"jsonrpc":"2.0","id":"resources","method":"resources/list"}),
        json!({"jsonrpc":"2.0","id":"templates","method":"resources/templates/list"}),
        json!({"jsonrpc":"2.0","id":"complete","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"none"},"argument":{"name":"a","value":"b"}}}),
        json!({"jsonrpc":"2.0","id":"read","method":"resources/read","params":{"uri":"test://nowhere"}}),
        json!({"jsonrpc":"2.0","id":"long","method":"resources/read","params":{"uri":long_uri}}),
    ]);
    let input = lines(&messages).into_bytes();
    let output = tokio::task::spawn_blocking({
        let mut command = home.command(&[]);
        move || test_support::child::run(&mut command, &input, std::time::Duration::from_secs(30))
    })
    .await
    .unwrap();
    let replies = crate::harness::messages(&output);
    let reply = |id: &str| {
        replies
            .iter()
            .find(|reply| reply["id"] == json!(id))
            .cloned()
            .unwrap_or_else(|| panic!("no reply to {id}: {replies:?}"))
    };
    let initialized = replies
        .iter()
        .find(|reply| reply["id"] == json!(0))
        .unwrap();
    assert_eq!(
        initialized["result"]["capabilities"],
        json!({"completions": {}, "prompts": {}, "resources": {"listChanged": true, "subscribe": true}, "tools": {}})
    );
    let prompts = reply("prompts")["result"]["prompts"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(prompts, 4);
    assert_eq!(
        reply("resources")["result"]["resources"][0]["uri"],
        "zwave://home"
    );
    assert_eq!(
        reply("templates")["result"]["resourceTemplates"][0]["uriTemplate"],
        "zwave://devices/{nodeId}"
    );
    assert_eq!(
        reply("complete")["result"]["completion"]["values"],
        json!([])
    );
    assert_eq!(
        reply("read")["error"],
        json!({"code": -32602, "message": "resource not found: this server's resources are zwave://home and zwave://devices/{nodeId} (a node id, 1-4000)", "data": {"uri": "test://nowhere"}})
    );
    let long = reply("long");
    assert_eq!(long["error"]["code"], json!(-32602), "{long}");
    assert!(long["error"].get("data").is_none(), "not echoed: {long}");
}
