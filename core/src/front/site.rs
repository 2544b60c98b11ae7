//! Search for a static docs site: the index of the site's Markdown sources and the folder a
//! site serves it from ([`write()`], `wikidex site`), and the link from a hit to the page the
//! site's generator built from it, with the anchor of the heading the hit is under
//! ([`SiteLinks`], which the browser's search module runs too).
//!
//! A docs folder is indexed with [`Keys::Path`]: every Markdown file is a page keyed by its
//! whole path, since `index.md` is in every folder. Each generator turns a source path into a
//! URL and a heading into an anchor by its own rules ([`Layout`]); a page's frontmatter
//! `permalink` (and, where the generator reads it, `slug`) overrides them, and these
//! overrides are all [`SiteLinks`] stores per page, so the bundle stays small.
//!
//! ```
//! use wikidex::site::{Layout, SiteLinks};
//! let links = SiteLinks::for_layout(Layout::Mkdocs);
//! assert_eq!(links.page_url("user-guide/configuration.md"), "user-guide/configuration/");
//! assert_eq!(links.page_url("user-guide/index.md"), "user-guide/");
//! let href = links.href("user-guide/configuration.md", "Configuration", &["Configuration".into(), "Project `information`".into()]);
//! assert_eq!(href, "user-guide/configuration/#project-information");
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::data::config::{parse_name, Keys};
use crate::data::error::{Error, Result};
use crate::text::analyze::{normalize_form, Form};
use crate::text::page::Page;

/// A site generator's rules for URLs and heading anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// MkDocs (`use_directory_urls`, its default): `guide/intro.md` is `guide/intro/`,
    /// `guide/index.md` (or `README.md`) is `guide/`; anchors as Python-Markdown's `toc`
    /// makes them (ASCII, `-` between words).
    Mkdocs,
    /// mdBook (the book's `src/`): `guide/intro.md` is `guide/intro.html`, `README.md` is
    /// `index.html`; anchors as mdBook's `normalize_id`.
    Mdbook,
    /// Docusaurus (the `docs/` plugin at `/docs/`): `guide/intro.md` is `docs/guide/intro`,
    /// `guide/index.md` (or `README.md`, or `guide/guide.md`) is `docs/guide/`; number prefixes
    /// (`01-intro.md`) dropped; frontmatter `slug`; anchors as github-slugger.
    Docusaurus,
    /// VitePress: `guide/intro.md` is `guide/intro.html`, `guide/index.md` is `guide/`;
    /// anchors as VitePress's `slugify`.
    Vitepress,
    /// Hugo (the `content/` folder): `posts/intro.md` is `posts/intro/`, `_index.md` and
    /// `index.md` are their folder, all lowercase; frontmatter `slug`; anchors as Goldmark's
    /// `github` IDs.
    Hugo,
}

impl Layout {
    /// Every layout, in a stable order.
    pub const ALL: [Layout; 5] = [
        Layout::Mkdocs,
        Layout::Mdbook,
        Layout::Docusaurus,
        Layout::Vitepress,
        Layout::Hugo,
    ];

    /// The lowercase name (`mkdocs`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Mkdocs => "mkdocs",
            Layout::Mdbook => "mdbook",
            Layout::Docusaurus => "docusaurus",
            Layout::Vitepress => "vitepress",
            Layout::Hugo => "hugo",
        }
    }

    /// Parses a name as [`Layout::name`] gives it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] listing the known names.
    pub fn parse(s: &str) -> Result<Layout> {
        parse_name(&Layout::ALL, Layout::name, "layout", s)
    }

    /// How this generator makes a heading's anchor.
    pub fn anchors(self) -> Anchors {
        match self {
            Layout::Mkdocs => Anchors::Mkdocs,
            Layout::Mdbook => Anchors::Mdbook,
            Layout::Docusaurus | Layout::Hugo => Anchors::Github,
            Layout::Vitepress => Anchors::Vitepress,
        }
    }
}

/// How a heading's text becomes its anchor (the `id` the generator gives the heading).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Anchors {
    /// github-slugger (GitHub, Docusaurus, Hugo): lowercase; letters, digits, `-` and `_`
    /// kept; each space a `-`; everything else dropped. The default.
    #[default]
    Github,
    /// Python-Markdown's `toc` (MkDocs): folded to ASCII; word characters, spaces and `-`
    /// kept, lowercase; runs of spaces and `-` one `-`.
    Mkdocs,
    /// mdBook's `normalize_id`: letters, digits, `_` and `-` kept (ASCII lowercased); each
    /// space a `-`.
    Mdbook,
    /// VitePress's `slugify`: accents dropped; runs of spaces and punctuation one `-`, none at
    /// either end; `_` before a leading digit; lowercase.
    Vitepress,
}

