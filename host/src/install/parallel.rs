//! Per-file work (copy, hash) spread over a few threads: with many small
//! files the cost is system calls, which run in parallel on every core.
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Below this many jobs one thread does it all (spawning costs more).
const PARALLEL_FROM: usize = 64;
/// More threads than this only contend on the filesystem's locks.
const MAX_THREADS: usize = 8;

/// `run(i)` for every `i < jobs`, in parallel where it pays; the results in
/// job order. On failure no new job starts and the error of the lowest
/// failed job is returned.
pub fn map_jobs<T, E>(jobs: usize, run: impl Fn(usize) -> Result<T, E> + Sync) -> Result<Vec<T>, E>
where
    T: Send,
    E: Send,
{
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS);
    if jobs < PARALLEL_FROM || threads < 2 {
        return (0..jobs).map(run).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Result<T, E>>>> = (0..jobs).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= jobs {
                        break;
                    }
                    let result = run(i);
                    if result.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
                }
            });
        }
    });
    let mut out = Vec::with_capacity(jobs);
    for slot in slots {
        match slot.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(Ok(value)) => out.push(value),
            Some(Err(error)) => return Err(error),
            // Only after a failure are jobs left undone, and a lower job
            // holds that failure.
            None => continue,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_job_order() {
        for jobs in [0, 1, 63, 64, 1000] {
            let out: Result<Vec<usize>, ()> = map_jobs(jobs, |i| Ok(i * 2));
            assert_eq!(out.unwrap(), (0..jobs).map(|i| i * 2).collect::<Vec<_>>());
        }
    }

    #[test]
    fn the_lowest_failure_wins() {
        let out: Result<Vec<usize>, usize> =
            map_jobs(1000, |i| if i % 300 == 299 { Err(i) } else { Ok(i) });
        assert_eq!(out.unwrap_err(), 299);
    }
}
