//! The one error type of the crate, with a stable machine-readable [`Error::code`].

/// Everything that can stop an operation. Findings (a skipped page, a lint issue, a citation
/// verdict) are values in reports, not errors: `Err` means the operation itself could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a wikidex index.
    #[error("not a wikidex index (bad magic bytes)")]
    NotAnIndex,
    /// Written by a format version this build cannot read.
    #[error("index format v{found} unsupported; this build reads v{oldest}..=v{current}")]
    IncompatibleFormat {
        /// Version found in the blob.
        found: u32,
        /// Oldest version this build reads.
        oldest: u32,
        /// Newest version this build reads (the one it writes).
        current: u32,
    },
    /// Truncated, corrupted or internally inconsistent index bytes.
    #[error("corrupt index: {detail}")]
    Corrupt {
        /// What was wrong.
        detail: String,
    },
    /// A page could not be parsed (broken YAML frontmatter, invalid UTF-8, ...).
    #[error("invalid page {path}{}: {reason}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    InvalidPage {
        /// Path of the page relative to the wiki root.
        path: String,
        /// 1-based line in the file, when known.
        line: Option<u32>,
        /// What was wrong.
        reason: String,
    },
    /// Two pages in the same scope have the same key.
    #[error("duplicate key `{key}` in scope {scope}: {first} and {second}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The scope both pages are in.
        scope: String,
        /// The path that defined the key first.
        first: String,
        /// The path that defined it again.
        second: String,
    },
    /// No page with this key (in the scope asked for).
    #[error("unknown page `{key}`")]
    UnknownPage {
        /// The key asked for.
        key: String,
    },
    /// No chunk with this id.
    #[error("unknown chunk `{id}`")]
    UnknownChunk {
        /// The id asked for.
        id: String,
    },
    /// An argument is out of range or malformed.
    #[error("invalid argument: {detail}")]
    InvalidArgument {
        /// What was wrong.
        detail: String,
    },
    /// An input collection (e.g. BEIR files) could not be read or parsed.
    #[error("invalid input {path}{}: {reason}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
    InvalidInput {
        /// The file.
        path: String,
        /// 1-based line, when known.
        line: Option<u32>,
        /// What was wrong.
        reason: String,
    },
    /// An embedding model could not be loaded or run.
    #[error("model error: {detail}")]
    Model {
        /// What was wrong.
        detail: String,
    },
    /// The index's vectors were made by another model than the one given.
    #[error("model mismatch: the index holds vectors of {index} ({index_fingerprint}), the embedder is {given} ({given_fingerprint})")]
    ModelMismatch {
        /// Model id stored in the index.
        index: String,
        /// Model fingerprint stored in the index.
        index_fingerprint: String,
        /// Model id of the embedder given.
        given: String,
        /// Fingerprint of the embedder given.
        given_fingerprint: String,
    },
    /// A page write was rejected because some of its refs or links point at no page visible
    /// in its scope. Nothing was changed.
    #[error("page `{page}` links to missing pages: {}", missing.join(", "))]
    DanglingLinks {
        /// The id of the page that was written.
        page: String,
        /// The targets that resolve to no visible page, sorted.
        missing: Vec<String>,
    },
    /// A write tried to change a raw source document: raw chunks are immutable evidence.
    #[error("raw document `{id}` is immutable")]
    Immutable {
        /// The raw document's id.
        id: String,
    },
    /// A page write needs new embeddings but no embedder is attached (the index holds vectors
    /// of a model; attach it, or write without new text).
    #[error("no embedder attached: {detail}")]
    NoEmbedder {
        /// What needed the embedder.
        detail: String,
    },
    /// The index could not be encoded as a blob (a value the format cannot hold).
    #[error("cannot encode the index: {detail}")]
    Encode {
        /// What was wrong.
        detail: String,
    },
    /// An input is above one of the crate's caps (an answer too long to verify, too many cited
    /// ids, a page too large, ...). Nothing was done.
    #[error("{what} is too large: {found} is above the limit of {limit}")]
    TooLarge {
        /// What was measured, with its unit (`answer bytes`, `cited ids`, ...).
        what: String,
        /// The cap.
        limit: u64,
        /// The size found.
        found: u64,
    },
    /// The caller stopped the operation (its progress callback asked to stop: Ctrl-C in
    /// Python, an `AbortSignal` in JavaScript). Nothing was built or changed.
    #[error("cancelled during {stage}")]
    Cancelled {
        /// What was under way: `pages` or `embeddings`.
        stage: String,
    },
    /// The operation reads parts of a sectioned blob that a [`crate::RangedIndex`] has not
    /// loaded yet: fetch these byte ranges of the blob, hand each to
    /// [`crate::RangedIndex::supply`], and ask again.
    #[error("needs {} more byte ranges of the blob", ranges.len())]
    NotLoaded {
        /// `[start, end)` byte offsets in the blob, ascending, adjacent ones joined.
        ranges: Vec<[u64; 2]>,
    },
    /// The index's language has no stemmer in this build: the core was compiled without
    /// that language's `stem-*` feature (the browser's search module has English only unless
    /// it is built for others). Nothing was loaded or built.
    #[error("this build has no stemmer for {language} (it has: {}); build it with the core's feature stem-{language}", available.join(", "))]
    UnsupportedLanguage {
        /// The language asked for (`french`, ...).
        language: String,
        /// The languages this build analyzes (`none` always among them).
        available: Vec<String>,
    },
    /// A file-system operation failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A stable, machine-readable code for this error, the same in every binding.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NotAnIndex => "not_an_index",
            Error::IncompatibleFormat { .. } => "incompatible_format",
            Error::Corrupt { .. } => "corrupt_index",
            Error::InvalidPage { .. } => "invalid_page",
            Error::DuplicateKey { .. } => "duplicate_key",
            Error::UnknownPage { .. } => "unknown_page",
            Error::UnknownChunk { .. } => "unknown_chunk",
            Error::InvalidArgument { .. } => "invalid_argument",
            Error::InvalidInput { .. } => "invalid_input",
            Error::Model { .. } => "model",
            Error::ModelMismatch { .. } => "model_mismatch",
            Error::DanglingLinks { .. } => "dangling_links",
            Error::Immutable { .. } => "immutable_chunk",
            Error::NoEmbedder { .. } => "no_embedder",
            Error::Encode { .. } => "encode",
            Error::TooLarge { .. } => "too_large",
            Error::Cancelled { .. } => "cancelled",
            Error::NotLoaded { .. } => "not_loaded",
            Error::UnsupportedLanguage { .. } => "unsupported_language",
            Error::Io { .. } => "io",
        }
    }

    /// What a caller acts on, as a JSON object: the error's fields (for
    /// [`Error::DanglingLinks`], the page and its missing targets; for [`Error::InvalidPage`],
    /// the path and line; ...). Empty for errors that carry nothing beyond their message.
    pub fn details(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Error::NotAnIndex => json!({}),
            Error::IncompatibleFormat {
                found,
                oldest,
                current,
            } => json!({"found": found, "oldest": oldest, "current": current}),
            Error::Corrupt { detail }
            | Error::InvalidArgument { detail }
            | Error::Model { detail }
            | Error::NoEmbedder { detail }
            | Error::Encode { detail } => json!({ "detail": detail }),
            Error::InvalidPage { path, line, reason }
            | Error::InvalidInput { path, line, reason } => {
                json!({"path": path, "line": line, "reason": reason})
            }
            Error::DuplicateKey {
                key,
                scope,
                first,
                second,
            } => json!({"key": key, "scope": scope, "first": first, "second": second}),
            Error::UnknownPage { key } => json!({ "key": key }),
            Error::UnknownChunk { id } | Error::Immutable { id } => json!({ "id": id }),
            Error::ModelMismatch {
                index,
                index_fingerprint,
                given,
                given_fingerprint,
            } => json!({
                "index": index,
                "index_fingerprint": index_fingerprint,
                "given": given,
                "given_fingerprint": given_fingerprint,
            }),
            Error::DanglingLinks { page, missing } => json!({"page": page, "missing": missing}),
            Error::TooLarge { what, limit, found } => {
                json!({"what": what, "limit": limit, "found": found})
            }
            Error::Cancelled { stage } => json!({ "stage": stage }),
            Error::NotLoaded { ranges } => json!({ "ranges": ranges }),
            Error::UnsupportedLanguage {
                language,
                available,
            } => json!({"language": language, "available": available}),
            Error::Io { path, source } => {
                json!({"path": path, "kind": format!("{:?}", source.kind())})
            }
        }
    }

    /// The error as the record every binding passes through: `{code, message, details}`.
    pub fn record(&self) -> ErrorRecord {
        ErrorRecord {
            code: self.code().to_string(),
            message: self.to_string(),
            details: self.details(),
        }
    }

    pub(crate) fn corrupt(detail: impl Into<String>) -> Self {
        Error::Corrupt {
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid_argument(detail: impl Into<String>) -> Self {
        Error::InvalidArgument {
            detail: detail.into(),
        }
    }

    pub(crate) fn too_large(what: impl Into<String>, limit: usize, found: usize) -> Self {
        Error::TooLarge {
            what: what.into(),
            limit: limit as u64,
            found: found as u64,
        }
    }

    #[cfg_attr(not(feature = "fs"), allow(dead_code))]
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

/// An [`Error`] as plain data: what the CLI prints with `--json` and what every binding's
/// exception or `Error` object carries (`code`, `message`, `details`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorRecord {
    /// The stable code ([`Error::code`]).
    pub code: String,
    /// The human-readable message.
    pub message: String,
    /// What a caller acts on ([`Error::details`]): always a JSON object.
    pub details: serde_json::Value,
}

impl serde::Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.record().serialize(s)
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

std::thread_local! {
    /// The message of the last value check that failed while decoding on this thread.
    static DECODE_CAUSE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A decoding error for a value that failed its own check, with `msg` kept for the error
/// `blob::decode` returns (the codec's own error would say only "Serde Deserialization Error").
pub(crate) fn decode_error<E: serde::de::Error>(msg: impl std::fmt::Display) -> E {
    let msg = msg.to_string();
    DECODE_CAUSE.with(|c| *c.borrow_mut() = Some(msg.clone()));
    E::custom(msg)
}

/// Takes the cause [`decode_error`] left on this thread, if any.
pub(crate) fn take_decode_cause() -> Option<String> {
    DECODE_CAUSE.with(|c| c.borrow_mut().take())
}

/// `x` for an error message: the shortest text that reads back as `x` (JSON's form, `11.0`,
/// `1e-7`), or `NaN`, `inf`, `-inf`. Not `{x}`: core's float formatting is 8 KB of the
/// browser module, for these messages only; serde_json's is there anyway.
pub(crate) fn show_f32(x: f32) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        serde_json::to_string(&x).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_snake_case() {
        let e = Error::UnknownChunk { id: "x".into() };
        assert_eq!(e.code(), "unknown_chunk");
        assert!(e.to_string().contains("`x`"));
        let e = Error::InvalidPage {
            path: "a.md".into(),
            line: Some(3),
            reason: "bad".into(),
        };
        assert_eq!(e.to_string(), "invalid page a.md (line 3): bad");
    }

    #[test]
    fn errors_serialize_as_code_message_and_details() {
        let e = Error::DanglingLinks {
            page: "a".into(),
            missing: vec!["b".into(), "c".into()],
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], "dangling_links");
        assert_eq!(v["message"], e.to_string());
        assert_eq!(v["details"]["missing"], serde_json::json!(["b", "c"]));
        assert!(serde_json::to_value(Error::NotAnIndex).unwrap()["details"].is_object());
    }

    #[test]
    fn floats_in_messages_read_back() {
        assert_eq!(show_f32(11.0), "11.0");
        assert_eq!(show_f32(0.75), "0.75");
        assert_eq!(show_f32(-1.5e-7), "-1.5e-7");
        assert_eq!(show_f32(f32::NAN), "NaN");
        assert_eq!(show_f32(f32::INFINITY), "inf");
        assert_eq!(show_f32(f32::NEG_INFINITY), "-inf");
    }
}
