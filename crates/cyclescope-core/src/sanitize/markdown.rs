//! The page forms of the sanitizer: a value in Markdown text or a table cell, and a value in a
//! code span. Honest values (ids, labels, `Reference_Implementation`, `-O3 -march=native`,
//! CPU model names) need no escape and come out unchanged, so the published pages stay byte
//! for byte what they were; anything that could start a heading, close a table cell, open a
//! link, emphasis or an HTML element, or break the line is escaped or collapsed.

use std::borrow::Cow;

use super::{MAX_SHOWN, is_hostile, push_escaped, transform};

/// A line break of some kind: collapsed into one space on a page.
fn breaks_line(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\t' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Whether `c` at byte `i` of `s` needs a Markdown escape: always for the characters that
/// open or close inline syntax or a table cell; `_` only where it could open or close
/// emphasis (not between two letters or digits, as in `Reference_Implementation`); `#` only
/// at the start, where it would make a heading.
fn needs_backslash(s: &str, i: usize, c: char) -> bool {
    match c {
        '\\' | '`' | '*' | '[' | ']' | '|' | '~' => true,
        '#' => i == 0,
        '_' => {
            let before = s[..i].chars().next_back();
            let after = s[i + 1..].chars().next();
            !(before.is_some_and(char::is_alphanumeric) && after.is_some_and(char::is_alphanumeric))
        }
        _ => false,
    }
}

fn html_entity(c: char) -> Option<&'static str> {
    match c {
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '&' => Some("&amp;"),
        _ => None,
    }
}

/// `s` in Markdown text or a table cell: `\ ` * [ ] | ~`, a leading `#` and a `_` that could
/// make emphasis backslash-escaped; `< > &` as HTML entities; line breaks collapsed into one
/// space; other hostile characters shown as `\x1b`, `\u202e`; bounded by [`MAX_SHOWN`].
pub fn markdown(s: &str) -> Cow<'_, str> {
    let mut last_space = false;
    transform(
        s,
        MAX_SHOWN,
        |i, c| is_hostile(c) || html_entity(c).is_some() || needs_backslash(s, i, c),
        |out, i, c| {
            if breaks_line(c) {
                if !last_space {
                    out.push(' ');
                }
                last_space = true;
                return;
            }
            last_space = c == ' ';
            if let Some(entity) = html_entity(c) {
                out.push_str(entity);
            } else if is_hostile(c) {
                push_escaped(out, c);
            } else {
                if needs_backslash(s, i, c) {
                    out.push('\\');
                }
                out.push(c);
            }
        },
    )
}

/// `s` as a whole code span for a table cell, fences included (`` `-O2` ``). Inside a code
/// span Markdown and HTML are inert, so only what still acts there is handled: `|` (a GFM
/// table splits cells before it reads code spans) is `\|`, a backtick run gets a longer fence,
/// line breaks collapse into one space, other hostile characters are shown as `\x1b`;
/// bounded by [`MAX_SHOWN`].
pub fn markdown_code(s: &str) -> String {
    let mut last_space = false;
    let body = transform(
        s,
        MAX_SHOWN,
        |i, c| is_hostile(c) || c == '|' || (c == '\\' && s[i + 1..].starts_with('|')),
        |out, i, c| {
            if breaks_line(c) {
                if !last_space {
                    out.push(' ');
                }
                last_space = true;
                return;
            }
            last_space = c == ' ';
            match c {
                '|' => out.push_str("\\|"),
                // `\|` would read as an escaped backslash and a cell boundary.
                '\\' if s[i + 1..].starts_with('|') => out.push_str("\\x5c"),
                c if is_hostile(c) => push_escaped(out, c),
                c => out.push(c),
            }
        },
    );
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    if longest_run > 0 {
        format!("{fence} {body} {fence}")
    } else {
        format!("{fence}{body}{fence}")
    }
}
