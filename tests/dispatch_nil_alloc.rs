//! The nil path allocates nothing: with no code runtime installed, every hook
//! point's interception and observation completes without a single heap
//! allocation (no JSON encoding, no queue, no boxing).
//!
//! This is its own test binary because the counting allocator is global.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use reasonix::runtime::Dispatcher;
use reasonix::runtime::dispatcher::Outcome;
use reasonix_protocol::points::HookPoint;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Payload {
    text: String,
    calls: Vec<String>,
}

/// Poll a future once with a no-op waker; the nil path must be ready at once.
fn poll_once<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the nil path must complete without waiting"),
    }
}

#[test]
fn nil_dispatcher_allocates_nothing_per_hook_point() {
    let dispatcher = Dispatcher::nil();
    let mut payloads: Vec<Payload> = (0..HookPoint::ALL.len())
        .map(|i| Payload {
            text: format!("payload {i}"),
            calls: vec!["a".to_string(), "b".to_string()],
        })
        .collect();
    let mut rulings = Vec::with_capacity(payloads.len());

    let info = allocation_counter::measure(|| {
        for (point, payload) in HookPoint::ALL.into_iter().zip(payloads.drain(..)) {
            dispatcher.observe(point, &payload);
            let ruling =
                poll_once(dispatcher.intercept(point, payload)).expect("nil path never fails");
            rulings.push(ruling);
        }
        let tool = poll_once(dispatcher.intercept_tool(
            HookPoint::ToolBefore,
            "echo",
            Payload {
                text: String::new(),
                calls: Vec::new(),
            },
        ));
        assert!(tool.is_ok());
    });

    assert_eq!(
        info.count_total, 0,
        "the nil path allocated {} times ({} bytes)",
        info.count_total, info.bytes_total
    );
    assert_eq!(rulings.len(), HookPoint::ALL.len());
    for (i, ruling) in rulings.iter().enumerate() {
        assert_eq!(*ruling.outcome(), Outcome::Continue);
        assert!(!ruling.replaced());
        assert!(ruling.steps().is_empty());
        assert_eq!(ruling.payload().text, format!("payload {i}"));
    }
}

#[test]
fn the_counter_does_count() {
    // Guards against a counter that reports zero for everything.
    let info = allocation_counter::measure(|| {
        let v: Vec<u8> = Vec::with_capacity(64);
        std::hint::black_box(v);
    });
    assert!(info.count_total >= 1);
}
