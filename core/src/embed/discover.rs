//! The default model: which folder a build embeds with when the caller names none. One rule
//! for every surface, written here; a surface only gathers the candidate folders it can see
//! (Python: the `wikidex.models` entry points of the installed model packages; Node: the
//! model packages `require.resolve` finds from the caller's folder and from the binding's;
//! the CLI: `models/` in the current folder or its checkout) and calls [`discover`].
//!
//! The rule, first match wins:
//! 1. the model the caller names (`--model DIR`, `model=`), which must load;
//! 2. else the folder in `$WIKIDEX_MODEL` ([`MODEL_ENV`]), which must load;
//! 3. else a usable candidate folder (one with `tokenizer.json` and its ONNX file), chosen by
//!    the wiki's languages ([`choose`]): when at least [`MULTILINGUAL_SHARE`] of the pages
//!    whose language is detected are not in English, multilingual-e5-small
//!    (`wikidex-model-e5-small`) if it is among them; else, or when it is not, the known
//!    packages in the order of [`MODEL_PACKAGES`] (all-MiniLM-L6-v2 first), then the others
//!    in the order given; a wiki that wanted the multilingual model and did not get it says
//!    which package to install ([`model_notice`]);
//! 4. else none: the index has no semantic lane, and the build says so once, with how to turn
//!    it on ([`semantic_off`]).
//!
//! A candidate is known by its manifest's `package`, or, for a folder without a manifest (the
//! CLI's `models/`, as `make models` writes it), by its name ([`MODEL_NAMES`]).
//!
//! A model package's folder holds a [`Manifest`] ([`MANIFEST_FILE`]): which ONNX file to run
//! and its fingerprint, checked when the model loads. A folder without one runs
//! [`MODEL_FILE`](super::MODEL_FILE) (`model.onnx`), as `make models` writes it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};
use crate::data::record::LanguageMix;

/// The environment variable that names a model folder for every surface.
pub const MODEL_ENV: &str = "WIKIDEX_MODEL";

/// The file in a model package's folder that says what the folder holds ([`Manifest`]).
pub const MANIFEST_FILE: &str = "wikidex-model.json";

/// The model packages the default discovery knows, in order of preference: when several are
/// installed, the first of these wins. Each is published as a wheel (PyPI) and an npm
/// package of the same name.
pub const MODEL_PACKAGES: [&str; 2] = ["wikidex-model-minilm", "wikidex-model-e5-small"];

/// The models of [`MODEL_PACKAGES`], in the same order: each package's folder name, and the
/// name of a folder without a manifest that holds the same model (`models/all-MiniLM-L6-v2`).
pub const MODEL_NAMES: [&str; 2] = ["all-MiniLM-L6-v2", "multilingual-e5-small"];

/// The share of a wiki's pages (of those whose language is detected) in other languages than
/// English from which the default model is the multilingual one ([`choose`]): 0.2, one page
/// in five.
///
/// Measured (`docs/guides/choosing-a-model.md`): English collections come out at 0% to 0.1%
/// (CACM 0.1%: 2 of its 1,723 records with enough prose, short abstracts full of names and
/// formulas, taken for French and Latin; Cranfield 0% of 1,398; the example wiki 0% of 39),
/// the seven-language check set (`tests/multilingual`) at 86%: every one of its 28 pages
/// detected in its own language. An English wiki with a handful of pages in another language (a translated
/// policy, a quote) stays below; a wiki where one page in five is in another language has
/// readers who will ask about them, and MiniLM cannot match a German page to anything (on the
/// check set its semantic lane answers a question across languages worse than chance).
pub const MULTILINGUAL_SHARE: f64 = 0.2;

/// The ONNX file a folder without a manifest runs (`make models` writes it).
const DEFAULT_ONNX: &str = "model.onnx";
/// The tokenizer every model folder holds.
const TOKENIZER: &str = "tokenizer.json";

