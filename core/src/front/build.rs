//! The build plan, once for every front end: what to build from ([`Source`]), how
//! ([`BuildOptions`], the JSON every binding takes), with which model, on which previous index;
//! and the sync of a blob file with its folder ([`sync_file`]): which files changed, whether to
//! index every file, whether to write.
//!
//! ```
//! use wikidex::{BuildOptions, Session, Source};
//! let files = vec![("global/oncall.md".to_string(), b"Page the on-call engineer.".to_vec())];
//! let options: BuildOptions = wikidex::options::from_json("build options", Some(r#"{"strict": true}"#))?;
//! let session = Session::build(Source::Files(files), &options, None, &mut |_, _, _| {
//!     std::ops::ControlFlow::Continue(())
//! })?;
//! assert_eq!(session.build_report().unwrap().pages, 1);
//! # Ok::<(), wikidex::Error>(())
//! ```

use std::ops::ControlFlow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::data::config::Config;
use crate::data::error::Result;
use crate::data::record::{BuildStage, LanguageMix, SyncReport};
use crate::embed::{Embedder, Surface};
use crate::front::builder::IndexBuilder;
use crate::index::Index;
use crate::lane::semantic::VectorEncoding;

/// What an index is built from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Files as `(path, bytes)`, added in sorted path order whatever order they come in (paths
    /// under `raw/` are raw documents).
    Files(Vec<(String, Vec<u8>)>),
    /// A wiki folder ([`IndexBuilder::add_dir`]).
    #[cfg(feature = "fs")]
    Folder(std::path::PathBuf),
    /// These files of a wiki folder (paths relative to it, as [`crate::folder_files`] lists
    /// them): one machine's part of a folder built on several
    /// ([`IndexBuilder::add_dir_files`]). Merged, the parts give the index of the whole folder,
    /// modification times included.
    #[cfg(feature = "fs")]
    FolderFiles(std::path::PathBuf, Vec<String>),
    /// A BEIR collection's `corpus.jsonl` ([`IndexBuilder::add_beir_corpus`]).
    #[cfg(feature = "fs")]
    Beir(std::path::PathBuf),
    /// The pages and raw documents of these indexes, with the vectors they hold: shards, each
    /// built from part of the files, merged into the index of all of them
    /// ([`IndexBuilder::add_index`]).
    Indexes(Vec<Arc<Index>>),
}

/// How to build: the options every front end takes (JSON in the bindings, flags in the CLI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BuildOptions {
    /// The index's configuration (chunking, analyzer, BM25, fusion).
    pub config: Config,
    /// A broken page fails the build instead of being skipped and reported.
    pub strict: bool,
    /// How vectors are stored, when a model embeds the chunks.
    pub vectors: VectorEncoding,
    /// Raw documents from this folder too (beside the wiki's own `raw/`).
    pub raw: Option<std::path::PathBuf>,
    /// Follow links to files outside the folder ([`IndexBuilder::follow_links_outside_root`]).
    pub follow_outside_root: bool,
    /// Record each page file's modification time ([`IndexBuilder::file_times`]; default
    /// true).
    pub file_times: bool,
}

impl BuildOptions {
    /// The keys of the options' JSON, for a binding that takes them beside its own keys in one
    /// object (Node's `model`, `onProgress`, `signal`) and checks the whole object's keys.
    pub const KEYS: [&'static str; 6] = [
        "config",
        "strict",
        "vectors",
        "raw",
        "follow_outside_root",
        "file_times",
    ];
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            config: Config::default(),
            strict: false,
            vectors: VectorEncoding::F32,
            raw: None,
            follow_outside_root: false,
            file_times: true,
        }
    }
}

