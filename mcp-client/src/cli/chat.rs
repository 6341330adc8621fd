//! `mcp-client chat`: talk to a model that calls the configured servers' tools. Builds the
//! pieces (provider, executor, history, agent) from flags, environment and the config file,
//! then asks one question (`--once`) or one per line, with Ctrl-C cancelling the question
//! being answered (and dismissing the approvals and servers' questions it was asking) and
//! tools that change things approved on the terminal (`view.rs` renders; `input.rs` asks).

use std::{
    io::IsTerminal as _,
    path::PathBuf,
    process::ExitCode,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use clap::{Args, ValueEnum};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{
    UsageError, elicit, emit,
    input::{Ask, Desk, Input, Line},
    tools::host,
    view::View,
};
use crate::{
    agent::{
        Agent, AgentEvent, AgentOptions, Answer, Conversation, DoneReason, EventSink, ToolRetry,
    },
    connection::config,
    history::{self, Store},
    llm::{Dialect, HttpProvider, ProviderConfig, ToolChoice},
};

/// Which API the model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    /// Ollama `/api/chat` (Qwen and others).
    Ollama,
    /// OpenAI Chat Completions and compatible servers (vLLM, llama.cpp, LM Studio).
    #[value(name = "openai")]
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl From<ProviderArg> for Dialect {
    fn from(arg: ProviderArg) -> Self {
        match arg {
            ProviderArg::Ollama => Self::Ollama,
            ProviderArg::OpenAi => Self::OpenAi,
            ProviderArg::Anthropic => Self::Anthropic,
        }
    }
}

/// Options of `mcp-client chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// `mcpServers` JSON file; its optional `"llm"` section may name provider, model and URL.
    #[arg(long, env = "MCP_CLIENT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Local tool definition files (JSON).
    #[arg(long = "tools", value_name = "FILE")]
    pub tool_files: Vec<PathBuf>,
    /// The model's API.
    #[arg(long, value_enum, env = "MCP_CLIENT_PROVIDER")]
    pub provider: Option<ProviderArg>,
    /// The model (e.g. `qwen3:8b`, `gpt-4.1-mini`, `claude-sonnet-4-5`).
    #[arg(long, env = "MCP_CLIENT_MODEL")]
    pub model: Option<String>,
    /// Base URL (default: OLLAMA_HOST, OPENAI_BASE_URL or ANTHROPIC_BASE_URL, then each
    /// provider's usual address). OpenAI-compatible URLs include the version (`…/v1`).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Most model turns per question.
    #[arg(long, default_value_t = crate::agent::policy::DEFAULT_MAX_TURNS)]
    pub max_turns: u32,
    /// Refine: at most two rounds of tools, then an answer in one sentence.
    #[arg(long)]
    pub refine: bool,
    /// Stop before a question's tokens (input + output) would pass this.
    #[arg(long)]
    pub token_budget: Option<u64>,
    /// Most tokens per answer.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// The first request of each question: `auto` (the model decides), `required` (it must
    /// call a tool), `none` (no tools offered) or a tool's name (it must call that one; small
    /// models rarely call one by themselves). Later requests are `auto`, so the model can
    /// answer. Not for Ollama, whose API cannot force a call.
    #[arg(long, value_name = "auto|required|none|NAME", default_value = "auto", value_parser = parse_tool_choice)]
    pub tool_choice: ToolChoice,
    /// Retry failed calls of idempotent tools (timeouts, restarting servers) up to 3 times.
    #[arg(long)]
    pub retry_tools: bool,
    /// Most tool calls of one model answer that are run; the model is told the rest were not.
    #[arg(long, default_value_t = crate::agent::policy::DEFAULT_MAX_CALLS_PER_ANSWER as u32, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub max_calls_per_answer: u32,
    /// Run tools that change things without asking.
    #[arg(long)]
    pub yes: bool,
    /// The instructions sent first in a new conversation.
    #[arg(long)]
    pub system: Option<String>,
    /// Ask for whole responses instead of streams.
    #[arg(long)]
    pub no_stream: bool,
    /// Longest wait for the model to start answering, and for each part of a streamed answer.
    #[arg(long, value_parser = parse_duration, default_value = "300s")]
    pub request_timeout: Duration,
    /// Longest one model response may take from its first byte to its end.
    #[arg(long, value_parser = parse_duration, default_value = "15m")]
    pub turn_timeout: Duration,
    /// The history database (default: $XDG_DATA_HOME/mcp-client/history.db).
    #[arg(long, env = "MCP_CLIENT_HISTORY")]
    pub history: Option<PathBuf>,
    /// Keep no history.
    #[arg(long, conflicts_with_all = ["history", "resume"])]
    pub no_history: bool,
    /// Continue a stored conversation (ids: `mcp-client history list`). One chat at a time:
    /// while this one runs, another resuming it is refused.
    #[arg(long)]
    pub resume: Option<String>,
    /// Answer this one question on stdout and exit (0 ok, 1 provider or tool failure, or the
    /// answer could not be stored in the history).
    #[arg(long)]
    pub once: Option<String>,
    /// Attach this resource (as `resources` lists it) to the first question; repeatable.
    #[arg(long, value_name = "URI")]
    pub attach: Vec<String>,
    /// Show a line on stderr each time this resource changes (subscribed to on the server
    /// that has it; never sent to the model); repeatable.
    #[arg(long, value_name = "URI")]
    pub watch: Vec<String>,
    /// Print the agent's events as JSON lines on stdout.
    #[arg(long)]
    pub json: bool,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    config::duration(&Value::String(text.to_owned()))
}