/// What a model package's [`MANIFEST_FILE`] says about its folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The model's name, also the folder's (e.g. `all-MiniLM-L6-v2`).
    pub name: String,
    /// The package that installed it (e.g. `wikidex-model-minilm`).
    pub package: String,
    /// The package's version.
    pub version: String,
    /// The ONNX file to run, a file name in the folder (e.g. `model-int8.onnx`).
    pub onnx: String,
    /// The fingerprint an [`Embedder`](super::Embedder) gives that file (`blake3:` and 32
    /// hex digits), stored with an index's vectors; checked when the model loads.
    pub fingerprint: String,
    /// The model's licence (SPDX id).
    pub license: String,
    /// sha256 of each file of the folder, by path relative to it.
    #[serde(default)]
    pub sha256: std::collections::BTreeMap<String, String>,
}

impl Manifest {
    /// Reads `dir`'s manifest; `Ok(None)` when it has none.
    ///
    /// # Errors
    /// [`Error::Model`] when the file is there but is not a manifest, or names an ONNX file
    /// outside the folder.
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| Error::Model {
            detail: format!("{}: not a model manifest: {e}", path.display()),
        })?;
        let bare = Path::new(&manifest.onnx)
            .file_name()
            .is_some_and(|f| f == OsStr::new(&manifest.onnx));
        if !bare {
            return Err(Error::Model {
                detail: format!(
                    "{}: `onnx` must be a file name in the folder, not `{}`",
                    path.display(),
                    manifest.onnx
                ),
            });
        }
        Ok(Some(manifest))
    }
}

/// Where the default model came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelSource {
    /// Named by the caller.
    Explicit,
    /// `$WIKIDEX_MODEL`.
    Env,
    /// A candidate folder: an installed model package, or the CLI's `models/`.
    Installed,
}

impl ModelSource {
    /// `explicit`, `env` or `installed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelSource::Explicit => "explicit",
            ModelSource::Env => "env",
            ModelSource::Installed => "installed",
        }
    }
}

/// The model folder [`discover`] chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The folder (with `tokenizer.json`).
    pub dir: PathBuf,
    /// The ONNX file to run: the manifest's, else `model.onnx` in the folder.
    pub onnx: PathBuf,
    /// Where it came from.
    pub source: ModelSource,
    /// The folder's manifest, when it has one (a model package's folder does).
    pub manifest: Option<Manifest>,
}

impl Found {
    /// `dir` as found from `source`, with its manifest read.
    fn at(dir: PathBuf, source: ModelSource) -> Result<Found> {
        let manifest = Manifest::read(&dir)?;
        let onnx = dir.join(manifest.as_ref().map_or(DEFAULT_ONNX, |m| m.onnx.as_str()));
        Ok(Found {
            dir,
            onnx,
            source,
            manifest,
        })
    }

    /// Whether the folder holds what a model load reads.
    fn usable(&self) -> bool {
        self.onnx.is_file() && self.tokenizer().is_file()
    }

    /// The folder `dir`, named by the caller (`--model DIR`), with its manifest read: it must
    /// load ([`Found::load`] reports what it lacks).
    ///
    /// # Errors
    /// [`Error::Model`] for a broken manifest, as [`discover`].
    pub fn named(dir: &Path) -> Result<Found> {
        Found::at(dir.to_path_buf(), ModelSource::Explicit)
    }

    /// The folder's `tokenizer.json`.
    pub fn tokenizer(&self) -> PathBuf {
        self.dir.join(TOKENIZER)
    }

