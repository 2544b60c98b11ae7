//! Folder walks: the files of a wiki folder (or of a raw documents folder) in a stable order,
//! each checked again on the handle that is read, and what the walk left out (unreadable, or
//! linked from outside the root); [`folder_stamp`], what changed in a folder at a glance.
#![cfg(feature = "fs")]

use std::path::{Path, PathBuf};

use crate::data::error::{Error, Result};
use crate::text::{page, raw};

/// What a folder walk found: the files to read, and what it left out.
pub(crate) struct Listing {
    pub(crate) files: Vec<(String, PathBuf)>,
    pub(crate) skipped: Vec<Unlisted>,
    /// The root's real path, when the files read must be inside it (links outside the root
    /// are not followed): each file is checked again when it is opened.
    pub(crate) keep_within: Option<PathBuf>,
}

/// An entry a folder walk did not list.
pub(crate) enum Unlisted {
    /// A folder (or an entry in it) that could not be read.
    Unreadable { rel: String, error: Error },
    /// A symbolic link whose real path is outside the root.
    OutsideRoot { rel: String, target: PathBuf },
}

/// A fingerprint of what [`crate::IndexBuilder::add_dir`] would read under `root` (and
/// [`crate::IndexBuilder::add_raw_dir`] under `raw`): every listed file's path, size and
/// modification time, and the entries the walk left out. It changes when a file is added,
/// removed, renamed or written (as finely as the file system keeps times), and costs one
/// `stat` per file, so a watcher polls it and rebuilds only when it moves.
///
/// # Errors
/// [`Error::Io`] if `root` (or `raw`) cannot be read.
pub fn folder_stamp(
    root: &Path,
    raw: Option<&Path>,
    follow_outside_root: bool,
) -> Result<[u8; 32]> {
    let mut h = blake3::Hasher::new();
    let mut listings = vec![wiki_files(root, follow_outside_root)?];
    if let Some(raw) = raw {
        listings.push(files_under(raw, &|_| true, follow_outside_root)?);
    }
    for listing in listings {
        for (rel, full) in &listing.files {
            h.update(rel.as_bytes());
            h.update(&[0]);
            match std::fs::metadata(full) {
                Ok(m) => {
                    h.update(&m.len().to_le_bytes());
                    let since = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .unwrap_or_default();
                    h.update(&since.as_nanos().to_le_bytes());
                }
                Err(_) => {
                    h.update(b"unreadable");
                }
            }
        }
        for s in &listing.skipped {
            h.update(b"skipped:");
            h.update(s.rel().as_bytes());
            h.update(&[0]);
        }
        h.update(b"\n");
    }
    Ok(*h.finalize().as_bytes())
}

/// The files [`crate::IndexBuilder::add_dir`] reads under `root`: paths relative to it
/// (`/`-separated), sorted. A build on several machines deals them out, each machine building
/// its part of the folder ([`crate::Source::FolderFiles`]); the entries the walk leaves out
/// (unreadable folders, links outside the root unless `follow_outside_root`) are not listed.
///
/// # Errors
/// [`Error::Io`] if `root` cannot be read; [`Error::InvalidArgument`] if it is not a folder.
pub fn folder_files(root: &Path, follow_outside_root: bool) -> Result<Vec<String>> {
    let listing = wiki_files(root, follow_outside_root)?;
    Ok(listing.files.into_iter().map(|(rel, _)| rel).collect())
}

/// Markdown files (and raw documents) under `root`, as (relative `/` path, full path), sorted
/// by relative path.
pub(crate) fn wiki_files(root: &Path, follow_outside_root: bool) -> Result<Listing> {
    files_under(
        root,
        &|rel| page::is_markdown_path(rel) || raw::is_raw_path(rel),
        follow_outside_root,
    )
}

/// Files under `root` whose relative path `keep` accepts, sorted by relative path. Folders
/// that cannot be read are reported, not fatal (only `root` itself must be readable).
/// Symbolic links to folders are not followed; a link to a file is listed only if its real
/// path is inside `root`'s real path, or `follow_outside_root` is set.
pub(crate) fn files_under(
    root: &Path,
    keep: &dyn Fn(&str) -> bool,
    follow_outside_root: bool,
) -> Result<Listing> {
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    if !meta.is_dir() {
        return Err(Error::invalid_argument(format!(
            "{} is not a folder",
            root.display()
        )));
    }
    let real_root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    let mut out = Listing {
        files: Vec::new(),
        skipped: Vec::new(),
        keep_within: (!follow_outside_root).then(|| real_root.clone()),
    };
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if rel.is_empty() => return Err(Error::io(&dir, e)),
            Err(e) => {
                out.skipped.push(Unlisted::Unreadable {
                    rel,
                    error: Error::io(&dir, e),
                });
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    out.skipped.push(Unlisted::Unreadable {
                        rel: rel.clone(),
                        error: Error::io(&dir, e),
                    });
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let ft = match entry.file_type() {
                Ok(ft) => ft,
                Err(e) => {
                    out.skipped.push(Unlisted::Unreadable {
                        rel: rel_path,
                        error: Error::io(entry.path(), e),
                    });
                    continue;
                }
            };
            if ft.is_dir() {
                stack.push((entry.path(), rel_path));
                continue;
            }
            if !(ft.is_file() || ft.is_symlink()) || !keep(&rel_path) || !entry.path().is_file() {
                continue;
            }
            if ft.is_symlink() && !follow_outside_root {
                match std::fs::canonicalize(entry.path()) {
                    Ok(real) if real.starts_with(&real_root) => {}
                    Ok(real) => {
                        out.skipped.push(Unlisted::OutsideRoot {
                            rel: rel_path,
                            target: real,
                        });
                        continue;
                    }
                    Err(e) => {
                        out.skipped.push(Unlisted::Unreadable {
                            rel: rel_path,
                            error: Error::io(entry.path(), e),
                        });
                        continue;
                    }
                }
            }
            out.files.push((rel_path, entry.path()));
        }
    }
    crate::data::sort::sort(&mut out.files);
    crate::data::sort::sort_by(&mut out.skipped, |a, b| a.rel().cmp(b.rel()));
    Ok(out)
}

impl Unlisted {
    fn rel(&self) -> &str {
        match self {
            Unlisted::Unreadable { rel, .. } | Unlisted::OutsideRoot { rel, .. } => rel,
        }
    }
}
