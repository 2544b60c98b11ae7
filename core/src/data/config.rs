//! [`Config`]: the whole configuration of an index, and the plain settings it is made of
//! (language, chunk sizes, BM25 parameters, lanes and fusion weights). Plain data, stored in
//! the blob; the modules that use each setting re-export it (`analyze::Language`,
//! `chunk::ChunkConfig`, `lane::lexical::Bm25Params`, `lane::Lane`, `fusion::FusionConfig`).

use serde::{Deserialize, Serialize};

use crate::data::error::{show_f32, Error, Result};
use crate::data::record::{language_name, LanguageMix};

/// The whole configuration of an index; stored in the blob, so a loaded index searches the way
/// it was built. In JSON (bindings, vector files) every field and sub-field may be left out
/// and takes its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Chunk sizes.
    pub chunk: ChunkConfig,
    /// Analysis language (stemmer and stopwords). `None` (the default; `null` or left out in
    /// JSON): a build takes the wiki's main language when the analyzer stems it, else English
    /// ([`Language::for_mix`]), and stores the one it took; [`Config::language()`] reads it.
    pub language: Option<Language>,
    /// BM25 parameters of the lexical lane.
    pub bm25: Bm25Params,
    /// RRF constant and lane weights.
    pub fusion: FusionConfig,
    /// Longest query, in characters (default 1,000); longer queries are cut and the result says
    /// so.
    pub max_query_chars: u32,
    /// Store where each term occurs in each chunk (default true), so that quoted phrases
    /// (`"net revenue"`) rank the hits that hold them first. `false` makes the blob smaller
    /// (see `docs/reference/blob-format.md` for the measured cost) and searches a
    /// quoted phrase as its words, saying so ([`crate::lane::phrase::NO_POSITIONS`]).
    pub positions: bool,
    /// How a page's key comes from its path: from the file name (`wiki/global/revenue.md` is
    /// `revenue`: a wiki, the default) or from the whole path (`guide/intro.md` is
    /// `guide.intro`: a docs folder, where `index.md` is in every folder). See [`Keys`].
    pub keys: Keys,
}

/// How a page's key and scope come from its path ([`Config::keys`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keys {
    /// A wiki: the key is the file name without its extension, normalized (`revenue`);
    /// `user/<name>/` folders are user scopes and `raw/` holds raw documents.
    #[default]
    FileName,
    /// A docs folder: the key is the whole path without the extension, its folders joined by
    /// `.` (`guide/intro.md` is `guide.intro`), normalized; every Markdown file is a global
    /// page, whatever folder it is in (`user/`, `raw/` are folders like any other).
    Path,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            chunk: ChunkConfig::default(),
            language: None,
            bm25: Bm25Params::default(),
            fusion: FusionConfig::default(),
            max_query_chars: 1000,
            positions: true,
            keys: Keys::FileName,
        }
    }
}

impl Config {
    /// The analysis language: the one set, else English (a build sets it: see
    /// [`Config::language`](field@Config::language)).
    pub fn language(&self) -> Language {
        self.language.unwrap_or(Language::English)
    }

    /// Checks that this build has the language's stemmer.
    ///
    /// # Errors
    /// [`Error::UnsupportedLanguage`] when it does not (see the core's `stem-*` features).
    pub fn check_language(&self) -> Result<()> {
        if self.language().available() {
            return Ok(());
        }
        Err(Error::UnsupportedLanguage {
            language: self.language().name().to_string(),
            available: Language::ALL
                .into_iter()
                .filter(|l| l.available())
                .map(|l| l.name().to_string())
                .collect(),
        })
    }

    /// Checks a configuration read from a blob: [`Config::check_language`], then every
    /// value's range, any failure of which means the blob is corrupt.
    ///
    /// # Errors
    /// [`Error::UnsupportedLanguage`], or [`Error::Corrupt`] naming the value out of range.
    pub(crate) fn validate_stored(&self) -> Result<()> {
        self.check_language()?;
        self.validate()
            .map_err(|e| Error::corrupt(format!("stored configuration: {e}")))
    }

    /// Checks every value's documented range and the language (see
    /// [`Config::check_language`]).
    ///
    /// # Errors
    /// [`Error::UnsupportedLanguage`], or [`Error::InvalidArgument`] naming the first value
    /// out of range.
    pub fn validate(&self) -> Result<()> {
        self.check_language()?;
        ChunkConfig::validate(&self.chunk)?;
        self.bm25.validate()?;
        self.fusion.validate()?;
        if self.max_query_chars == 0 {
            return Err(Error::invalid_argument(
                "max_query_chars must be at least 1",
            ));
        }
        Ok(())
    }
}

