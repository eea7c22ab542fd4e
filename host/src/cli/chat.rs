//! `reasonix chat`: an interactive session in the terminal, a thin client of
//! [`Session`].
//!
//! On a terminal: a prompt with line editing and history, the slash menu on
//! `/` + Tab, questions (tool permissions, extension forms) asked inline, UI
//! surfaces shown as text, Ctrl-C cancels the running turn, Ctrl-D closes
//! the session. With piped stdin: one line per input, no prompts, plain
//! text (or NDJSON events with `--json`); tool calls are approved unless
//! `--deny` names them, as in `dev turn`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;

use crate::cli::output::{self, errln};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::home::ReasonixHome;
use crate::runtime::ui::{PublishKind, RequestKind, UiPayload};
use crate::session::text::event_lines;
use crate::session::{
    Answer, Interaction, Question, ScriptedCall, Session, SessionEvent, SessionOptions,
};

#[derive(Debug, Args)]
#[command(after_help = "Inside a session:\n  \
    /help lists the commands; /<plugin>:<command> args runs a plugin's command;\n  \
    /reload rebuilds the extension runtime; /model <ref> switches model.\n\n\
Examples:\n  \
    reasonix chat\n  \
    printf 'hello\\n/reload\\n' | reasonix chat --json\n  \
    reasonix chat --model plugin/echo-provider/echo/echo-1 --session work.json")]
pub struct ChatArgs {
    /// A model ref: `echo` (built in) or `plugin/<plugin>/<provider>/<model>`.
    /// Default: the configured `default_model`, else `echo`.
    #[arg(long, value_name = "REF")]
    pub model: Option<String>,
    /// A session file to continue (if it exists) and save to after each turn.
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Make the built-in echo model call this tool in every turn (NAME=JSON).
    /// Repeatable.
    #[arg(long = "call", value_name = "NAME=JSON")]
    pub calls: Vec<String>,
    /// Piped input: refuse this tool (the host's decision is a deny). Repeatable.
    #[arg(long = "deny", value_name = "NAME")]
    pub deny: Vec<String>,
    /// Piped input: answer extension form fields with these values (KEY=JSON).
    #[arg(long = "ui-answer", value_name = "KEY=JSON")]
    pub ui_answers: Vec<String>,
    /// Refuse every tool that can change something.
    #[arg(long)]
    pub read_only: bool,
    /// Print every session event as one JSON line (implies piped behaviour).
    #[arg(long)]
    pub json: bool,
}

fn fail(message: &str) -> ExitCode {
    errln!("error: {message}");
    ExitCode::from(1)
}

fn usage(message: &str) -> ExitCode {
    errln!("error: {message}");
    ExitCode::from(2)
}

/// Split `NAME=JSON`.
fn name_json(flag: &str, text: &str) -> Result<(String, serde_json::Value), String> {
    let (name, json) = text
        .split_once('=')
        .filter(|(n, _)| !n.trim().is_empty())
        .ok_or_else(|| format!("{flag} expects NAME=JSON, got {text:?}"))?;
    let value = serde_json::from_str(json)
        .map_err(|e| format!("{flag} {name}: the value is not JSON ({e})"))?;
    Ok((name.trim().to_string(), value))
}

