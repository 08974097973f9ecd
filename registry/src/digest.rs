//! Content digests (`sha256:HEX`), the only name a registry's bytes are
//! trusted by: every blob and manifest read is hashed while it streams in
//! and refused unless it has the digest and the size it was asked for.

use std::fmt;

use sha2::{Digest as _, Sha256};

/// A SHA-256 content digest. Other algorithms are refused: the OCI spec
/// requires registries to support SHA-256, and one algorithm keeps one
/// name per content in the store.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// `sha256:` and 64 lowercase hex digits.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(hex) = text.strip_prefix("sha256:") else {
            return Err(match text.split_once(':') {
                Some((algorithm, _)) if !algorithm.is_empty() => format!(
                    "its digest uses {}, and only sha256 is supported",
                    crate::shown(algorithm)
                ),
                _ => "its digest is not sha256:HEX".to_owned(),
            });
        };
        let bytes = hex.as_bytes();
        let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
        if bytes.len() != 64 || !bytes.iter().all(lower_hex) {
            return Err("its sha256 digest is not 64 lowercase hex digits".to_owned());
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let high = (pair[0] as char).to_digit(16).unwrap_or(0) as u8;
            let low = (pair[1] as char).to_digit(16).unwrap_or(0) as u8;
            out[i] = (high << 4) | low;
        }
        Ok(Digest(out))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Digest(Sha256::digest(bytes).into())
    }

    /// The 64 hex digits alone (a file name in the store).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sha256:{}", self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Checks bytes against the digest and size they were announced with, as
/// they arrive: more bytes than announced are refused at once, before they
/// are kept.
#[derive(Debug)]
pub struct Verifier {
    expected: Digest,
    size: u64,
    seen: u64,
    hasher: Sha256,
}

impl Verifier {
    /// Expects `size` bytes with digest `expected`.
    pub fn new(expected: Digest, size: u64) -> Self {
        Verifier {
            expected,
            size,
            seen: 0,
            hasher: Sha256::new(),
        }
    }

    /// Takes the next bytes; an error once they pass the announced size.
    pub fn update(&mut self, bytes: &[u8]) -> Result<(), Mismatch> {
        self.seen = self.seen.saturating_add(bytes.len() as u64);
        if self.seen > self.size {
            return Err(Mismatch::Longer { size: self.size });
        }
        self.hasher.update(bytes);
        Ok(())
    }

    /// Whether everything announced came, with the digest announced.
    pub fn finish(self) -> Result<(), Mismatch> {
        if self.seen != self.size {
            return Err(Mismatch::Shorter {
                size: self.size,
                seen: self.seen,
            });
        }
        let got = Digest(self.hasher.finalize().into());
        if got != self.expected {
            return Err(Mismatch::Digest {
                expected: self.expected,
                got,
            });
        }
        Ok(())
    }
}

/// How bytes differed from what they were announced as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// More bytes came than the descriptor's size.
    Longer {
        /// The size announced.
        size: u64,
    },
    /// Fewer bytes came.
    Shorter {
        /// The size announced.
        size: u64,
        /// What came.
        seen: u64,
    },
    /// The bytes hash to another digest.
    Digest {
        /// The digest announced.
        expected: Digest,
        /// The digest of what came.
        got: Digest,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::Longer { size } => write!(f, "it sent more than the {size} bytes announced"),
            Mismatch::Shorter { size, seen } => {
                write!(f, "it sent {seen} of the {size} bytes announced")
            }
            Mismatch::Digest { expected, got } => {
                write!(f, "its bytes have digest {got}, not {expected}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Digest, Mismatch, Verifier};

    #[test]
    fn a_digest_reads_back_as_it_was_written() {
        let d = Digest::of(b"hello");
        assert_eq!(
            d.to_string(),
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(Digest::parse(&d.to_string()), Ok(d));
    }

    #[test]
    fn digests_other_than_lowercase_sha256_are_refused() {
        let hex = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        for (text, why) in [
            (format!("sha512:{hex}"), "only sha256"),
            (format!("sha256:{}", hex.to_uppercase()), "lowercase"),
            (format!("sha256:{}", &hex[1..]), "64"),
            (hex.to_owned(), "sha256:HEX"),
            ("sha256:".to_owned(), "64"),
        ] {
            let err = Digest::parse(&text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn a_verifier_refuses_more_fewer_and_other_bytes() {
        let right = Digest::of(b"abcdef");
        let mut v = Verifier::new(right, 6);
        v.update(b"abc").unwrap();
        v.update(b"def").unwrap();
        v.finish().unwrap();

        let mut v = Verifier::new(right, 6);
        v.update(b"abcdef").unwrap();
        assert_eq!(v.update(b"g"), Err(Mismatch::Longer { size: 6 }));

        let mut v = Verifier::new(right, 6);
        v.update(b"abc").unwrap();
        assert_eq!(v.finish(), Err(Mismatch::Shorter { size: 6, seen: 3 }));

        let mut v = Verifier::new(right, 6);
        v.update(b"abcdeX").unwrap();
        assert!(matches!(v.finish(), Err(Mismatch::Digest { .. })));
    }
}
