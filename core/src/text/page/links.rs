//! The links of a page body: wiki links, Markdown links to pages, attachments left out, the
//! spans of each link, and the provenance comments.

use pulldown_cmark::{Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd};

use super::{is_markdown_path, normalize_key, strip_md_extension};

/// The key a link target points at: `[[ ]]` brackets, a `|label`, a `#heading` part and a
/// folder path are dropped, an `.md` extension is removed, then the rest is normalized.
/// Returns an empty string for a link to a heading in the same page.
pub fn link_key(target: &str) -> String {
    let t = target.trim();
    let t = t
        .strip_prefix("[[")
        .and_then(|t| t.strip_suffix("]]"))
        .unwrap_or(t);
    let t = t.split('|').next().unwrap_or(t);
    let t = t.split('#').next().unwrap_or(t);
    let name = t.rsplit('/').next().unwrap_or(t);
    normalize_key(strip_md_extension(name))
}

/// File types Obsidian embeds that are not pages.
pub(super) const ATTACHMENT_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "webp",
    "bmp",
    "avif",
    "pdf",
    "mp3",
    "mp4",
    "webm",
    "wav",
    "ogg",
    "m4a",
    "flac",
    "mov",
    "mkv",
    "canvas",
    "excalidraw",
    "csv",
    "json",
    "txt",
    "zip",
];

pub(super) fn is_attachment(target: &str) -> bool {
    let name = target.split(['#', '|']).next().unwrap_or(target);
    let name = name.rsplit('/').next().unwrap_or(name);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ATTACHMENT_EXTENSIONS
            .iter()
            .any(|a| a.eq_ignore_ascii_case(ext)),
        _ => false,
    }
}

/// The key a Markdown link destination points at, if it is a relative link to a `.md` file.
pub(super) fn markdown_link_key(dest: &str) -> Option<String> {
    let dest = dest.trim();
    if dest.starts_with('#') || dest.contains("://") || dest.starts_with("mailto:") {
        return None;
    }
    let path = dest.split(['#', '?']).next().unwrap_or(dest);
    let decoded = percent_decode(path);
    if !is_markdown_path(&decoded) {
        return None;
    }
    let key = link_key(&decoded);
    (!key.is_empty()).then_some(key)
}

pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) struct MarkdownScan {
    pub(super) first_heading: Option<String>,
    pub(super) links: Vec<String>,
    pub(super) spans: Vec<LinkSpan>,
}

/// One inline link in a page body: the key it points at and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkSpan {
    /// The normalized key the link points at.
    pub key: String,
    /// Byte offset of the link in the body.
    pub start: usize,
    /// Byte offset one past its end.
    pub end: usize,
}

/// Every inline link in `body` (the page text after its frontmatter), in order, with its byte
/// span: the same links, by the same rules, as [`Page::links`](super::Page::links), but not deduplicated.
pub fn link_spans(body: &str) -> Vec<LinkSpan> {
    scan_markdown(body).spans
}

pub(super) fn scan_markdown(body: &str) -> MarkdownScan {
    let opts = Options::ENABLE_WIKILINKS | Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut first_heading = None;
    let mut in_h1 = false;
    let mut heading_text = String::new();
    let mut links = Vec::new();
    let mut spans = Vec::new();
    for (event, range) in Parser::new_ext(body, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading {
                level: HeadingLevel::H1,
                ..
            }) if first_heading.is_none() => {
                in_h1 = true;
                heading_text.clear();
            }
            Event::End(TagEnd::Heading(HeadingLevel::H1)) if in_h1 => {
                in_h1 = false;
                let t = heading_text.trim();
                if !t.is_empty() {
                    first_heading = Some(t.to_string());
                }
            }
            Event::Text(t) | Event::Code(t) if in_h1 => heading_text.push_str(&t),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            })
            | Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => {
                let key = match link_type {
                    LinkType::WikiLink { .. } => {
                        (!is_attachment(&dest_url)).then(|| link_key(&dest_url))
                    }
                    _ => markdown_link_key(&dest_url),
                };
                if let Some(k) = key.filter(|k| !k.is_empty()) {
                    spans.push(LinkSpan {
                        key: k.clone(),
                        start: range.start,
                        end: range.end,
                    });
                    links.push(k);
                }
            }
            _ => {}
        }
    }
    MarkdownScan {
        first_heading,
        links,
        spans,
    }
}

pub(super) fn provenance_comments(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(start) = rest.find("<!--") {
        let after = &rest[start + 4..];
        let Some(end) = after.find("-->") else { break };
        let inner = after[..end].trim();
        if let Some(path) = inner.strip_prefix("from:") {
            let path = path.trim();
            if !path.is_empty() {
                out.push(path.to_string());
            }
        }
        rest = &after[end + 3..];
    }
    out
}

pub(super) fn dedupe(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .filter(|s| seen.insert(s.clone()))
        .collect()
}