impl Anchors {
    /// Every rule, in a stable order.
    pub const ALL: [Anchors; 4] = [
        Anchors::Github,
        Anchors::Mkdocs,
        Anchors::Mdbook,
        Anchors::Vitepress,
    ];

    /// The lowercase name (`github`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Anchors::Github => "github",
            Anchors::Mkdocs => "mkdocs",
            Anchors::Mdbook => "mdbook",
            Anchors::Vitepress => "vitepress",
        }
    }

    /// Parses a name as [`Anchors::name`] gives it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] listing the known names.
    pub fn parse(s: &str) -> Result<Anchors> {
        parse_name(&Anchors::ALL, Anchors::name, "anchor rule", s)
    }
}

/// The anchor `style` gives a heading written `heading` (its Markdown: code spans, emphasis,
/// links and HTML tags are read as their text first). A heading that names its own id
/// (`## Setup {#setup-linux}`, MkDocs' `attr_list` and Docusaurus) gets that id.
pub fn anchor(style: Anchors, heading: &str) -> String {
    let (text, id) = heading_text(heading);
    id.unwrap_or_else(|| slug(style, &text))
}

/// The anchor `style` makes of a heading's rendered text.
fn slug(style: Anchors, text: &str) -> String {
    match style {
        Anchors::Github => {
            let lower = crate::text::analyze::lowercase(text);
            lower
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        }
        Anchors::Mdbook => text
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                c if c.is_whitespace() => Some('-'),
                _ => None,
            })
            .collect(),
        Anchors::Mkdocs => {
            // slugify: NFKD, then ASCII only; `[^\w\s-]` dropped; trimmed, lowercase;
            // `[-\s]+` one `-`.
            let ascii: String = normalize_form(text, Form::Nfkd)
                .chars()
                .filter(|c| {
                    c.is_ascii()
                        && (c.is_ascii_alphanumeric()
                            || matches!(c, '_' | '-')
                            || c.is_ascii_whitespace())
                })
                .collect();
            join_runs(&ascii.trim().to_ascii_lowercase(), |c| {
                c == '-' || c.is_ascii_whitespace()
            })
        }
        Anchors::Vitepress => {
            const PUNCT: &str =
                "~`!@#$%^&*()-_+=[]{}|\\;:\"'\u{201c}\u{201d}\u{2018}\u{2019}<>,.?/";
            let plain: String = normalize_form(text, Form::Nfkd)
                .chars()
                .filter(|c| !('\u{300}'..='\u{36f}').contains(c))
                .collect();
            let slug = join_runs(&plain, |c| c.is_whitespace() || PUNCT.contains(c));
            let slug = slug.trim_matches('-');
            let slug = if slug.starts_with(|c: char| c.is_ascii_digit()) {
                format!("_{slug}")
            } else {
                slug.to_string()
            };
            crate::text::analyze::lowercase(&slug).into_owned()
        }
    }
}

