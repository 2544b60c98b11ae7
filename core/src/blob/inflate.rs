//! Inflating the head and the sections: one decoder and one output buffer, reused from one
//! part to the next (a whole load inflates CACM's 1,830 sections with them; a fresh decoder
//! and vector for each cost it 11 KB of zeroed state and two allocations a section).

use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

/// A deflate decoder and the buffer it inflates into.
pub(crate) struct Inflater {
    decoder: Box<DecompressorOxide>,
    out: Vec<u8>,
}

impl Inflater {
    pub(crate) fn new() -> Inflater {
        Inflater {
            decoder: Box::default(),
            out: Vec::new(),
        }
    }

    /// Inflates the raw deflate stream `bytes` (bytes after its end are ignored) into this
    /// inflater's buffer; returns what it made. Inflated lengths are not stored: deflate
    /// makes at most 1,032 bytes of one (a 258-byte match in under 2 bits), so 1,100 bytes a
    /// byte bounds it, and more is an error.
    ///
    /// # Errors
    /// A description of what is wrong with `bytes`.
    pub(crate) fn inflate(&mut self, bytes: &[u8]) -> Result<&[u8], &'static str> {
        let limit = bytes.len().saturating_mul(1100);
        let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        self.decoder.init();
        // Room for twice the input to start with, as miniz's own `decompress_to_vec` gives,
        // in a buffer kept from the parts before (so zeroed once).
        let mut room = bytes.len().saturating_mul(2).min(limit);
        let (mut input, mut made) = (bytes, 0);
        loop {
            if self.out.len() < room {
                self.out.resize(room, 0);
            }
            let out = &mut self.out[..room];
            let (status, read, wrote) = decompress(&mut self.decoder, input, out, made, flags);
            made += wrote;
            match status {
                TINFLStatus::Done => return Ok(&self.out[..made]),
                TINFLStatus::HasMoreOutput if room < limit => {
                    input = input.get(read..).unwrap_or_default();
                    room = room.saturating_mul(2).min(limit);
                }
                TINFLStatus::HasMoreOutput => {
                    return Err("it inflates to more than deflate makes of its length")
                }
                TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
                    return Err("the stream is cut short")
                }
                _ => return Err("not a deflate stream"),
            }
        }
    }
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
    fn one_inflater_inflates_stream_after_stream_of_any_size() {
        let noise = noise(7, 50_000);
        let inputs: Vec<Vec<u8>> = vec![
            b"revenue revenue revenue".to_vec(),
            vec![],
            vec![0; 300_000],
            noise,
            b"a".to_vec(),
        ];
        let mut inflater = Inflater::new();
        for input in &inputs {
            let deflated = deflate(input);
            assert_eq!(inflater.inflate(&deflated).unwrap(), &input[..]);
            // Bytes after the stream are not its.
            let mut longer = deflated.clone();
            longer.extend_from_slice(b"trailing");
            assert_eq!(inflater.inflate(&longer).unwrap(), &input[..]);
        }
    }

    #[test]
    fn a_stream_cut_short_or_not_deflate_is_an_error_and_the_next_inflates() {
        let mut inflater = Inflater::new();
        let good = deflate(b"the quick brown fox jumps over the lazy dog");
        for bad in [&good[..good.len() / 2], &[0xff; 16][..], &[][..]] {
            assert!(inflater.inflate(bad).is_err());
            assert_eq!(
                inflater.inflate(&good).unwrap(),
                b"the quick brown fox jumps over the lazy dog"
            );
        }
    }

    #[test]
    fn a_stream_of_the_highest_ratio_deflate_makes_inflates_within_the_bound() {
        // A run of one byte: about 1,030 bytes of output a byte of input, under the 1,100
        // the bound allows (no deflate stream makes more).
        let ones = deflate(&[1; 1 << 20]);
        assert!(ones.len() * 1000 < 1 << 20, "{} bytes", ones.len());
        let mut inflater = Inflater::new();
        assert_eq!(inflater.inflate(&ones).unwrap(), &[1; 1 << 20][..]);
        assert!(inflater.inflate(&ones[..ones.len() / 10]).is_err());
    }
}