pub fn run(args: ChatArgs) -> ExitCode {
    let mut calls = Vec::new();
    for call in &args.calls {
        match name_json("--call", call) {
            Ok((name, value)) if value.is_object() => calls.push(ScriptedCall {
                name,
                arguments: value.to_string(),
            }),
            Ok((name, _)) => return usage(&format!("--call {name}: arguments must be an object")),
            Err(e) => return usage(&e),
        }
    }
    let mut answers = BTreeMap::new();
    for answer in &args.ui_answers {
        match name_json("--ui-answer", answer) {
            Ok((key, value)) => {
                answers.insert(key, value);
            }
            Err(e) => return usage(&e),
        }
    }
    let home = match ReasonixHome::from_env() {
        Ok(home) => home,
        Err(e) => return fail(&e.to_string()),
    };
    let workspace = match args
        .workspace
        .clone()
        .map(Ok)
        .unwrap_or_else(std::env::current_dir)
    {
        Ok(dir) => dir,
        Err(e) => return fail(&format!("cannot read the current directory: {e}")),
    };
    let terminal = !args.json && std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let mut options = SessionOptions::new(home.clone(), workspace);
    options.session_file = args.session.clone();
    options.model = args.model.clone();
    options.scripted_calls = calls;
    options.read_only = args.read_only;
    options.interaction = if terminal {
        Interaction::Interactive
    } else {
        Interaction::Scripted {
            deny: args.deny.iter().cloned().collect::<BTreeSet<_>>(),
            ui_answers: (!answers.is_empty()).then_some(answers),
        }
    };
    let runtime = match crate::cli::runtime() {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    let code = runtime.block_on(async move {
        let session = match Session::open(options).await {
            Ok(session) => session,
            Err(error) => {
                if args.json {
                    print_json(&serde_json::json!({
                        "type": "error", "ok": false, "errorCode": error.code(),
                        "error": error.to_string(),
                    }));
                }
                return fail(&error.to_string());
            }
        };
        let events = session.subscribe();
        let mut out = Printer {
            json: args.json,
            terminal,
            streaming: false,
            forms: Vec::new(),
        };
        if terminal {
            interactive(&session, events, &mut out, &home).await;
        } else {
            piped(&session, events, &mut out).await;
        }
        ExitCode::SUCCESS
    });
    // The line reader may still sit in a blocking read of the terminal:
    // the session is closed, so do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

/// Writes events: text lines or JSON lines, through the command line's one
/// output layer (a closed stdout ends the chat quietly at the next input).
struct Printer {
    json: bool,
    terminal: bool,
    /// Streamed assistant text is on the current line.
    streaming: bool,
    /// Forms published and not yet asked (plugin, surface).
    forms: Vec<(String, String)>,
}

fn print_json(value: &serde_json::Value) {
    output::raw_line(&value.to_string());
}

fn write_out(text: &str) {
    output::text(text);
}

impl Printer {
    fn event(&mut self, event: &SessionEvent) {
        if let SessionEvent::Surface { update } = event
            && update.kind == PublishKind::Form
        {
            self.forms
                .retain(|(p, s)| !(p == &update.plugin && s == &update.surface_id));
            self.forms
                .push((update.plugin.clone(), update.surface_id.clone()));
        }
        if self.json {
            match serde_json::to_value(event) {
                Ok(value) => print_json(&value),
                Err(e) => errln!("error: cannot encode an event: {e}"),
            }
            return;
        }
        match event {
            SessionEvent::AssistantDelta { text } if self.terminal => {
                if !self.streaming {
                    write_out("assistant: ");
                    self.streaming = true;
                }
                write_out(&crate::runtime::redaction::plain_text(text));
                return;
            }
            SessionEvent::AssistantMessage { .. } if self.streaming => {
                self.streaming = false;
                write_out("\n");
                return;
            }
            _ => {}
        }
        let lines = event_lines(event);
        if lines.is_empty() {
            return;
        }
        if self.streaming {
            self.streaming = false;
            write_out("\n");
        }
        let mut text = lines.join("\n");
        text.push('\n');
        write_out(&text);
    }

    fn error(&mut self, error: &crate::session::SessionError) {
        if self.json {
            print_json(&serde_json::json!({
                "type": "error", "ok": false, "errorCode": error.code(),
                "error": error.to_string(),
            }));
        } else {
            if self.streaming {
                self.streaming = false;
                write_out("\n");
            }
            write_out(&format!("error: {error}\n"));
        }
    }
}

fn drain(events: &mut UnboundedReceiver<SessionEvent>, out: &mut Printer) {
    while let Ok(event) = events.try_recv() {
        out.event(&event);
    }
}

/// Piped input: one line per input; no questions (the session is scripted).
async fn piped(session: &Session, mut events: UnboundedReceiver<SessionEvent>, out: &mut Printer) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        drain(&mut events, out);
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                errln!("error: reading stdin: {e}");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        run_line(session, &line, &mut events, out, None).await;
        // Nobody reads the answers any more (`| head`): stop asking.
        if output::stdout_closed() {
            break;
        }
    }
    session.close().await;
    drain(&mut events, out);
}