/// `text` with each run of characters `sep` says are separators made one `-`.
fn join_runs(text: &str, sep: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for c in text.chars() {
        if sep(c) {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// A heading's text as a generator renders it (code spans' backticks, emphasis `*`, link
/// targets and HTML tags dropped), and the id it names for itself (`{#id}` at its end).
fn heading_text(heading: &str) -> (String, Option<String>) {
    let mut h = heading.trim();
    let mut id = None;
    // An attribute list at the end (`{#id}`, `{ #id .class }`, `{: #id }`): Python-Markdown's
    // attr_list, Docusaurus and Hugo read it, and drop it from the text.
    if let Some(open) = h.rfind('{').filter(|_| h.ends_with('}')) {
        let inner = h[open + 1..h.len() - 1].trim_start_matches(':');
        let attrs: Vec<&str> = inner.split_whitespace().collect();
        let is_attr = |a: &&str| a.starts_with(['#', '.']) || a.contains('=');
        if !attrs.is_empty() && attrs.iter().all(is_attr) {
            id = attrs
                .iter()
                .find_map(|a| a.strip_prefix('#'))
                .filter(|name| !name.is_empty())
                .map(str::to_string);
            h = h[..open].trim_end();
        }
    }
    let mut out = String::with_capacity(h.len());
    let mut chars = h.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '`' | '*' => {}
            '<' => match h[i..].find('>') {
                Some(end)
                    if h[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/') =>
                {
                    while chars.peek().is_some_and(|&(j, _)| j <= i + end) {
                        chars.next();
                    }
                }
                _ => out.push(c),
            },
            // `[text](target)`: the text; the target skipped.
            ']' if h[i + 1..].starts_with('(') => match h[i..].find(')') {
                Some(end) => {
                    while chars.peek().is_some_and(|&(j, _)| j <= i + end) {
                        chars.next();
                    }
                }
                None => out.push(c),
            },
            '[' => {}
            _ => out.push(c),
        }
    }
    (out, id)
}

/// How a site's pages are linked: the URL rule (a generator's [`Layout`], or a pattern) and
/// the pages whose frontmatter sets their own URL. Serialized into the bundle's `site.json`
/// (`links`) and read back by the browser's search module.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteLinks {
    /// The generator whose URL rule applies, when no pattern is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// A URL pattern instead of a generator's rule: `{path}` is the page's path without its
    /// extension (`/docs/{path}.html`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// How headings become anchors.
    #[serde(default)]
    pub anchors: Anchors,
    /// Per source path, the URL its frontmatter sets (`permalink`, or `slug` where the
    /// generator reads it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pages: BTreeMap<String, String>,
}

impl SiteLinks {
    /// A generator's rules, with no page of its own.
    pub fn for_layout(layout: Layout) -> SiteLinks {
        SiteLinks {
            layout: Some(layout),
            pattern: None,
            anchors: layout.anchors(),
            pages: BTreeMap::new(),
        }
    }

    /// A URL pattern (`/docs/{path}.html`) with the anchors `anchors` makes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the pattern has no `{path}`.
    pub fn for_pattern(pattern: &str, anchors: Anchors) -> Result<SiteLinks> {
        if !pattern.contains("{path}") {
            return Err(Error::invalid_argument(format!(
                "the URL pattern `{pattern}` has no `{{path}}`"
            )));
        }
        Ok(SiteLinks {
            layout: None,
            pattern: Some(pattern.to_string()),
            anchors,
            pages: BTreeMap::new(),
        })
    }

    /// Reads links from `site.json`'s `links` (JSON), checked as [`SiteLinks::for_pattern`]
    /// checks a pattern; a layout or a pattern is needed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming what is wrong.
    pub fn from_json(json: &str) -> Result<SiteLinks> {
        let links: SiteLinks = serde_json::from_str(json)
            .map_err(|e| Error::invalid_argument(format!("site links: {e}")))?;
        match &links.pattern {
            Some(p) => SiteLinks::for_pattern(p, links.anchors).map(|_| links),
            None if links.layout.is_none() => Err(Error::invalid_argument(
                "site links: neither a layout nor a pattern",
            )),
            None => Ok(links),
        }
    }

    /// Records the URLs the pages' frontmatter sets: `permalink` (any generator), `slug`
    /// (Docusaurus and Hugo, which read it; starting with `/`, from the docs' root).
    pub fn add_overrides<'a>(&mut self, pages: impl IntoIterator<Item = &'a Page>) {
        for page in pages {
            let field = |name: &str| {
                page.extra
                    .0
                    .get(name)
                    .and_then(|v| v.as_str())
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
            };
            let url = if let Some(permalink) = field("permalink") {
                Some(permalink.to_string())
            } else {
                match (self.layout, field("slug")) {
                    (Some(Layout::Docusaurus), Some(slug)) => Some(match slug.strip_prefix('/') {
                        Some(rooted) => format!("docs/{rooted}"),
                        None => replace_last(&self.page_url(&page.path), slug),
                    }),
                    (Some(Layout::Hugo), Some(slug)) => {
                        let url = self.page_url(&page.path);
                        Some(format!(
                            "{}/",
                            replace_last(&url, slug).trim_end_matches('/')
                        ))
                    }
                    _ => None,
                }
            };
            if let Some(url) = url {
                self.pages.insert(page.path.clone(), url);
            }
        }
    }

    /// The URL of the page built from the source file `path` (relative to the docs folder,
    /// `/`-separated), relative to the site's root unless the rule makes it absolute.
    pub fn page_url(&self, path: &str) -> String {
        if let Some(url) = self.pages.get(path) {
            return url.clone();
        }
        let stem = crate::text::page::strip_md_extension(path.trim_start_matches('/'));
        if let Some(pattern) = &self.pattern {
            return pattern.replace("{path}", stem);
        }
        let (dir, name) = stem.rsplit_once('/').unwrap_or(("", stem));
        let is = |names: &[&str]| names.iter().any(|n| name.eq_ignore_ascii_case(n));
        let folder = |prefix: &str, dir: &str| {
            if dir.is_empty() {
                if prefix.is_empty() {
                    "./".to_string()
                } else {
                    prefix.to_string()
                }
            } else {
                format!("{prefix}{dir}/")
            }
        };
        match self.layout.unwrap_or(Layout::Mkdocs) {
            Layout::Mkdocs if is(&["index", "readme"]) => folder("", dir),
            Layout::Mkdocs => format!("{stem}/"),
            Layout::Mdbook if is(&["readme"]) => {
                if dir.is_empty() {
                    "index.html".into()
                } else {
                    format!("{dir}/index.html")
                }
            }
            Layout::Mdbook => format!("{stem}.html"),
            Layout::Docusaurus => {
                let strip = |s: &str| {
                    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
                    match s.as_bytes().get(digits) {
                        Some(b'-' | b'_' | b'.') if digits > 0 => s[digits + 1..].to_string(),
                        _ => s.to_string(),
                    }
                };
                let dir: Vec<String> = dir
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(strip)
                    .collect();
                let name = strip(name);
                let last = dir.last().map(String::as_str);
                let dir = dir.join("/");
                if ["index", "readme"]
                    .iter()
                    .any(|n| name.eq_ignore_ascii_case(n))
                    || last == Some(name.as_str())
                {
                    folder("docs/", &dir)
                } else if dir.is_empty() {
                    format!("docs/{name}")
                } else {
                    format!("docs/{dir}/{name}")
                }
            }
            Layout::Vitepress if is(&["index"]) => folder("", dir),
            Layout::Vitepress => format!("{stem}.html"),
            Layout::Hugo if is(&["_index", "index"]) => {
                folder("", &crate::text::analyze::lowercase(dir))
            }
            Layout::Hugo => format!("{}/", crate::text::analyze::lowercase(stem)),
        }
    }

    /// The link of a hit: its page's URL ([`SiteLinks::page_url`]) and the anchor of the
    /// innermost of `headings` (a hit's `headings`), except when that heading is the page's
    /// `title` (the top of the page).
    pub fn href(&self, path: &str, title: &str, headings: &[String]) -> String {
        let url = self.page_url(path);
        let Some(h) = headings.last() else { return url };
        let (text, id) = heading_text(h);
        if headings.len() == 1 && is_title(&text, title) {
            return url;
        }
        let id = id.unwrap_or_else(|| slug(self.anchors, &text));
        if id.is_empty() {
            url
        } else {
            format!("{url}#{id}")
        }
    }

    /// The headings a hit is shown under, as the site renders them (their Markdown read as
    /// text, attribute lists left out), outermost first, without the page's `title` when it
    /// is the outermost (a result shows the title already).
    pub fn trail(title: &str, headings: &[String]) -> Vec<String> {
        let mut texts: Vec<String> = headings
            .iter()
            .map(|h| heading_text(h).0.trim().to_string())
            .collect();
        if texts.first().is_some_and(|t| is_title(t, title)) {
            texts.remove(0);
        }
        texts
    }
}