/// The analysis language: picks the Snowball stemmer and the stopword list.
///
/// English has its own stopword list; the other languages with a stemmer NLTK's lists (as the
/// stop-words crate ships them); `none` drops no words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Language {
    /// Snowball English (Porter2) with English stopwords. The default.
    English,
    /// Snowball French.
    French,
    /// Snowball German.
    German,
    /// Snowball Spanish.
    Spanish,
    /// Snowball Italian.
    Italian,
    /// Snowball Portuguese.
    Portuguese,
    /// Snowball Dutch.
    Dutch,
    /// Snowball Swedish.
    Swedish,
    /// Snowball Norwegian.
    Norwegian,
    /// Snowball Danish.
    Danish,
    /// Snowball Finnish.
    Finnish,
    /// Snowball Russian.
    Russian,
    /// No stemming and no stopwords: normalization and lowercasing only.
    None,
}

impl Language {
    /// Every language, in a stable order.
    pub const ALL: [Language; 13] = [
        Language::English,
        Language::French,
        Language::German,
        Language::Spanish,
        Language::Italian,
        Language::Portuguese,
        Language::Dutch,
        Language::Swedish,
        Language::Norwegian,
        Language::Danish,
        Language::Finnish,
        Language::Russian,
        Language::None,
    ];

    /// Whether this build analyzes the language as every other build does: it has no
    /// stemmer (`none`) or its stemmer is compiled in (the core's features `stem-*`).
    // Not through the analyzer's `stemmer_algorithm`: with a second caller it is no longer
    // inlined into the analyzer's, and the stemmer crate's other six algorithms (16 KB
    // gzipped) stay in the wasm module.
    pub fn available(self) -> bool {
        match self {
            Language::English => cfg!(feature = "stem-english"),
            Language::French => cfg!(feature = "stem-french"),
            Language::German => cfg!(feature = "stem-german"),
            Language::Spanish => cfg!(feature = "stem-spanish"),
            Language::Italian => cfg!(feature = "stem-italian"),
            Language::Portuguese => cfg!(feature = "stem-portuguese"),
            Language::Dutch => cfg!(feature = "stem-dutch"),
            Language::Swedish => cfg!(feature = "stem-swedish"),
            Language::Norwegian => cfg!(feature = "stem-norwegian"),
            Language::Danish => cfg!(feature = "stem-danish"),
            Language::Finnish => cfg!(feature = "stem-finnish"),
            Language::Russian => cfg!(feature = "stem-russian"),
            Language::None => true,
        }
    }

    /// The lowercase English name (`english`, ..., `none`).
    pub fn name(self) -> &'static str {
        match self {
            Language::English => "english",
            Language::French => "french",
            Language::German => "german",
            Language::Spanish => "spanish",
            Language::Italian => "italian",
            Language::Portuguese => "portuguese",
            Language::Dutch => "dutch",
            Language::Swedish => "swedish",
            Language::Norwegian => "norwegian",
            Language::Danish => "danish",
            Language::Finnish => "finnish",
            Language::Russian => "russian",
            Language::None => "none",
        }
    }

    /// The Snowball language of an ISO 639-3 code as [`LanguageMix`] counts them (`deu`:
    /// German; Norwegian Bokmål `nob`: Norwegian), whether or not this build stems it; `None`
    /// for a language the analyzer has no stemmer for.
    pub fn from_iso639_3(code: &str) -> Option<Language> {
        Some(match code {
            "eng" => Language::English,
            "fra" => Language::French,
            "deu" => Language::German,
            "spa" => Language::Spanish,
            "ita" => Language::Italian,
            "por" => Language::Portuguese,
            "nld" => Language::Dutch,
            "swe" => Language::Swedish,
            "nob" => Language::Norwegian,
            "dan" => Language::Danish,
            "fin" => Language::Finnish,
            "rus" => Language::Russian,
            _ => return None,
        })
    }

    /// The analysis language for a wiki of languages `mix` when the caller names none, and
    /// why, as the build report says it ([`BuildReport::language_reason`]): the main language
    /// ([`LanguageMix::main`]) when the analyzer stems it in this build, else English.
    ///
    /// # Example
    /// ```
    /// use wikidex::{Language, LanguageMix};
    /// let mix = LanguageMix::count([Some("deu"), Some("deu"), Some("eng")]);
    /// assert_eq!(Language::for_mix(&mix).0, Language::German);
    /// let mix = LanguageMix::count([Some("cmn"), Some("eng"), Some("cmn")]);
    /// let (language, why) = Language::for_mix(&mix);
    /// assert_eq!(language, Language::English);
    /// assert!(why.contains("Mandarin"), "{why}");
    /// ```
    ///
    /// [`BuildReport::language_reason`]: crate::BuildReport::language_reason
    pub fn for_mix(mix: &LanguageMix) -> (Language, String) {
        let Some(main) = mix.main() else {
            return (
                Language::English,
                "english: no page has enough prose to tell its language".into(),
            );
        };
        let of = format!("{} of {} pages", main.pages, mix.detected());
        let name = language_name(&main.language);
        match Language::from_iso639_3(&main.language) {
            Some(l) if l.available() => (l, format!("{}: the main language ({of})", l.name())),
            Some(l) => (
                Language::English,
                format!(
                    "english: the main language, {name} ({of}), is not analyzed by this build \
                     (its feature stem-{} is off)",
                    l.name()
                ),
            ),
            None => (
                Language::English,
                format!("english: the main language, {name} ({of}), has no stemmer"),
            ),
        }
    }

    /// Parses a name as returned by [`Language::name`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] listing the known names.
    pub fn parse(s: &str) -> Result<Language> {
        parse_name(&Language::ALL, Language::name, "language", s)
    }
}

