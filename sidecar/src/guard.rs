//! Guard mode: a tiny re-execution of the host binary that sits between the
//! host and a sidecar so that the sidecar (and anything it starts) dies when
//! the host dies, without `unsafe` `pre_exec` hooks.
//!
//! The host spawns `<exe> GUARD_MARKER <host-pid> <program> <args…>` as the
//! leader of a new process group G. The guard
//! 1. installs a SIGTERM/SIGHUP/SIGINT handler (signal-hook),
//! 2. asks the kernel for SIGTERM when its parent dies
//!    (`PR_SET_PDEATHSIG` through rustix),
//! 3. checks that its parent is still the expected host (the host may have
//!    died before step 2), else exits,
//! 4. spawns the sidecar with inherited stdio, so it joins G and the host's
//!    pipes reach the sidecar directly,
//! 5. exits with the sidecar's status.
//!
//! On any of those signals the guard kills G with SIGKILL, which takes the
//! sidecar, its grandchildren and the guard itself. The host kills G the
//! same way on shutdown, crash and drop.

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
            if signals.forever().next().is_some() {
                let _ = rustix::process::kill_process_group(group, Signal::KILL);
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
    // The sidecar is gone but what it started may not be. The host kills the
    // group when it notices, unless the host itself is dying (the sidecar
    // then exits on stdin EOF, possibly before our parent-death signal is
    // delivered): so clean up the rest of the group here, sparing ourselves
    // so the sidecar's status can still be reported.
    kill_other_members(group);
    Ok(status)
}

/// SIGKILLs every live process of `group` except this one (Linux `/proc`).
fn kill_other_members(group: Pid) {
    let me = rustix::process::getpid();
    for _ in 0..8 {
        let members = group_members(group, me);
        if members.is_empty() {
            return;
        }
        for pid in members {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
        }
    }
    // Members that keep forking: give up on precision, take the group.
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
}

fn group_members(group: Pid, except: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
            .and_then(Pid::from_raw)
        else {
            continue;
        };
        if pid == except {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero()))
        else {
            continue;
        };
        // Fields after the parenthesised command: state, ppid, pgrp, ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(group.as_raw_nonzero().get()) && state != "Z" && state != "X" {
            out.push(pid);
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
