//! The page contract: YAML frontmatter, keys, scopes and links.
//!
//! A page is a Markdown file with an optional YAML frontmatter block. Its key is the file stem,
//! normalized by [`normalize_key`]; links (`[[key]]`, `[[key|label]]`, `[[Note#Heading]]`,
//! `![[embed]]`, and Markdown links to `.md` files) resolve the way Obsidian resolves them: by
//! file stem, case-insensitively, with the heading part ignored.

mod frontmatter;
mod links;

use frontmatter::{check_yaml_shape, scalar_string, split_frontmatter, Fields};
use links::{dedupe, provenance_comments, scan_markdown};
pub use links::{link_key, link_spans, LinkSpan};

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use yaml_rust2::{Yaml, YamlLoader};

pub use crate::data::config::Keys;
use crate::data::error::{Error, Result};

/// Frontmatter larger than this is rejected: no real page needs it, and it bounds the work a
/// hostile file can cause in the YAML parser.
pub const MAX_FRONTMATTER_BYTES: usize = 256 * 1024;

/// Deepest nesting of mappings and lists a frontmatter block may have. Unknown fields are kept
/// as JSON, which must stay far below the JSON reader's own limit (128 levels) so the blob
/// that stores them always loads again.
pub const MAX_FRONTMATTER_DEPTH: usize = 32;

/// Most YAML nodes a frontmatter block may expand to, counting every alias (`*name`) as a
/// full copy of what it names. An alias bomb (a few hundred bytes that expand to billions of
/// nodes) is refused after reading a few events, before anything is built.
pub const MAX_FRONTMATTER_NODES: usize = 100_000;

/// Where a page lives: shared by everyone, or one user's (or agent's) scratch space.
///
/// Serialized as a string: `global` or `user/<name>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// `global/` (or anything outside `user/<name>/`).
    #[default]
    Global,
    /// `user/<name>/`: shadows a global page with the same key for searches in this scope.
    User(String),
}

impl Scope {
    /// Parses `global`, `user/<name>` or a bare `<name>` (a user scope).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty string.
    pub fn parse(s: &str) -> Result<Scope> {
        let s = s.trim().trim_matches('/');
        if s.is_empty() {
            return Err(Error::invalid_argument("scope must not be empty"));
        }
        if s.eq_ignore_ascii_case("global") {
            return Ok(Scope::Global);
        }
        let name = s.strip_prefix("user/").unwrap_or(s);
        Ok(Scope::User(name.to_string()))
    }

    /// Derives the scope from a path relative to the wiki root: `user/<name>/...` (optionally
    /// under a top-level `wiki/` folder) is that user's; everything else is global.
    pub fn from_path(path: &str) -> Scope {
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        let parts = match parts.first() {
            Some(first) if parts.len() > 1 && first.eq_ignore_ascii_case("wiki") => &parts[1..],
            _ => &parts[..],
        };
        match parts {
            [user, name, _, ..] if user.eq_ignore_ascii_case("user") => {
                Scope::User((*name).to_string())
            }
            _ => Scope::Global,
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        // The exact inverse of `Display` (no trimming, unlike `Scope::parse`), so a scope
        // round-trips through the blob unchanged.
        let s = String::deserialize(d)?;
        match s.strip_prefix("user/") {
            Some(name) if !name.is_empty() => Ok(Scope::User(name.to_string())),
            _ if s == "global" => Ok(Scope::Global),
            _ => Scope::parse(&s)
                .map_err(|e| crate::data::error::decode_error(format!("scope: {e}"))),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Global => f.write_str("global"),
            Scope::User(name) => write!(f, "user/{name}"),
        }
    }
}

/// Whether a page surfaces in search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UsageMode {
    /// Always surfaced (returned first or separately, as the caller asks).
    Always,
    /// Ranked normally.
    #[default]
    Auto,
    /// Never returned by search (still addressable by key).
    Never,
}

