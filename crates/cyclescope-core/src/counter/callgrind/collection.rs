//! The dynamic half of "a count the candidate cannot steer": what callgrind executed, held
//! against what it collected. Counts and profiles run with `--vex-guest-max-insns=1`, so every
//! block valgrind translates is one guest instruction, and callgrind's block counter (each
//! dump's `desc: Timerange: Basic block A - B`) counts every instruction it runs while
//! instrumenting, whether it collects or not. Callgrind's own running total (`summary:`)
//! counts only what it collected. The two agree to the instruction on an honest run (3.19:
//! 409 202 of 409 202), and every client request that changes what is collected breaks them
//! apart or leaves a part of its own:
//! * `TOGGLE_COLLECT` off: blocks run and are counted, their instructions are not collected;
//! * `ZERO_STATS`: the total restarts, the block counter does not;
//! * `STOP_INSTRUMENTATION` / `START`: switching resets the running total (and the call
//!   stacks), while the blocks before the switch stay counted;
//! * `DUMP_STATS`: a file and a part more than the options asked for, the last part's range
//!   no longer starting where it should.
//!
//! No request can move the block counter or the `--vex-guest-max-insns` option (it is not one
//! `VALGRIND_CLO_CHANGE` accepts), so the check holds for code the library builds at run time
//! too, which `client_requests` cannot see. Parsing and checking only.

use std::path::Path;

use super::CallgrindError;

/// valgrind's option that makes the block counter an instruction counter.
pub const ONE_INSTRUCTION_BLOCKS: &str = "--vex-guest-max-insns=1";

/// Instructions executed and not collected (or the reverse) that are not the library's doing:
/// the block at which an option's dump happens is counted in the next part's range (1 seen).
pub const SLACK: u64 = 2;

/// One dump of callgrind's (one output file), as its header tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// `part: N`, from 1.
    pub number: u64,
    /// The block counter at the part's start and end (`desc: Timerange: Basic block A - B`).
    pub first_block: u64,
    pub last_block: u64,
    /// The part's collected Ir (`summary:`, first column: `events:` starts with Ir).
    pub collected: u64,
}

impl Part {
    /// Instructions executed in the part's range (one per block).
    pub fn executed(&self) -> u64 {
        self.last_block.saturating_sub(self.first_block)
    }

    /// Whether what was collected is what was executed, within [`SLACK`].
    pub fn is_whole(&self) -> bool {
        self.executed().abs_diff(self.collected) <= SLACK
    }
}

/// Reads the header of one callgrind output file.
pub fn part(text: &str) -> Result<Part, CallgrindError> {
    let format = |why: &str| CallgrindError::Format { why: why.into() };
    let number = |s: &str| s.trim().parse::<u64>().ok();
    let (mut n, mut range, mut summary) = (None, None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("part:") {
            n = number(v);
        } else if let Some(v) = line.strip_prefix("desc: Timerange: Basic block") {
            range = v
                .split_once('-')
                .and_then(|(a, b)| Some((number(a)?, number(b)?)));
        } else if let Some(v) = line.strip_prefix("summary:") {
            summary = v.split_whitespace().next().and_then(number);
        }
    }
    let (first_block, last_block) = range.ok_or_else(|| format("no `desc: Timerange` line"))?;
    Ok(Part {
        number: n.ok_or_else(|| format("no `part:` line"))?,
        first_block,
        last_block,
        collected: summary.ok_or_else(|| format("no `summary:` line"))?,
    })
}

/// A count's single file: the whole run in one part from block 0, all of it collected.
pub fn check_whole(text: &str) -> Result<(), CallgrindError> {
    let p = part(text)?;
    if p.number != 1 || p.first_block != 0 {
        return Err(CallgrindError::Dumped { parts: p.number });
    }
    whole(&p)
}

/// A profile's three files (`--toggle-collect`, `--dump-before` and `--dump-after` on the
/// counted-calls function): nothing collected before or after the counted calls, all of
/// them collected, the ranges following each other.
pub fn check_counted(before: &str, counted: &str, after: &str) -> Result<(), CallgrindError> {
    let parts = [part(before)?, part(counted)?, part(after)?];
    let in_order = parts.iter().zip(1..).all(|(p, n)| p.number == n)
        && parts[0].first_block == 0
        && parts[0].last_block == parts[1].first_block
        && parts[1].last_block == parts[2].first_block;
    if !in_order {
        return Err(CallgrindError::Dumped {
            parts: parts.iter().map(|p| p.number).max().unwrap_or(0),
        });
    }
    for outside in [parts[0], parts[2]] {
        if outside.collected > SLACK {
            return Err(CallgrindError::Steered {
                executed: parts[1].executed(),
                collected: parts[1].collected,
            });
        }
    }
    whole(&parts[1])
}

