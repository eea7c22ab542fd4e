//! `join_all` for the few borrowed futures of a generation start (they
//! borrow their candidates, so they cannot be spawned): every future is
//! polled each time any of them wakes the task, results in input order.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

/// Run every future to completion concurrently on the current task.
pub async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut pending: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut done: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut all = true;
        for (future, slot) in pending.iter_mut().zip(done.iter_mut()) {
            if slot.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *slot = Some(output),
                    Poll::Pending => all = false,
                }
            }
        }
        if all { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    done.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn results_come_back_in_input_order_and_run_concurrently() {
        let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
        let first =
            Box::pin(async move { rx.await.unwrap() }) as Pin<Box<dyn Future<Output = u32>>>;
        // The second completes the first: only concurrent polling finishes.
        let second = Box::pin(async move {
            tx.send(7).unwrap();
            8u32
        }) as Pin<Box<dyn Future<Output = u32>>>;
        assert_eq!(join_all([first, second]).await, vec![7, 8]);
        assert!(
            join_all(Vec::<std::future::Ready<u8>>::new())
                .await
                .is_empty()
        );
    }
}
