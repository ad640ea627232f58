//! The candidate page's section on where the cost goes, for a run that holds profiles
//! (`profiles.json`, from `cyclescope profile --out`): per instance and length, the share of
//! each function, exact (valgrind's instruction counts) or sampled (perf_event), with what
//! counted it and what the profile cost. The published pages have no such section and a run
//! without profiles gets none. Function and file names come from the candidate's library and go
//! through the sanitizer. Never reads files; numbers go through `format`.

use crate::format;
use crate::profile::{Profile, ProfileFile};
use crate::sanitize::{markdown, markdown_code};

/// Functions shown per profile (the rest are summed in one row).
const SHOWN: usize = 10;

/// The section's lines for `candidate`, or None when the run profiled none of its instances.
pub(crate) fn render(file: &ProfileFile, candidate: &str) -> Option<Vec<String>> {
    let mine: Vec<&Profile> = file
        .profiles
        .iter()
        .filter(|p| p.candidate == candidate)
        .collect();
    if mine.is_empty() {
        return None;
    }
    let mut l = vec![
        "## 9. Where the cost goes (cyclescope)".to_string(),
        String::new(),
        "cyclescope profiled these instances in trials of their own, apart from the timed \
         ones: exactly, by counting every instruction of the calls under valgrind's callgrind, \
         or by sampling their instruction pointers with perf_event. Each share is of all that \
         was counted in the calls."
            .to_string(),
        String::new(),
    ];
    for p in mine {
        l.push(format!(
            "### {} at {} — {}",
            markdown(&p.label),
            format::size(p.input_bytes),
            markdown(&p.event)
        ));
        l.push(String::new());
        let o = &p.overhead;
        l.push(format!(
            "{} calls, {} {}; {}. The profiled calls took {} against {} natively ({}).",
            p.calls,
            format::int(Some(if p.is_exact() {
                p.per_call()
            } else {
                p.total as f64
            })),
            if p.is_exact() {
                "instructions per call"
            } else {
                "samples"
            },
            markdown(&p.tool),
            format::time(o.profiled_loop_s),
            format::time(o.native_loop_s),
            // The ratio, and its ⚠ with why when the native calls waited for the CPU.
            match o.doubt() {
                Some(why) => format!("{}× {why}", format::g3(o.slowdown)),
                None => format!("{}×", format::g3(o.slowdown)),
            },
        ));
        l.push(String::new());
        l.push("| Function | Object | Share |".to_string());
        l.push("|---|---|---|".to_string());
        for f in p.functions.iter().take(SHOWN) {
            l.push(format!(
                "| {} | {} | {} |",
                markdown_code(&f.function),
                markdown(&f.object),
                format::share(f.share)
            ));
        }
        if p.functions.len() > SHOWN {
            let rest: f64 = p.functions[SHOWN..].iter().map(|f| f.share).sum();
            l.push(format!(
                "| {} others | | {} |",
                p.functions.len() - SHOWN,
                format::share(rest)
            ));
        }
        l.push(String::new());
    }
    Some(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{FunctionShare, Overhead};

    fn profile(candidate: &str, function: &str) -> Profile {
        Profile {
            candidate: candidate.into(),
            library: String::new(),
            label: "X-256".into(),
            input_bytes: 1024,
            event: crate::profile::EVENT.into(),
            tool: "valgrind-3.19.0 callgrind".into(),
            calls: 20,
            total: 1_028_000,
            functions: vec![
                FunctionShare {
                    function: function.into(),
                    object: "libx.so".into(),
                    count: 1_023_000,
                    share: 0.995,
                },
                FunctionShare {
                    function: "finish".into(),
                    object: "libx.so".into(),
                    count: 5_000,
                    share: 0.005,
                },
            ],
            lines: Vec::new(),
            overhead: Overhead {
                profiled_loop_s: 0.0027,
                native_loop_s: 0.000058,
                slowdown: 46.6,
                profile_wall_s: 0.67,
                native_waited_s: None,
            },
            sandbox_relaxed: Vec::new(),
            lost: 0,
        }
    }

    #[test]
    fn the_section_lists_shares_and_escapes_the_librarys_names() {
        let file = ProfileFile {
            profiles: vec![profile("c", "compress|`x`"), profile("other", "y")],
        };
        let l = render(&file, "c").expect("a section").join("\n");
        assert!(
            l.starts_with("## 9. Where the cost goes (cyclescope)"),
            "{l}"
        );
        assert!(
            l.contains("### X-256 at 1 KiB — valgrind:callgrind:Ir"),
            "{l}"
        );
        assert!(l.contains("20 calls, 51.4 k instructions per call"), "{l}");
        assert!(l.contains("(46.6×)"), "{l}");
        assert!(
            l.contains("| `` compress\\|`x` `` | libx.so | 99.5 % |"),
            "{l}"
        );
        assert!(l.contains("| `finish` | libx.so | 0.5 % |"), "{l}");
        assert!(!l.contains("| `y` |"));
        assert_eq!(render(&file, "none"), None);
    }
}
