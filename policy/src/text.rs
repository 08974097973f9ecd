//! Text from a plugin or a caller as this host shows it: printable (no
//! control or invisible characters), never longer than it was charged for,
//! names cut short.

use std::borrow::Cow;

/// Like `String::from_utf8_lossy`, but an invalid sequence becomes one `?`
/// and so does every control character ([`printable`]), so the text is
/// never longer than the bytes it was charged for.
pub fn lossy_no_longer(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return printable(text);
    }
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(&printable(chunk.valid()));
        if !chunk.invalid().is_empty() {
            text.push('?');
        }
    }
    Cow::Owned(text)
}

/// `text` with every control character but tab (newlines included), and
/// every character that changes how text looks without showing (see
/// `invisible`), replaced by `?`. Text from a plugin is shown this way: a
/// terminal never sees its escape sequences, a reader never sees lines it
/// forged or text it reversed, and the log formatter has nothing to escape
/// (it would write `\x1b` for one byte: more than was charged).
pub fn printable(text: &str) -> Cow<'_, str> {
    shown_with(text, &['\t'])
}

/// [`printable`], but line breaks (`\n`) kept: a tool's multi-line text
/// as a terminal shows it. A carriage return, an escape and every other
/// control or invisible character still become `?`, so no line can be
/// overwritten or restyled.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    shown_with(text, &['\t', '\n'])
}

/// `text` with every control character but those `kept`, and every
/// invisible one, replaced by `?` (borrowed when nothing is).
fn shown_with<'a>(text: &'a str, kept: &[char]) -> Cow<'a, str> {
    let unsafe_char = |c: char| (c.is_control() && !kept.contains(&c)) || invisible(c);
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if unsafe_char(c) { '?' } else { c })
            .collect(),
    )
}

/// Characters that change how text looks without showing: zero-width
/// ones, bidirectional controls and line or paragraph separators (a name
/// with one could pass for another, or a line hide what follows it).
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{00AD}'
    )
}

/// A name from a caller or a plugin (a tool, a command, a plugin id) as
/// messages show it: [`printable`], and cut after 128 bytes so a huge name
/// cannot make a huge error text or log line.
pub fn shown_name(name: &str) -> String {
    shown_within(name, crate::limits::MAX_SHOWN_NAME)
}

/// `text` as messages show it: [`printable`], and cut after `max` bytes
/// (at a character's boundary) with `…`.
pub fn shown_within(text: &str, max: usize) -> String {
    let text = printable(text);
    if text.len() <= max {
        return text.into_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_hides_controls_and_characters_that_reorder_or_hide_text() {
        assert_eq!(printable("a\tb"), "a\tb");
        assert_eq!(printable("ok\n\u{1b}[32mforged"), "ok??[32mforged");
        assert_eq!(
            printable("t.\u{202e}gnp.exe\u{200b}\u{2028}"),
            "t.?gnp.exe??"
        );
    }

    #[test]
    fn names_in_messages_are_printable_and_short() {
        assert_eq!(shown_name("probe.echo"), "probe.echo");
        assert_eq!(shown_name("a\nb"), "a?b");
        let long = shown_name(&"é".repeat(1000));
        assert!(
            long.len() <= 128 + '…'.len_utf8() && long.ends_with('…'),
            "{long}"
        );
    }

    #[test]
    fn invalid_utf8_is_never_longer_when_written() {
        assert_eq!(lossy_no_longer(b"ok"), "ok");
        assert_eq!(lossy_no_longer(&[b'a', 0xff, 0xfe, b'b']), "a??b");
        assert_eq!(lossy_no_longer(b"\x1b[8mhidden\x07"), "?[8mhidden?");
        assert_eq!(printable("a\u{9b}b\tc"), "a?b\tc");
    }
}
