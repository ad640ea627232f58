//! The sanitizer's forms on the strings seen in attacks and on honest values, and properties
//! over arbitrary input: no form lets a control or bidi character through, the log form has
//! no line break, the page forms no raw `<`, `|` or newline, and every form is bounded.

use proptest::prelude::*;

use super::*;

/// The most bytes any form may produce: every input byte of the bound at its widest escape
/// (`\\x1b`, `&amp;`: 5 bytes), and the cut note.
const WIDEST: usize = MAX_SHOWN * 5 + 64;

/// Strings with the characters attackers use overrepresented.
fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("\x1b]0;HACKED\x07".to_string()),
            Just("\x1b[2J\x1b[H".to_string()),
            Just("\x1b]52;c;aGk=\x07".to_string()),
            Just("\nRESULT hash-80 FL-256 PASS \n".to_string()),
            Just("\r\ntiming 1 s\n".to_string()),
            Just("<script>alert(1)</script>".to_string()),
            Just("<iframe src=x>".to_string()),
            Just("# INJECTED | a | b `x` *y* _z_ [l](u) \\|".to_string()),
            Just("\u{202e}\u{2066}\u{2028}\u{85}\u{9b}\u{7f}".to_string()),
            "[a-z_]{1,12}",
            any::<String>(),
        ],
        0..16,
    )
    .prop_map(|parts| parts.concat())
}

fn no_hostile(s: &str) -> bool {
    !s.chars().any(is_hostile)
}

/// Every `|` preceded by an odd run of backslashes (escaped for a GFM table).
fn pipes_escaped(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'|').all(|i| {
        let run = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
        run % 2 == 1
    })
}

proptest! {
    #[test]
    fn the_terminal_and_log_forms_carry_no_control_and_no_line_break(s in hostile_text()) {
        for form in [terminal(&s), log_field(&s), echo(&s)] {
            prop_assert!(no_hostile(&form), "{form:?}");
            prop_assert!(!form.contains('\n') && !form.contains('\r'), "{form:?}");
            prop_assert!(form.len() <= WIDEST);
        }
        prop_assert!(no_hostile(&shell(&s)));
        let text = terminal_text(&s);
        prop_assert!(!text.chars().any(|c| is_hostile(c) && c != '\n' && c != '\t'), "{text:?}");
    }

    #[test]
    fn the_page_forms_carry_no_raw_markup(s in hostile_text()) {
        let md = markdown(&s);
        prop_assert!(no_hostile(&md), "{md:?}");
        for bad in ['<', '>', '\n', '\r', '`', '*', '['] {
            let raw = md.char_indices().any(|(i, c)| c == bad && !md[..i].ends_with('\\'));
            prop_assert!(!raw, "raw {bad:?} in {md:?}");
        }
        prop_assert!(!md.starts_with('#'), "{md:?}");
        prop_assert!(pipes_escaped(&md), "{md:?}");
        prop_assert!(md.len() <= WIDEST);
        let code = markdown_code(&s);
        prop_assert!(no_hostile(&code), "{code:?}");
        prop_assert!(pipes_escaped(&code), "{code:?}");
        prop_assert!(code.len() <= WIDEST + 2 * (MAX_SHOWN + 2));
    }

    #[test]
    fn values_without_anything_to_escape_are_unchanged(s in "[A-Za-z0-9 .+=,:/()-]{0,80}") {
        prop_assert_eq!(terminal(&s), s.as_str());
        prop_assert_eq!(log_field(&s), s.as_str());
        prop_assert_eq!(markdown(&s), s.as_str());
    }

    #[test]
    fn a_shell_word_splits_back_into_the_value(s in "[ -~]{0,60}") {
        let word = shell(&s);
        prop_assert_eq!(shlex::split(&word), Some(vec![s.clone()]));
    }
}

#[test]
fn escapes_read_as_the_tui_shows_them() {
    assert_eq!(
        terminal("a\x1b]0;HACKED\x07b\nc\u{202e}d\u{9b}"),
        "a\\x1b]0;HACKED\\x07b\\nc\\u202ed\\u009b"
    );
    assert_eq!(
        log_field("x\nRESULT hash-80 FL-256 PASS "),
        "x\\nRESULT hash-80 FL-256 PASS "
    );
}

#[test]
fn honest_page_values_are_byte_identical() {
    for honest in [
        "Reference_Implementation",
        "uHash-512",
        "-O3 -march=native -fomit-frame-pointer",
        "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
        "gcc 15.2.0",
        "Garnet_512_Cap1024",
    ] {
        assert_eq!(markdown(honest), honest);
        assert_eq!(markdown_code(honest), format!("`{honest}`"));
    }
}

#[test]
fn page_markup_is_escaped() {
    assert_eq!(
        markdown("A|B\n# INJECTED\n<iframe src=x>"),
        "A\\|B # INJECTED &lt;iframe src=x&gt;"
    );
    assert_eq!(
        markdown("# x _y_ *z* [a](b) `c` & \\"),
        "\\# x \\_y\\_ \\*z\\* \\[a\\](b) \\`c\\` &amp; \\\\"
    );
    assert_eq!(markdown_code("a`b|c\nd"), "`` a`b\\|c d ``");
    assert_eq!(markdown_code("x\\|"), "`x\\x5c\\|`");
}

#[test]
fn long_values_are_cut_and_say_their_size() {
    let big = "v".repeat(20 * 1024 * 1024);
    let shown = terminal(&big);
    assert!(shown.len() < MAX_SHOWN + 40, "{}", shown.len());
    assert!(
        shown.ends_with("…(20.0 MiB value cut)"),
        "{}",
        &shown[MAX_SHOWN - 5..]
    );
    let echoed = echo(&big);
    assert!(echoed.len() < MAX_ECHOED + 40);
    // A cut never splits a character.
    let wide = "é".repeat(MAX_SHOWN);
    assert!(terminal(&wide).ends_with("value cut)"));
}

#[test]
fn suggested_commands_quote_what_a_shell_would_split() {
    assert_eq!(shell("runs/a"), "runs/a");
    assert_eq!(
        shell("runs/a b; echo INJECTED"),
        "'runs/a b; echo INJECTED'"
    );
    assert_eq!(shell("it's"), "\"it's\"");
    assert_eq!(shell("a\x1bb"), "'a\\x1bb'");
}

proptest! {
    /// The journal is JSON lines: serde escapes every C0 control inside a string, so a
    /// hostile message stays on its one line, and reads back as it was.
    #[test]
    fn a_journal_entry_stays_on_its_line(message in hostile_text(), label in hostile_text()) {
        use crate::record::journal::{JournalEvent, JournalReader, JournalWriter};
        let dir = tempfile::tempdir().unwrap();
        let mut w = JournalWriter::open(dir.path()).unwrap();
        w.append(JournalEvent::Warning { message: message.clone() }).unwrap();
        w.append(JournalEvent::KatStarted { label: label.clone() }).unwrap();
        let text = std::fs::read_to_string(dir.path().join("journal.jsonl")).unwrap();
        prop_assert_eq!(text.matches('\n').count(), 2);
        prop_assert!(!text.contains('\r') && !text.contains('\x1b'), "{text:?}");
        let entries = JournalReader::new(dir.path()).poll().unwrap();
        prop_assert_eq!(entries.len(), 2);
        prop_assert_eq!(&entries[0].event, &JournalEvent::Warning { message });
    }
}