    /// The model's name: the manifest's, else the folder's.
    pub fn name(&self) -> String {
        match &self.manifest {
            Some(m) => m.name.clone(),
            None => self.dir.file_name().map_or_else(
                || self.dir.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
        }
    }

    /// Its position in [`MODEL_PACKAGES`]: by the manifest's package, else (a folder without
    /// one) by the folder's name in [`MODEL_NAMES`]; `None` for another model.
    fn known(&self) -> Option<usize> {
        match &self.manifest {
            Some(m) => MODEL_PACKAGES.iter().position(|p| *p == m.package),
            None => {
                let name = self.dir.file_name()?;
                MODEL_NAMES.iter().position(|n| name == OsStr::new(n))
            }
        }
    }

    /// Loads the model ([`OnnxEmbedder::from_files`](super::OnnxEmbedder::from_files) on
    /// [`Found::onnx`] and the folder's `tokenizer.json`), and checks the file against the
    /// manifest's fingerprint when there is one.
    ///
    /// # Errors
    /// As [`OnnxEmbedder::from_files`](super::OnnxEmbedder::from_files); [`Error::Model`]
    /// when the file is not the one the manifest describes (a damaged install).
    #[cfg(feature = "embed")]
    pub fn load(&self, options: super::OnnxOptions) -> Result<super::OnnxEmbedder> {
        use super::Embedder;
        let model = super::OnnxEmbedder::from_files(&self.onnx, &self.tokenizer(), options)?;
        match &self.manifest {
            Some(m) if !m.fingerprint.is_empty() && m.fingerprint != model.fingerprint() => {
                Err(Error::Model {
                    detail: format!(
                        "{} has fingerprint {}, but {} says {} (a damaged install? reinstall {})",
                        self.onnx.display(),
                        model.fingerprint(),
                        MANIFEST_FILE,
                        m.fingerprint,
                        m.package
                    ),
                })
            }
            _ => Ok(model),
        }
    }
}

/// The default model folder by the module's rule for a wiki whose languages are not known
/// (a search attaching a model, `wikidex embed`): `explicit`, else `env` (the value of
/// `$WIKIDEX_MODEL`; empty counts as unset), else the first usable of `candidates` (known
/// packages first, in [`MODEL_PACKAGES`] order; a folder given twice counts once), else
/// `None`. A build chooses by the wiki's languages: [`choose`].
///
/// An explicit or `$WIKIDEX_MODEL` folder is returned without looking inside it beyond its
/// manifest: loading it reports what is missing. A candidate that lacks its files or has a
/// broken manifest is passed over.
///
/// # Errors
/// [`Error::Model`] when the explicit or `$WIKIDEX_MODEL` folder has a broken manifest.
///
/// # Example
/// ```
/// # use std::path::{Path, PathBuf};
/// use wikidex::embed::{discover, ModelSource};
/// let found = discover(None, Some("/opt/models/minilm".as_ref()), &[])?.unwrap();
/// assert_eq!(found.source, ModelSource::Env);
/// assert_eq!(found.onnx, Path::new("/opt/models/minilm/model.onnx"));
/// assert_eq!(discover(None, None, &[PathBuf::from("/no/such/folder")])?, None);
/// # Ok::<(), wikidex::Error>(())
/// ```
pub fn discover(
    explicit: Option<&Path>,
    env: Option<&OsStr>,
    candidates: &[PathBuf],
) -> Result<Option<Found>> {
    if let Some(found) = named(explicit, env)? {
        return Ok(Some(found));
    }
    Ok(usable(candidates).into_iter().next())
}

/// The explicit folder, else `$WIKIDEX_MODEL`'s (empty counts as unset).
fn named(explicit: Option<&Path>, env: Option<&OsStr>) -> Result<Option<Found>> {
    if let Some(dir) = explicit {
        return Found::named(dir).map(Some);
    }
    if let Some(dir) = env.filter(|v| !v.is_empty()) {
        return Found::at(PathBuf::from(dir), ModelSource::Env).map(Some);
    }
    Ok(None)
}

/// The usable candidates, each folder once, the known packages first in [`MODEL_PACKAGES`]
/// order, then the others in the order given.
fn usable(candidates: &[PathBuf]) -> Vec<Found> {
    let mut usable: Vec<Found> = Vec::new();
    for dir in candidates {
        let Ok(found) = Found::at(dir.clone(), ModelSource::Installed) else {
            continue;
        };
        if !found.usable() {
            continue;
        }
        let same = |f: &Found| match (f.dir.canonicalize(), dir.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => f.dir == *dir,
        };
        if !usable.iter().any(same) {
            usable.push(found);
        }
    }
    // Stable: unknown packages keep the order they were given in, after the known ones.
    usable.sort_by_key(|f| f.known().unwrap_or(MODEL_PACKAGES.len()));
    usable
}

/// The default model for a wiki of languages `mix`, by the module's rule, and what its build
/// report says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The folder, or `None` when there is none to be had.
    pub found: Option<Found>,
    /// Which model and why ([`crate::BuildReport::model_reason`]); `None` without a model.
    pub reason: Option<String>,
    /// When the wiki wanted the multilingual model and it is not among the candidates: which
    /// package to install ([`model_notice`], [`crate::BuildReport::model_notice`]).
    pub notice: Option<String>,
    /// When no model was found: that the semantic lane is off and how to turn it on
    /// ([`semantic_off`], [`crate::BuildReport::semantic_off`]).
    pub off: Option<String>,
}

