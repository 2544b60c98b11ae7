//! Files read and replaced by the crate: only regular files, opened without blocking, read
//! with a cap, and checked on the handle that is read.
//!
//! Every path the crate opens comes from a caller or a folder walk, so it may name a FIFO (an
//! open that blocks until a writer comes, forever), a device (`/dev/zero` reads without end),
//! or a link swapped in after the walk looked at it. So a file is opened with `O_NONBLOCK`
//! (which a regular file ignores), its type is read from the open handle, and anything but a
//! regular file is refused before a byte is read. A folder walk that keeps to its root checks
//! the handle it reads, not the path it listed.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::data::error::{Error, Result};
#[cfg(feature = "fs")]
use crate::index::Index;
#[cfg(feature = "fs")]
use crate::{Embedder, PageRecord, RangedIndex, Scope, SearchOptions, SearchResults};
#[cfg(feature = "fs")]
use std::sync::Arc;

/// Opens `path` for reading (following links) without blocking, and refuses anything but a
/// regular file, naming what it is.
///
/// # Errors
/// [`Error::Io`] if it cannot be opened; [`Error::InvalidArgument`] if it is not a regular file.
pub(crate) fn open_regular(path: &Path) -> Result<(File, Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta, "not read"));
    }
    Ok((file, meta))
}

/// The error for a path that exists and is not a regular file; `outcome` says what was not
/// done (`not read`, `not replaced`).
pub(crate) fn not_regular(path: &Path, meta: &Metadata, outcome: &str) -> Error {
    Error::invalid_argument(format!(
        "{} is {}, not a regular file: {outcome}",
        path.display(),
        kind(meta)
    ))
}