fn parse_tool_choice(text: &str) -> Result<ToolChoice, String> {
    text.parse()
}

/// The history database's path: the flag, else the XDG default.
pub(crate) fn history_path(flag: Option<PathBuf>) -> Result<PathBuf, UsageError> {
    flag.or_else(|| {
        history::default_path(
            config::env("XDG_DATA_HOME").as_deref(),
            config::env("HOME").as_deref(),
        )
    })
    .ok_or_else(|| {
        UsageError("cannot tell where to keep the history (no XDG_DATA_HOME or HOME): give --history PATH or --no-history".into())
    })
}

/// The provider configuration: flags, then environment, then the config file's `llm` section.
fn provider_config(args: &ChatArgs) -> anyhow::Result<ProviderConfig> {
    let section = match &args.config {
        Some(path) => config::load_llm(path)?,
        None => config::LlmSection::default(),
    };
    let dialect: Dialect = match (args.provider, section.provider) {
        (Some(arg), _) => arg.into(),
        (None, Some(dialect)) => dialect,
        (None, None) => {
            return Err(UsageError(
                "choose a model provider: --provider ollama|openai|anthropic (or MCP_CLIENT_PROVIDER, or \"llm\": {\"provider\": …} in the config)".into(),
            )
            .into());
        }
    };
    let model = args.model.clone().or(section.model).ok_or_else(|| {
        UsageError(format!(
            "choose a model: --model NAME (or MCP_CLIENT_MODEL, or \"llm\": {{\"model\": …}} in the config), e.g. {}",
            match dialect {
                Dialect::Ollama => "qwen3:8b",
                Dialect::OpenAi => "gpt-4.1-mini",
                Dialect::Anthropic => "claude-sonnet-4-5",
            }
        ))
    })?;
    if dialect == Dialect::Ollama
        && matches!(args.tool_choice, ToolChoice::Required | ToolChoice::Tool(_))
    {
        return Err(UsageError(
            "--tool-choice required or a tool's name needs --provider openai or anthropic: Ollama's API cannot make a model call a tool (use auto or none)".to_owned(),
        )
        .into());
    }
    let mut provider = ProviderConfig::new(dialect, model);
    if let Some(url) = args
        .base_url
        .clone()
        .or_else(|| config::env(dialect.base_url_env()))
        .or(section.base_url)
    {
        crate::llm::check_base_url(dialect, &url).map_err(UsageError)?;
        provider.base_url = url;
    }
    provider.api_key = config::env(dialect.key_env());
    provider.stream = !args.no_stream;
    provider.max_tokens = args.max_tokens;
    provider.http.request_timeout = args.request_timeout;
    provider.http.idle_timeout = args.request_timeout;
    provider.http.turn_timeout = args.turn_timeout;
    Ok(provider)
}

/// The conversation this chat continues (`--resume`) or a new one, claimed in `store` for as
/// long as the chat runs: a second chat resuming it is refused, and says who has it.
async fn resumed(store: Option<&Store>, resume: Option<&str>) -> anyhow::Result<Conversation> {
    let conversation = Conversation::new();
    let Some(store) = store else {
        return Ok(conversation);
    };
    // Claimed before it is loaded.
    store.claim(resume.unwrap_or(&conversation.id)).await?;
    let Some(id) = resume else {
        return Ok(conversation);
    };
    let stored = store.load(id)?;
    eprintln!(
        "resumed conversation {}: {} messages",
        common::printable(id),
        stored.messages.len()
    );
    Ok(Conversation::resume(
        id.to_owned(),
        stored.messages.into_iter().map(|(_, m)| m).collect(),
    ))
}

