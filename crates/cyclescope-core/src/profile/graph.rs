//! Reads a callgrind output file (written with `--compress-strings=no --compress-pos=no` and
//! `--toggle-collect` on the worker's counted-calls function, so only the counted calls are in
//! it) into self costs per function and per source line. Names, files and lines are
//! valgrind's: it symbolises from the library's symbol table and DWARF line tables as it runs.
//! Parsing only.

use std::collections::BTreeMap;

/// Self instructions of one function (its object and name).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FnKey {
    pub(crate) object: String,
    pub(crate) function: String,
}

/// Self instructions of one source line, and the function it is in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct LineKey {
    pub(crate) file: String,
    pub(crate) line: u64,
    pub(crate) function: String,
}

/// What one callgrind file holds, for the profile.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Graph {
    pub(crate) functions: BTreeMap<FnKey, u64>,
    /// Lines with debug information (callgrind writes line 0 where there is none).
    pub(crate) lines: BTreeMap<LineKey, u64>,
    /// The inclusive cost of the calls out of `root`, and how many there were.
    pub(crate) root_inclusive: u64,
    pub(crate) root_calls: u64,
    pub(crate) root_self: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("callgrind's output has no `events:` line starting with Ir")]
    NoIr,
    #[error("callgrind's output line {line} is not in the format cyclescope reads: {text:?}")]
    Format { line: usize, text: String },
}

/// Parses `text`, `root` being the worker's function whose calls are counted.
pub(crate) fn parse(text: &str, root: &str) -> Result<Graph, GraphError> {
    let mut g = Graph::default();
    let mut ir_at: Option<usize> = None;
    let mut positions = 1usize;
    let (mut object, mut fn_file, mut file, mut function) =
        (String::new(), String::new(), String::new(), String::new());
    let mut pending_call: Option<u64> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let bad = || GraphError::Format {
            line: i + 1,
            text: line.chars().take(80).collect(),
        };
        if let Some(rest) = line.strip_prefix("events:") {
            ir_at = rest.split_whitespace().position(|e| e == "Ir");
        } else if let Some(rest) = line.strip_prefix("positions:") {
            positions = rest.split_whitespace().count().max(1);
        } else if let Some(v) = line.strip_prefix("ob=") {
            object = v.to_string();
        } else if let Some(v) = line.strip_prefix("fl=") {
            fn_file = v.to_string();
            file = fn_file.clone();
        } else if let Some(v) = line.strip_prefix("fi=") {
            file = v.to_string();
        } else if let Some(v) = line.strip_prefix("fe=") {
            file = v.to_string();
        } else if let Some(v) = line.strip_prefix("fn=") {
            function = v.to_string();
            file = fn_file.clone();
            pending_call = None;
        } else if let Some(rest) = line.strip_prefix("calls=") {
            let n = rest.split_whitespace().next().and_then(|n| n.parse().ok());
            pending_call = Some(n.ok_or_else(bad)?);
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            let ir_col = ir_at.ok_or(GraphError::NoIr)?;
            let mut cols = line.split_whitespace();
            let pos: Option<u64> = cols.next().and_then(|p| p.parse().ok());
            let cost: u64 = cols
                .nth(positions - 1 + ir_col)
                .map_or(Some(0), |c| c.parse().ok())
                .ok_or_else(bad)?;
            let pos = pos.ok_or_else(bad)?;
            if let Some(n) = pending_call.take() {
                // The inclusive cost of a call: the root's calls are the counted ones.
                if function == root {
                    g.root_inclusive += cost;
                    g.root_calls += n;
                }
                continue;
            }
            if function == root {
                g.root_self += cost;
                continue;
            }
            *g.functions
                .entry(FnKey {
                    object: object.clone(),
                    function: function.clone(),
                })
                .or_default() += cost;
            if pos > 0 {
                *g.lines
                    .entry(LineKey {
                        file: file.clone(),
                        line: pos,
                        function: function.clone(),
                    })
                    .or_default() += cost;
            }
        }
        // Other lines (cob=, cfi=, cfn=, headers, comments, totals:) change nothing here.
    }
    if ir_at.is_none() {
        return Err(GraphError::NoIr);
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir

ob=/w/cyclescope-worker
fl=???
fn=cyclescope_counted_calls
0 12
cob=/lib/libx.so
cfi=x.c
cfn=CryptHash
calls=3 10
0 330

ob=/lib/libx.so
fl=x.c
fn=CryptHash
10 30
11 60
fi=x.h
4 40
fe=x.c
12 10
cfn=compress
calls=6 20
12 190

fn=compress
20 180
21 10
totals: 342
";

    #[test]
    fn self_costs_per_function_and_line_and_the_roots_calls() {
        let g = parse(OUT, "cyclescope_counted_calls").unwrap();
        let f = |name: &str| {
            g.functions[&FnKey {
                object: "/lib/libx.so".into(),
                function: name.into(),
            }]
        };
        assert_eq!((f("CryptHash"), f("compress")), (140, 190));
        assert_eq!((g.root_inclusive, g.root_calls, g.root_self), (330, 3, 12));
        let l = |file: &str, line, function: &str| {
            g.lines[&LineKey {
                file: file.into(),
                line,
                function: function.into(),
            }]
        };
        assert_eq!(l("x.h", 4, "CryptHash"), 40);
        assert_eq!(l("x.c", 12, "CryptHash"), 10);
        assert_eq!(l("x.c", 20, "compress"), 180);
        assert_eq!(g.lines.values().sum::<u64>(), 330);
    }

    #[test]
    fn malformed_output_is_refused_with_its_line() {
        assert_eq!(parse("positions: line\n", "r"), Err(GraphError::NoIr));
        let err = parse("events: Ir\nfn=a\ncalls=x 1\n", "r").unwrap_err();
        assert_eq!(
            err,
            GraphError::Format {
                line: 3,
                text: "calls=x 1".into()
            }
        );
    }
}