impl UsageMode {
    /// Parses `always`, `auto` or `never` (case-insensitive).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for any other word.
    pub fn parse(s: &str) -> Result<UsageMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "always" => Ok(UsageMode::Always),
            "auto" => Ok(UsageMode::Auto),
            "never" => Ok(UsageMode::Never),
            _ => Err(Error::invalid_argument(format!(
                "unknown usage mode `{}`; expected always, auto or never",
                s.trim()
            ))),
        }
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageMode::Always => "always",
            UsageMode::Auto => "auto",
            UsageMode::Never => "never",
        }
    }
}

/// A typed, weighted edge from `relations` frontmatter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    /// Target page key (normalized).
    pub target: String,
    /// Edge type, e.g. `causes`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Confidence in `0.0..=1.0` (default 1.0).
    pub confidence: f32,
    /// Supporting text, when given.
    pub evidence: Option<String>,
    /// The chunk holding the evidence (`chunk` or `evidence_chunk`), usually a raw chunk id.
    pub chunk: Option<String>,
}

/// A raw chunk a page was compiled from (`sources` frontmatter), with its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRef {
    /// The chunk id.
    pub chunk: String,
    /// Weight (default 1.0).
    pub weight: f32,
    /// The chunk's content hash when the page was compiled (`hash`), for drift checks.
    pub hash: Option<String>,
}

impl SourceRef {
    /// A source with weight 1.0 and no recorded hash.
    pub fn new(chunk: String) -> SourceRef {
        SourceRef {
            chunk,
            weight: 1.0,
            hash: None,
        }
    }
}

/// Frontmatter fields wikidex does not know, kept verbatim as JSON values.
///
/// In human-readable formats (JSON) this is an object; in the blob it is a JSON string, because
/// the blob's codec is not self-describing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra(pub BTreeMap<String, serde_json::Value>);

impl Serialize for Extra {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            self.0.serialize(s)
        } else {
            let text = serde_json::to_string(&self.0).map_err(serde::ser::Error::custom)?;
            text.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        if d.is_human_readable() {
            Ok(Extra(BTreeMap::deserialize(d)?))
        } else {
            d.deserialize_str(ExtraText)
        }
    }
}

/// [`Extra`] from its JSON text in the blob, read where it lies (no copy of the text), and
/// no JSON parser run for the usual `{}`: a sharded head's page stubs are decoded on the way
/// to a first result.
struct ExtraText;

impl serde::de::Visitor<'_> for ExtraText {
    type Value = Extra;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a page's unknown fields as JSON text")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> std::result::Result<Extra, E> {
        if text == "{}" {
            return Ok(Extra::default());
        }
        serde_json::from_str(text).map(Extra).map_err(|e| {
            crate::data::error::decode_error(format!(
                "a page's unknown fields are not valid JSON: {e}"
            ))
        })
    }
}

/// One wiki page: its frontmatter, where it lives, and its full source text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// Flat key derived from the file name (see [`normalize_key`]).
    pub key: String,
    /// Global or a user's scope.
    pub scope: Scope,
    /// Source path relative to the wiki root, `/`-separated.
    pub path: String,
    /// Display title: `title`, else the first `# heading`, else the key.
    pub title: String,
    /// One-line summary (`summary`, else Obsidian's `description`).
    pub summary: Option<String>,
    /// Topic labels.
    pub tags: Vec<String>,
    /// Open category (`type` frontmatter).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Outgoing edges from `refs` (normalized keys).
    pub refs: Vec<String>,
    /// Outgoing edges from inline links in the body (normalized keys, deduplicated, in order).
    pub links: Vec<String>,
    /// Named external sources (`connection.source`), kept as data.
    pub sl_refs: Vec<String>,
    /// Typed, weighted edges.
    pub relations: Vec<Relation>,
    /// Whether the page surfaces in search.
    pub usage_mode: UsageMode,
    /// Where the page came from.
    pub source: Option<String>,
    /// Raw chunks the page was compiled from.
    pub sources: Vec<SourceRef>,
    /// Other names of the page.
    pub aliases: Vec<String>,
    /// Old keys that now point here (normalized).
    pub redirect_from: Vec<String>,
    /// Lifecycle mark: stale since this date.
    pub stale_since: Option<String>,
    /// Lifecycle mark: archived since this date (kept, never surfaced).
    pub archived_since: Option<String>,
    /// `<!-- from: path -->` provenance comments, in order.
    pub provenance: Vec<String>,
    /// Frontmatter fields wikidex does not know, kept verbatim.
    pub extra: Extra,
    /// The whole source text (frontmatter included); chunk spans index into it.
    pub text: String,
    /// Byte offset where the body starts (after the frontmatter block).
    pub body_start: u32,
}

