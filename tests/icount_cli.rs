//! `--counter instructions` end to end: the real binary, real workers under the real valgrind
//! (the distribution's package; `.ci/run` installs it). Exact counts only, so nothing here
//! depends on a quiet machine: the bundled baselines count the same to the instruction in two
//! runs, the record names the counter and what the sandbox gave up, the table shows
//! instructions per call and per byte with `× pseudoXOF` divided within the counter, the
//! instruction sweep finds SM3's and a fixture's block structure to the byte, and a library
//! that runs AVX-512 code is named as such. Few lengths, three counted calls each: valgrind is
//! slow.

mod common;

use std::path::Path;

use serde_json::Value;

fn record(run: &Path, cand: &str, label: &str, bytes: u64) -> Value {
    let p = run.join(format!("records/{cand}/{label}__hash_{bytes}.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

fn run_counted(dir: &Path, out: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--counter",
        "instructions",
        "--allow-unfixed-host",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    common::cyclescope_in(dir, &args)
}

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/config.toml");

#[test]
fn the_baselines_count_the_same_to_the_instruction_in_two_runs() {
    let t = tempfile::tempdir().unwrap();
    let sel = [
        "sm3hash-256",
        "pseudoXOF-256",
        "--lengths",
        "1,64,1000",
        "--config",
        CONFIG,
    ];
    let first = run_counted(t.path(), "a", &sel);
    let out = String::from_utf8_lossy(&first.stdout);
    assert!(
        first.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = run_counted(t.path(), "b", &sel);
    assert!(second.status.success());
    for label in ["sm3hash-256", "pseudoXOF-256"] {
        for bytes in [1, 64, 1000] {
            let (a, b) = (
                record(&t.path().join("a"), "iccs", label, bytes),
                record(&t.path().join("b"), "iccs", label, bytes),
            );
            assert_eq!(a["status"], "complete", "{label} {bytes}: {a}");
            let add = &a["cyclescope"];
            assert_eq!(add["cycle_source"], "valgrind:callgrind:Ir");
            let count = &add["instructions"];
            assert_eq!(count["calls"], 3, "{count}");
            let ir = count["instructions"].as_u64().unwrap();
            assert!(ir > 0);
            // Exact: the same library, length and message, the same count.
            assert_eq!(
                count["instructions"], b["cyclescope"]["instructions"]["instructions"],
                "{label} {bytes} B"
            );
            assert_eq!(a["mean_cycles"].as_f64().unwrap(), ir as f64 / 3.0);
            assert_eq!(
                count["estimate_formula"],
                "Ir + 10·(I1mr + D1mr + D1mw) + 100·(ILmr + DLmr + DLmw)"
            );
            assert!(count["estimated_cycles"].as_u64().unwrap() >= ir);
            let relaxed = count["sandbox_relaxed"].as_array().unwrap();
            assert!(
                relaxed
                    .iter()
                    .any(|r| r.as_str().unwrap().contains("RLIMIT_FSIZE")),
                "{relaxed:?}"
            );
            // No doubt an exact count could have (three calls are its whole figure).
            assert!(add["per_call"].is_null());
        }
        // More message, more instructions.
        let ir = |n| {
            record(&t.path().join("a"), "iccs", label, n)["mean_cycles"]
                .as_f64()
                .unwrap()
        };
        assert!(ir(1000) > ir(64) && ir(64) > ir(1), "{label}");
    }
    // The table: per call and per byte, no time, the ratio within the counter.
    assert!(
        out.contains("| instance | message | instructions/call | instructions/byte |"),
        "{out}"
    );
    assert!(out.contains("instructions: valgrind:callgrind:Ir"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("| `pseudoXOF-256` | 64 B |") && l.ends_with("| 1.00× |")),
        "{out}"
    );
    assert!(!out.contains('⚠'), "an exact count is not doubtful: {out}");
    let v = common::cyclescope_in(t.path(), &["validate", "a"]);
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // The page's figure counts instructions too: its axis and its link say so.
    let r = common::cyclescope_in(t.path(), &["report", "a", "--out", "pages"]);
    assert!(r.status.success(), "{}", common::output_text(&r));
    // The helpers have no candidate page: their figure hangs off the summary page.
    let figures = t.path().join("pages/performance/figures");
    let svg = std::fs::read_dir(&figures)
        .unwrap_or_else(|e| panic!("{}: {e}", figures.display()))
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("cpb_"))
        .expect("the per-byte figure");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.contains("instructions per byte") && !svg.contains("cycles per byte"),
        "{svg}"
    );
    let page = std::fs::read_dir(t.path().join("pages/performance"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("summary_")
        })
        .expect("the summary page");
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains("- [instructions per byte against message length](figures/cpb_"),
        "{page}"
    );
    // compare of the two runs: instructions per call, and the same count is the same,
    // exactly, on every row (no interval, no noise to call a difference).
    let c = common::cyclescope_in(t.path(), &["compare", "a", "b"]);
    let table = String::from_utf8_lossy(&c.stdout);
    assert!(c.status.success(), "{table}");
    assert!(
        table.contains("\n| instance | message | A instructions/call | B instructions/call |"),
        "{table}"
    );
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 6, "{table}");
    for row in rows {
        assert!(
            row.ends_with(
                "| 1.0000× exact | the same instructions (exact count, no interval needed) |"
            ),
            "{row}"
        );
    }
}

#[test]
fn a_library_running_avx512_code_is_named() {
    let t = tempfile::tempdir().unwrap();
    let prelude = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/icount/avx512.c"),
    )
    .unwrap();
    let source = common::cc::candidate_source("avx", "avx-256", 256, "avx512_touch();", &prelude);
    let lib = common::cc::build_library(t.path(), "avx", &source);
    let o = run_counted(
        t.path(),
        "run",
        &[
            "--lib",
            lib.to_str().unwrap(),
            "--no-baselines",
            "--allow-kat-fail",
            "--lengths",
            "32",
        ],
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let has_avx512 = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.contains("avx512f"));
    assert!(!o.status.success(), "{all}");
    if has_avx512 {
        // The CPU runs it (the KAT gate did), valgrind cannot: said by name.
        assert!(all.contains("uses AVX-512"), "{all}");
        let r = record(&t.path().join("run"), "avx", "avx-256", 32);
        assert!(
            r["cyclescope"]["failure"]
                .as_str()
                .is_some_and(|s| s.contains("AVX-512")),
            "{r}"
        );
    } else {
        // Without AVX-512 the CPU cannot run it either: the job fails, never with a count.
        assert!(all.contains("FAILED"), "{all}");
    }
}