/// What a file that is not a regular file is, in words.
fn kind(meta: &Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

/// The whole of a regular file at `path`, refused past `limit` bytes (`what` names it in the
/// error, as `answer bytes`): the size is checked before reading, and the read stops one byte
/// past the cap for a file that grows meanwhile.
///
/// # Errors
/// [`Error::Io`] if the file cannot be opened or read; [`Error::InvalidArgument`] if it is not
/// a regular file (a FIFO, a device, a folder); [`Error::TooLarge`] past `limit`.
pub fn read_capped(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    if meta.len() > limit {
        return Err(too_large(what, limit, meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(what, limit, bytes.len() as u64));
    }
    Ok(bytes)
}

/// [`read_capped`] as UTF-8 text.
///
/// # Errors
/// As [`read_capped`]; [`Error::InvalidArgument`] if the file is not UTF-8.
pub fn read_text_capped(path: &Path, limit: u64, what: &str) -> Result<String> {
    String::from_utf8(read_capped(path, limit, what)?)
        .map_err(|e| Error::invalid_argument(format!("{} is not UTF-8: {e}", path.display())))
}

fn too_large(what: &str, limit: u64, found: u64) -> Error {
    Error::TooLarge {
        what: what.to_string(),
        limit,
        found,
    }
}

/// The bytes of a file at `path` whose first `head` bytes pass `check` before the rest is
/// read, so a file of the wrong kind costs one small read, whatever its size.
///
/// # Errors
/// As [`open_regular`]; whatever `check` says of the head.
pub(crate) fn read_checked_head(
    path: &Path,
    head: usize,
    check: impl FnOnce(&[u8]) -> Result<()>,
) -> Result<Vec<u8>> {
    let (mut file, meta) = open_regular(path)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(head as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    check(&bytes)?;
    bytes.reserve(
        usize::try_from(meta.len())
            .unwrap_or(0)
            .saturating_sub(bytes.len()),
    );
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// What a folder walk found when it opened a file it had listed.
pub(crate) enum Listed {
    /// The file's bytes and its modification time (Unix seconds), read from the handle.
    Read(Vec<u8>, Option<i64>),
    /// The path now leads outside the root (a link swapped in after the listing): not read.
    Outside(PathBuf),
}

/// Reads the file a folder walk listed at `path`. With `real_root` (the walk keeps to its
/// root), the file read must be the one the path names inside that root after the open: the
/// path's real location is checked to be under the root and, on Unix, to be the very file
/// opened (same device and inode), so a link or folder swapped in between the listing and the
/// read is caught on the handle, never read through.
///
/// # Errors
/// As [`open_regular`]; [`Error::Io`] if the file changed under the walk or a read fails.
pub(crate) fn read_listed(path: &Path, real_root: Option<&Path>) -> Result<Listed> {
    let (mut file, meta) = open_regular(path)?;
    if let Some(root) = real_root {
        let real = std::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
        if !real.starts_with(root) {
            return Ok(Listed::Outside(real));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let now = std::fs::metadata(&real).map_err(|e| Error::io(path, e))?;
            if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
                return Err(Error::io(
                    path,
                    std::io::Error::other("the file was replaced while it was being read"),
                ));
            }
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(Listed::Read(bytes, unix_seconds(&meta)))
}

/// A file's modification time in Unix seconds, if the platform gives one.
pub(crate) fn unix_seconds(meta: &Metadata) -> Option<i64> {
    let t = meta.modified().ok()?;
    Some(match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).ok()?,
        Err(e) => -i64::try_from(e.duration().as_secs()).ok()?,
    })
}

// Saving.

/// How old a temporary file of a save must be before a later save next to it removes it,
/// when no process holds its lock (a save holds the lock on its temporary file until the
/// rename): a few seconds, so a save that has just created its file is never raced.
#[cfg(feature = "fs")]
const STALE_TEMP_SECONDS: u64 = 2;

/// The most bytes of the target's name kept in a temporary file's name (a name of up to 255
/// bytes stays valid with the temporary suffix on every file system).
#[cfg(feature = "fs")]
const TEMP_NAME_BYTES: usize = 160;

/// Writes `bytes` to `path` atomically (see [`Index::save`] for the rules).
#[cfg(feature = "fs")]
pub(crate) fn save_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SAVES: AtomicU64 = AtomicU64::new(0);

    let target = resolve_links(path)?;
    let existing = match std::fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(path, e)),
    };
    if let Some(m) = &existing {
        if !m.is_file() {
            return Err(crate::front::file::not_regular(
                path,
                m,
                "refusing to replace it",
            ));
        }
        if m.permissions().readonly() {
            return Err(Error::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the file is read-only; refusing to replace it",
                ),
            ));
        }
        refuse_foreign(path, &target)?;
    }
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .ok_or_else(|| Error::invalid_argument(format!("{} is not a file path", path.display())))?
        .to_string_lossy()
        .into_owned();
    let mut keep = name.len().min(TEMP_NAME_BYTES);
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    let prefix = format!(".{}.tmp-", &name[..keep]);
    remove_stale_temps(dir, &prefix);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(
        "{prefix}{}-{}-{nanos}",
        std::process::id(),
        SAVES.fetch_add(1, Ordering::Relaxed)
    ));
    /// Removes the temporary file unless the rename happened.
    struct Guard<'a>(&'a Path, bool);
    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            if !self.1 {
                let _ = std::fs::remove_file(self.0);
            }
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| Error::io(path, e))?;
    let mut guard = Guard(&tmp, false);
    let write = || -> std::io::Result<()> {
        // Held until the rename: a later save removes the file only once nobody holds it.
        match file.lock() {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {}
            Err(e) => return Err(e),
        }
        file.write_all(bytes)?;
        if let Some(m) = &existing {
            file.set_permissions(m.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, &target)?;
        drop(file);
        Ok(())
    };
    write().map_err(|e| Error::io(path, e))?;
    guard.1 = true;
    Ok(())
}