impl Page {
    /// The page's id: its key for global pages, `user/<name>/<key>` for a user's page.
    /// Chunk ids are `{page_id}::chunk_{n}` (see [`crate::Chunk::id`]).
    pub fn id(&self) -> String {
        id_of(&self.scope, &self.key)
    }

    /// The body (the text after the frontmatter).
    pub fn body(&self) -> &str {
        self.text.get(self.body_start as usize..).unwrap_or("")
    }

    /// Whether the page is archived (kept but never surfaced by search).
    pub fn is_archived(&self) -> bool {
        self.archived_since.is_some()
    }

    /// The page's date as its frontmatter writes it: the first of [`DATE_FIELDS`] that holds
    /// a string ([`crate::data::date::parse`] reads it for the `since`/`until` filters).
    pub fn date(&self) -> Option<&str> {
        DATE_FIELDS
            .iter()
            .find_map(|f| self.extra.0.get(*f).and_then(serde_json::Value::as_str))
    }
}

/// The frontmatter fields a page's date is read from, in order: the last edit first.
pub const DATE_FIELDS: [&str; 3] = ["updated", "last_updated", "date"];

/// A parsed page and the non-fatal problems found in it.
#[derive(Debug, Clone)]
pub struct ParsedPage {
    /// The page.
    pub page: Page,
    /// Problems that did not stop the parse (a field of the wrong type, ...).
    pub warnings: Vec<String>,
}

/// The id of the page with `key` in `scope` ([`Page::id`]).
pub(crate) fn id_of(scope: &Scope, key: &str) -> String {
    match scope {
        Scope::Global => key.to_owned(),
        Scope::User(name) => format!("user/{name}/{key}"),
    }
}

/// The canonical order of pages, an index's: by scope, then key.
pub(crate) fn canonical(a: &Page, b: &Page) -> std::cmp::Ordering {
    (&a.scope, &a.key).cmp(&(&b.scope, &b.key))
}

/// Whether `pages` are in canonical order, no scope and key twice.
pub(crate) fn in_canonical_order(pages: &[std::sync::Arc<Page>]) -> bool {
    pages.windows(2).all(|w| canonical(&w[0], &w[1]).is_lt())
}

/// Where the page with `scope` and `key` is in `pages` (canonical order), by binary search:
/// `Ok` at the page that has them, `Err` where a page with them goes.
pub(crate) fn position(
    pages: &[std::sync::Arc<Page>],
    scope: &Scope,
    key: &str,
) -> std::result::Result<usize, usize> {
    pages.binary_search_by(|p| (&p.scope, p.key.as_str()).cmp(&(scope, key)))
}

/// The page with `scope` and `key` in `pages` (canonical order), if one has them.
pub(crate) fn find(pages: &[std::sync::Arc<Page>], scope: &Scope, key: &str) -> Option<usize> {
    position(pages, scope, key).ok()
}

/// Normalizes a page key or link target: trims, composes (Unicode NFC, so a decomposed `é`
/// in a file name matches a composed one in a link), lowercases, and replaces whitespace runs
/// with `-`. `Project Alpha` and `project alpha` both become `project-alpha`; `mart_account_segments`
/// is unchanged.
pub fn normalize_key(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in crate::text::analyze::normalize_form(s.trim(), crate::text::analyze::Form::Nfc).chars()
    {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space {
            out.push('-');
            pending_space = false;
        }
        out.push(c);
    }
    crate::text::analyze::lowercase_chars(&out).into_owned()
}

/// The key of the page at `path`: its file stem, normalized.
pub fn key_from_path(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    normalize_key(strip_md_extension(name))
}

