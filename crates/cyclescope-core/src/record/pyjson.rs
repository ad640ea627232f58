//! JSON exactly as the harness writes it: Python's `json.dumps(obj, indent=1) + "\n"` — one
//! space of indent, `": "` between key and value, ASCII escapes, floats in Python's `repr`
//! (`1e-05`, `1621706024.0`) — and the `.tmp` + rename write that never leaves a torn file.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter, PrettyFormatter};

/// A formatter that prints like Python's `json.dumps(indent=1)`.
struct PyFormatter<'a> {
    inner: PrettyFormatter<'a>,
}

impl Formatter for PyFormatter<'_> {
    fn write_f64<W: ?Sized + Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(py_float_repr(value).as_bytes())
    }
    fn write_f32<W: ?Sized + Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        w.write_all(py_float_repr(f64::from(value)).as_bytes())
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // ensure_ascii: every non-ASCII character as \uXXXX (UTF-16 surrogate pairs above BMP).
        let mut buf = [0u16; 2];
        for c in fragment.chars() {
            if c.is_ascii() {
                w.write_all(&[c as u8])?;
            } else {
                for unit in c.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        let s: String = match escape {
            CharEscape::Quote => "\\\"".into(),
            CharEscape::ReverseSolidus => "\\\\".into(),
            CharEscape::Solidus => "/".into(),
            CharEscape::Backspace => "\\b".into(),
            CharEscape::FormFeed => "\\f".into(),
            CharEscape::LineFeed => "\\n".into(),
            CharEscape::CarriageReturn => "\\r".into(),
            CharEscape::Tab => "\\t".into(),
            CharEscape::AsciiControl(b) => format!("\\u{b:04x}"),
        };
        w.write_all(s.as_bytes())
    }
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.inner.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.inner.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.inner.end_object_value(w)
    }
}

/// Python's `repr(float)`: shortest round-trip digits; fixed notation for decimal exponents
/// −4 ≤ e < 16 (always with a fraction, `2.0`), otherwise `d.ddde-05` / `1e+16`.
pub(crate) fn py_float_repr(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let (digits, exp) = shortest_digits(x.abs());
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if exp >= n - 1 {
            format!("{digits}{}.0", "0".repeat((exp - (n - 1)) as usize))
        } else if exp >= 0 {
            let (a, b) = digits.split_at(exp as usize + 1);
            format!("{a}.{b}")
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        format!(
            "{sign}{mant}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// The shortest digits that read back as `x` (> 0) and the decimal exponent of the first, with
/// Python's tie rule: when the exact binary value lies halfway between two shortest candidates,
/// the one with the even last digit (Rust's formatter may pick the other).
fn shortest_digits(x: f64) -> (String, i32) {
    let sci = format!("{x:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let n = digits.len();
    let last = digits.as_bytes()[n - 1] - b'0';
    if last % 2 == 1 && last != 9 {
        // Every double has at most 767 significant digits: this expansion is exact.
        let exact = format!("{x:.800e}");
        let exact: String = exact
            .split('e')
            .next()
            .unwrap_or("")
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let tie = exact.len() > n
            && exact.as_bytes()[n] == b'5'
            && exact[n + 1..].bytes().all(|b| b == b'0');
        if tie {
            for alt in [last - 1, last + 1] {
                let cand = format!("{}{alt}", &digits[..n - 1]);
                let back: Option<f64> = format!("{}.{}e{exp}", &cand[..1], &cand[1..]).parse().ok();
                if alt % 2 == 0 && back == Some(x) {
                    return (cand, exp);
                }
            }
        }
    }
    (digits, exp)
}

/// Serialises `value` as `json.dumps(value, indent=1) + "\n"`.
pub fn to_py_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        PyFormatter {
            inner: PrettyFormatter::with_indent(b" "),
        },
    );
    value.serialize(&mut ser)?;
    out.push(b'\n');
    Ok(out)
}

/// Writes `bytes` to `path` through `path.tmp`, fsync and rename: readers see the old file or
/// the new one, never a torn one, even if the process is killed or the disk fills.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let result = (|| {
        // A leftover (or planted) `.tmp` is removed, not opened: `create_new` neither
        // follows a link nor writes into a file someone else holds open.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Serialises like the harness and writes atomically.
pub(crate) fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> io::Result<()> {
    let bytes = to_py_json(value).map_err(io::Error::other)?;
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_python_repr() {
        for (x, want) in [
            (3.235222017454623e-05, "3.235222017454623e-05"),
            (1621706024.0, "1621706024.0"),
            (0.60180125, "0.60180125"),
            (2.0, "2.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (-2.5e-7, "-2.5e-07"),
            (31.651614463407146, "31.651614463407146"),
            (0.6391067504882812, "0.6391067504882812"),
            (0.6354751586914062, "0.6354751586914062"),
        ] {
            assert_eq!(py_float_repr(x), want);
        }
    }

    #[test]
    fn layout_is_indent_one_and_ascii() {
        let v = serde_json::json!({"a": [1, 2.5], "b": {"µ": "é\n"}, "c": []});
        let s = String::from_utf8(to_py_json(&v).unwrap()).unwrap();
        assert_eq!(
            s,
            "{\n \"a\": [\n  1,\n  2.5\n ],\n \"b\": {\n  \"\\u00b5\": \"\\u00e9\\n\"\n },\n \"c\": []\n}\n"
        );
    }
}