/// The default model for a wiki whose pages' languages are `mix`, by the module's rule
/// (`explicit`, else `env`, else by the languages among `candidates`), with the reason and
/// notes its build report gives in `surface`'s words. Looks at the folders, loads nothing:
/// [`Found::load`] does.
///
/// # Errors
/// As [`discover`]: [`Error::Model`] when the explicit or `$WIKIDEX_MODEL` folder has a
/// broken manifest.
///
/// # Example
/// ```
/// use wikidex::embed::{choose, Surface};
/// use wikidex::LanguageMix;
/// // A Russian wiki with no model installed: no model, and how to turn the lane on.
/// let russian = LanguageMix::count([Some("rus"), Some("rus"), Some("eng")]);
/// let chosen = choose(None, None, &[], &russian, Surface::Python)?;
/// assert!(chosen.found.is_none() && chosen.off.is_some());
/// # Ok::<(), wikidex::Error>(())
/// ```
pub fn choose(
    explicit: Option<&Path>,
    env: Option<&OsStr>,
    candidates: &[PathBuf],
    mix: &LanguageMix,
    surface: Surface,
) -> Result<Chosen> {
    if let Some(found) = named(explicit, env)? {
        let why = match found.source {
            ModelSource::Explicit => "the model given".to_string(),
            _ => format!("named by ${MODEL_ENV}"),
        };
        return Ok(Chosen {
            reason: Some(format!("{}: {why}", found.name())),
            found: Some(found),
            notice: None,
            off: None,
        });
    }
    let mut usable = usable(candidates);
    let other = mix.other_share();
    let multilingual = other >= MULTILINGUAL_SHARE;
    let share = format!(
        "{:.0}% of the pages whose language was detected are not in English ({})",
        other * 100.0,
        mix.describe()
    );
    let e5 = usable.iter().position(|f| f.known() == Some(1));
    let (found, why, notice) = match (multilingual, e5) {
        (true, Some(at)) => (Some(usable.swap_remove(at)), share, None),
        (true, None) => (
            usable.into_iter().next(),
            format!("{share}, but the multilingual model is not installed"),
            Some(model_notice(surface)),
        ),
        (false, _) => {
            let first = usable.into_iter().next();
            let not_minilm = match &first {
                Some(f) if f.known() != Some(0) => {
                    format!(", and {} is not installed", MODEL_NAMES[0])
                }
                _ => String::new(),
            };
            let why = format!(
                "{share}; under {:.0}% a wiki gets {}{not_minilm}",
                MULTILINGUAL_SHARE * 100.0,
                MODEL_NAMES[0]
            );
            (first, why, None)
        }
    };
    Ok(match found {
        Some(found) => Chosen {
            reason: Some(format!("{}: {why}", found.name())),
            found: Some(found),
            notice,
            off: None,
        },
        None => Chosen {
            found: None,
            reason: None,
            notice: None,
            off: Some(semantic_off(surface)),
        },
    })
}

