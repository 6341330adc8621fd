//! The agent loop's own cost, with a provider on loopback and a mock tool:
//! - overhead per turn: a two-turn question (a call to a mock tool, then the answer) timed
//!   through the agent, minus the same two HTTP exchanges made with a bare reqwest client;
//! - delta latency: the time from the provider writing a text chunk to the host's event
//!   callback receiving it (the server writes the next chunk only after the previous one
//!   arrived, so each is measured alone).
//!
//! Run: `cargo bench -p mcp-client --bench agent`.
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark: a failed setup should stop it loudly, and it prints its table"
)]

use std::{
    collections::VecDeque,
    convert::Infallible,
    sync::{Arc, Mutex},
    time::Instant,
};

use axum::body::{Body, Bytes};
use mcp_client::{
    agent::{Agent, AgentEvent, Conversation, EventSink},
    bench::latency::Latencies,
    llm::{Dialect, HttpProvider, ProviderConfig},
    tools::{definition, executor::ToolExecutor, manager::ToolManager},
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const QUESTIONS: usize = 2_000;
const DELTAS: usize = 2_000;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(test_support::fixture_path(&format!("llm/{name}"))).unwrap()
}

/// Each request is answered by the next body of `bodies` (whole), or, when it is empty, by the
/// chunks that arrive on `live` one at a time.
#[derive(Clone)]
struct Server {
    bodies: Arc<Mutex<VecDeque<Vec<u8>>>>,
    live: Arc<tokio::sync::Mutex<Option<mpsc::Receiver<Bytes>>>>,
}

async fn answer(axum::extract::State(server): axum::extract::State<Server>) -> Body {
    if let Some(body) = server.bodies.lock().unwrap().pop_front() {
        return Body::from(body);
    }
    let receiver = server.live.lock().await.take().unwrap();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, Infallible>(chunk), receiver))
    });
    Body::from_stream(stream)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}

#[expect(
    clippy::too_many_lines,
    reason = "one measurement from set-up to report, read top to bottom"
)]
async fn run() {
    let server = Server {
        bodies: Arc::default(),
        live: Arc::default(),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .fallback(answer)
        .with_state(server.clone());
    tokio::spawn(async move { axum::serve(listener, app).tcp_nodelay(true).await.unwrap() });

    let (call, text) = (
        fixture("ollama/dim-1.ndjson"),
        fixture("ollama/dim-2.ndjson"),
    );
    let mut manager = ToolManager::new();
    manager
        .add(
            definition::parse(
                r#"{"name": "control_zwave_device", "description": "switches things",
                    "implementation": {"type": "mock", "mock_response": "Living Room Light dimmed to 40%"}}"#,
            )
            .unwrap()
            .remove(0),
        )
        .unwrap();
    let mut config = ProviderConfig::new(Dialect::Ollama, "qwen3:8b");
    config.base_url = url.clone();
    let agent = Agent::new(
        Arc::new(HttpProvider::new(config).unwrap()),
        ToolExecutor::new(manager),
    );
    let quiet: EventSink = Arc::new(|_| {});
    let cancel = CancellationToken::new();

    // The floor: the same two exchanges with a bare client, body read whole.
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let mut bare = Vec::with_capacity(QUESTIONS);
    for round in 0..QUESTIONS + 200 {
        {
            let mut bodies = server.bodies.lock().unwrap();
            bodies.push_back(call.clone());
            bodies.push_back(text.clone());
        }
        let started = Instant::now();
        for _ in 0..2 {
            let response = client
                .post(format!("{url}/api/chat"))
                .body("{}")
                .send()
                .await
                .unwrap();
            response.bytes().await.unwrap();
        }
        if round >= 200 {
            bare.push(started.elapsed());
        }
    }
    let mut through_agent = Vec::with_capacity(QUESTIONS);
    for round in 0..QUESTIONS + 200 {
        {
            let mut bodies = server.bodies.lock().unwrap();
            bodies.push_back(call.clone());
            bodies.push_back(text.clone());
        }
        let mut conversation = Conversation::new();
        let started = Instant::now();
        let answer = agent
            .ask(
                &mut conversation,
                "dim the living room light to 40%",
                &quiet,
                &cancel,
            )
            .await;
        if round >= 200 {
            through_agent.push(started.elapsed());
        }
        assert_eq!(answer.turns, 2, "{answer:?}");
    }
    let bare = Latencies::new(bare);
    let through_agent = Latencies::new(through_agent);
    let overhead = |p: f64| {
        through_agent
            .percentile(p)
            .saturating_sub(bare.percentile(p))
            / 2
    };
    println!("two-turn question (tool call + answer), {QUESTIONS} rounds after 200 warm-up:");
    println!("{:<40} {:>10} {:>10}", "", "p50", "p99");
    println!(
        "{:<40} {:>10.1?} {:>10.1?}",
        "bare HTTP, 2 exchanges",
        bare.percentile(50.0),
        bare.percentile(99.0)
    );
    println!(
        "{:<40} {:>10.1?} {:>10.1?}",
        "through the agent",
        through_agent.percentile(50.0),
        through_agent.percentile(99.0)
    );
    println!(
        "{:<40} {:>10.1?} {:>10.1?}   (target < 1 ms)",
        "agent overhead per turn",
        overhead(50.0),
        overhead(99.0)
    );

    // Delta latency: one streamed answer, DELTAS chunks, each written after the last arrived.
    let (chunks, receiver) = mpsc::channel::<Bytes>(1);
    *server.live.lock().await = Some(receiver);
    let (arrived, mut arrivals) = mpsc::unbounded_channel::<Instant>();
    let sink: EventSink = Arc::new(move |event| {
        if let AgentEvent::TextDelta { .. } = event {
            let _ = arrived.send(Instant::now());
        }
    });
    let streaming = {
        let agent = agent.clone();
        tokio::spawn(async move {
            let mut conversation = Conversation::new();
            agent
                .ask(&mut conversation, "talk", &sink, &CancellationToken::new())
                .await
        })
    };
    let mut latencies = Vec::with_capacity(DELTAS);
    for n in 0..DELTAS {
        let line = format!(
            "{{\"model\":\"qwen3:8b\",\"created_at\":\"2026-11-22T20:00:00Z\",\"message\":{{\"role\":\"assistant\",\"content\":\"word{n} \"}},\"done\":false}}\n"
        );
        let sent = Instant::now();
        chunks.send(Bytes::from(line)).await.unwrap();
        let got = arrivals.recv().await.unwrap();
        latencies.push(got.duration_since(sent));
    }
    chunks
        .send(Bytes::from_static(
            b"{\"model\":\"qwen3:8b\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n",
        ))
        .await
        .unwrap();
    drop(chunks);
    streaming.await.unwrap();
    let latencies = Latencies::new(latencies);
    println!(
        "{:<40} {:>10.1?} {:>10.1?}   (target < 1 ms; max {:.1?})",
        "text delta: written → host callback",
        latencies.percentile(50.0),
        latencies.percentile(99.0),
        latencies.max()
    );
}
