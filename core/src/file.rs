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

use crate::error::{Error, Result};

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