/// Submit one line while printing its events; Ctrl-C cancels the turn.
/// With a terminal, questions are asked inline.
async fn run_line(
    session: &Session,
    line: &str,
    events: &mut UnboundedReceiver<SessionEvent>,
    out: &mut Printer,
    terminal: Option<&Terminal>,
) {
    let submit = session.submit(line);
    tokio::pin!(submit);
    loop {
        tokio::select! {
            result = &mut submit => {
                drain(events, out);
                if let Err(error) = result {
                    out.error(&error);
                }
                return;
            }
            Some(event) = events.recv() => {
                out.event(&event);
                if let (Some(term), SessionEvent::Question { id, question }) = (terminal, &event) {
                    let answer = ask(term, question).await;
                    match answer {
                        Some(answer) => {
                            // A question withdrawn meanwhile is not an error.
                            let _ = session.answer(id, answer);
                        }
                        None => {
                            session.cancel();
                        }
                    }
                }
            }
            _ = tokio::signal::ctrl_c() => {
                if session.cancel() {
                    write_out("\n(cancelling the turn)\n");
                }
            }
        }
    }
}

// ----- the terminal -----

/// What a read from the terminal gave.
enum Read {
    Line(String),
    Interrupted,
    Eof,
}

struct Request {
    prompt: String,
    reply: tokio::sync::oneshot::Sender<Read>,
}

/// The line editor lives on its own thread (it blocks); requests reach it
/// through a channel.
struct Terminal {
    requests: std::sync::mpsc::Sender<Request>,
    commands: Arc<Mutex<Vec<String>>>,
    thread: std::thread::JoinHandle<()>,
}

impl Terminal {
    fn start(history: PathBuf) -> Terminal {
        let commands = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        let helper = Helper {
            commands: Arc::clone(&commands),
        };
        let thread = std::thread::spawn(move || {
            let config = rustyline::Config::builder()
                .completion_type(rustyline::CompletionType::List)
                .auto_add_history(true)
                .build();
            let Ok(mut editor) =
                rustyline::Editor::<Helper, rustyline::history::FileHistory>::with_config(config)
            else {
                return;
            };
            editor.set_helper(Some(helper));
            let _ = editor.load_history(&history);
            while let Ok(request) = rx.recv() {
                let read = match editor.readline(&request.prompt) {
                    Ok(line) => Read::Line(line),
                    Err(rustyline::error::ReadlineError::Interrupted) => Read::Interrupted,
                    Err(_) => Read::Eof,
                };
                let _ = request.reply.send(read);
            }
            if let Some(dir) = history.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let _ = editor.save_history(&history);
        });
        Terminal {
            requests: tx,
            commands,
            thread,
        }
    }

    /// End the editor thread; it saves the history on its way out.
    fn finish(self) {
        drop(self.requests);
        let _ = self.thread.join();
    }

    async fn read(&self, prompt: &str) -> Read {
        let (reply, answer) = tokio::sync::oneshot::channel();
        if self
            .requests
            .send(Request {
                prompt: prompt.to_string(),
                reply,
            })
            .is_err()
        {
            return Read::Eof;
        }
        answer.await.unwrap_or(Read::Eof)
    }
}

/// Tab completes slash commands.
struct Helper {
    commands: Arc<Mutex<Vec<String>>>,
}

impl rustyline::completion::Completer for Helper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let head = &line[..pos];
        if !head.starts_with('/') || head.contains(char::is_whitespace) {
            return Ok((pos, Vec::new()));
        }
        let commands = self.commands.lock().map(|c| c.clone()).unwrap_or_default();
        Ok((
            0,
            commands
                .into_iter()
                .filter(|c| c.starts_with(head))
                .collect(),
        ))
    }
}

impl rustyline::hint::Hinter for Helper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for Helper {}
impl rustyline::validate::Validator for Helper {}
impl rustyline::Helper for Helper {}