/// Whether a heading's rendered `text` is the page's `title`.
fn is_title(text: &str, title: &str) -> bool {
    text.trim() == title.trim()
}

/// `url` with its last path segment replaced by `slug`.
fn replace_last(url: &str, slug: &str) -> String {
    let trimmed = url.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{slug}"),
        None => slug.to_string(),
    }
}

/// The build configuration of a docs folder: `config` with page keys from whole paths, and
/// English analysis unless `config` names a language.
pub fn docs_config(mut config: crate::Config) -> crate::Config {
    config.keys = Keys::Path;
    // The site's search module stems English only unless it is built for other languages
    // (scripts/wasm-build.sh, WASM_SEARCH_LANGUAGES): a language detected from the pages
    // would make its blob `unsupported_language` there, so a site is English unless told.
    config.language.get_or_insert(crate::Language::English);
    config
}

/// What a site's bundle says of itself: `site.json` in the bundle folder, which the search UI
/// reads first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The version of wikidex that wrote the bundle.
    pub wikidex: String,
    /// The index blob's file name, in the bundle folder.
    pub blob: String,
    /// The length of the blob's head ([`crate::RangedIndex::head_end`]): the UI's first
    /// request asks for these bytes exactly.
    pub head_end: u64,
    /// The site's root, relative to the bundle folder (`../`).
    pub root: String,
    /// How hits link to the site's pages.
    pub links: SiteLinks,
    /// Pages indexed.
    pub pages: usize,
    /// Their chunks.
    pub chunks: usize,
    /// Every tag of a page, sorted: the UI's filters.
    pub tags: Vec<String>,
    /// Every page type, sorted.
    pub types: Vec<String>,
    /// The semantic lane, when the bundle holds vectors ([`write()`] with a model): what the
    /// UI's toggle loads to embed queries in the browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticManifest>,
}