/// Which model a build embeds with ([`build`], [`crate::Session::build_with_model`]).
#[derive(Clone)]
#[non_exhaustive]
pub enum ModelChoice {
    /// This one.
    Given(Arc<dyn Embedder>),
    /// None, on purpose: no semantic lane, and nothing said about it.
    Off,
    /// The caller looked for the default model and found none: no semantic lane, and the
    /// report says so in `surface`'s words ([`crate::embed::semantic_off`]).
    Missing(Surface),
    /// The default model, chosen by the wiki's languages once the build has read its pages
    /// ([`crate::embed::choose()`]): `$WIKIDEX_MODEL`, else one of `candidates` (the model
    /// package folders the surface found installed: multilingual-e5-small for a wiki largely
    /// not in English, else all-MiniLM-L6-v2 first), loaded with `options`; else as
    /// [`ModelChoice::Missing`].
    #[cfg(feature = "embed")]
    Default {
        /// Model folders the surface found (a Python entry point's, a Node package's, the
        /// CLI's `models/`).
        candidates: Vec<std::path::PathBuf>,
        /// Whose words the notes use.
        surface: Surface,
        /// How to load the model chosen.
        options: crate::OnnxOptions,
    },
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelChoice::Given(m) => f.debug_tuple("Given").field(&m.model_id()).finish(),
            ModelChoice::Off => f.write_str("Off"),
            ModelChoice::Missing(s) => f.debug_tuple("Missing").field(s).finish(),
            #[cfg(feature = "embed")]
            ModelChoice::Default {
                candidates,
                surface,
                options,
            } => f
                .debug_struct("Default")
                .field("candidates", candidates)
                .field("surface", surface)
                .field("options", options)
                .finish(),
        }
    }
}

impl From<Option<Arc<dyn Embedder>>> for ModelChoice {
    fn from(model: Option<Arc<dyn Embedder>>) -> ModelChoice {
        model.map_or(ModelChoice::Off, ModelChoice::Given)
    }
}

/// The model a build embeds with, and what its report says about it.
struct Resolved {
    model: Option<Arc<dyn Embedder>>,
    reason: Option<String>,
    notice: Option<String>,
    off: Option<String>,
}

impl ModelChoice {
    /// The model for a wiki of languages `mix`, loaded, with the report's notes.
    #[cfg_attr(not(feature = "embed"), allow(unused_variables))]
    fn resolve(self, mix: &LanguageMix) -> Result<Resolved> {
        let none = Resolved {
            model: None,
            reason: None,
            notice: None,
            off: None,
        };
        match self {
            ModelChoice::Given(m) => Ok(Resolved {
                reason: Some(format!("{}: the model given", m.model_id())),
                model: Some(m),
                ..none
            }),
            ModelChoice::Off => Ok(none),
            ModelChoice::Missing(surface) => Ok(Resolved {
                off: Some(crate::embed::semantic_off(surface)),
                ..none
            }),
            #[cfg(feature = "embed")]
            ModelChoice::Default {
                candidates,
                surface,
                options,
            } => {
                let env = std::env::var_os(crate::embed::MODEL_ENV);
                let chosen = crate::embed::choose(None, env.as_deref(), &candidates, mix, surface)?;
                let model = match &chosen.found {
                    Some(found) => Some(Arc::new(found.load(options)?) as Arc<dyn Embedder>),
                    None => None,
                };
                Ok(Resolved {
                    model,
                    reason: chosen.reason,
                    notice: chosen.notice,
                    off: chosen.off,
                })
            }
        }
    }
}

/// Builds an index from `source` as `options` say, embedding its chunks with the model
/// `model` gives (the default model is chosen by the languages of the pages, once they are
/// read and before anything is embedded), on `previous` (the index this source gave last
/// time: only what changed is redone, see [`IndexBuilder::previous`]).
/// `progress(stage, done, total)` returns [`ControlFlow::Break`] to stop
/// ([`crate::Error::Cancelled`]).
///
/// # Errors
/// As [`IndexBuilder`]'s steps: a config out of range, a folder that cannot be read, a broken
/// page with `strict`, whatever the model reports, `cancelled`; for the default model, as
/// [`crate::embed::choose()`] and [`crate::embed::Found::load`].
pub fn build(
    source: Source,
    options: &BuildOptions,
    model: ModelChoice,
    previous: Option<&Index>,
    progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
) -> Result<(Index, SyncReport)> {
    build_chosen(source, options, model, previous, progress).map(|(i, r, _)| (i, r))
}

