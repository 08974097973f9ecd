//! The forms a secret's value takes in a request, and what a request is
//! looked at as: what [`super::Redactor::bound_elsewhere`] compares.

use base64::Engine as _;

/// `bytes` with every `%XX` (either case) decoded, and `+` as a space when
/// `plus`.
pub(super) fn percent_decoded(bytes: &[u8], plus: bool) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| Some(hex(*bytes.get(i + 1)?)? * 16 + hex(*bytes.get(i + 2)?)?))
            .flatten();
        match decoded {
            Some(byte) => {
                out.push(byte as u8);
                i += 3;
            }
            None => {
                out.push(if plus && bytes[i] == b'+' {
                    b' '
                } else {
                    bytes[i]
                });
                i += 1;
            }
        }
    }
    out
}

/// The forms a value takes in a request: as it is, URL-encoded (as a form
/// writes it; other spellings are decoded before looking), and base64
/// (standard and URL-safe) at each of the three alignments it can have
/// inside a longer encoded text (so `user:VALUE` in a Basic authorization
/// header is found too), all compared exactly; and hex, lower case,
/// compared in any case.
pub(super) fn encodings(value: &str) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut exact = vec![value.as_bytes().to_vec()];
    let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    exact.push(encoded.into_bytes());
    for engine in [
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ] {
        for offset in 0..3usize {
            // `offset` bytes before the value shift its encoding; the
            // characters that also depend on those bytes (or on the bytes
            // after it) are left out.
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(value.as_bytes());
            let text = engine.encode(&shifted);
            let skip = (offset * 8).div_ceil(6);
            let keep = (shifted.len() * 8 / 6).saturating_sub(skip);
            if keep >= 4 {
                exact.push(text.as_bytes()[skip..skip + keep].to_vec());
            }
        }
    }
    exact.sort();
    exact.dedup();
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    (exact, vec![hex.into_bytes()])
}

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}