/// The model a bundle's UI runs in the browser to embed queries: the same ONNX file and
/// tokenizer that embedded the pages, and the browser's module with the model runner
/// (`pkg-full`), all under [`SEMANTIC_DIR`] in the bundle folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SemanticManifest {
    /// The model's id, as the index stores it with its vectors.
    pub model_id: String,
    /// Dimensions of its vectors.
    pub dim: usize,
    /// What it puts before a query and a passage.
    pub prompts: crate::embed::Prompts,
    /// The module with the model runner (its `.wasm` beside it), relative to the bundle.
    pub module: String,
    /// The ONNX file, relative to the bundle.
    pub onnx: String,
    /// Its `tokenizer.json`, relative to the bundle.
    pub tokenizer: String,
    /// What turning the lane on downloads: the module, its `.wasm`, the model and its
    /// tokenizer, in bytes as stored.
    pub bytes: u64,
}

/// How to index a docs folder for its site ([`write()`]; `wikidex site`'s flags, the JSON the
/// Node package's `writeSiteSync` takes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SiteOptions {
    /// The site's generator: its URL and anchor rules.
    pub layout: Option<Layout>,
    /// A URL pattern (`/docs/{path}.html`) instead of the generator's URL rule.
    pub url_pattern: Option<String>,
    /// The anchor rule, when not the layout's (with a pattern alone: [`Anchors::Github`]).
    pub anchors: Option<Anchors>,
    /// The bundle's folder, relative to the site's output folder (default `wikidex`).
    pub bundle_dir: Option<String>,
    /// The index's configuration ([`Config::keys`](crate::Config::keys) is always
    /// [`Keys::Path`]).
    pub config: crate::Config,
    /// A broken page fails the build instead of being skipped and reported.
    pub strict: bool,
}

impl SiteOptions {
    /// The links these options give, before the pages' own.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when neither a layout nor a pattern is given, or the pattern
    /// has no `{path}`.
    pub fn links(&self) -> Result<SiteLinks> {
        let mut links = match (&self.url_pattern, self.layout) {
            (Some(p), layout) => {
                let mut l =
                    SiteLinks::for_pattern(p, layout.map_or(Anchors::Github, Layout::anchors))?;
                l.layout = layout;
                l
            }
            (None, Some(layout)) => SiteLinks::for_layout(layout),
            (None, None) => {
                let names: Vec<_> = Layout::ALL.iter().map(|l| l.name()).collect();
                return Err(Error::invalid_argument(format!(
                    "name the site's generator (layout: {}) or give a URL pattern with `{{path}}`",
                    names.join(", ")
                )));
            }
        };
        if let Some(a) = self.anchors {
            links.anchors = a;
        }
        Ok(links)
    }

    /// The bundle folder's path under the output folder, checked: relative, `/`-separated,
    /// with no `..`; and the site's root relative to it (`../` per folder).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an absolute path, an empty one or one with `..`.
    pub fn bundle(&self) -> Result<(Vec<String>, String)> {
        let dir = self.bundle_dir.as_deref().unwrap_or("wikidex");
        let parts: Vec<String> = dir
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .map(str::to_string)
            .collect();
        if dir.starts_with(['/', '\\'])
            || parts.is_empty()
            || parts.iter().any(|p| p == ".." || p.contains(':'))
        {
            return Err(Error::invalid_argument(format!(
                "the bundle folder `{dir}` must be a folder inside the site's output folder (like `wikidex` or `assets/search`)"
            )));
        }
        let root = "../".repeat(parts.len());
        Ok((parts, root))
    }
}