/// Refuses to replace a file that holds something other than an index: a save replaces a
/// missing or empty file, or a wikidex blob of any version, never a page or a note given as
/// the output by mistake.
#[cfg(feature = "fs")]
fn refuse_foreign(path: &Path, target: &Path) -> Result<()> {
    use std::io::Read;
    let (file, _) = crate::front::file::open_regular(target)?;
    let mut head = Vec::with_capacity(crate::blob::MAGIC.len());
    file.take(crate::blob::MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    if head.is_empty() || head == crate::blob::MAGIC {
        return Ok(());
    }
    Err(Error::invalid_argument(format!(
        "{} exists and is not a wikidex index; refusing to replace it (remove it or choose \
         another output)",
        path.display()
    )))
}

/// `path` with symbolic links followed to the file they name (which need not exist yet).
#[cfg(feature = "fs")]
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut cur = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&cur).map_err(|e| Error::io(&cur, e))?;
                cur = match cur.parent() {
                    Some(parent) if link.is_relative() => parent.join(link),
                    _ => link,
                };
            }
            _ => return Ok(cur),
        }
    }
    Err(Error::io(
        path,
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// Removes the temporary files `prefix*` in `dir` that interrupted saves left: those more
/// than [`STALE_TEMP_SECONDS`] old whose lock no process holds (where the platform has no file
/// locks, those more than an hour old). Best effort.
#[cfg(feature = "fs")]
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        let age = meta
            .modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .map_or(0, |age| age.as_secs());
        if !meta.is_file() || age <= STALE_TEMP_SECONDS {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        let abandoned = match file.try_lock() {
            Ok(()) => true,
            Err(std::fs::TryLockError::WouldBlock) => false,
            Err(std::fs::TryLockError::Error(_)) => age > 3600,
        };
        if abandoned {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(feature = "fs")]
impl Index {
    /// Loads an index from a file. Only a regular file is read (a FIFO or a device is refused
    /// without blocking or reading it), and its header is checked before the rest is read.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::InvalidArgument`] for a path that is not a regular file; or as
    /// [`Index::from_bytes`].
    #[cfg(feature = "fs")]
    pub fn open(path: &Path) -> Result<Index> {
        let bytes = crate::front::file::read_checked_head(path, crate::blob::HEADER_LEN, |head| {
            crate::blob::check_header(head).map(|_| ())
        })?;
        Index::from_bytes(&bytes)
    }

    /// Saves the blob to `path` atomically: it is written to a temporary file in the same
    /// folder (a name unique to this call), flushed, then renamed over `path`, so readers see
    /// the old or the new index, never half of one.
    ///
    /// - The blob is decoded before anything is written: an index that would not load again
    ///   is never saved.
    /// - A read-only `path` is refused ([`Error::Io`], permission denied), not replaced.
    /// - A symbolic link at `path` is followed: the file it points to is replaced (atomically,
    ///   in its own folder) and the link stays. The replaced file keeps its permissions.
    /// - Only a missing or empty file, or a wikidex blob (of any version), is replaced: a FIFO,
    ///   a device, a folder or a file of other content is refused ([`Error::InvalidArgument`]
    ///   naming it).
    /// - Temporary files `.NAME.tmp-*` next to the target that a killed save left (no process
    ///   holds their lock) are removed.
    ///
    /// # Errors
    /// [`Error::Corrupt`] if the blob would not decode; [`Error::Io`] if the folder is not
    /// writable or `path` is read-only; [`Error::InvalidArgument`] if `path` is not a file a
    /// save replaces. `path` is then unchanged and no temporary file is left.
    #[cfg(feature = "fs")]
    pub fn save(&self, path: &Path) -> Result<()> {
        save_checked(path, &self.to_bytes()?)
    }

    /// Saves as [`Index::save`] does, dropping the index once its sections are encoded: the
    /// blob is laid out, and checked to load, without the index beside it, which is the peak
    /// of a large build's memory otherwise (`wikidex build` saves this way). The memory freed
    /// before (by the build that made the index), once the index is dropped and once its
    /// sections are laid out is given back to the system (glibc keeps it otherwise, and the
    /// large arrays made next are mapped on top of it).
    ///
    /// # Errors
    /// As [`Index::save`].
    #[cfg(feature = "fs")]
    pub fn save_into(self, path: &Path) -> Result<()> {
        use crate::data::memory::give_back;
        give_back();
        let parts = crate::blob::encode_parts(self.into_data())?;
        give_back();
        let blob = parts.assemble();
        give_back();
        save_checked(path, &blob)
    }
}

/// Writes `bytes` to `path` atomically once they are checked to load ([`crate::blob::check`]:
/// on the calling thread, keeping no page or vector). A save after a build (or a write)
/// reuses the memory the index it replaces, or the build's own, gave back. Threads would each
/// take fresh memory (glibc keeps an arena per thread), and a build of a million pages would
/// peak at 1.4 times the memory.
#[cfg(feature = "fs")]
fn save_checked(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::blob::check(bytes).map_err(|e| {
        Error::corrupt(format!(
            "refusing to save an index that would not load again: {e}"
        ))
    })?;
    crate::front::file::save_atomic(path, bytes)
}

/// An index file searched in parts: opening it reads only the blob's head, and each search
/// (or page record) reads from the open file the sections it needs ([`RangedIndex`]: the
/// dictionary shards and postings of its terms, then the pages of its hits), which stay loaded
/// for the next. Its answers are those of [`Index::open`]'s index; a first query of a large
/// index comes long before a whole load would finish (a million chunks: under a second,
/// against about 12 s). The file is read through the handle opened here, so a save that
/// replaces it meanwhile (by renaming, as [`Index::save`] does) leaves this reader on the blob
/// it opened.
///
/// ```no_run
/// # use wikidex::{file::RangedFile, SearchOptions};
/// let mut file = RangedFile::open("wiki.wdx".as_ref())?;
/// let results = file.search("revenue recognition", &SearchOptions::default())?;
/// # Ok::<(), wikidex::Error>(())
/// ```
#[cfg(feature = "fs")]
pub struct RangedFile {
    path: PathBuf,
    file: File,
    ranged: RangedIndex,
    /// The model that embeds queries for the semantic lane ([`RangedFile::set_model`]).
    model: Option<Arc<dyn Embedder>>,
}

#[cfg(feature = "fs")]
impl std::fmt::Debug for RangedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangedFile")
            .field("path", &self.path)
            .field("ranged", &self.ranged)
            .field("model", &self.model.as_ref().map(|m| m.model_id()))
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "fs")]
impl RangedFile {
    /// Opens the index file at `path` and reads its head. Only a regular file is read, as
    /// [`Index::open`] reads one.
    ///
    /// # Errors
    /// [`Error::Io`]; [`Error::InvalidArgument`] for a path that is not a regular file; as
    /// [`RangedIndex::open`]; [`Error::Corrupt`] for a file shorter or longer than its head
    /// says.
    pub fn open(path: &Path) -> Result<RangedFile> {
        let (file, meta) = open_regular(path)?;
        let mut prefix = Vec::with_capacity(crate::blob::HEADER_LEN);
        (&file)
            .take(crate::blob::HEADER_LEN as u64)
            .read_to_end(&mut prefix)
            .map_err(|e| Error::io(path, e))?;
        let head_end = RangedIndex::head_end(&prefix)?;
        if head_end > meta.len() {
            return Err(Error::corrupt(
                "truncated: the head ends past the last byte",
            ));
        }
        let ranged = RangedIndex::open(&read_at(&file, path, 0, head_end)?)?;
        if ranged.blob_len() != meta.len() {
            return Err(Error::corrupt(format!(
                "the file has {} bytes where its head describes {}",
                meta.len(),
                ranged.blob_len()
            )));
        }
        Ok(RangedFile {
            path: path.to_path_buf(),
            file,
            ranged,
            model: None,
        })
    }

    /// Sets the model that embeds queries for the semantic lane, as
    /// [`crate::Session::set_model`] does: a search of a blob with vectors then reads their
    /// section (and no other part a search of the other lanes would not read).
    ///
    /// # Errors
    /// [`Error::ModelMismatch`] when the blob's vectors are another model's.
    pub fn set_model(&mut self, model: Option<Arc<dyn Embedder>>) -> Result<()> {
        if let Some(m) = &model {
            self.ranged.check_model(m.as_ref())?;
        }
        self.model = model;
        Ok(())
    }

    /// Searches as [`Index::search`] does (with the model, if one is set: as a
    /// [`crate::Session`] holding it searches), reading the parts the search needs first.
    ///
    /// # Errors
    /// [`Error::Io`] if a read fails; [`Error::Corrupt`] for a part that is not what the head
    /// says; otherwise as [`Index::search`].
    pub fn search(&mut self, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
        // Each round of reads runs the search again: the model embeds the query once.
        let model = self.model.clone().map(Remembered::new);
        let model = model.as_ref().map(|m| m as &dyn Embedder);
        self.load(|r| r.search_with_model(query, opts, model))
    }

    /// The page's record, as [`Index::page_record`] gives it, reading its part first.
    ///
    /// # Errors
    /// As [`RangedFile::search`]; otherwise as [`Index::page_record`].
    pub fn page_record(&mut self, key: &str, scope: Option<&Scope>) -> Result<PageRecord> {
        self.load(|r| r.page_record(key, scope))
    }

    /// The chunk `id`, as [`Index::chunk`] gives it, reading its page's part (or the raw
    /// layer) first.
    ///
    /// # Errors
    /// As [`RangedFile::search`]; otherwise as [`Index::chunk`].
    pub fn chunk(&mut self, id: &str) -> Result<crate::Chunk> {
        self.load(|r| r.chunk(id))
    }

    /// Sets how the records this file's searches and pages return count offsets (default
    /// [`crate::OffsetUnit::Byte`]), as [`RangedIndex::set_offset_unit`] does.
    pub fn set_offset_unit(&mut self, unit: crate::OffsetUnit) {
        self.ranged.set_offset_unit(unit);
    }

    /// The index as loaded so far.
    pub fn index(&self) -> &RangedIndex {
        &self.ranged
    }

    /// Runs `op` on the index, reading and handing it the parts it asks for until it asks
    /// for none.
    fn load<T>(&mut self, op: impl Fn(&RangedIndex) -> Result<T>) -> Result<T> {
        loop {
            let ranges = match op(&self.ranged) {
                Err(Error::NotLoaded { ranges }) => ranges,
                other => return other,
            };
            let before = self.ranged.loaded_bytes();
            let parts = ranges
                .iter()
                .map(|&[start, end]| {
                    read_at(&self.file, &self.path, start, end).map(|b| (start, b))
                })
                .collect::<Result<Vec<_>>>()?;
            let parts: Vec<(u64, &[u8])> = parts.iter().map(|(s, b)| (*s, &b[..])).collect();
            self.ranged.supply_many(&parts)?;
            if self.ranged.loaded_bytes() == before {
                return Err(Error::corrupt(
                    "a search asked again for parts it was given: not an index this build reads",
                ));
            }
        }
    }
}

/// A model that remembers its last answer, so a search that runs again once the parts it
/// asked for are read embeds its query once.
#[cfg(feature = "fs")]
struct Remembered {
    model: Arc<dyn Embedder>,
    /// The texts last embedded, and their vectors.
    last: std::sync::Mutex<Option<Embedded>>,
}

/// Texts and the vectors a model gave them.
#[cfg(feature = "fs")]
type Embedded = (Vec<String>, Vec<Vec<f32>>);

#[cfg(feature = "fs")]
impl Remembered {
    fn new(model: Arc<dyn Embedder>) -> Remembered {
        Remembered {
            model,
            last: std::sync::Mutex::new(None),
        }
    }
}

#[cfg(feature = "fs")]
impl Embedder for Remembered {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }
    fn fingerprint(&self) -> &str {
        self.model.fingerprint()
    }
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn prompts(&self) -> &crate::Prompts {
        self.model.prompts()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((t, v)) = last.as_ref() {
            if t.iter().map(String::as_str).eq(texts.iter().copied()) {
                return Ok(v.clone());
            }
        }
        let v = self.model.embed(texts)?;
        *last = Some((texts.iter().map(|t| t.to_string()).collect(), v.clone()));
        Ok(v)
    }
}

/// Bytes `start..end` of `file` (at `path`, for the error).
#[cfg(feature = "fs")]
fn read_at(file: &File, path: &Path, start: u64, end: u64) -> Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let len = usize::try_from(end.saturating_sub(start))
        .map_err(|_| Error::corrupt("a part larger than memory"))?;
    let mut bytes = vec![0; len];
    let mut file = file;
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}