fn whole(p: &Part) -> Result<(), CallgrindError> {
    if p.is_whole() {
        Ok(())
    } else {
        Err(CallgrindError::Steered {
            executed: p.executed(),
            collected: p.collected,
        })
    }
}

/// The files in `dir` besides `expected`: callgrind writes one per dump, so any other is a
/// dump the library asked for.
pub fn check_files(dir: &Path, expected: &[&str]) -> Result<(), CallgrindError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CallgrindError::NoOutput { why: e.to_string() })?;
    let extra = entries
        .filter_map(Result::ok)
        .filter(|e| !expected.iter().any(|x| e.file_name() == *x))
        .count();
    if extra > 0 {
        return Err(CallgrindError::Dumped {
            parts: (expected.len() + extra) as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header as callgrind 3.19 writes it (the figures of runs of a small program with
    /// `--vex-guest-max-insns=1`, its work inside one function, 409 202 instructions).
    fn header(part: u64, first: u64, last: u64, summary: u64) -> String {
        format!(
            "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 7\n\
             part: {part}\n\ndesc: I1 cache: 32768 B, 64 B, 8-way associative\n\
             desc: Timerange: Basic block {first} - {last}\ndesc: Trigger: Program \
             termination\n\npositions: line\nevents: Ir Dr Dw\nsummary: {summary} 28108 \
             12214\n"
        )
    }

    #[test]
    fn an_honest_run_is_whole() {
        assert_eq!(
            part(&header(1, 0, 409202, 409202)),
            Ok(Part {
                number: 1,
                first_block: 0,
                last_block: 409202,
                collected: 409202
            })
        );
        assert_eq!(check_whole(&header(1, 0, 409202, 409202)), Ok(()));
    }

    #[test]
    fn each_steering_request_is_refused() {
        // TOGGLE_COLLECT around the work; ZERO_STATS after it; STOP/START_INSTRUMENTATION
        // around it (the running total restarts); a DUMP_STATS (the fifth part, from 404 238).
        for (text, want) in [
            (
                header(1, 0, 409334, 129218),
                CallgrindError::Steered {
                    executed: 409334,
                    collected: 129218,
                },
            ),
            (
                header(1, 0, 409274, 5047),
                CallgrindError::Steered {
                    executed: 409274,
                    collected: 5047,
                },
            ),
            (
                header(1, 0, 129226, 5047),
                CallgrindError::Steered {
                    executed: 129226,
                    collected: 5047,
                },
            ),
            (
                header(5, 404238, 409286, 5047),
                CallgrindError::Dumped { parts: 5 },
            ),
        ] {
            let got = check_whole(&text).unwrap_err();
            assert_eq!(got, want);
            assert!(got.to_string().contains("client requests"), "{got}");
        }
    }

    #[test]
    fn a_profile_collects_only_and_all_of_the_counted_calls() {
        let (before, counted, after) = (
            header(1, 0, 194084, 0),
            header(2, 194084, 404168, 210083),
            header(3, 404168, 409204, 0),
        );
        assert_eq!(check_counted(&before, &counted, &after), Ok(()));
        // Collection toggled on in the warm-up call and off in the counted ones.
        assert_eq!(
            check_counted(
                &header(1, 0, 194117, 70029),
                &header(2, 194117, 404300, 95),
                &header(3, 404300, 409336, 0)
            ),
            Err(CallgrindError::Steered {
                executed: 210183,
                collected: 95
            })
        );
        // The files out of order, or a range that skips: a dump in between.
        assert!(matches!(
            check_counted(&counted, &before, &after),
            Err(CallgrindError::Dumped { .. })
        ));
        assert!(matches!(
            check_counted(&before, &header(2, 194090, 404168, 210077), &after),
            Err(CallgrindError::Dumped { .. })
        ));
    }

    #[test]
    fn a_header_without_its_lines_is_a_format_error() {
        for missing in ["part:", "desc: Timerange", "summary:"] {
            let text: String = header(1, 0, 10, 10)
                .lines()
                .filter(|l| !l.starts_with(missing))
                .map(|l| format!("{l}\n"))
                .collect();
            assert!(matches!(part(&text), Err(CallgrindError::Format { .. })));
        }
    }

    #[test]
    fn a_file_no_option_asked_for_is_a_dump() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("callgrind.out"), "").unwrap();
        assert_eq!(check_files(dir.path(), &["callgrind.out"]), Ok(()));
        std::fs::write(dir.path().join("callgrind.out.1"), "").unwrap();
        assert_eq!(
            check_files(dir.path(), &["callgrind.out"]),
            Err(CallgrindError::Dumped { parts: 2 })
        );
    }
}
