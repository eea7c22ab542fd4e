//! Guard mode: a tiny re-execution of the host binary that sits between the
//! host and a child (a sidecar today, any stdio server the host starts) so
//! that the child and everything it starts die with it, without `unsafe`
//! `pre_exec` hooks. This is the one guarantee every launcher relies on: no
//! process outlives its owner, grandchildren and `setsid` daemons included.
//!
//! The host spawns `<exe> GUARD_MARKER <host-pid> <program> <args…>` as the
//! leader of a new process group G. The guard
//! 1. installs a SIGTERM/SIGHUP/SIGINT handler (signal-hook),
//! 2. asks the kernel for SIGTERM when its parent dies
//!    (`PR_SET_PDEATHSIG` through rustix),
//! 3. becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant
//!    whose parent exits — the second fork of a daemon, which also left G
//!    with `setsid` — is re-parented to the guard instead of init, so the
//!    guard can still find it,
//! 4. checks that its parent is still the expected host (the host may have
//!    died before step 2), else exits,
//! 5. spawns the child with inherited stdio, so it joins G and the host's
//!    pipes reach it directly,
//! 6. when the child exits, or on any of those signals, kills every live
//!    descendant ([`end_descendants`]: found through `/proc` parent links,
//!    whatever their session or group), then exits with the child's status
//!    (128 + signal for a signal).
//!
//! The host ends a guarded tree with SIGTERM to the guard
//! ([`crate::launch::ProcessTree::end`]) and waits for it; a guard that
//! does not exit is taken with the group by SIGKILL.

use std::ffi::OsString;
use std::process::ExitStatus;

use rustix::process::{Pid, Signal};

/// argv[1] that selects guard mode.
pub const GUARD_MARKER: &str = "__reasonix-sidecar-guard";

/// Exit code of a guard that could not run its sidecar.
const GUARD_FAILED: i32 = 125;

/// Call first thing in `main` of every binary that may start sidecars with
/// [`crate::Guard::CurrentExe`]. Returns at once unless argv[1] is the guard
/// marker; in guard mode it never returns.
pub fn run_if_requested() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(GUARD_MARKER.as_ref()) {
        return;
    }
    let code = run_guard(args.collect());
    std::process::exit(code);
}

fn run_guard(args: Vec<OsString>) -> i32 {
    match guard(args) {
        Ok(status) => exit_code(status),
        Err(message) => {
            eprintln!("reasonix sidecar guard: {message}");
            GUARD_FAILED
        }
    }
}

fn guard(args: Vec<OsString>) -> Result<ExitStatus, String> {
    let mut args = args.into_iter();
    let expected_parent: i32 = args
        .next()
        .and_then(|a| a.into_string().ok())
        .and_then(|a| a.parse().ok())
        .ok_or("missing host pid")?;
    let program = args.next().ok_or("missing sidecar program")?;
    let group = rustix::process::getpid();

    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ])
    .map_err(|e| format!("installing signal handlers: {e}"))?;
    rustix::process::set_parent_process_death_signal(Some(Signal::TERM))
        .map_err(|e| format!("setting the parent-death signal: {e}"))?;
    rustix::process::set_child_subreaper(Some(group))
        .map_err(|e| format!("becoming a child subreaper: {e}"))?;
    if rustix::process::getppid()
        .map(Pid::as_raw_nonzero)
        .map(|p| p.get())
        != Some(expected_parent)
    {
        return Err("the host exited before the sidecar started".into());
    }
    std::thread::Builder::new()
        .name("guard-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Kill only: the main thread reaps (it is waiting for the
                // child, and would otherwise lose its status).
                end_descendants(false);
                std::process::exit(128 + signal);
            }
        })
        .map_err(|e| format!("starting the signal thread: {e}"))?;

    let mut child = std::process::Command::new(&program)
        .args(args)
        .spawn()
        .map_err(|e| format!("spawning {}: {e}", program.to_string_lossy()))?;
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the sidecar: {e}"))?;
    // The child is gone but what it started may not be (the host may be
    // dying too, so it cannot be relied on): end the rest of the tree here.
    end_descendants(true);
    Ok(status)
}

/// Rounds of [`end_descendants`] before it gives up on a tree that keeps
/// forking faster than it is killed (then the group kill is the last word).
const END_ROUNDS: usize = 2000;

/// SIGKILLs every live descendant of this process, however it left the
/// process group, until none is left (and with `reap`, reaps the ones
/// re-parented here). Each round kills what one `/proc` snapshot shows; a
/// process forked meanwhile is re-parented here when its parent dies (this
/// process is a subreaper) and is in the next snapshot.
fn end_descendants(reap: bool) {
    let me = rustix::process::getpid();
    for _ in 0..END_ROUNDS {
        if reap {
            reap_children();
        }
        let live = descendants(me);
        if live.is_empty() {
            return;
        }
        for pid in live {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let _ = rustix::process::kill_process_group(me, Signal::KILL);
}

/// Reap every child that has exited (zombies re-parented here included).
fn reap_children() {
    while let Ok(Some(_)) = rustix::process::waitpid(None, rustix::process::WaitOptions::NOHANG) {}
}

/// Live (not zombie) descendants of `root`, from the parent links in
/// `/proc/<pid>/stat`.
fn descendants(root: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: std::collections::HashMap<i32, Vec<(i32, bool)>> = Default::default();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state, ppid, ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let Some(ppid) = fields.next().and_then(|p| p.parse::<i32>().ok()) else {
            continue;
        };
        let live = state != "Z" && state != "X";
        children.entry(ppid).or_default().push((pid, live));
    }
    let mut out = Vec::new();
    let mut queue = vec![root.as_raw_nonzero().get()];
    while let Some(parent) = queue.pop() {
        for &(pid, live) in children.get(&parent).map(Vec::as_slice).unwrap_or_default() {
            queue.push(pid);
            if live && let Some(pid) = Pid::from_raw(pid) {
                out.push(pid);
            }
        }
    }
    out
}

fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(GUARD_FAILED)
}