/// Ask a question inline; `None` cancels the turn.
async fn ask(term: &Terminal, question: &Question) -> Option<Answer> {
    match question {
        Question::Permission { tool, .. } => loop {
            match term
                .read(&format!("allow {tool}? [y]es, [n]o, [a]lways: "))
                .await
            {
                Read::Line(line) => match line.trim().to_lowercase().as_str() {
                    "y" | "yes" => {
                        return Some(Answer::Permission {
                            allow: true,
                            always: false,
                        });
                    }
                    "a" | "always" => {
                        return Some(Answer::Permission {
                            allow: true,
                            always: true,
                        });
                    }
                    "n" | "no" | "" => {
                        return Some(Answer::Permission {
                            allow: false,
                            always: false,
                        });
                    }
                    _ => continue,
                },
                Read::Interrupted | Read::Eof => return None,
            }
        },
        Question::Form { form, .. } => {
            let values = ask_fields(term, &form.fields).await?;
            Some(Answer::Form { values })
        }
    }
}

/// Ask each field; an empty first answer skips the form (`Some(None)`).
async fn ask_fields(
    term: &Terminal,
    fields: &[crate::runtime::ui::payloads::FormField],
) -> Option<Option<BTreeMap<String, serde_json::Value>>> {
    let mut values = BTreeMap::new();
    for (i, field) in fields.iter().enumerate() {
        let label =
            crate::runtime::redaction::plain_text(field.label.as_deref().unwrap_or(&field.key));
        let hint = match field.kind {
            RequestKind::Confirm => " [y/n]".to_string(),
            RequestKind::Input => String::new(),
            RequestKind::Select | RequestKind::Multiselect => format!(
                " [{}]",
                field
                    .options
                    .iter()
                    .flatten()
                    .map(|o| crate::runtime::redaction::plain_text(o))
                    .collect::<Vec<_>>()
                    .join("|")
            ),
        };
        let line = match term.read(&format!("  {label}{hint}: ")).await {
            Read::Line(line) => line.trim().to_string(),
            Read::Interrupted | Read::Eof => return None,
        };
        if i == 0 && line.is_empty() && field.required != Some(true) {
            return Some(None);
        }
        let value = match field.kind {
            RequestKind::Confirm => serde_json::Value::Bool(matches!(
                line.to_lowercase().as_str(),
                "y" | "yes" | "true"
            )),
            RequestKind::Multiselect => serde_json::Value::Array(
                line.split(',')
                    .map(|s| serde_json::Value::String(s.trim().to_string()))
                    .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                    .collect(),
            ),
            RequestKind::Input | RequestKind::Select => serde_json::Value::String(line),
        };
        values.insert(field.key.clone(), value);
    }
    Some(Some(values))
}

async fn interactive(
    session: &Session,
    mut events: UnboundedReceiver<SessionEvent>,
    out: &mut Printer,
    home: &ReasonixHome,
) {
    let term = Terminal::start(home.root().join("chat_history"));
    write_out("Type a message, /help for commands, Ctrl-D to quit.\n");
    loop {
        drain(&mut events, out);
        // Forms published since the last prompt are asked before the next.
        for (plugin, surface) in std::mem::take(&mut out.forms) {
            let fields = session
                .surfaces()
                .into_iter()
                .find_map(|s| match s.payload {
                    UiPayload::Form(f) if s.plugin == plugin && s.surface_id == surface => {
                        Some(f.fields)
                    }
                    _ => None,
                });
            let Some(fields) = fields else { continue };
            write_out(&format!("form {plugin}/{surface} (Enter skips):\n"));
            if let Some(Some(values)) = ask_fields(&term, &fields).await
                && let Err(error) = session.submit_form(&plugin, &surface, values).await
            {
                out.error(&error);
            }
        }
        if let Ok(mut commands) = term.commands.lock() {
            *commands = session.commands().into_iter().map(|c| c.command).collect();
        }
        let line = match term.read("> ").await {
            Read::Line(line) => line,
            Read::Interrupted => {
                write_out("(Ctrl-D quits)\n");
                continue;
            }
            Read::Eof => break,
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed == "/quit" || trimmed == "/exit" {
            break;
        }
        run_line(session, &line, &mut events, out, Some(&term)).await;
        if output::stdout_closed() {
            break;
        }
    }
    session.close().await;
    drain(&mut events, out);
    term.finish();
}
