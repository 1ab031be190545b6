//! `ars chat`: a terminal conversation with one agent, over the HTTP API.
//!
//! With `--url` it talks to that server with `--token` (or `ARS_TOKEN`). Without, it starts an
//! embedded server in-process on 127.0.0.1:0 over the configured store, mints a short-lived
//! token for `--user` directly in the store, and then takes the very same HTTP path.
//!
//! Each line read is one run: the input is posted, the run's SSE stream is printed as it arrives
//! (see [`render`]), and the next line is read once the run has ended. Ctrl-C during a run
//! cancels it; at the prompt it leaves. `/new` starts a new thread; `/quit` or end of input
//! leaves.

mod client;
mod embedded;
mod render;

use std::io::IsTerminal;

use anyhow::Context;
use futures::StreamExt;
use tokio::sync::mpsc;

use ars_domain::Thread;

use self::client::{ApiFailure, Client, StreamItem};
use self::render::{Flow, Renderer};
use crate::cli::ChatArgs;
use crate::config::Config;

/// How many times a broken event stream is reopened (resuming after the last event) before the
/// chat falls back to waiting for the run.
const RECONNECTS: u32 = 3;

/// The longest wait for a run whose events could not be streamed.
const FALLBACK_WAIT_S: u64 = 600;

const HELP: &str = "/new starts a new thread, /quit leaves; Ctrl-C cancels a running answer";

pub async fn run(args: ChatArgs, config: Config) -> anyhow::Result<()> {
    let (client, embedded) = match &args.url {
        Some(url) => {
            let token = args.token.clone().context(
                "talking to a server with --url needs a token: pass --token or set ARS_TOKEN \
                 (create one with `ars token create USER` or POST /api/tokens)",
            )?;
            (Client::new(url, token), None)
        }
        None => {
            let embedded = embedded::Embedded::start(&config, &args.user).await?;
            (embedded.client(), Some(embedded))
        }
    };
    let result = chat(client, &args.agent).await;
    if let Some(embedded) = embedded {
        embedded.stop().await;
    }
    result
}

/// The conversation loop.
async fn chat(client: Client, agent: &str) -> anyhow::Result<()> {
    let mut ui = Renderer::new(std::io::stdout(), std::io::stderr());
    let mut interrupts = Interrupts::new()?;
    let mut lines = stdin_lines();
    let mut thread = client
        .create_thread(agent)
        .await
        .with_context(|| format!("cannot start a chat with `{agent}`"))?;
    ui.notice(&format!(
        "chatting with {agent} on {} (thread {}); {HELP}",
        client.base(),
        thread.id
    ))?;
    let interactive = std::io::stdin().is_terminal();
    loop {
        if interactive {
            ui.prompt()?;
        }
        let line = tokio::select! {
            line = lines.recv() => line,
            () = interrupts.next() => None,
        };
        let Some(line) = line else { break };
        match line.trim() {
            "" => {}
            "/quit" | "/exit" => break,
            "/new" => match client.create_thread(agent).await {
                Ok(new) => {
                    thread = new;
                    ui.notice(&format!("new thread {}", thread.id))?;
                }
                Err(e) => ui.error(&e)?,
            },
            "/help" => ui.notice(HELP)?,
            command if command.starts_with('/') => {
                ui.notice(&format!("unknown command `{command}`; {HELP}"))?;
            }
            input => send(&client, &thread, input, &mut ui, &mut interrupts).await?,
        }
    }
    Ok(())
}

/// Runs one input: start the run, then follow it to its end.
async fn send<O: std::io::Write, E: std::io::Write>(
    client: &Client,
    thread: &Thread,
    input: &str,
    ui: &mut Renderer<O, E>,
    interrupts: &mut Interrupts,
) -> anyhow::Result<()> {
    let run = match client.start_run(thread, input).await {
        Ok(run) => run,
        Err(e) => {
            if let Some(busy) = e
                .downcast_ref::<ApiFailure>()
                .and_then(|f| f.active_run_id.as_ref())
            {
                ui.notice(&format!(
                    "the thread is still busy with run {busy}; wait for it, or /new"
                ))?;
            } else {
                ui.error(&e)?;
            }
            return Ok(());
        }
    };
    follow(client, &run.id.to_string(), ui, interrupts).await
}

/// Prints a run's events until it ends. Reconnects after the last event seen when the stream
/// breaks; falls back to waiting for the run when the events are gone.
async fn follow<O: std::io::Write, E: std::io::Write>(
    client: &Client,
    run_id: &str,
    ui: &mut Renderer<O, E>,
    interrupts: &mut Interrupts,
) -> anyhow::Result<()> {
    let mut after = 0;
    let mut cancelling = false;
    for _ in 0..=RECONNECTS {
        let stream = match client.events(run_id, after).await {
            Ok(Some(stream)) => stream,
            Ok(None) => break,
            Err(e) => {
                ui.error(&e)?;
                break;
            }
        };
        let mut stream = std::pin::pin!(stream);
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = interrupts.next(), if !cancelling => {
                    cancelling = true;
                    ui.notice("cancelling the run…")?;
                    if let Err(e) = client.cancel(run_id).await {
                        ui.error(&e)?;
                    }
                    continue;
                }
            };
            match item {
                Some(Ok(StreamItem::Event(event))) => {
                    after = event.id;
                    if let Flow::Ended(_) = ui.event(&event.kind)? {
                        return Ok(());
                    }
                }
                Some(Ok(StreamItem::Failed(message))) => {
                    ui.notice(&format!("the live stream stopped: {message}"))?;
                    return wait_for(client, run_id, ui).await;
                }
                // A broken connection, or one closed early: reopen after the last event.
                Some(Err(_)) | None => break,
            }
        }
    }
    wait_for(client, run_id, ui).await
}

/// Ends a run without its events: wait for it and print how it ended.
async fn wait_for<O: std::io::Write, E: std::io::Write>(
    client: &Client,
    run_id: &str,
    ui: &mut Renderer<O, E>,
) -> anyhow::Result<()> {
    match client.wait(run_id, FALLBACK_WAIT_S).await {
        Ok((run, false)) => ui.run_ended(&run)?,
        Ok((run, true)) => ui.notice(&format!(
            "run {} is still {}; check on it later",
            run.id,
            run.status.as_str()
        ))?,
        Err(e) => ui.error(&e)?,
    }
    Ok(())
}

/// Standard input, line by line, read on a plain thread: a blocking read cannot be cancelled,
/// and on a runtime thread it would keep the process from exiting at Ctrl-C.
fn stdin_lines() -> mpsc::UnboundedReceiver<String> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Ctrl-C presses, from one signal listener kept for the whole chat so that none is missed
/// between two waits.
struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .context("cannot listen for Ctrl-C")?,
        })
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        {
            if self.signal.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}
