//! Offsets as each surface counts them. Every offset in a record (chunk spans, snippet
//! positions, highlights, quote spans, sentence spans) indexes a string the record names, and
//! is counted in the [`OffsetUnit`] of the session that returned it: UTF-8 bytes for Rust (the
//! default, and always on a bare [`crate::Index`], so `&text[start..end]` works), code points
//! for Python (`text[start:end]`), UTF-16 code units for JavaScript (`text.slice(start, end)`).
//! A binding sets its unit once when it opens an index ([`crate::Session::set_offset_unit`]);
//! nothing else converts offsets.

use serde::{Deserialize, Serialize};

use crate::data::error::{Error, Result};

/// What an offset counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OffsetUnit {
    /// UTF-8 bytes (Rust `str` indices).
    #[default]
    Byte,
    /// Unicode scalar values (Python `str` indices).
    Char,
    /// UTF-16 code units (JavaScript string indices).
    Utf16,
}

impl OffsetUnit {
    /// `byte`, `char` or `utf16`.
    pub fn name(self) -> &'static str {
        match self {
            OffsetUnit::Byte => "byte",
            OffsetUnit::Char => "char",
            OffsetUnit::Utf16 => "utf16",
        }
    }

    /// Parses `byte`, `char` or `utf16`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for any other name.
    pub fn parse(s: &str) -> Result<OffsetUnit> {
        match s.trim().to_ascii_lowercase().as_str() {
            "byte" | "bytes" | "utf8" => Ok(OffsetUnit::Byte),
            "char" | "chars" | "codepoint" => Ok(OffsetUnit::Char),
            "utf16" => Ok(OffsetUnit::Utf16),
            other => Err(Error::invalid_argument(format!(
                "unknown offset unit `{other}`; expected byte, char or utf16"
            ))),
        }
    }

    /// The UTF-8 byte offset `byte` of `text` in this unit. A `byte` past the end counts the
    /// whole text; one inside a character counts the characters before it.
    pub fn convert(self, text: &str, byte: usize) -> usize {
        let byte = byte.min(text.len());
        match self {
            OffsetUnit::Byte => byte,
            OffsetUnit::Char => prefix(text, byte).chars().count(),
            OffsetUnit::Utf16 => prefix(text, byte).chars().map(char::len_utf16).sum(),
        }
    }

    /// How many of this unit `c` takes.
    pub(crate) fn units(self, c: char) -> usize {
        match self {
            OffsetUnit::Byte => c.len_utf8(),
            OffsetUnit::Char => 1,
            OffsetUnit::Utf16 => c.len_utf16(),
        }
    }

    /// [`OffsetUnit::convert`] as the `u32` records store.
    pub(crate) fn convert_u32(self, text: &str, byte: usize) -> u32 {
        u32::try_from(self.convert(text, byte)).unwrap_or(u32::MAX)
    }
}

/// `text[..byte]`, backed off to a character boundary.
fn prefix(text: &str, mut byte: usize) -> &str {
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    &text[..byte]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_counts_what_its_surface_indexes() {
        let text = "é😀a"; // 2 + 4 + 1 bytes; 3 chars; 1 + 2 + 1 UTF-16 units
        let a = text.find('a').unwrap();
        assert_eq!(OffsetUnit::Byte.convert(text, a), 6);
        assert_eq!(OffsetUnit::Char.convert(text, a), 2);
        assert_eq!(OffsetUnit::Utf16.convert(text, a), 3);
        assert_eq!(OffsetUnit::Char.convert(text, 100), 3);
        // Inside the emoji: the characters before it.
        assert_eq!(OffsetUnit::Char.convert(text, 3), 1);
    }
}
