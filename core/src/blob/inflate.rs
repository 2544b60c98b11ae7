//! Inflating the head and the sections, with zune-inflate: it decodes the small streams a
//! blob is made of (a page block is about 1 KB of text, each stream with its own Huffman
//! tables) in 0.6x miniz_oxide's time; a whole load of a million pages takes 0.75-0.83x the
//! time.
//!
//! zune-inflate 0.2 refuses one shape of valid stream: an empty stored block (a zlib sync
//! flush) after a block that ends inside a byte, then an empty final block. The save never
//! writes it: a section is one stream flushed only at its end, and the head, flushed after
//! each field, never ends in an empty one (`deflate_fields` leaves empty fields out). A blob
//! from another writer that did would be refused as corrupt, never read wrong.

use zune_inflate::errors::DecodeErrorStatus;
use zune_inflate::{DeflateDecoder, DeflateOptions};

/// Inflates the raw deflate stream `bytes` (bytes after its end are ignored). Inflated
/// lengths are not stored: deflate makes at most 1,032 bytes of one (a 258-byte match in
/// under 2 bits), so 1,100 bytes a byte bounds it, and more is an error.
///
/// # Errors
/// A description of what is wrong with `bytes`.
pub(crate) fn inflate(bytes: &[u8]) -> Result<Vec<u8>, &'static str> {
    let limit = bytes.len().saturating_mul(1100);
    // Room for three times the input to start with (text deflates to about a third).
    let options = DeflateOptions::default()
        .set_limit(limit)
        .set_size_hint(bytes.len().saturating_mul(3).min(limit));
    DeflateDecoder::new_with_options(bytes, options)
        .decode_deflate()
        .map_err(|e| match e.error {
            DecodeErrorStatus::OutputLimitExceeded(..) => {
                "it inflates to more than deflate makes of its length"
            }
            DecodeErrorStatus::InsufficientData => "the stream is cut short",
            _ => "not a deflate stream, or one cut short",
        })
}

/// `n` bytes that do not compress (xorshift from `seed`), for the tests of inflating.
#[cfg(test)]
pub(super) fn noise(seed: u32, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deflate(bytes: &[u8]) -> Vec<u8> {
        miniz_oxide::deflate::compress_to_vec(bytes, 9)
    }

    #[test]
    fn streams_of_any_size_and_level_inflate_to_what_was_deflated() {
        let noise = noise(7, 50_000);
        // Words from a small vocabulary, as a page block holds: matches near and far.
        let words = [
            "boundary",
            "layer",
            "transition",
            "flow",
            "the",
            "of",
            "a",
            "heat",
        ];
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i: usize| {
                let w = words[(i * 7 + i / 13) % words.len()];
                w.bytes().chain([b' '])
            })
            .collect();
        let mut inputs: Vec<Vec<u8>> = vec![
            b"revenue revenue revenue".to_vec(),
            vec![],
            vec![0; 300_000],
            noise.clone(),
            b"a".to_vec(),
        ];
        for n in [
            1, 2, 3, 7, 100, 257, 258, 259, 1000, 1024, 2048, 4095, 65_536, 70_000,
        ] {
            inputs.push(text[..n.min(text.len())].to_vec());
            inputs.push(noise[..n.min(noise.len())].to_vec());
        }
        for input in &inputs {
            for level in 0..=10 {
                let deflated = miniz_oxide::deflate::compress_to_vec(input, level);
                assert_eq!(inflate(&deflated).unwrap(), &input[..], "level {level}");
                // Bytes after the stream are not its.
                let mut longer = deflated.clone();
                longer.extend_from_slice(b"trailing");
                assert_eq!(inflate(&longer).unwrap(), &input[..], "level {level}");
            }
        }
    }

    #[test]
    fn a_stream_cut_short_or_not_deflate_is_an_error() {
        let good = deflate(b"the quick brown fox jumps over the lazy dog");
        for bad in [&good[..good.len() / 2], &[0xff; 16][..], &[][..]] {
            assert!(inflate(bad).is_err(), "{bad:?}");
        }
        let noise = deflate(&noise(3, 5000));
        for cut in [1, 10, noise.len() / 2, noise.len() - 1] {
            assert!(inflate(&noise[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn a_stream_of_the_highest_ratio_deflate_makes_inflates_within_the_bound() {
        // A run of one byte: about 1,030 bytes of output a byte of input, under the 1,100
        // the bound allows (no deflate stream makes more).
        let ones = deflate(&[1; 1 << 20]);
        assert!(ones.len() * 1000 < 1 << 20, "{} bytes", ones.len());
        assert_eq!(inflate(&ones).unwrap(), &[1; 1 << 20][..]);
        assert!(inflate(&ones[..ones.len() / 10]).is_err());
    }
}
