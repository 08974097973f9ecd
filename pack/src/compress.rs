//! How a packed file stores its portable component (format 5 on):
//! compressed with zstd. A start never reads the component (it maps the
//! native code), so compressing it costs a start nothing; `inspect`,
//! `install`, `list` and a start that must compile decode it first. An
//! interpreter's component is mostly its pre-initialised heap, which the
//! native code holds again: a Python plugin's 18.9 MB are 6.2 MB stored.

use serde::{Deserialize, Serialize};

/// zstd's own default level: at higher levels a Python component is 7%
/// (level 9) to 23% (level 19) smaller and takes 4 to 80 times longer to
/// pack (docs/src/performance/packed-size.md).
const LEVEL: i32 = 3;

/// A component stored compressed: how, and its length once decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compressed {
    /// The codec.
    pub codec: Codec,
    /// The component's length once decoded: the most a decoder writes.
    pub len: u64,
}

/// A codec a component may be stored with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Codec {
    /// One zstd frame.
    Zstd,
}

/// `component` compressed, and how to decode it.
pub(crate) fn encode(component: &[u8]) -> std::io::Result<(Vec<u8>, Compressed)> {
    let stored = zstd::bulk::compress(component, LEVEL)?;
    let how = Compressed {
        codec: Codec::Zstd,
        len: component.len() as u64,
    };
    Ok((stored, how))
}

/// The component `stored` holds: exactly `how.len` bytes, or why not. The
/// output grows with what the frame really holds (a length in a damaged
/// header reserves nothing) and never past `how.len`, whatever the frame
/// claims.
pub(crate) fn decode(stored: &[u8], how: &Compressed) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let Codec::Zstd = how.codec;
    let decoder = zstd::stream::read::Decoder::with_buffer(stored)
        .map_err(|e| format!("its component cannot be decompressed: {e}"))?;
    let mut out = Vec::new();
    decoder
        .take(how.len.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("its component cannot be decompressed: {e}"))?;
    if out.len() as u64 != how.len {
        return Err(format!(
            "its component decompresses to {} bytes, not the {} its header gives",
            out.len(),
            how.len
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_comes_back_as_it_was() {
        let component: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let (stored, how) = encode(&component).unwrap();
        assert!(stored.len() < component.len() / 4, "{}", stored.len());
        assert_eq!(decode(&stored, &how).unwrap(), component);
    }

    #[test]
    fn a_frame_longer_or_shorter_than_its_header_says_is_refused() {
        let component = vec![7u8; 1 << 20];
        let (stored, how) = encode(&component).unwrap();
        // A frame of 1 MiB of zeros under a header that says less: the
        // decoder stops one byte past what the header allows.
        let short = Compressed { len: 1000, ..how };
        let err = decode(&stored, &short).unwrap_err();
        assert!(
            err.contains("decompresses to 1001 bytes, not the 1000"),
            "{err}"
        );
        let long = Compressed {
            len: how.len + 1,
            ..how
        };
        assert!(decode(&stored, &long).unwrap_err().contains("not the"));
        let mut cut = stored.clone();
        cut.truncate(stored.len() / 2);
        assert!(
            decode(&cut, &how)
                .unwrap_err()
                .contains("cannot be decompressed")
        );
        assert!(
            decode(b"not zstd", &how)
                .unwrap_err()
                .contains("cannot be decompressed")
        );
    }
}