/// Makes the bundle folder `dir`, or checks that an existing one is a bundle (it has a
/// [`MANIFEST_FILE`]) or is empty: a folder of the author's own is never written into.
#[cfg(feature = "fs")]
fn claim_folder(dir: &std::path::Path) -> Result<()> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if dir.join(MANIFEST_FILE).is_file() || entries.next().is_none() {
                return Ok(());
            }
            Err(Error::invalid_argument(format!(
                "{} exists and is not a wikidex bundle (no {MANIFEST_FILE}); refusing to write \
                 into it (remove it or choose another bundle folder)",
                dir.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
        }
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// What [`write()`] did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SiteReport {
    /// The bundle folder.
    pub bundle: std::path::PathBuf,
    /// The files written into it, by name.
    pub files: Vec<String>,
    /// Its `site.json`.
    pub manifest: Manifest,
    /// The build of the index.
    pub build: crate::BuildReport,
    /// What to paste into a page of the site: the UI's stylesheet and script (`ui.css`,
    /// `ui.js`, as the bundle's assets name them) from the bundle folder at the site's root,
    /// and the search element.
    pub snippet: String,
}

/// The blob's file name in the bundle.
pub const BLOB_FILE: &str = "wikidex.wdx";
/// The bundle's subfolder for the semantic lane ([`SemanticManifest`]): assets named
/// `semantic/…` are the browser's module with the model runner, written only with a model.
pub const SEMANTIC_DIR: &str = "semantic";
/// Whether the asset `name` goes under [`SEMANTIC_DIR`] (written only with a model).
#[cfg(feature = "fs")]
fn is_semantic(name: &str) -> bool {
    name.split_once('/')
        .is_some_and(|(dir, _)| dir == SEMANTIC_DIR)
}

/// The module with the model runner, among the assets.
#[cfg(all(feature = "fs", feature = "embed"))]
const SEMANTIC_MODULE: [&str; 2] = ["semantic/wikidex_wasm.js", "semantic/wikidex_wasm_bg.wasm"];
/// The manifest's file name in the bundle.
pub const MANIFEST_FILE: &str = "site.json";

/// Indexes the Markdown sources in `src` (the folder the site's generator reads) and writes
/// the search bundle into `out`'s bundle folder (`out/wikidex/` by default): the blob
/// ([`BLOB_FILE`]), [`MANIFEST_FILE`], and `assets` (the browser's search module and UI, as
/// the caller ships them: `(file name, bytes)`). Nothing outside the bundle folder is
/// written; the author's HTML stays as it is.
///
/// Without a model, the bundle searches with the lexical and token lanes, and the assets under
/// [`SEMANTIC_DIR`] are not written (nor kept from an earlier run). With `model` (a model
/// folder, as `--model` names it), the pages are embedded with it, and the bundle's
/// [`SEMANTIC_DIR`] holds what the UI's semantic toggle loads: the module with the model runner
/// (the caller's `semantic/wikidex_wasm.js` and `semantic/wikidex_wasm_bg.wasm` assets), the
/// model's ONNX file and its tokenizer ([`Manifest::semantic`]).
///
/// # Errors
/// As [`SiteOptions::links`] and [`SiteOptions::bundle`]; an asset name that is not a plain
/// file name (or one under [`SEMANTIC_DIR`]), or that is the blob's or the manifest's, is
/// [`Error::InvalidArgument`], and so is a model without the module's assets; a model that
/// does not load (or a build without the model runner) is [`Error::Model`]; the build's errors
/// ([`crate::build`]); [`Error::Io`] naming the file that could not be read or written.
#[cfg(feature = "fs")]
pub fn write(
    src: &std::path::Path,
    out: &std::path::Path,
    options: &SiteOptions,
    assets: &[(String, Vec<u8>)],
    model: Option<&std::path::Path>,
    progress: &mut dyn FnMut(crate::BuildStage, usize, usize) -> std::ops::ControlFlow<()>,
) -> Result<SiteReport> {
    let mut links = options.links()?;
    let (parts, root) = options.bundle()?;
    let plain = |n: &str| !n.is_empty() && !n.contains(['/', '\\']) && !n.starts_with('.');
    for (name, _) in assets {
        let ok = match name.split_once('/') {
            Some((SEMANTIC_DIR, rest)) => plain(rest),
            Some(_) => false,
            None => plain(name),
        };
        if !ok || name == BLOB_FILE || name == MANIFEST_FILE {
            return Err(Error::invalid_argument(format!(
                "asset `{name}`: a bundle file needs a plain file name (or `{SEMANTIC_DIR}/` and one) other than {BLOB_FILE} and {MANIFEST_FILE}"
            )));
        }
    }
    let semantic = model.map(|dir| site_model(dir, assets)).transpose()?;
    let build = crate::BuildOptions {
        config: docs_config(options.config.clone()),
        strict: options.strict,
        ..crate::BuildOptions::default()
    };
    let (index, sync) = crate::build(
        crate::Source::Folder(src.to_path_buf()),
        &build,
        crate::ModelChoice::from(semantic.as_ref().map(|s| s.embedder.clone())),
        None,
        progress,
    )?;
    let report = sync.build;
    links.add_overrides(index.pages().iter().map(|p| &**p));
    let bytes = index.to_bytes()?;
    let mut tags: Vec<String> = index
        .pages()
        .iter()
        .flat_map(|p| p.tags.iter().cloned())
        .collect();
    tags.sort();
    tags.dedup();
    let mut types: Vec<String> = index
        .pages()
        .iter()
        .filter_map(|p| p.kind.clone())
        .collect();
    types.sort();
    types.dedup();
    let manifest = Manifest {
        wikidex: env!("CARGO_PKG_VERSION").to_string(),
        blob: BLOB_FILE.to_string(),
        head_end: crate::RangedIndex::head_end(&bytes)?,
        root,
        links,
        pages: report.pages,
        chunks: report.chunks,
        tags,
        types,
        semantic: semantic.as_ref().map(|s| s.manifest.clone()),
    };
    let dir = parts.iter().fold(out.to_path_buf(), |d, p| d.join(p));
    claim_folder(&dir)?;
    let json = serde_json::to_vec_pretty(&manifest).map_err(|e| Error::Encode {
        detail: format!("site.json: {e}"),
    })?;
    // A bundle written with a model before keeps no model files it no longer uses.
    let semantic_dir = dir.join(SEMANTIC_DIR);
    match std::fs::remove_dir_all(&semantic_dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::io(&semantic_dir, e))
        }
        _ => {}
    }
    let mut files = Vec::new();
    let blob = (BLOB_FILE.to_string(), bytes);
    let head = (MANIFEST_FILE.to_string(), json);
    let model_files = semantic.as_ref().map_or(&[][..], |s| &s.files[..]);
    let shipped = assets
        .iter()
        .filter(|(name, _)| semantic.is_some() || !is_semantic(name));
    for (name, data) in std::iter::once(&blob)
        .chain(shipped)
        .chain(model_files)
        .chain(std::iter::once(&head))
    {
        let path = dir.join(name);
        if name == BLOB_FILE {
            crate::front::file::save_atomic(&path, data)?;
        } else {
            let parent = path.parent().unwrap_or(&dir);
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or(name);
            let temp = parent.join(format!(".{file}.wikidex-tmp"));
            std::fs::write(&temp, data).map_err(|e| Error::io(&temp, e))?;
            std::fs::rename(&temp, &path).map_err(|e| Error::io(&path, e))?;
        }
        files.push(name.clone());
    }
    let at = parts.join("/");
    Ok(SiteReport {
        bundle: dir,
        files,
        manifest,
        build: report,
        snippet: format!(
            "<link rel=\"stylesheet\" href=\"/{at}/ui.css\">\n\
             <script type=\"module\" src=\"/{at}/ui.js\"></script>\n\
             <wikidex-search></wikidex-search>"
        ),
    })
}