/// The key of the page at `path` under the rule `keys`: [`key_from_path`] for a wiki; for a
/// docs folder the whole path without its extension, its folders joined by `.`
/// (`guide/intro.md` is `guide.intro`), normalized.
pub fn key_for(path: &str, keys: Keys) -> String {
    match keys {
        Keys::FileName => key_from_path(path),
        Keys::Path => {
            let parts: Vec<&str> = strip_md_extension(path)
                .split(['/', '\\'])
                .filter(|p| !p.is_empty())
                .collect();
            normalize_key(&parts.join("."))
        }
    }
}

/// The path a page keyed `key` is written at under the rule `keys` when it is renamed to it
/// in `folder` (the old page's folder): `folder/key.md` for a wiki; for a docs folder, the
/// key's `.`-joined folders as folders (`guide.start` is `guide/start.md`).
pub fn path_for_key(key: &str, folder: &str, keys: Keys) -> String {
    match keys {
        Keys::FileName if folder.is_empty() => format!("{key}.md"),
        Keys::FileName => format!("{folder}/{key}.md"),
        Keys::Path => format!("{}.md", key.replace('.', "/")),
    }
}

pub(crate) fn strip_md_extension(name: &str) -> &str {
    for ext in [".md", ".markdown"] {
        // Compare bytes: the last bytes of `name` may be inside a multi-byte character; when
        // they equal the (ASCII) extension, the cut lands on a character boundary.
        let n = name.len();
        if n > ext.len() && name.as_bytes()[n - ext.len()..].eq_ignore_ascii_case(ext.as_bytes()) {
            return &name[..n - ext.len()];
        }
    }
    name
}

/// Whether `path` names a Markdown page (`.md` or `.markdown`, any case).
pub fn is_markdown_path(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    strip_md_extension(name).len() != name.len()
}

/// Parses a page from its path (relative to the wiki root, `/`-separated) and its text.
///
/// # Errors
/// [`Error::InvalidPage`] with the 1-based line when the frontmatter is not valid YAML, is not
/// a mapping, is unterminated or too large, or when no key can be derived from the path.
///
/// # Example
/// ```
/// let parsed = wikidex::page::parse("global/revenue.md", "---\ntitle: Revenue\ntags: [finance]\n---\nSee [[churn_rate]].\n")?;
/// assert_eq!(parsed.page.key, "revenue");
/// assert_eq!(parsed.page.tags, ["finance"]);
/// assert_eq!(parsed.page.links, ["churn_rate"]);
/// # Ok::<(), wikidex::Error>(())
/// ```
pub fn parse(path: &str, text: &str) -> Result<ParsedPage> {
    parse_with(path, text, Keys::FileName)
}

