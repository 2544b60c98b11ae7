//! Options objects as callers write them (JSON text from Python, objects from JavaScript),
//! turned into the core's option types in one place, so every surface refuses what no option
//! is: an unknown key is [`Error::InvalidArgument`] naming it and the nearest known key
//! (`config: unknown key `langauge`; did you mean `language`?`), not a setting silently
//! ignored.

use serde::de::DeserializeOwned;

use crate::data::error::{Error, Result};

/// `json` (an object, or `None` for the defaults) as `T`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `what` for malformed JSON, a wrong type, or an unknown key.
pub fn from_json<T: DeserializeOwned + Default>(what: &str, json: Option<&str>) -> Result<T> {
    match json {
        None => Ok(T::default()),
        Some(j) => serde_json::from_str(j).map_err(|e| invalid(what, &e.to_string())),
    }
}

/// `value` (an object; `None` or `null` for the defaults) as `T`.
///
/// # Errors
/// As [`from_json`]; a value that is not an object is refused too.
pub fn from_value<T: DeserializeOwned + Default>(
    what: &str,
    value: Option<serde_json::Value>,
) -> Result<T> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(T::default()),
        Some(v @ serde_json::Value::Object(_)) => {
            serde_json::from_value(v).map_err(|e| invalid(what, &e.to_string()))
        }
        Some(other) => Err(Error::invalid_argument(format!(
            "{what} must be an object, not {other}"
        ))),
    }
}

/// Checks the keys of an options object a binding reads field by field (a JavaScript object
/// holding functions or class instances, which no JSON can carry) against the `known` ones.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the first unknown key and the nearest known one.
pub fn check_keys<'a>(
    what: &str,
    keys: impl IntoIterator<Item = &'a str>,
    known: &[&str],
) -> Result<()> {
    match keys.into_iter().find(|k| !known.contains(k)) {
        None => Ok(()),
        Some(key) => Err(unknown_key(what, key, known)),
    }
}

fn unknown_key(what: &str, key: &str, known: &[&str]) -> Error {
    // Fewest edits; among equals, a key that starts as this one does (`k` -> `k1`, not `b`).
    let nearest = known.iter().min_by_key(|k| {
        let prefix = k.starts_with(key) || key.starts_with(*k);
        (edits(key, k), !prefix, k.len())
    });
    let hint = match nearest {
        Some(n) => format!("; did you mean `{n}`? (known keys: {})", known.join(", ")),
        None => String::new(),
    };
    Error::invalid_argument(format!("{what}: unknown key `{key}`{hint}"))
}

/// The error for options that did not deserialize, from the deserializer's `message`: for an
/// unknown key (serde's `unknown field `k`, expected one of `a`, `b``), one that names the key
/// and the nearest known one.
pub fn invalid(what: &str, message: &str) -> Error {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        if let Some((key, known)) = names.split_first() {
            return unknown_key(what, key, known);
        }
    }
    Error::invalid_argument(format!("{what}: {message}"))
}

/// Levenshtein distance between `a` and `b`, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, SearchOptions};

    #[test]
    fn an_unknown_key_names_itself_and_the_nearest_known_one() {
        let err = from_json::<Config>("config", Some(r#"{"langauge": "german"}"#)).unwrap_err();
        assert_eq!(err.code(), "invalid_argument");
        let text = err.to_string();
        assert!(text.contains("unknown key `langauge`"), "{text}");
        assert!(text.contains("did you mean `language`?"), "{text}");
        let err = from_value::<SearchOptions>(
            "search options",
            Some(serde_json::json!({"limit": 3, "bogus": 1})),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown key `bogus`"), "{err}");
    }

    #[test]
    fn nested_unknown_keys_are_refused_too() {
        let err = from_json::<Config>("config", Some(r#"{"bm25": {"k": 1.2}}"#)).unwrap_err();
        assert!(err.to_string().contains("unknown key `k`"), "{err}");
        assert!(err.to_string().contains("did you mean `k1`?"), "{err}");
    }

    #[test]
    fn known_keys_and_absent_options_still_parse() {
        let opts: SearchOptions = from_json("search options", Some(r#"{"limit": 3}"#)).unwrap();
        assert_eq!(opts.limit, Some(3));
        let opts: SearchOptions = from_value("search options", None).unwrap();
        assert_eq!(opts, SearchOptions::default());
        assert_eq!(edits("kitten", "sitting"), 3);
        assert!(check_keys("build options", ["strict"], &["strict", "config"]).is_ok());
        let err = check_keys("build options", ["onprogress"], &["onProgress"]).unwrap_err();
        assert!(
            err.to_string().contains("did you mean `onProgress`?"),
            "{err}"
        );
    }
}
