//! Finding and loading the embedding model for `build`, `search`, `eval` and `embed`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use wikidex::embed::{discover, semantic_off, Found, Surface, MODEL_ENV, MODEL_NAMES};
use wikidex::{Embedder, Error, ModelChoice, OnnxEmbedder, OnnxOptions, Session};

#[derive(Args, Clone, Default)]
pub struct ModelArgs {
    /// Folder of an ONNX sentence model and its tokenizer.json. Default: $WIKIDEX_MODEL, else
    /// by the wiki's languages, models/multilingual-e5-small for a wiki where one page in five
    /// or more is not in English, else models/all-MiniLM-L6-v2, in the current folder (a
    /// development build also looks in its checkout), when present (the rule of
    /// wikidex::embed::choose).
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// The ONNX file to run, e.g. model-int8.onnx (a bare name is looked up in the model
    /// folder). Default: the one the folder's wikidex-model.json names, else model.onnx.
    #[arg(long, value_name = "FILE")]
    pub onnx: Option<PathBuf>,
    /// Texts per model call (1..=1024).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub batch_size: u32,
    /// Threads for the model's matrix products (default: 2, or 1 on a single core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,
    /// Longest input in tokens (default: the model's own, 256 for MiniLM).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=8192))]
    pub max_length: Option<u32>,
}

impl ModelArgs {
    /// Whether the user named a model (then it must load).
    pub(crate) fn explicit(&self) -> bool {
        self.model.is_some()
            || self
                .onnx
                .as_ref()
                .is_some_and(|f| f.components().count() > 1)
    }

    /// The model folder by the core's rule (`wikidex::embed::discover`): --model, else
    /// $WIKIDEX_MODEL, else the first of the CLI's candidates that holds a model.
    pub(crate) fn found(&self) -> Result<Option<Found>, Error> {
        let env = std::env::var_os(MODEL_ENV);
        discover(self.model.as_deref(), env.as_deref(), &candidates())
    }

    /// For an index whose vectors are from model `stored` (`multilingual-e5-small`,
    /// `all-MiniLM-L6-v2/model-int8`): its folder under models/ in one of [`roots`], when no folder was named (--model, $WIKIDEX_MODEL) and it is there.
    fn stored_dir(&self, stored: &str) -> Option<PathBuf> {
        if self.model.is_some() || std::env::var_os(MODEL_ENV).is_some_and(|v| !v.is_empty()) {
            return None;
        }
        let name = stored
            .split('/')
            .next()
            .filter(|n| !n.is_empty() && *n != "." && *n != ".." && !n.contains('\\'))?;
        roots()
            .map(|root| root.join("models").join(name))
            .find(|d| d.join("tokenizer.json").is_file())
    }

    /// The ONNX file to load from the folder found: --onnx (a bare name in the folder), else
    /// the folder's own.
    fn file(&self, found: &Found) -> PathBuf {
        match &self.onnx {
            Some(f) if f.components().count() > 1 || f.is_absolute() => f.clone(),
            Some(f) => found.dir.join(f),
            None => found.onnx.clone(),
        }
    }

    fn options(&self) -> OnnxOptions {
        let mut o = OnnxOptions {
            batch_size: self.batch_size as usize,
            max_length: self.max_length.map(|n| n as usize),
            ..OnnxOptions::default()
        };
        if let Some(t) = self.threads {
            o.threads = t as usize;
        }
        o
    }

    fn load_file(&self, dir: &Path, file: &Path) -> Result<OnnxEmbedder, Error> {
        OnnxEmbedder::from_files(file, &dir.join("tokenizer.json"), self.options())
    }

    /// Loads the model found (checked against its manifest's fingerprint when it has one and
    /// --onnx does not name another file).
    fn load_found(&self, found: &Found) -> Result<OnnxEmbedder, Error> {
        match &self.onnx {
            None => found.load(self.options()),
            Some(_) => self.load_file(&found.dir, &self.file(found)),
        }
    }

    /// Loads the model; an error when none is given or found.
    pub fn load(&self) -> Result<OnnxEmbedder, Error> {
        let found = self.found()?.ok_or_else(|| Error::InvalidArgument {
            detail: format!(
                "no embedding model: pass --model DIR, set {MODEL_ENV}, or run `make models` \
                 to fetch models/{}",
                MODEL_NAMES[0]
            ),
        })?;
        self.load_found(&found)
    }