/// A bundle's model: what embeds the pages, what `site.json` says of it, and the files the
/// bundle gets for it (the ONNX file and the tokenizer; the module comes with the assets).
#[cfg(feature = "fs")]
struct SiteModel {
    embedder: std::sync::Arc<dyn crate::embed::Embedder>,
    manifest: SemanticManifest,
    files: Vec<(String, Vec<u8>)>,
}

/// Loads the model in `dir` (as [`crate::embed::discover`] loads a named folder) and reads the
/// files the browser loads to run it.
#[cfg(all(feature = "fs", feature = "embed"))]
fn site_model(dir: &std::path::Path, assets: &[(String, Vec<u8>)]) -> Result<SiteModel> {
    use crate::embed::Embedder as _;
    let missing: Vec<&str> = SEMANTIC_MODULE
        .iter()
        .copied()
        .filter(|m| !assets.iter().any(|(n, _)| n == m))
        .collect();
    if !missing.is_empty() {
        return Err(Error::invalid_argument(format!(
            "a bundle with a model needs the browser's module with the model runner, and this \
             wikidex was packaged without {} (in a checkout: `make wasm`)",
            missing.join(", ")
        )));
    }
    let found = crate::embed::Found::named(dir)?;
    let model = found.load(crate::OnnxOptions::default())?;
    let read = |path: &std::path::Path| std::fs::read(path).map_err(|e| Error::io(path, e));
    let onnx = format!("{SEMANTIC_DIR}/model.onnx");
    let tokenizer = format!("{SEMANTIC_DIR}/tokenizer.json");
    let files = vec![
        (onnx.clone(), read(&found.onnx)?),
        (tokenizer.clone(), read(&found.tokenizer())?),
    ];
    let bytes = assets
        .iter()
        .filter(|(n, _)| is_semantic(n))
        .chain(&files)
        .map(|(_, b)| b.len() as u64)
        .sum();
    let manifest = SemanticManifest {
        model_id: model.model_id().to_string(),
        dim: model.dim(),
        prompts: model.prompts().clone(),
        module: SEMANTIC_MODULE[0].to_string(),
        onnx,
        tokenizer,
        bytes,
    };
    Ok(SiteModel {
        embedder: std::sync::Arc::new(model),
        manifest,
        files,
    })
}