/// What a build says when its wiki is largely in other languages than English and the
/// multilingual model is not installed: which package to install, in `surface`'s words.
///
/// # Example
/// ```
/// use wikidex::embed::{model_notice, Surface};
/// assert!(model_notice(Surface::Node).contains("npm install wikidex-model-e5-small"));
/// ```
pub fn model_notice(surface: Surface) -> String {
    let [_, e5] = MODEL_PACKAGES;
    let [_, e5_name] = MODEL_NAMES;
    let install = match surface {
        Surface::Cli => format!(
            "put {e5_name} in models/ (`make models` in a wikidex checkout) or pass --model DIR"
        ),
        Surface::Python => format!("`pip install {e5}`"),
        Surface::Node => format!("`npm install {e5}`"),
    };
    format!(
        "many pages are not in English: for a model that reads their languages ({e5_name}), \
         {install} and build again."
    )
}

/// The surface a build runs on, for the words of [`semantic_off`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Surface {
    /// The `wikidex` command.
    Cli,
    /// The Python package.
    Python,
    /// The Node package.
    Node,
}

/// What a build says once when it found no model: that the semantic lane is off, and how to
/// turn it on on `surface` (install a model package, set `$WIKIDEX_MODEL`, or name a model),
/// and how to build without a model and without this note.
///
/// # Example
/// ```
/// use wikidex::embed::{semantic_off, Surface};
/// assert!(semantic_off(Surface::Python).contains("pip install wikidex-model-minilm"));
/// ```
pub fn semantic_off(surface: Surface) -> String {
    let [minilm, e5] = MODEL_PACKAGES;
    let (install, name, off) = match surface {
        Surface::Cli => (
            "run it in a wikidex checkout after `make models`".to_string(),
            "pass --model DIR",
            "--no-embed",
        ),
        Surface::Python => (
            format!("`pip install {minilm}` (or {e5}, for many languages)"),
            "pass model=wikidex.Model(DIR)",
            "model=False",
        ),
        Surface::Node => (
            format!("`npm install {minilm}` (or {e5}, for many languages)"),
            "pass { model: await Model.load(DIR) }",
            "model: false",
        ),
    };
    format!(
        "no embedding model found, so the semantic lane is off. To turn it on, {install}, \
         set {MODEL_ENV} to a model folder, or {name}; {off} builds without a model and \
         without this note."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model folder in a fresh temporary folder: `tokenizer.json`, `onnx` (empty files),
    /// and a manifest naming `package` when given.
    fn folder(root: &Path, name: &str, onnx: &str, package: Option<&str>) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(TOKENIZER), "{}").unwrap();
        std::fs::write(dir.join(onnx), "").unwrap();
        if let Some(package) = package {
            let m = Manifest {
                name: name.into(),
                package: package.into(),
                version: "0.1.0".into(),
                onnx: onnx.into(),
                fingerprint: String::new(),
                license: "MIT".into(),
                sha256: Default::default(),
            };
            std::fs::write(dir.join(MANIFEST_FILE), serde_json::to_vec(&m).unwrap()).unwrap();
        }
        dir
    }

    fn tmp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("wikidex-discover-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn an_explicit_model_wins_over_the_environment_and_the_packages() {
        let root = tmp("explicit");
        let pkg = folder(&root, "pkg", "model-int8.onnx", Some(MODEL_PACKAGES[0]));
        let found = discover(Some(Path::new("/given")), Some("/env".as_ref()), &[pkg])
            .unwrap()
            .unwrap();
        assert_eq!(found.source, ModelSource::Explicit);
        assert_eq!(found.dir, Path::new("/given"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_environment_wins_over_the_packages_even_when_its_folder_is_missing() {
        let root = tmp("env");
        let pkg = folder(&root, "pkg", "model-int8.onnx", Some(MODEL_PACKAGES[0]));
        let found = discover(None, Some("/no/such/model".as_ref()), &[pkg])
            .unwrap()
            .unwrap();
        assert_eq!(found.source, ModelSource::Env);
        assert_eq!(found.onnx, Path::new("/no/such/model/model.onnx"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_empty_environment_variable_counts_as_unset() {
        let root = tmp("empty-env");
        let pkg = folder(&root, "pkg", "model-int8.onnx", Some(MODEL_PACKAGES[0]));
        let found = discover(None, Some("".as_ref()), std::slice::from_ref(&pkg))
            .unwrap()
            .unwrap();
        assert_eq!(found.source, ModelSource::Installed);
        assert_eq!(found.onnx, pkg.join("model-int8.onnx"));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_preferred_package_wins_whatever_the_order_of_the_candidates() {
        let root = tmp("order");
        let e5 = folder(&root, "e5", "model-int8.onnx", Some(MODEL_PACKAGES[1]));
        let minilm = folder(&root, "minilm", "model-int8.onnx", Some(MODEL_PACKAGES[0]));
        let other = folder(&root, "other", "model.onnx", None);
        let found = discover(None, None, &[other.clone(), e5.clone(), minilm.clone()])
            .unwrap()
            .unwrap();
        assert_eq!(found.dir, minilm);
        assert_eq!(found.manifest.unwrap().package, MODEL_PACKAGES[0]);
        let found = discover(None, None, &[other, e5.clone()]).unwrap().unwrap();
        assert_eq!(found.dir, e5);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn unknown_candidates_keep_their_order() {
        let root = tmp("unknown");
        let a = folder(&root, "a", "model.onnx", None);
        let b = folder(&root, "b", "model.onnx", Some("someone-elses-model"));
        let found = discover(None, None, &[b.clone(), a]).unwrap().unwrap();
        assert_eq!(found.dir, b);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_candidate_without_its_files_or_with_a_broken_manifest_is_passed_over() {
        let root = tmp("unusable");
        let no_onnx = folder(&root, "no-onnx", "model.onnx", None);
        std::fs::remove_file(no_onnx.join("model.onnx")).unwrap();
        let broken = folder(&root, "broken", "model.onnx", None);
        std::fs::write(broken.join(MANIFEST_FILE), "not json").unwrap();
        let escapes = folder(&root, "escapes", "model.onnx", Some(MODEL_PACKAGES[0]));
        let text = std::fs::read_to_string(escapes.join(MANIFEST_FILE)).unwrap();
        let text = text.replace("\"model.onnx\"", "\"../no-onnx/model.onnx\"");
        std::fs::write(escapes.join(MANIFEST_FILE), text).unwrap();
        assert_eq!(
            discover(None, None, &[no_onnx, broken.clone(), escapes]).unwrap(),
            None
        );
        // Named explicitly, the same broken folder is an error, not a silent fallback.
        let err = discover(Some(&broken), None, &[]).unwrap_err();
        assert_eq!(err.code(), "model");
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn nothing_found_is_none() {
        assert_eq!(discover(None, None, &[]).unwrap(), None);
    }

    #[test]
    fn the_note_says_how_to_turn_the_lane_on_in_each_surfaces_words() {
        let cli = semantic_off(Surface::Cli);
        assert!(cli.contains("--model DIR") && cli.contains("--no-embed"));
        let py = semantic_off(Surface::Python);
        assert!(py.contains("pip install wikidex-model-minilm") && py.contains("model=False"));
        let node = semantic_off(Surface::Node);
        assert!(node.contains("npm install wikidex-model-minilm") && node.contains("model: false"));
        for note in [cli, py, node] {
            assert!(note.contains("semantic lane is off") && note.contains(MODEL_ENV));
        }
    }
}