/// The one of `all` whose `name` is `s` (in any case, spaces around it ignored): the parser of
/// every closed set of names (languages, site layouts, anchor rules).
///
/// # Errors
/// [`Error::InvalidArgument`]: ``unknown {what} `s`; expected one of`` the names.
pub(crate) fn parse_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
    s: &str,
) -> Result<T> {
    all.iter()
        .copied()
        .find(|&t| name(t).eq_ignore_ascii_case(s.trim()))
        .ok_or_else(|| {
            let names: Vec<_> = all.iter().map(|&t| name(t)).collect();
            Error::invalid_argument(format!(
                "unknown {what} `{s}`; expected one of {}",
                names.join(", ")
            ))
        })
}

/// BM25 parameters, stored in the blob.
///
/// Defaults `k1 = 1.5`, `b = 0.6`, chosen by measurement on CACM and Cranfield over the grid
/// k1 ∈ {0.9, 1.2, 1.5, 2.0} × b ∈ {0.5, 0.6, 0.75, 0.9} (`docs/benchmarks/quality.md` has the table; rerun with
/// `make eval`). (2.0, 0.6) scored marginally higher (within 0.01 on every metric); 1.5 keeps
/// term frequency saturating sooner, which matters on wiki pages that repeat their keywords.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bm25Params {
    /// Term-frequency saturation, `0.0..=10.0`. At 0 a term counts once however often it
    /// occurs; larger values let repeated terms keep adding score.
    pub k1: f32,
    /// Length normalization, `0.0..=1.0`. At 0 chunk length is ignored; at 1 scores are fully
    /// normalized by length relative to the average chunk.
    pub b: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.5, b: 0.6 }
    }
}

impl Bm25Params {
    /// Checks the ranges documented on the fields.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a value is out of range or not finite.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=10.0).contains(&self.k1) {
            return Err(Error::invalid_argument(format!(
                "bm25 k1 {} is outside 0..=10",
                show_f32(self.k1)
            )));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(Error::invalid_argument(format!(
                "bm25 b {} is outside 0..=1",
                show_f32(self.b)
            )));
        }
        Ok(())
    }
}

/// A ranking lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    /// BM25 over key + title + summary + body + tags, with stemming.
    Lexical,
    /// Cosine similarity between query and chunk embeddings.
    Semantic,
    /// Plain term overlap (exact terms, then prefixes); needs no statistics and no model.
    Token,
}

impl Lane {
    /// Every lane, in fusion order.
    pub const ALL: [Lane; 3] = [Lane::Lexical, Lane::Semantic, Lane::Token];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Lexical => "lexical",
            Lane::Semantic => "semantic",
            Lane::Token => "token",
        }
    }

    /// Parses a lane name.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown name.
    pub fn parse(s: &str) -> Result<Lane> {
        Lane::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown lane `{s}`; expected lexical, semantic or token"
                ))
            })
    }

    /// Parses a comma-separated list of lane names (`lexical,token`), deduplicated.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown or empty list.
    pub fn parse_list(s: &str) -> Result<Vec<Lane>> {
        let mut lanes: Vec<Lane> = s
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(Lane::parse)
            .collect::<Result<_>>()?;
        crate::data::sort::sort(&mut lanes);
        lanes.dedup();
        if lanes.is_empty() {
            return Err(Error::invalid_argument("no lanes given"));
        }
        Ok(lanes)
    }
}