/// Runs `chat`.
///
/// # Errors
/// Usage errors (exit 2): missing provider or model, unreadable configuration or history.
pub async fn run(args: ChatArgs, stop: &super::Stop) -> anyhow::Result<ExitCode> {
    if args.once.as_deref().is_some_and(|q| q.trim().is_empty()) {
        return Err(UsageError("--once needs a question".into()).into());
    }
    let provider = HttpProvider::new(provider_config(&args)?)?;
    let store = if args.no_history {
        None
    } else {
        Some(Arc::new(Store::open(&history_path(args.history.clone())?)?))
    };
    let mut conversation = resumed(store.as_deref(), args.resume.as_deref()).await?;
    // One reader of stdin for the questions, the approvals and the servers' questions. The
    // prompts' own history (arrow-up) lives beside the conversation store.
    let terminal = std::io::stdin().is_terminal();
    let input = Arc::new(Input::start(
        args.once.is_none() && terminal,
        store
            .as_ref()
            .map(|store| store.path().with_file_name("prompts.txt")),
    ));
    let view = Arc::new(View::new(args.json, args.max_turns));
    // Approvals and servers' questions are asked there one at a time; Ctrl-C dismisses them.
    let desk = Arc::new(Desk::new(Arc::clone(&view)));
    // A server's question goes to the person at the terminal, never answered for them.
    let elicitor = if terminal {
        elicit::on_terminal(Arc::clone(&input), Arc::clone(&desk))
    } else {
        elicit::without_terminal()
    };
    let host = host(
        args.config.as_deref(),
        &args.tool_files,
        Some(elicitor),
        stop,
    )
    .await?;
    let options = AgentOptions {
        max_turns: args.max_turns.max(1),
        refinement: args.refine,
        token_budget: args.token_budget,
        tool_retry: args.retry_tools.then(ToolRetry::default),
        max_calls_per_answer: args.max_calls_per_answer as usize,
        system_prompt: args.system.clone(),
        tool_choice: args.tool_choice.clone(),
        ..AgentOptions::default()
    };
    let mut agent = Agent::new(Arc::new(provider), host.executor().clone()).with_options(options);
    if let Some(store) = &store {
        agent = agent.with_journal(Arc::clone(store) as _);
    }
    let interrupt = Interrupt::listen(Arc::clone(&desk), stop.requested.clone());
    stop.ctrl_c_taken.cancel();
    // A Ctrl-C typed at a question (read key by key, the terminal's signal off) does what the
    // signal does at a question, at once: the question being answered and every one waiting
    // are dismissed; it never ends the session.
    input.on_interrupt({
        let interrupt = interrupt.clone();
        move || interrupt.at_a_question()
    });
    if !args.yes {
        agent = agent.with_approver(Arc::new(super::approval::AskOnTerminal {
            input: Arc::clone(&input),
            desk: Arc::clone(&desk),
            question: Arc::clone(&interrupt.current),
        }));
    }
    let sink: EventSink = {
        let view = Arc::clone(&view);
        let unstored = args.json && store.is_none();
        Arc::new(
            move |event| match unstored.then(|| unstored_done(&event)).flatten() {
                Some(line) => emit(&line),
                None => view.show(&event),
            },
        )
    };
    let prepared = super::watch::prepare(&host, (&args.attach, &args.watch), (&view, &input)).await;
    let (attached, _watching) = match prepared {
        Ok(prepared) => prepared,
        Err(err) => {
            host.shutdown().await;
            return Err(err.into());
        }
    };
    let code = match &args.once {
        Some(question) => {
            let question = format!("{question}{attached}");
            let answer = interrupt
                .run(agent.ask(&mut conversation, &question, &sink, &interrupt.question()))
                .await;
            view.end_answer();
            if answer.reason == DoneReason::Cancelled {
                // Stopped by Ctrl-C (or asked to stop): the shells' code for SIGINT.
                ExitCode::from(130)
            } else {
                exit_code(&answer)
            }
        }
        None => {
            interactive(
                &agent,
                &mut conversation,
                &sink,
                &view,
                &interrupt,
                (&input, store.as_deref()),
                attached,
            )
            .await;
            ExitCode::SUCCESS
        }
    };
    let mut code = code;
    if let Some(store) = &store
        && let Err(err) = store.flush().await
    {
        eprintln!("mcp-client: {}", common::printable(&err.to_string()));
        // The answer was shown; that it is not in the history is a failure all the same.
        if args.once.is_some() && code == ExitCode::SUCCESS {
            code = ExitCode::FAILURE;
        }
    }
    host.shutdown().await;
    Ok(code)
}