/// [`parse`], with the key and scope from `path` under the rule `keys` ([`key_for`]; under
/// [`Keys::Path`] every page is global).
///
/// # Errors
/// As [`parse`].
pub fn parse_with(path: &str, text: &str, keys: Keys) -> Result<ParsedPage> {
    let invalid = |line: Option<u32>, reason: String| Error::InvalidPage {
        path: path.to_string(),
        line,
        reason,
    };
    let key = key_for(path, keys);
    if key.is_empty() {
        return Err(invalid(
            None,
            "cannot derive a key from the file name".into(),
        ));
    }
    let mut warnings = Vec::new();
    let (frontmatter, body_start) = match split_frontmatter(text) {
        Ok(split) => split,
        // A first line of `---` that nothing closes is a Markdown rule, not a frontmatter
        // block: the whole text is the body (after a byte-order mark), and the author is told.
        Err(_) => {
            warnings.push(
                "the first line `---` opens no frontmatter (nothing closes it): read as a rule \
                 at the start of the body"
                    .to_string(),
            );
            (None, usize::from(text.starts_with('\u{feff}')) * 3)
        }
    };
    let mut fields = Fields::default();
    if let Some(yaml) = frontmatter {
        if yaml.len() > MAX_FRONTMATTER_BYTES {
            return Err(invalid(
                Some(1),
                format!("frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes"),
            ));
        }
        check_yaml_shape(yaml).map_err(|(line, reason)| invalid(line, reason))?;
        let docs = YamlLoader::load_from_str(yaml).map_err(|e| {
            // The YAML starts on the file's second line (after the opening `---`).
            let line = u32::try_from(e.marker().line()).unwrap_or(u32::MAX);
            invalid(Some(line.saturating_add(1)), e.info().to_string())
        })?;
        match docs.into_iter().next() {
            None | Some(Yaml::Null) => {}
            Some(Yaml::Hash(map)) => {
                for (k, v) in map {
                    let Some(name) = scalar_string(&k) else {
                        warnings.push("frontmatter key that is not a string: kept nowhere".into());
                        continue;
                    };
                    fields.set(&name, v, &mut warnings);
                }
            }
            Some(_) => {
                return Err(invalid(
                    Some(2),
                    "frontmatter is not a mapping of field names to values".into(),
                ))
            }
        }
    }
    let body = &text[body_start..];
    let md = scan_markdown(body);
    let title = fields
        .title
        .take()
        .or(md.first_heading)
        .unwrap_or_else(|| key.clone());
    let summary = fields.summary.take().or(fields.description.take());
    let page = Page {
        scope: match keys {
            Keys::FileName => Scope::from_path(path),
            Keys::Path => Scope::Global,
        },
        path: path.to_string(),
        title,
        summary,
        tags: fields.tags,
        kind: fields.kind,
        refs: dedupe(fields.refs),
        links: dedupe(md.links),
        sl_refs: fields.sl_refs,
        relations: fields.relations,
        usage_mode: fields.usage_mode,
        source: fields.source,
        sources: fields.sources,
        aliases: fields.aliases,
        redirect_from: dedupe(fields.redirect_from),
        stale_since: fields.stale_since,
        archived_since: fields.archived_since,
        provenance: provenance_comments(body),
        extra: Extra(fields.extra),
        text: text.to_string(),
        body_start: u32::try_from(body_start)
            .map_err(|_| invalid(None, "page is larger than 4 GiB".into()))?,
        key,
    };
    Ok(ParsedPage { page, warnings })
}

