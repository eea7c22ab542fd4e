//! Component calls run on the caller's task (no thread hop), so these pin
//! what that must not cost: a spinning guest yields to the executor at
//! every epoch tick and still traps at its budget; a call whose future is
//! dropped half-way drops its instance, which the next call rebuilds;
//! observations never wait for the instance, and a full queue is
//! backpressure, not a stall.
#[path = "wasm_support/mod.rs"]
mod wasm_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reasonix::runtime::wasm::adapter::EVENT_QUEUE;
use reasonix::runtime::wasm::{WasmErrorKind, WasmExtension, WasmRuntime};
use reasonix::runtime::{ExtensionRuntime, RuntimeErrorKind};
use reasonix_protocol::{ErrorReason, HookPoint};
use serde_json::value::RawValue;
use wasm_support::TestPlugin;
use wasm_support::fixtures::{Fixture, Intercept};

fn raw(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("valid JSON")
}

/// A string payload makes `Intercept::Loop` spin; an object does not.
fn spin_payload() -> Box<RawValue> {
    raw(r#""spin""#)
}

fn benign_payload() -> Box<RawValue> {
    raw(r#"{"text":"hello"}"#)
}

/// One worker thread: whatever else runs must run between the guest's
/// slices on the same thread.
fn single_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_spinning_guest_yields_to_other_tasks_and_still_times_out() {
    let plugin = TestPlugin::new("spinner", &Fixture::new(Intercept::Loop).build());
    single_thread().block_on(async {
        let runtime = WasmRuntime::start_async(plugin.start()).await.unwrap();
        let ticks = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                counter.fetch_add(1, Ordering::Relaxed);
            }
        });
        let err = runtime
            .intercept_async(
                HookPoint::InputReceive,
                &spin_payload(),
                Duration::from_millis(300),
            )
            .await
            .unwrap_err();
        let during = ticks.load(Ordering::Relaxed);
        ticker.abort();
        assert_eq!(err.kind, WasmErrorKind::Timeout);
        assert_eq!(err.reason, ErrorReason::InterceptTimeout);
        // The ticker shares the only thread with the spinning guest: it can
        // only have run while the guest yielded.
        assert!(
            during >= 5,
            "the executor ran {during} timer ticks during a 300 ms spin"
        );
        // The trapped instance is replaced by the next call.
        let reply = runtime
            .intercept_async(
                HookPoint::InputReceive,
                &benign_payload(),
                Duration::from_secs(5),
            )
            .await
            .unwrap();
        assert_eq!(reply.decision, reasonix_protocol::types::Decision::Continue);
        assert_eq!(runtime.rebuilds(), 1);
    });
}

#[test]
fn a_cancelled_call_drops_its_instance_and_the_next_call_rebuilds_it() {
    let plugin = TestPlugin::new("spinner", &Fixture::new(Intercept::Loop).build());
    single_thread().block_on(async {
        let runtime = WasmRuntime::start_async(plugin.start()).await.unwrap();
        let spin = spin_payload();
        let call = runtime.intercept_async(HookPoint::InputReceive, &spin, Duration::from_secs(30));
        // The caller gives up long before the 30 s budget.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), call).await;
        assert!(gave_up.is_err(), "the spinning call cannot have answered");
        assert_eq!(runtime.rebuilds(), 0);
        let reply = runtime
            .intercept_async(
                HookPoint::InputReceive,
                &benign_payload(),
                Duration::from_secs(5),
            )
            .await
            .unwrap();
        assert_eq!(reply.decision, reasonix_protocol::types::Decision::Continue);
        assert_eq!(runtime.rebuilds(), 1);
    });
}

#[test]
fn observations_never_wait_for_a_busy_instance_and_overflow_as_backpressure() {
    let plugin = TestPlugin::new("spinner", &Fixture::new(Intercept::Loop).build());
    single_thread().block_on(async {
        let extension = Arc::new(WasmExtension::new(
            WasmRuntime::start_async(plugin.start()).await.unwrap(),
        ));
        // Keep the instance busy spinning for a while on another task.
        let busy = Arc::clone(&extension);
        let spinning = tokio::spawn(async move {
            let payload = spin_payload();
            busy.intercept(
                HookPoint::InputReceive,
                &payload,
                Duration::from_millis(400),
            )
            .await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let event = raw(r#"{"kind":"key","text":"x"}"#);
        let began = std::time::Instant::now();
        let mut refused = None;
        for i in 0..EVENT_QUEUE + 8 {
            if let Err(e) = extension.observe(HookPoint::FrontendEvent, &event) {
                refused = Some((i, e));
                break;
            }
        }
        // Queueing hundreds of events took no guest time at all.
        assert!(began.elapsed() < Duration::from_millis(200));
        let (at, error) = refused.expect("a full queue refuses");
        assert!(at >= EVENT_QUEUE - 1, "refused after only {at} events");
        assert_eq!(error.kind, RuntimeErrorKind::Backpressure);
        let spun = spinning.await.unwrap().unwrap_err();
        assert_eq!(spun.kind, RuntimeErrorKind::Timeout);
        // The queue drains once the instance is free again.
        tokio::time::sleep(Duration::from_millis(200)).await;
        extension
            .observe(HookPoint::FrontendEvent, &event)
            .expect("the drained queue takes events again");
    });
}
