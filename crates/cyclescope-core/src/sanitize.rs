//! The one rule for every string a candidate or a file controls (library paths and file
//! names, `ngcc_meta` fields, worker stderr, labels, strings read back from records and
//! configs) on its way out. Each destination has its own form:
//!
//! * [`terminal`]: control characters (C0, DEL, C1) and the invisible characters that reorder
//!   or hide text (bidi overrides and isolates, zero-width marks, line separators) are shown
//!   escaped (`\x1b`, `\n`, `\u202e`), so a value can neither drive the terminal (titles,
//!   clearing, OSC 52 clipboard writes) nor disguise itself;
//! * [`log_field`]: the same escapes, so a field stays on its one line of a KAT log or a
//!   journal and cannot begin a line that reads as cyclescope's own `RESULT` or `timing`;
//! * [`markdown`] and [`markdown_code`]: Markdown and HTML escaped and newlines collapsed, for
//!   the report pages, while honest values come out byte for byte as they went in;
//! * [`shell`]: a path or argument quoted for a POSIX shell, for the commands cyclescope
//!   suggests (`cyclescope run --resume …`).
//!
//! Every form is bounded: a value longer than [`MAX_SHOWN`] bytes is cut and says how long it
//! was (`…(19.1 MiB value cut)`); [`echo`] bounds a value quoted inside an error message more
//! tightly. This module only transforms text; it never decides whether a value is acceptable
//! (that is `name::SafeName` and the parsers) and never writes anywhere.

mod markdown;
#[cfg(test)]
mod tests;

pub use markdown::{markdown, markdown_code};

use std::borrow::Cow;
use std::path::Path;

/// The most bytes of a value shown in any form (before escapes are counted): more than a
/// worker's stderr tail (2000 bytes) or any `ngcc_meta` field, far less than a terminal page.
pub const MAX_SHOWN: usize = 4096;

/// The most bytes of a value quoted inside an error message (a config value, a manifest
/// token): enough to recognise it, short enough to keep the message readable.
pub const MAX_ECHOED: usize = 200;

/// The most bytes of an error message (all its causes) shown: room for a list of problems.
pub const MAX_MESSAGE: usize = 16 * 1024;

/// A character that must never reach a terminal, a log line or a page as itself: the
/// controls, and the format characters that reorder (bidi embeddings, overrides, isolates,
/// marks), hide (zero-width spaces and joiners, the BOM) or break lines (U+2028/2029, which
/// some line splitters honour) without being seen.
pub(crate) fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
        )
}

/// Appends the visible escape of a hostile character: `\n`, `\r`, `\t`, `\x1b` below U+0080,
/// `\u202e` above (every hostile character above is in the BMP, and the form is also a valid
/// escape inside a JSON string, so JSON output can pass through [`terminal_text`] unchanged in
/// meaning).
fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c => {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        }
    }
}

/// What replaces the rest of a value longer than its bound: its full size, so nobody takes
/// the cut text for the whole.
fn cut_note(total_bytes: usize) -> String {
    format!("…({} value cut)", crate::format::bytes(total_bytes as u64))
}

/// Maps `s` char by char through `each` (which appends the char's form) until `max` bytes of
/// the input are consumed, then notes the cut. Borrowed when nothing changes.
pub(crate) fn transform(
    s: &str,
    max: usize,
    mut needs: impl FnMut(usize, char) -> bool,
    mut each: impl FnMut(&mut String, usize, char),
) -> Cow<'_, str> {
    if s.len() <= max && !s.char_indices().any(|(i, c)| needs(i, c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(max) + 32);
    for (i, c) in s.char_indices() {
        if i + c.len_utf8() > max {
            out.push_str(&cut_note(s.len()));
            break;
        }
        each(&mut out, i, c);
    }
    Cow::Owned(out)
}

/// `s` for a terminal: hostile characters escaped, at most [`MAX_SHOWN`] bytes of it.
pub fn terminal(s: &str) -> Cow<'_, str> {
    escaped(s, MAX_SHOWN)
}

/// `s` quoted inside an error message: as [`terminal`], bounded by [`MAX_ECHOED`].
pub fn echo(s: &str) -> Cow<'_, str> {
    escaped(s, MAX_ECHOED)
}

/// A path for a terminal: as the catalog shows it (`~/…`, relative to the working folder),
/// escaped and bounded like [`terminal`].
pub fn terminal_path(path: &Path) -> String {
    terminal(&crate::catalog::display_path(path)).into_owned()
}

/// A path for a terminal as the user gave it (no `~/` or working-folder shortening),
/// escaped and bounded like [`terminal`].
pub fn path_as_given(path: &Path) -> String {
    terminal(&path.display().to_string()).into_owned()
}

/// A field of a KAT log or journal line: hostile characters escaped (so no newline, carriage
/// return or line separator survives and the field cannot start a line of its own), bounded
/// by [`MAX_SHOWN`].
pub fn log_field(s: &str) -> Cow<'_, str> {
    escaped(s, MAX_SHOWN)
}

/// Whole lines of command output for a terminal (tables, JSON): line feeds and tabs kept,
/// every other hostile character escaped, nothing cut. The last guard of stdout: fields are
/// sanitized one by one before this, so this only matters for a path that forgot to.
pub fn terminal_text(s: &str) -> Cow<'_, str> {
    lines_within(s, usize::MAX)
}

/// An error message for a terminal: as [`terminal_text`] (a message may list one problem a
/// line), bounded by [`MAX_MESSAGE`].
pub fn terminal_message(s: &str) -> Cow<'_, str> {
    lines_within(s, MAX_MESSAGE)
}

fn lines_within(s: &str, max: usize) -> Cow<'_, str> {
    let hostile = |c: char| is_hostile(c) && !matches!(c, '\n' | '\t');
    transform(
        s,
        max,
        |_, c| hostile(c),
        |out, _, c| {
            if hostile(c) {
                push_escaped(out, c);
            } else {
                out.push(c);
            }
        },
    )
}

/// As [`terminal`], bounded by `max` bytes of the input.
pub(crate) fn escaped(s: &str, max: usize) -> Cow<'_, str> {
    transform(
        s,
        max,
        |_, c| is_hostile(c),
        |out, _, c| {
            if is_hostile(c) {
                push_escaped(out, c);
            } else {
                out.push(c);
            }
        },
    )
}

/// `s` as one word of a POSIX shell command (`'runs/a b; echo x'`), so a suggested command
/// pasted back runs what it says; plain words stay as they are (`runs/a`). A value the shell
/// cannot carry (a NUL byte) is shown escaped instead. The result is also safe for a terminal:
/// inside quotes a control character would still act, so those are escaped, and the
/// command then names the path only approximately, which is better than it acting.
pub fn shell(s: &str) -> String {
    let quoted = shlex::try_quote(s).unwrap_or_else(|_| Cow::Owned(format!("'{}'", terminal(s))));
    terminal(&quoted).into_owned()
}

/// A path as one shell word (see [`shell`]): relative to the working folder when below it,
/// else as given; never `~/…`, which a quoted word would not expand.
pub fn shell_path(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or_else(|| path.to_path_buf());
    shell(&shown.to_string_lossy())
}