/// A build's index, report, and the model that embedded its chunks.
type Built = (Index, SyncReport, Option<Arc<dyn Embedder>>);

/// [`build`], and the model that embedded the chunks.
pub(crate) fn build_chosen(
    source: Source,
    options: &BuildOptions,
    model: ModelChoice,
    previous: Option<&Index>,
    progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
) -> Result<Built> {
    let mut builder = builder_for(source, options, previous)?;
    let chosen = model.resolve(builder.languages())?;
    if let Some(m) = &chosen.model {
        builder.embedder(Arc::clone(m));
    }
    let (index, mut report) = builder.sync_with_progress(progress)?;
    report.build.model_reason = chosen.reason;
    report.build.model_notice = chosen.notice;
    report.build.semantic_off = chosen.off;
    Ok((index, report, chosen.model))
}

/// A builder with `options`, on `previous`, holding the files of `source` (and of `options.raw`).
fn builder_for<'p>(
    source: Source,
    options: &BuildOptions,
    previous: Option<&'p Index>,
) -> Result<IndexBuilder<'p>> {
    let mut builder = IndexBuilder::new(options.config.clone())?;
    builder.strict(options.strict);
    builder.follow_links_outside_root(options.follow_outside_root);
    builder.file_times(options.file_times);
    builder.vector_encoding(options.vectors);
    if let Some(p) = previous {
        builder.previous(p);
    }
    #[cfg(feature = "fs")]
    if let Some(raw) = &options.raw {
        builder.add_raw_dir(raw)?;
    }
    #[cfg(not(feature = "fs"))]
    if options.raw.is_some() {
        return Err(crate::Error::invalid_argument(
            "`raw` reads a folder: this build has no file system",
        ));
    }
    match source {
        Source::Files(files) => builder.add_files(files)?,
        #[cfg(feature = "fs")]
        Source::Folder(dir) => builder.add_dir(&dir)?,
        #[cfg(feature = "fs")]
        Source::FolderFiles(dir, files) => builder.add_dir_files(&dir, &files)?,
        #[cfg(feature = "fs")]
        Source::Beir(corpus) => builder.add_beir_corpus(&corpus)?,
        Source::Indexes(shards) => {
            for shard in &shards {
                builder.add_index(shard)?;
            }
        }
    }
    Ok(builder)
}

/// What a build of `source` with `options` decides from all its pages, and a sharded build
/// therefore decides once, for every shard (each shard alone sees only its pages' languages):
/// the analysis language ([`WikiChoices::language`]) and, with `candidates`, the default
/// model ([`ModelChoice::Default`]): the one `$WIKIDEX_MODEL` names, else the one of
/// `candidates` chosen by the languages of all the pages ([`crate::embed::choose()`]).
///
/// # Errors
/// As [`build`] reading `source`; as [`crate::embed::choose()`].
pub fn wiki_choices(
    source: Source,
    options: &BuildOptions,
    candidates: Option<&[std::path::PathBuf]>,
    surface: Surface,
) -> Result<WikiChoices> {
    let mut builder = builder_for(source, options, None)?;
    let language = (options.config.language)
        .unwrap_or_else(|| crate::Language::for_mix(builder.languages()).0);
    let model = match candidates {
        Some(candidates) => {
            let env = std::env::var_os(crate::embed::MODEL_ENV);
            crate::embed::choose(
                None,
                env.as_deref(),
                candidates,
                builder.languages(),
                surface,
            )?
            .found
        }
        None => None,
    };
    Ok(WikiChoices { language, model })
}

/// What [`wiki_choices`] decides for a whole wiki.
#[derive(Debug, Clone)]
pub struct WikiChoices {
    /// The analysis language: the configuration's, else the one the pages' languages choose
    /// ([`crate::Language::for_mix`]). Shards searched together ([`crate::ShardedIndex`]) must
    /// all analyze in it: give it to each shard's build as `config.language`.
    pub language: crate::Language,
    /// The default model, when the candidates were asked and one is usable.
    pub model: Option<crate::embed::Found>,
}

