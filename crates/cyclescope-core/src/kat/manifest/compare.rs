//! Line-by-line comparison of generated KAT text with a reference file from a `--kat-dir`
//! (the harness's fallback when a manifest has no entry): `\r` and trailing blanks are
//! ignored, blank lines skipped, and a reference line `X_Len =` with an empty value (written by
//! a generator in template mode) accepts any value of the same key and is counted.

use std::io::BufRead;

use super::canonical::{is_blank_len_line, line_key, trim_line_end};

/// The first line that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineDifference {
    /// 1-based line numbers in the raw files (blank lines count).
    pub(crate) generated_line: usize,
    pub(crate) reference_line: usize,
    /// The trimmed lines, or `<end of file>`.
    pub(crate) generated: String,
    pub(crate) reference: String,
}

/// What a comparison found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LineComparison {
    /// Non-blank lines compared.
    pub(crate) lines: usize,
    /// Reference lines `X_Len =` (empty value) accepted for any value.
    pub(crate) tolerated_blank_len: usize,
    pub(crate) difference: Option<LineDifference>,
}

#[cfg(test)]
impl LineComparison {
    fn matches(&self) -> bool {
        self.difference.is_none()
    }
}

/// The next non-blank trimmed line and its 1-based number.
fn next_line(r: &mut impl BufRead, number: &mut usize, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    loop {
        buf.clear();
        if r.read_until(b'\n', buf)? == 0 {
            return Ok(false);
        }
        *number += 1;
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let len = trim_line_end(buf).len();
        buf.truncate(len);
        if !buf.is_empty() {
            return Ok(true);
        }
    }
}

/// Compares two KAT texts line by line, stopping at the first difference.
pub fn compare_lines(
    mut generated: impl BufRead,
    mut reference: impl BufRead,
) -> std::io::Result<LineComparison> {
    let mut out = LineComparison::default();
    let (mut gn, mut rn) = (0usize, 0usize);
    let (mut g, mut r) = (Vec::new(), Vec::new());
    loop {
        let has_g = next_line(&mut generated, &mut gn, &mut g)?;
        let has_r = next_line(&mut reference, &mut rn, &mut r)?;
        if !has_g && !has_r {
            return Ok(out);
        }
        let same = has_g && has_r && g == r;
        let tolerated = has_g
            && has_r
            && !same
            && is_blank_len_line(&r)
            && line_key(&g).is_some()
            && line_key(&g) == line_key(&r);
        if !(same || tolerated) {
            let show = |has: bool, l: &[u8]| {
                if has {
                    String::from_utf8_lossy(l).into_owned()
                } else {
                    "<end of file>".to_string()
                }
            };
            out.difference = Some(LineDifference {
                generated_line: gn,
                reference_line: rn,
                generated: show(has_g, &g),
                reference: show(has_r, &r),
            });
            return Ok(out);
        }
        out.lines += 1;
        if tolerated {
            out.tolerated_blank_len += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(g: &str, r: &str) -> LineComparison {
        compare_lines(g.as_bytes(), r.as_bytes()).unwrap()
    }

    #[test]
    fn cr_trailing_spaces_and_blank_lines_are_ignored() {
        let c = cmp("A = 1\nB = 2\n\n", "A = 1  \r\n\r\n\r\nB = 2\r\n");
        assert!(c.matches(), "{c:?}");
        assert_eq!((c.lines, c.tolerated_blank_len), (2, 0));
    }

    #[test]
    fn blank_len_lines_in_the_reference_are_tolerated_and_counted() {
        let c = cmp(
            "Msg_Len = 8\nMsg = 3D\nDst_Len = 256\n",
            "Msg_Len =\nMsg = 3D\nDst_Len = \n",
        );
        assert!(c.matches(), "{c:?}");
        assert_eq!(c.tolerated_blank_len, 2);
        // …but not a blank value of another key.
        assert!(!cmp("Dst = AB\n", "Dst =\n").matches());
    }

    #[test]
    fn the_first_difference_is_reported_with_raw_line_numbers() {
        let c = cmp("A = 1\nB = 2\nC = 3\n", "A = 1\n\nB = 9\nC = 3\n");
        let d = c.difference.unwrap();
        assert_eq!((d.generated_line, d.reference_line), (2, 3));
        assert_eq!(
            (d.generated.as_str(), d.reference.as_str()),
            ("B = 2", "B = 9")
        );
        let d = cmp("A = 1\n", "A = 1\nB = 2\n").difference.unwrap();
        assert_eq!(d.generated, "<end of file>");
    }
}
