//! How a packed file stores its portable component (format 5 on):
//! compressed with zstd. A start never reads the component (it maps the
//! native code), so compressing it costs a start nothing; `inspect`,
//! `install`, `list` and a start that must compile decode it first. An
//! interpreter's component is mostly its pre-initialised heap, which the
//! native code holds again: a Python plugin's 18.8 MB are 6.1 MB stored.

use lingxi_wasm_policy::limits::MAX_PACK_COMPRESSION;
use serde::{Deserialize, Serialize};

/// zstd's own default level: at higher levels a Python component is 7%
/// (level 9) to 23% (level 19) smaller and takes 4 to 80 times longer to
/// pack (docs/src/performance/packed-size.md).
const LEVEL: i32 = 3;

/// The largest window a frame may ask the decoder for (8 MiB): at level 3
/// zstd writes frames with a window of 2 MiB at most, and a frame that asks
/// for more is refused instead of making the decoder reserve it.
const WINDOW_LOG_MAX: u32 = 23;

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
    /// One zstd frame, and nothing after it.
    Zstd,
}

/// `component` compressed, and how to decode it; `None` if it should be
/// stored as it is: a component that does not shrink, or shrinks more than
/// a reader accepts ([`MAX_PACK_COMPRESSION`] times).
pub(crate) fn encode(component: &[u8]) -> std::io::Result<Option<(Vec<u8>, Compressed)>> {
    let stored = zstd::bulk::compress(component, LEVEL)?;
    let how = Compressed {
        codec: Codec::Zstd,
        len: component.len() as u64,
    };
    // Stored as it is when compressing does not make it smaller (a tiny
    // component), or makes it smaller than a reader accepts.
    let pays = stored.len() < component.len() && within_bound(stored.len() as u64, &how);
    Ok(pays.then_some((stored, how)))
}

/// Whether `how` decodes to no more than a reader accepts from
/// `stored_len` bytes.
pub(crate) fn within_bound(stored_len: u64, how: &Compressed) -> bool {
    how.len <= stored_len.saturating_mul(MAX_PACK_COMPRESSION)
}

/// The component `stored` holds: exactly `how.len` bytes in one frame
/// that ends `stored`, or why not. The output grows with what the frame
/// really holds (a length in a damaged header reserves nothing) and never
/// past `how.len`, whatever the frame claims.
pub(crate) fn decode(stored: &[u8], how: &Compressed) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let Codec::Zstd = how.codec;
    let cannot = |e: std::io::Error| format!("its component cannot be decompressed: {e}");
    let mut decoder = zstd::stream::read::Decoder::with_buffer(stored)
        .map_err(cannot)?
        .single_frame();
    decoder.window_log_max(WINDOW_LOG_MAX).map_err(cannot)?;
    let mut out = Vec::new();
    (&mut decoder)
        .take(how.len.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(cannot)?;
    let len = out.len() as u64;
    if len > how.len {
        return Err(format!(
            "its component decompresses to more than the {} bytes its header gives",
            how.len
        ));
    }
    if len < how.len {
        return Err(format!(
            "its component decompresses to {len} bytes, not the {} its header gives",
            how.len
        ));
    }
    let after = decoder.finish();
    if !after.is_empty() {
        return Err(format!(
            "{} bytes follow its component's zstd frame",
            after.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Bytes that shrink about as much as a real component.
    pub(crate) fn component(len: usize) -> Vec<u8> {
        let mut seed = 1u32;
        (0..len)
            .map(|i| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                if i % 4 == 0 {
                    (seed >> 24) as u8
                } else {
                    (i % 7) as u8
                }
            })
            .collect()
    }

    #[test]
    fn a_component_comes_back_as_it_was() {
        // Over the largest window a reader allows, so a frame that needed
        // a larger one would be refused here.
        let component = component(9 << 20);
        let (stored, how) = encode(&component).unwrap().unwrap();
        assert!(stored.len() < component.len() / 2, "{}", stored.len());
        assert_eq!(decode(&stored, &how).unwrap(), component);
    }

    #[test]
    fn a_component_that_shrinks_too_much_or_not_at_all_is_stored_as_it_is() {
        assert!(encode(&vec![0u8; 1 << 20]).unwrap().is_none());
        assert!(encode(b"\0asm").unwrap().is_none());
    }

    #[test]
    fn a_frame_longer_or_shorter_than_its_header_says_is_refused() {
        let component = component(1 << 20);
        let (stored, how) = encode(&component).unwrap().unwrap();
        // The decoder stops one byte past what the header allows.
        let short = Compressed { len: 1000, ..how };
        let err = decode(&stored, &short).unwrap_err();
        assert!(err.contains("to more than the 1000 bytes"), "{err}");
        let long = Compressed {
            len: how.len + 1,
            ..how
        };
        assert!(decode(&stored, &long).unwrap_err().contains("not the"));
        let mut cut = stored.clone();
        cut.truncate(stored.len() / 2);
        let err = decode(&cut, &how).unwrap_err();
        assert!(err.contains("cannot be decompressed"), "{err}");
        let err = decode(b"not zstd", &how).unwrap_err();
        assert!(err.contains("cannot be decompressed"), "{err}");
    }

    #[test]
    fn only_one_frame_and_nothing_after_it() {
        let component = component(100_000);
        let (stored, how) = encode(&component).unwrap().unwrap();
        // A second frame, or a skippable one, after the first.
        let second = zstd::bulk::compress(b"more", 3).unwrap();
        for tail in [&second[..], &[0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0], b"\0"] {
            let err = decode(&[&stored[..], tail].concat(), &how).unwrap_err();
            assert!(err.contains("follow its component's zstd frame"), "{err}");
        }
        // A skippable frame before it decodes to nothing.
        let skippable = [0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0];
        let err = decode(&[&skippable[..], &stored[..]].concat(), &how).unwrap_err();
        assert!(err.contains("decompresses to 0 bytes"), "{err}");
    }

    #[test]
    fn a_frame_that_asks_for_a_large_window_is_refused() {
        let component = component(1 << 20);
        let mut params = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
        params.window_log(27).unwrap();
        params.long_distance_matching(true).unwrap();
        params.include_contentsize(false).unwrap();
        std::io::Write::write_all(&mut params, &component).unwrap();
        let stored = params.finish().unwrap();
        let how = Compressed {
            codec: Codec::Zstd,
            len: component.len() as u64,
        };
        let err = decode(&stored, &how).unwrap_err();
        assert!(err.contains("cannot be decompressed"), "{err}");
    }
}