/// What [`sync_file`] did: what changed since the blob, whether every file was indexed, and
/// whether the blob was written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRecord {
    /// Why every file was indexed (no blob yet), if so.
    pub full: Option<String>,
    /// Whether the blob was written (not when the folder is as the blob has it).
    pub written: bool,
    /// What changed since the blob.
    #[serde(flatten)]
    pub report: SyncReport,
}

/// Brings the blob at `blob` up to date with the wiki folder `dir` (`wikidex sync`, `mcp
/// --index`, `Index.sync` in the bindings): builds on the blob when there is one, indexing only
/// the files that changed, else indexes every file; writes the blob when anything changed (a
/// file, the embeddings). The blob's configuration is kept; `options.config` and
/// `options.strict` serve only a first build.
///
/// `model` embeds new chunks. A blob with embeddings needs it (the one that made them, or
/// another: then every chunk is embedded again) unless `drop_vectors` is set, which writes the
/// index without embeddings.
///
/// # Errors
/// [`crate::Error::InvalidArgument`] when something other than a blob this build reads is at
/// `blob` (a page, a note, a newer format: it is never replaced);
/// [`crate::Error::NoEmbedder`] for a blob with embeddings, no model and no `drop_vectors`;
/// otherwise as [`build`] and [`Index::save`].
#[cfg(feature = "fs")]
pub fn sync_file(
    dir: &std::path::Path,
    blob: &std::path::Path,
    options: &BuildOptions,
    model: Option<Arc<dyn Embedder>>,
    drop_vectors: bool,
    progress: &mut dyn FnMut(BuildStage, usize, usize) -> ControlFlow<()>,
) -> Result<(Index, SyncRecord)> {
    use crate::Error;
    // A missing blob means a full build. Anything else at that path must be a blob this
    // build reads: a page, a note, a device or a blob of a newer format is never replaced.
    let (previous, full) = match std::fs::symlink_metadata(blob) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            (None, Some(format!("no index at {} yet", blob.display())))
        }
        _ => match Index::open(blob) {
            Ok(index) => (Some(index), None),
            Err(e @ (Error::Io { .. } | Error::InvalidArgument { .. })) => return Err(e),
            Err(e) => {
                return Err(Error::InvalidArgument {
                    detail: format!(
                        "{} is not an index this build can read ({e}); refusing to replace \
                         it: remove it, or write the index elsewhere",
                        blob.display()
                    ),
                })
            }
        },
    };
    if let (Some(v), None, false) = (
        previous.as_ref().and_then(Index::vectors),
        &model,
        drop_vectors,
    ) {
        return Err(Error::NoEmbedder {
            detail: format!(
                "{} holds embeddings of {}: give that model, or drop the embeddings",
                blob.display(),
                v.model_id
            ),
        });
    }
    let options = BuildOptions {
        config: previous
            .as_ref()
            .map_or_else(|| options.config.clone(), |p| p.config().clone()),
        strict: previous.is_none() && options.strict,
        ..options.clone()
    };
    let (index, report) = build(
        Source::Folder(dir.to_path_buf()),
        &options,
        model.into(),
        previous.as_ref(),
        progress,
    )?;
    let vectors_kept = match (previous.as_ref().and_then(Index::vectors), index.vectors()) {
        (Some(old), Some(new)) => old.fingerprint == new.fingerprint,
        (None, None) => true,
        _ => false,
    };
    // Nothing to write when the folder is as the blob has it.
    let written = full.is_some() || report.has_changes() || report.embedded > 0 || !vectors_kept;
    if written {
        index.save(blob)?;
    }
    let record = SyncRecord {
        full,
        written,
        report,
    };
    Ok((index, record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_the_fields() {
        let json = serde_json::to_value(BuildOptions::default()).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut listed = BuildOptions::KEYS.to_vec();
        keys.sort_unstable();
        listed.sort_unstable();
        assert_eq!(keys, listed);
    }
}