/// `--json`'s `done` line for a conversation that is not stored: no id to resume (`null`).
fn unstored_done(event: &AgentEvent) -> Option<String> {
    let AgentEvent::Done {
        conversation_id, ..
    } = event
    else {
        return None;
    };
    let line = serde_json::to_string(event).ok()?;
    let id = serde_json::to_string(conversation_id).ok()?;
    Some(line.replacen(
        &format!("\"conversation_id\":{id}"),
        "\"conversation_id\":null",
        1,
    ))
}

/// 0 when the model answered and every tool call succeeded; 1 otherwise.
fn exit_code(answer: &Answer) -> ExitCode {
    let tools_ok = answer.tool_results.iter().all(|r| !r.result.is_error);
    if answer.reason == DoneReason::Completed && tools_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What Ctrl-C does: dismiss every approval and server's question on the screen or waiting
/// (the line of the one shown is ended first, so what follows starts on a line of its own),
/// and cancel the question being answered (the model stream stops, running tools are
/// cancelled, the conversation is stored as cancelled); between questions, end the session.
#[derive(Clone)]
struct Interrupt {
    current: Arc<Mutex<Option<CancellationToken>>>,
    quit: CancellationToken,
    desk: Arc<Desk>,
}

impl Interrupt {
    fn listen(desk: Arc<Desk>, stop_requested: CancellationToken) -> Self {
        let interrupt = Self {
            current: Arc::default(),
            quit: CancellationToken::new(),
            desk,
        };
        let listener = interrupt.clone();
        // Registered now, before the line editor first reads: it sets its own SIGINT handler
        // while it reads and then puts back the one it found, so a handler registered
        // meanwhile (on the task's first poll) was lost, and Ctrl-C then killed `chat`.
        let interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
        tokio::spawn(async move {
            let Ok(mut interrupts) = interrupts else {
                return;
            };
            while interrupts.recv().await.is_some() {
                let running = listener
                    .current
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                // The question first: an approval it would ask next is then not asked.
                if let Some(question) = &running {
                    question.cancel();
                }
                let asking = listener.desk.interrupt();
                if running.is_none() && !asking {
                    listener.quit.cancel();
                }
            }
        });
        // Asked to stop (SIGTERM, SIGHUP): the question is cancelled, and the session ends.
        let stopping = interrupt.clone();
        tokio::spawn(async move {
            stop_requested.cancelled().await;
            if let Some(question) = stopping
                .current
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                question.cancel();
            }
            stopping.desk.interrupt();
            stopping.quit.cancel();
        });
        interrupt
    }

    /// Ctrl-C at a question: the question being answered is cancelled (an approval it would
    /// ask next is then not asked) and every question waiting is dismissed.
    fn at_a_question(&self) {
        if let Some(question) = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            question.cancel();
        }
        self.desk.interrupt();
    }

    /// A token for the next question, cancelled by Ctrl-C.
    fn question(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        token
    }

    /// Runs a question's future; afterwards Ctrl-C ends the session again.
    async fn run<T>(&self, question: impl std::future::Future<Output = T>) -> T {
        let result = question.await;
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        result
    }
}

/// One question per line: a line editor with history on a terminal, plain lines otherwise.
async fn interactive(
    agent: &Agent,
    conversation: &mut Conversation,
    sink: &EventSink,
    view: &View,
    interrupt: &Interrupt,
    (input, store): (&Input, Option<&Store>),
    mut attached: String,
) {
    if std::io::stdin().is_terminal() {
        // A conversation never stored has no id anyone could resume.
        match store {
            Some(_) => eprintln!(
                "conversation {} — ask away (Ctrl-D to quit, Ctrl-C to stop an answer)",
                conversation.id
            ),
            None => eprintln!(
                "conversation not kept (--no-history) — ask away (Ctrl-D to quit, Ctrl-C to stop an answer)"
            ),
        }
    }
    loop {
        // Nothing is written into the line being typed: lines noted meanwhile (a server's
        // question withdrawn) wait for its end.
        view.hold();
        let line = tokio::select! {
            line = input.read(Ask::Question, "> ") => Some(line),
            () = interrupt.quit.cancelled() => None,
        };
        view.release();
        let Some(Line::Text(line)) = line else { break };
        let question = line.trim();
        if question.is_empty() {
            continue;
        }
        // The attachments go with the first question only.
        let question = format!("{question}{}", std::mem::take(&mut attached));
        interrupt
            .run(agent.ask(conversation, &question, sink, &interrupt.question()))
            .await;
        view.end_answer();
        if let Some(store) = store
            && let Err(err) = store.flush().await
        {
            eprintln!("mcp-client: {}", common::printable(&err.to_string()));
        }
    }
}