/// `text` with `old` added to its `redirect_from` frontmatter (kept with the keys it had),
/// creating the frontmatter block if there is none. Other fields are left as written.
///
/// # Errors
/// [`Error::InvalidPage`] if the frontmatter cannot be parsed.
pub(crate) fn add_redirect(text: &str, old: &str) -> Result<String> {
    let existing = parse("page.md", text)?.page.redirect_from;
    let mut keys: Vec<String> = existing;
    if !keys.iter().any(|k| k == old) {
        keys.push(old.to_string());
    }
    let list: Vec<String> = keys
        .iter()
        .map(|k| serde_json::to_string(k).unwrap_or_default())
        .collect();
    let line = format!("redirect_from: [{}]\n", list.join(", "));
    // An unclosed opening `---` is part of the body (see `parse`).
    let (frontmatter, body_start) =
        split_frontmatter(text).unwrap_or((None, usize::from(text.starts_with('\u{feff}')) * 3));
    let Some(yaml) = frontmatter else {
        return Ok(format!("---\n{line}---\n{}", &text[body_start..]));
    };
    let yaml_start = yaml.as_ptr() as usize - text.as_ptr() as usize;
    let yaml_end = yaml_start + yaml.len();
    // Drop the old top-level `redirect_from` entry (its line and its indented or `- `
    // continuation lines), then append the new one at the end of the block.
    let mut kept = String::new();
    let mut skipping = false;
    for l in yaml.split_inclusive('\n') {
        let continuation = l.starts_with([' ', '\t']) || l.starts_with("- ");
        if l.starts_with("redirect_from:") {
            skipping = true;
            continue;
        }
        if skipping && continuation {
            continue;
        }
        skipping = false;
        kept.push_str(l);
    }
    if !kept.is_empty() && !kept.ends_with('\n') {
        kept.push('\n');
    }
    Ok(format!(
        "{}{kept}{line}{}",
        &text[..yaml_start],
        &text[yaml_end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::links::percent_decode;
    use super::*;

    fn page(path: &str, text: &str) -> Page {
        parse(path, text).unwrap().page
    }

    #[test]
    fn key_is_normalized_file_stem() {
        assert_eq!(
            key_from_path("global/mart_account_segments.md"),
            "mart_account_segments"
        );
        assert_eq!(
            key_from_path("Projects/Alpha/Project Alpha.md"),
            "project-alpha"
        );
        assert_eq!(key_from_path("Notes/Ünïcode  Title.MD"), "ünïcode-title");
    }

    #[test]
    fn docs_keys_come_from_whole_paths_and_every_page_is_global() {
        assert_eq!(
            key_for("guide/Getting Started.md", Keys::Path),
            "guide.getting-started"
        );
        assert_eq!(key_for("index.md", Keys::Path), "index");
        let p = parse_with("user/alice/settings.md", "# Settings", Keys::Path)
            .unwrap()
            .page;
        assert_eq!(
            (p.key.as_str(), &p.scope),
            ("user.alice.settings", &Scope::Global)
        );
        let w = parse("user/alice/settings.md", "# Settings").unwrap().page;
        assert_eq!(
            (w.key.as_str(), &w.scope),
            ("settings", &Scope::User("alice".into()))
        );
        assert_eq!(
            path_for_key("guide.start", "guide", Keys::Path),
            "guide/start.md"
        );
        assert_eq!(
            path_for_key("start", "guide", Keys::FileName),
            "guide/start.md"
        );
    }

    #[test]
    fn scope_comes_from_user_folder_with_or_without_wiki_prefix() {
        assert_eq!(Scope::from_path("global/a.md"), Scope::Global);
        assert_eq!(
            Scope::from_path("user/alice/a.md"),
            Scope::User("alice".into())
        );
        assert_eq!(
            Scope::from_path("wiki/user/bob/x/a.md"),
            Scope::User("bob".into())
        );
        assert_eq!(Scope::from_path("wiki/global/a.md"), Scope::Global);
        assert_eq!(Scope::from_path("user.md"), Scope::Global);
        assert_eq!(Scope::from_path("Projects/user/a.md"), Scope::Global);
    }

    #[test]
    fn every_known_field_is_read_and_unknown_fields_kept() {
        let text = "---\ntitle: Revenue\nsummary: Money in.\ntags: [finance, '#metrics']\ntype: reference\nrefs: [Churn Rate, '[[arr]]']\nsl_refs: [warehouse.orders]\nrelations:\n  - {target: churn_rate, type: causes, confidence: 0.8, evidence: because}\nusage_mode: always\nsource: slack\nsources: [raw::chunk_0, {chunk: raw::chunk_1, weight: 0.5}]\naliases: [Sales]\nredirect_from: [old_revenue]\nstale_since: 2024-01-01\narchived_since: 2024-02-01\nowner: data-team\nreviewed: 3\n---\n# Heading\nBody.\n";
        let p = page("global/revenue.md", text);
        assert_eq!(p.title, "Revenue");
        assert_eq!(p.summary.as_deref(), Some("Money in."));
        assert_eq!(p.tags, ["finance", "metrics"]);
        assert_eq!(p.kind.as_deref(), Some("reference"));
        assert_eq!(p.refs, ["churn-rate", "arr"]);
        assert_eq!(p.sl_refs, ["warehouse.orders"]);
        assert_eq!(p.relations[0].target, "churn_rate");
        assert_eq!(p.relations[0].kind, "causes");
        assert!((p.relations[0].confidence - 0.8).abs() < 1e-6);
        assert_eq!(p.usage_mode, UsageMode::Always);
        assert_eq!(p.source.as_deref(), Some("slack"));
        assert_eq!(p.sources[1].chunk, "raw::chunk_1");
        assert_eq!(p.sources[1].weight, 0.5);
        assert_eq!(p.aliases, ["Sales"]);
        assert_eq!(p.redirect_from, ["old_revenue"]);
        assert_eq!(p.stale_since.as_deref(), Some("2024-01-01"));
        assert!(p.is_archived());
        assert_eq!(p.extra.0["owner"], serde_json::json!("data-team"));
        assert_eq!(p.extra.0["reviewed"], serde_json::json!(3));
        assert_eq!(p.body(), "# Heading\nBody.\n");
    }

    #[test]
    fn title_falls_back_to_first_h1_then_key() {
        assert_eq!(
            page("a.md", "intro\n\n# The Title\n\n# Second\n").title,
            "The Title"
        );
        assert_eq!(page("some_key.md", "no heading").title, "some_key");
    }

    #[test]
    fn description_is_the_summary_when_no_summary() {
        let p = page("a.md", "---\ndescription: From Obsidian.\n---\nx");
        assert_eq!(p.summary.as_deref(), Some("From Obsidian."));
    }

    #[test]
    fn obsidian_links_resolve_by_stem_ignoring_heading_and_case() {
        let body = "See [[Project Alpha]], [[project alpha#Timeline|the timeline]], [[Reference/Glossary]], \
                    ![[diagram.png]], ![[Glossary]], [md](Meeting%20Notes%202024-05-01.md#agenda), \
                    [ext](https://example.com/x.md), [[#Local heading]], `[[in code]]`.\n\n```\n[[fenced]]\n```\n";
        let p = page("n.md", body);
        assert_eq!(
            p.links,
            ["project-alpha", "glossary", "meeting-notes-2024-05-01"]
        );
    }

    #[test]
    fn broken_yaml_reports_file_line() {
        let err = parse(
            "global/bad.md",
            "---\ntitle: ok\ntags: [a, b\nsummary: x\n---\nbody",
        )
        .unwrap_err();
        match err {
            Error::InvalidPage { path, line, reason } => {
                assert_eq!(path, "global/bad.md");
                assert!(line.is_some_and(|l| (3..=5).contains(&l)), "line {line:?}");
                assert!(!reason.is_empty());
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn an_unclosed_opening_rule_is_body_text_with_a_warning() {
        let parsed = parse("a.md", "---\ntitle: x\nbody without end").unwrap();
        assert_eq!(parsed.page.body(), "---\ntitle: x\nbody without end");
        assert_eq!(parsed.page.title, "a");
        assert_eq!(parsed.warnings.len(), 1);
        assert!(parsed.warnings[0].contains("rule"));
    }

    /// The exponential alias bomb: each level names the one below it nine times.
    pub(crate) fn alias_bomb() -> String {
        let mut y = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for w in names.windows(2) {
            let (prev, cur) = (w[0], w[1]);
            let refs = vec![format!("*{prev}"); 9].join(",");
            y.push_str(&format!("{cur}: &{cur} [{refs}]\n"));
        }
        format!("---\n{y}---\nbody\n")
    }

    #[test]
    fn yaml_alias_bomb_is_an_invalid_page_in_bounded_time() {
        let text = alias_bomb();
        let started = std::time::Instant::now();
        let err = parse("global/bomb.md", &text).unwrap_err();
        assert!(
            started.elapsed().as_secs() < 2,
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(err.code(), "invalid_page");
        assert!(err.to_string().contains("aliases"), "{err}");
    }

    #[test]
    fn a_few_small_aliases_are_still_read() {
        let p = page("a.md", "---\nbase: &b {x: 1}\nother: *b\ntags: [t]\n---\n");
        assert_eq!(p.extra.0["other"], serde_json::json!({"x": 1}));
    }

    #[test]
    fn frontmatter_nested_deeper_than_the_limit_is_an_invalid_page() {
        let deep = format!("---\nx: {}1{}\n---\n", "[".repeat(127), "]".repeat(127));
        let err = parse("a.md", &deep).unwrap_err();
        assert_eq!(err.code(), "invalid_page");
        assert!(err.to_string().contains("deeper"), "{err}");
        let ok = format!("---\nx: {}1{}\n---\n", "[".repeat(20), "]".repeat(20));
        assert!(parse("a.md", &ok).is_ok());
    }

    #[test]
    fn one_bad_relation_keeps_the_valid_ones_and_names_itself() {
        let text = "---\nrelations:\n  - {target: a, type: causes, confidence: 0.5}\n  - {target: b, confidence: high}\n  - {target: c, confidence: 1e309}\n  - {target: d, confidence: -1}\n  - {target: e, confidence: .nan}\n  - {target: f}\n---\n";
        let parsed = parse("p.md", text).unwrap();
        let targets: Vec<&str> = parsed
            .page
            .relations
            .iter()
            .map(|r| r.target.as_str())
            .collect();
        assert_eq!(targets, ["a", "f"]);
        assert_eq!(parsed.warnings.len(), 4, "{:?}", parsed.warnings);
        assert!(
            parsed.warnings[0].starts_with("relations[1]") && parsed.warnings[0].contains("high")
        );
        assert!(
            parsed.warnings[1].starts_with("relations[2]") && parsed.warnings[1].contains("finite")
        );
        assert!(
            parsed.warnings[2].starts_with("relations[3]")
                && parsed.warnings[2].contains("outside")
        );
        assert!(parsed.warnings[3].starts_with("relations[4]"));
        assert_eq!(
            parsed.page.extra.0["relations"].as_array().unwrap().len(),
            4
        );
    }

    #[test]
    fn wrong_shaped_known_field_is_kept_with_a_warning() {
        let parsed = parse("a.md", "---\nrelations: 5\nusage_mode: sometimes\n---\n").unwrap();
        assert_eq!(parsed.warnings.len(), 2);
        assert_eq!(parsed.page.extra.0["relations"], serde_json::json!(5));
        assert_eq!(parsed.page.usage_mode, UsageMode::Auto);
    }

    #[test]
    fn bom_without_frontmatter_is_not_part_of_the_body() {
        let p = page("x.md", "\u{feff}# Real Title\n\nBody.\n");
        assert_eq!(p.title, "Real Title");
        assert!(p.body().starts_with("# Real"));
    }

    #[test]
    fn decomposed_file_names_match_composed_links() {
        assert_eq!(key_from_path("Cafe\u{301}.md"), normalize_key("Café"));
    }

    #[test]
    fn scopes_round_trip_through_serde_exactly() {
        for scope in [
            Scope::Global,
            Scope::User("bob ".into()),
            Scope::User("a/b".into()),
        ] {
            let json = serde_json::to_string(&scope).unwrap();
            assert_eq!(serde_json::from_str::<Scope>(&json).unwrap(), scope);
        }
    }

    #[test]
    fn provenance_comments_are_kept() {
        let p = page(
            "a.md",
            "x <!-- from: raw/slack.md --> y <!-- other --> <!-- from: b.md -->",
        );
        assert_eq!(p.provenance, ["raw/slack.md", "b.md"]);
    }

    #[test]
    fn frontmatter_that_is_not_a_mapping_is_rejected() {
        assert!(parse("a.md", "---\n- a\n- b\n---\n").is_err());
        assert!(parse("a.md", "---\n---\nbody").is_ok());
    }

    #[test]
    fn names_ending_in_multibyte_characters_are_not_cut_inside_them() {
        assert_eq!(key_from_path("global/é-3"), "é-3");
        assert_eq!(
            link_key("[[👩\u{200d}👩\u{200d}👧1.5]]"),
            "👩\u{200d}👩\u{200d}👧1.5"
        );
        assert_eq!(key_from_path("a/Ünï.MD"), "ünï");
    }

    #[test]
    fn add_redirect_keeps_old_redirects_and_other_fields() {
        let text = "---\ntitle: T\nredirect_from:\n  - a\n  - b\nrefs: [x]\n---\nbody\n";
        let out = add_redirect(text, "c").unwrap();
        let p = page("global/t.md", &out);
        assert_eq!(p.redirect_from, ["a", "b", "c"]);
        assert_eq!(p.refs, ["x"]);
        assert_eq!(p.title, "T");
        assert!(out.ends_with("---\nbody\n"));
        let bare = add_redirect("just body", "old").unwrap();
        assert_eq!(page("n.md", &bare).redirect_from, ["old"]);
        assert_eq!(page("n.md", &bare).body(), "just body");
    }

    #[test]
    fn link_spans_point_at_the_links() {
        let body = "a [[b]] and [c](c.md)";
        let spans = link_spans(body);
        assert_eq!(spans.len(), 2);
        assert_eq!(&body[spans[0].start..spans[0].end], "[[b]]");
        assert_eq!(spans[1].key, "c");
    }

    #[test]
    fn percent_decoding_tolerates_bad_escapes() {
        assert_eq!(percent_decode("a%20b%zz%"), "a b%zz%");
    }
}