/// Fusion constants, stored in the blob.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FusionConfig {
    /// The RRF constant `k` (default 60, range `1.0..=1000.0`). Small values make the top ranks
    /// of each lane dominate; large values flatten the curve so agreement between lanes counts
    /// more than any single lane's top rank.
    pub k: f32,
    /// Weight of the lexical lane (default 1.5).
    pub lexical: f32,
    /// Weight of the semantic lane (default 2.0).
    pub semantic: f32,
    /// Weight of the token lane (default 0.75). Weights range over `0.0..=100.0`; a lane with
    /// weight 0 still runs (and is explained) but does not move the ranking.
    pub token: f32,
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig {
            k: 60.0,
            lexical: 1.5,
            semantic: 2.0,
            token: 0.75,
        }
    }
}

impl FusionConfig {
    /// The weight of `lane`.
    pub fn weight(&self, lane: Lane) -> f32 {
        match lane {
            Lane::Lexical => self.lexical,
            Lane::Semantic => self.semantic,
            Lane::Token => self.token,
        }
    }

    /// Sets the weight of `lane` (checked by [`FusionConfig::validate`]).
    pub fn set_weight(&mut self, lane: Lane, weight: f32) {
        match lane {
            Lane::Lexical => self.lexical = weight,
            Lane::Semantic => self.semantic = weight,
            Lane::Token => self.token = weight,
        }
    }

    /// Applies a `LANE=WEIGHT` setting (e.g. `token=0.5`), as the CLI's `--weight` and the
    /// bindings' options spell it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a malformed setting, an unknown lane or a weight out of
    /// range; `self` is then unchanged.
    pub fn apply_setting(&mut self, setting: &str) -> Result<()> {
        let bad = || {
            Error::invalid_argument(format!(
                "weight `{setting}`: expected LANE=WEIGHT, e.g. token=0.5"
            ))
        };
        let (lane, weight) = setting.split_once('=').ok_or_else(bad)?;
        let weight: f32 = weight.trim().parse().map_err(|_| bad())?;
        let mut next = *self;
        next.set_weight(Lane::parse(lane)?, weight);
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Checks the ranges documented on the fields.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a value is out of range or not finite.
    pub fn validate(&self) -> Result<()> {
        if !(1.0..=1000.0).contains(&self.k) {
            return Err(Error::invalid_argument(format!(
                "fusion k {} is outside 1..=1000",
                show_f32(self.k)
            )));
        }
        for lane in Lane::ALL {
            let w = self.weight(lane);
            if !(0.0..=100.0).contains(&w) {
                return Err(Error::invalid_argument(format!(
                    "{} weight {} is outside 0..=100",
                    lane.name(),
                    show_f32(w)
                )));
            }
        }
        Ok(())
    }
}

/// Chunk sizes, stored in the blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkConfig {
    /// Target chunk size in whitespace-separated tokens (default 200, range 16..=4096). Smaller
    /// chunks give sharper snippets and citations; larger ones keep more context together.
    pub max_tokens: u32,
    /// Tokens of trailing sentences carried into the next chunk (default 50; must be below
    /// `max_tokens / 2`). 0 disables overlap.
    pub overlap_tokens: u32,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            max_tokens: 200,
            overlap_tokens: 50,
        }
    }
}

impl ChunkConfig {
    /// Checks the ranges documented on the fields.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when a value is out of range.
    pub fn validate(&self) -> Result<()> {
        if !(16..=4096).contains(&self.max_tokens) {
            return Err(Error::invalid_argument(format!(
                "chunk max_tokens {} is outside 16..=4096",
                self.max_tokens
            )));
        }
        if self.overlap_tokens.saturating_mul(2) >= self.max_tokens {
            return Err(Error::invalid_argument(format!(
                "chunk overlap_tokens {} must be below max_tokens / 2",
                self.overlap_tokens
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_config_in_json_takes_the_defaults_for_what_it_leaves_out() {
        let c: Config =
            serde_json::from_str(r#"{"chunk": {"max_tokens": 4096}, "bm25": {"b": 0.5}}"#).unwrap();
        assert_eq!(c.chunk.max_tokens, 4096);
        assert_eq!(
            c.chunk.overlap_tokens,
            ChunkConfig::default().overlap_tokens
        );
        assert_eq!(c.bm25.b, 0.5);
        assert_eq!(c.bm25.k1, Bm25Params::default().k1);
        assert_eq!(c.fusion, FusionConfig::default());
        assert_eq!(c.language, Config::default().language);
        let empty: Config = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, Config::default());
    }
}