    /// For `build`, `eval` and `mcp`: the model given (which must load), else the core's
    /// default model, chosen by the wiki's languages once the build has read its pages
    /// ([`wikidex::embed::choose`]) among the CLI's candidates, loaded with these options.
    /// With `--onnx FILE` (a file of the default folder) and no `--model`, the default folder
    /// by [`ModelArgs::found`] (the languages are not asked), as [`ModelArgs::load_default`].
    pub fn load_for_build(&self, quiet: bool) -> Result<ModelChoice, Error> {
        if self.explicit() || self.onnx.is_some() {
            return self.load_default(quiet);
        }
        Ok(ModelChoice::Default {
            candidates: candidates(),
            surface: Surface::Cli,
            options: self.options(),
        })
    }

    /// For `sync` (whose model must be loaded before the folder is read): the model given,
    /// else the first default folder found ([`wikidex::embed::discover`]). When there is
    /// none: [`ModelChoice::Missing`], and the core's note (the semantic lane is off, how to
    /// turn it on) on stderr unless `quiet`.
    pub fn load_default(&self, quiet: bool) -> Result<ModelChoice, Error> {
        if self.explicit() {
            return Ok(ModelChoice::Given(Arc::new(self.load()?)));
        }
        match self.found()? {
            Some(found) => Ok(ModelChoice::Given(Arc::new(self.load_found(&found)?))),
            None => {
                if !quiet {
                    eprintln!("note: {}", semantic_off(Surface::Cli));
                }
                Ok(ModelChoice::Missing(Surface::Cli))
            }
        }
    }

    /// For `search`: the model the index's vectors were made with (`stored`: their model id;
    /// `None`: no vectors, no model), which `check` takes. A model named on the command line
    /// must pass (else its error, `model_mismatch`); else the folder named by the stored
    /// model id under models/ (e.g. models/multilingual-e5-small), else the default folder
    /// is used when it holds the same model. When none can run the lane: no model, and a note
    /// for the user (the lane then reports itself skipped).
    pub fn for_search(
        &self,
        stored: Option<&str>,
        check: impl Fn(&dyn Embedder) -> Result<(), Error>,
    ) -> Result<SearchModel, Error> {
        let Some(stored) = stored else {
            return Ok((None, None));
        };
        if self.explicit() {
            let model = self.load()?;
            check(&model)?;
            return Ok((Some(Arc::new(model)), None));
        }
        let dir = match self.stored_dir(stored) {
            Some(dir) => Some(dir),
            None => self.found()?.map(|f| f.dir),
        };
        let Some(dir) = dir else {
            return Ok((
                None,
                Some(format!(
                    "the index's vectors are from {stored}; pass --model DIR to embed the query"
                )),
            ));
        };
        // `all-MiniLM-L6-v2/model-int8` was made from `model-int8.onnx` in that folder.
        let file = match &self.onnx {
            None => wikidex::embed::model_file_for_id(&dir, stored),
            Some(f) if f.components().count() > 1 || f.is_absolute() => f.clone(),
            Some(f) => dir.join(f),
        };
        if !file.is_file() {
            return Ok((
                None,
                Some(format!(
                    "the index's vectors are from {stored}, not found in {}; pass --model DIR",
                    dir.display()
                )),
            ));
        }
        let model = self.load_file(&dir, &file)?;
        match check(&model) {
            Ok(()) => Ok((Some(Arc::new(model)), None)),
            Err(e @ Error::ModelMismatch { .. }) => Ok((None, Some(e.to_string()))),
            Err(e) => Err(e),
        }
    }

    /// [`ModelArgs::for_search`] for a session: attaches the model, and returns the note.
    pub fn attach_for_search(&self, session: &Session) -> Result<Option<String>, Error> {
        let index = session.index();
        let stored = index.vectors().map(|v| v.model_id.as_str());
        let (model, note) = self.for_search(stored, |m| index.check_model(m))?;
        session.set_model(model)?;
        Ok(note)
    }
}

/// What `search` runs the semantic lane with ([`ModelArgs::for_search`]): the model, and a
/// note for the user when there is none to run.
pub type SearchModel = (Option<Arc<dyn Embedder>>, Option<String>);

/// Where the CLI looks for `models/`: the current folder, then, in a development build (the
/// tests, `make site`), the checkout it was built from. A release binary is shipped: it knows
/// no checkout, and finds a model by `--model`, `$WIKIDEX_MODEL` or the current folder.
fn roots() -> impl Iterator<Item = PathBuf> {
    #[cfg(debug_assertions)]
    let checkout = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    #[cfg(not(debug_assertions))]
    let checkout = None;
    std::iter::once(PathBuf::from(".")).chain(checkout)
}

/// The CLI's candidate model folders for the core's rule: models/all-MiniLM-L6-v2 and
/// models/multilingual-e5-small ([`MODEL_NAMES`]) under each of [`roots`].
fn candidates() -> Vec<PathBuf> {
    roots()
        .flat_map(|root| MODEL_NAMES.map(|name| root.join("models").join(name)))
        .collect()
}
