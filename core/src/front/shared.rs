//! [`SharedIndex`]: the current index of a session, swapped between threads.

use std::sync::Arc;

use crate::data::error::Result;
use crate::index::Index;

/// An index shared between threads, the way every binding holds one: searches run on the
/// current snapshot ([`SharedIndex::snapshot`], an `Arc` any number of threads hold), and a
/// write builds a new snapshot beside it and swaps it in, so readers never wait for a write
/// and never see half of one. Writes are serialized among themselves.
///
/// # Example
/// ```
/// use wikidex::{IndexBuilder, SearchOptions, SharedIndex};
/// let mut b = IndexBuilder::new(Default::default())?;
/// b.add_file("global/a.md", b"alpha")?;
/// let shared = SharedIndex::new(b.build()?.0);
/// let before = shared.snapshot();
/// shared.update(|index| index.upsert_page("global/b.md", "beta", &Default::default(), None))?;
/// assert_eq!(before.pages().len(), 1); // an old snapshot stays as it was
/// assert_eq!(shared.snapshot().pages().len(), 2);
/// # Ok::<(), wikidex::Error>(())
/// ```
#[derive(Debug)]
pub struct SharedIndex {
    current: std::sync::RwLock<Arc<Index>>,
    writer: std::sync::Mutex<()>,
}

impl SharedIndex {
    /// Shares `index`.
    pub fn new(index: Index) -> SharedIndex {
        SharedIndex {
            current: std::sync::RwLock::new(Arc::new(index)),
            writer: std::sync::Mutex::new(()),
        }
    }

    /// Shares the snapshot `index` (no copy).
    pub(crate) fn from_arc(index: Arc<Index>) -> SharedIndex {
        SharedIndex {
            current: std::sync::RwLock::new(index),
            writer: std::sync::Mutex::new(()),
        }
    }

    /// The current snapshot. It stays valid (and unchanged) however many writes follow.
    pub fn snapshot(&self) -> Arc<Index> {
        // A poisoned lock only means a thread panicked while swapping an `Arc` in: the value
        // is still a whole snapshot.
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Runs `write` on the current snapshot and swaps in the snapshot it returns. Nothing
    /// changes when it fails. The old snapshot is freed (when no reader holds it) after the
    /// swap, outside the lock readers take: freeing a large index takes a fifth of a write.
    ///
    /// # Errors
    /// Whatever `write` returns.
    pub fn update<R>(&self, write: impl FnOnce(&Index) -> Result<(Index, R)>) -> Result<R> {
        let _one_writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let (next, out) = write(&self.snapshot())?;
        let old = std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|e| e.into_inner()),
            Arc::new(next),
        );
        drop(old);
        Ok(out)
    }
}