/// Without the model runner, a model is an error.
#[cfg(all(feature = "fs", not(feature = "embed")))]
fn site_model(dir: &std::path::Path, _: &[(String, Vec<u8>)]) -> Result<SiteModel> {
    Err(Error::Model {
        detail: format!(
            "{}: this build of wikidex has no model runner (the `embed` feature)",
            dir.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_layout_maps_paths_to_its_urls() {
        let url = |l: Layout, p: &str| SiteLinks::for_layout(l).page_url(p);
        assert_eq!(url(Layout::Mkdocs, "index.md"), "./");
        assert_eq!(url(Layout::Mkdocs, "a/README.md"), "a/");
        assert_eq!(url(Layout::Mkdocs, "a/b.md"), "a/b/");
        assert_eq!(url(Layout::Mdbook, "README.md"), "index.html");
        assert_eq!(url(Layout::Mdbook, "a/b.md"), "a/b.html");
        assert_eq!(
            url(Layout::Docusaurus, "01-intro/02-setup.md"),
            "docs/intro/setup"
        );
        assert_eq!(url(Layout::Docusaurus, "guide/guide.md"), "docs/guide/");
        assert_eq!(url(Layout::Docusaurus, "index.md"), "docs/");
        assert_eq!(url(Layout::Vitepress, "guide/index.md"), "guide/");
        assert_eq!(url(Layout::Vitepress, "guide/intro.md"), "guide/intro.html");
        assert_eq!(url(Layout::Hugo, "Posts/_index.md"), "posts/");
        assert_eq!(url(Layout::Hugo, "Posts/My-Post.md"), "posts/my-post/");
        let p = SiteLinks::for_pattern("/docs/{path}.html", Anchors::Github).unwrap();
        assert_eq!(p.page_url("a/b.md"), "/docs/a/b.html");
        assert_eq!(
            SiteLinks::for_pattern("/docs/x.html", Anchors::Github)
                .unwrap_err()
                .code(),
            "invalid_argument"
        );
    }

    #[test]
    fn anchors_follow_each_generator() {
        let a = |s: Anchors, t: &str| anchor(s, t);
        assert_eq!(
            a(Anchors::Mkdocs, "Übersicht & `Setup`  -- now"),
            "ubersicht-setup-now"
        );
        assert_eq!(a(Anchors::Mkdocs, "my_func()"), "my_func");
        assert_eq!(a(Anchors::Github, "Hello, World! 2"), "hello-world-2");
        assert_eq!(a(Anchors::Github, "A  b"), "a--b");
        assert_eq!(
            a(Anchors::Mdbook, "Über [the](x.md) Book?"),
            "Über-the-book"
        );
        assert_eq!(a(Anchors::Vitepress, "1. What's new?"), "_1-what-s-new");
        assert_eq!(
            a(Anchors::Github, "Setup <small>beta</small> {#custom}"),
            "custom"
        );
    }

    #[test]
    fn hrefs_point_at_the_heading_unless_it_is_the_title() {
        let l = SiteLinks::for_layout(Layout::Mkdocs);
        assert_eq!(l.href("a.md", "A", &h(&["A"])), "a/");
        assert_eq!(l.href("a.md", "A", &h(&[])), "a/");
        assert_eq!(
            l.href("a.md", "A", &h(&["A", "Install it"])),
            "a/#install-it"
        );
        assert_eq!(
            l.href("a.md", "Title", &h(&["Only section"])),
            "a/#only-section"
        );
    }

    #[test]
    fn frontmatter_overrides_the_rule_and_round_trips() {
        let page = |path: &str, extra: &[(&str, &str)]| {
            let mut p = crate::page::parse_with(path, "x", Keys::Path).unwrap().page;
            for (k, v) in extra {
                p.extra
                    .0
                    .insert(k.to_string(), serde_json::Value::String(v.to_string()));
            }
            p
        };
        let mut l = SiteLinks::for_layout(Layout::Docusaurus);
        let pages = [
            page("a/b.md", &[("slug", "bee")]),
            page("c.md", &[("slug", "/top")]),
            page("d.md", &[("permalink", "/elsewhere/d")]),
            page("e.md", &[]),
        ];
        l.add_overrides(&pages);
        assert_eq!(l.page_url("a/b.md"), "docs/a/bee");
        assert_eq!(l.page_url("c.md"), "docs/top");
        assert_eq!(l.page_url("d.md"), "/elsewhere/d");
        assert_eq!(l.page_url("e.md"), "docs/e");
        let json = serde_json::to_string(&l).unwrap();
        assert_eq!(serde_json::from_str::<SiteLinks>(&json).unwrap(), l);
        let parts = SiteLinks::from_json(
            r#"{"layout": "docusaurus", "anchors": "github", "pages": {"a/b.md": "docs/a/bee", "c.md": "docs/top", "d.md": "/elsewhere/d"}}"#,
        );
        assert_eq!(parts.unwrap(), l);
        let err = |json: &str| SiteLinks::from_json(json).unwrap_err().code();
        assert_eq!(err("{}"), "invalid_argument");
        assert_eq!(err(r#"{"layout": "jekyll"}"#), "invalid_argument");
        assert_eq!(err(r#"{"pattern": "/x"}"#), "invalid_argument");
        assert_eq!(
            err(r#"{"layout": "hugo", "anchors": "kebab"}"#),
            "invalid_argument"
        );
    }
}
