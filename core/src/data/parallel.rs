//! Work shared out over threads: one body of code for the few places that spread independent
//! items over the cores (a batch of queries, the pages whose language a build detects).

/// The cores available (1 when unknown), asked once: the standard library reads the cgroup's
/// files each time it is asked (a few µs of system calls), and a shard asks for every batch.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Threads for `items` items of which each thread should take at least `fewest` (fewer are not
/// worth a thread's start): the cores, fewer when there are not enough items, at least one.
pub(crate) fn threads_for(items: usize, fewest: usize) -> usize {
    cores().min(items / fewest.max(1)).max(1)
}

/// How many of `threads` work on `items` items: no more than there are items, at least one,
/// and one on wasm (no threads there) or on a thread of [`map`]'s own (the cores are already
/// shared out).
pub(crate) fn usable(threads: usize, items: usize) -> usize {
    if alone() {
        1
    } else {
        threads.min(items).max(1)
    }
}

/// How many runs of items [`map`] makes for each of its threads: a thread that finishes its
/// run early takes the next, so items of unequal cost (a blob's page blocks against its
/// postings) keep every thread busy to the end.
pub(crate) const RUNS_PER_THREAD: usize = 8;

/// `f` of each of `items`, in their order, the items cut into contiguous runs that `threads`
/// threads take one after another, no more threads than there are items (on the calling thread
/// when that makes one, and always on wasm). A panic in a thread goes on on the caller's.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = usable(threads, items.len());
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let runs: Vec<&[T]> = items.chunks(run_len(items.len(), threads)).collect();
    over_runs(runs.len(), threads, |r| runs[r].iter().map(&f).collect())
}

/// [`map`] of items given away: `f` takes each item itself (a part of a list to fill, say).
pub(crate) fn map_owned<T: Send, R: Send>(
    items: Vec<T>,
    threads: usize,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let threads = usable(threads, items.len());
    if threads == 1 {
        return items.into_iter().map(f).collect();
    }
    let len = run_len(items.len(), threads);
    let mut runs = Vec::new();
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        runs.push(std::sync::Mutex::new(
            items.by_ref().take(len).collect::<Vec<T>>(),
        ));
    }
    // Each run is taken by one thread only, once.
    over_runs(runs.len(), threads, |r| {
        let mut run = runs[r]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *run).into_iter().map(&f).collect()
    })
}

/// How many items a run of [`map`] holds.
fn run_len(items: usize, threads: usize) -> usize {
    items.div_ceil(threads * RUNS_PER_THREAD).max(1)
}

std::thread_local! {
    /// Whether this thread is one of [`map`]'s: its work is already one share of the cores.
    static SHARED_OUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether work on this thread stays on it: on wasm (no threads there) or on one of [`map`]'s
/// threads (the cores are already shared out, a batch's queries say).
fn alone() -> bool {
    cfg!(target_family = "wasm") || SHARED_OUT.with(std::cell::Cell::get)
}

/// Whether work on this thread may take a second thread: not [`alone`], not with one core.
pub(crate) fn may_spread() -> bool {
    !alone() && cores() > 1
}

/// With `spread`, `apart()` on a thread of its own while `here()` runs on this one; else, or
/// unless [`may_spread`], the two one after the other here. A panic in either goes on on the
/// caller's.
pub(crate) fn beside<A: Send, B>(
    spread: bool,
    apart: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    if !spread || !may_spread() {
        return (apart(), here());
    }
    std::thread::scope(|s| {
        let other = s.spawn(apart);
        let b = here();
        match other.join() {
            Ok(a) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// `run(r)` for each of `runs` runs, taken one after another by `threads` threads, joined in
/// the runs' order.
fn over_runs<R: Send>(runs: usize, threads: usize, run: impl Fn(usize) -> Vec<R> + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (run, next) = (&run, &next);
    let mut made: Vec<(usize, Vec<R>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(move || {
                    SHARED_OUT.with(|c| c.set(true));
                    let mut made = Vec::new();
                    loop {
                        let r = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if r >= runs {
                            break made;
                        }
                        made.push((r, run(r)));
                    }
                })
            })
            .collect();
        let mut made = Vec::with_capacity(runs);
        for worker in workers {
            match worker.join() {
                Ok(runs) => made.extend(runs),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        made
    });
    // Each run once, tagged with its place.
    made.sort_unstable_by_key(|&(r, _)| r);
    let mut out = Vec::with_capacity(made.iter().map(|(_, run)| run.len()).sum());
    for (_, run) in made {
        out.extend(run);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn shared_out_work_keeps_the_items_order() {
        let items: Vec<u32> = (0..1000).collect();
        for threads in [1, 2, 3, 7, 5000] {
            assert_eq!(
                super::map(&items, threads, |&i| i * 2),
                items.iter().map(|&i| i * 2).collect::<Vec<_>>()
            );
        }
        assert!(super::map(&[] as &[u32], 4, |&i| i).is_empty());
        for threads in [1, 2, 3, 7, 5000] {
            assert_eq!(
                super::map_owned(items.clone(), threads, |i| i * 2),
                items.iter().map(|&i| i * 2).collect::<Vec<_>>()
            );
        }
        assert!(super::map_owned(Vec::<u32>::new(), 4, |i| i).is_empty());
    }

    #[test]
    #[should_panic(expected = "item 500")]
    fn a_panic_in_a_thread_goes_on_in_the_caller() {
        let items: Vec<u32> = (0..1000).collect();
        super::map(
            &items,
            2,
            |&i| if i == 500 { panic!("item 500") } else { i },
        );
    }

    #[test]
    fn work_beside_runs_apart_but_not_on_a_shared_out_thread() {
        let here = std::thread::current().id();
        let (apart, mine) = super::beside(true, || std::thread::current().id(), || 7);
        assert_eq!(mine, 7);
        assert_eq!(apart != here, super::cores() > 1);
        let (apart, _) = super::beside(false, || std::thread::current().id(), || ());
        assert_eq!(apart, here);
        // On one of `map`'s threads the two run on that thread, and a `map` there too.
        let same = super::map(&[0u32, 1], 2, |_| {
            let me = std::thread::current().id();
            let (a, b) = super::beside(
                true,
                || std::thread::current().id(),
                || std::thread::current().id(),
            );
            let inner = super::map(&[0u32, 1, 2, 3], 4, |_| std::thread::current().id());
            (
                a == b && inner.iter().all(|&t| t == me),
                super::may_spread(),
            )
        });
        assert_eq!(same, vec![(true, false); 2]);
    }

    #[test]
    #[should_panic(expected = "apart")]
    fn a_panic_beside_goes_on_in_the_caller() {
        super::beside(true, || panic!("apart"), || ());
    }

    #[test]
    fn a_thread_takes_at_least_its_share_of_items() {
        assert_eq!(super::threads_for(0, 16), 1);
        assert_eq!(super::threads_for(31, 16), 1);
        assert_eq!(super::threads_for(32, 16), super::cores().min(2));
        assert_eq!(super::threads_for(1 << 20, 16), super::cores());
        assert_eq!(super::threads_for(5, 0), super::cores().min(5));
    }
}
