//! `cyclescope report` on the pages of real cyclescope runs: short runs of the ICCS helper, an
//! ad-hoc library and the fixture library are measured, their pages and figures rendered, and
//! `--check` accepts the pages, then refuses one changed by hand, naming the line. The
//! published arm_1 pages are `report_reference.rs`.

mod common;

use std::path::Path;

use common::pages::{assert_states, svg_elements};

fn cyclescope(args: &[&str]) -> std::process::Output {
    common::cyclescope()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn deps_lib(name: &str) -> String {
    let exe = Path::new(env!("CARGO_BIN_EXE_cyclescope"));
    exe.parent()
        .unwrap()
        .join("deps")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn report_renders_pages_of_a_cyclescope_run_and_checks_them() {
    let tmp = tempfile::tempdir().unwrap();
    let quick = [
        "--lengths",
        "32,1024",
        "--trial-target",
        "0.01",
        "--trials",
        "2",
    ];
    // The ICCS helper alone: no candidate page, a row of the summary's ICCS table.
    let iccs_run = tmp.path().join("iccs-run");
    let iccs_s = iccs_run.to_str().unwrap();
    let mut args = vec!["run", "pseudoXOF-512"];
    args.extend(quick);
    args.extend(["--out", iccs_s, "--allow-unfixed-host"]);
    let o = cyclescope(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let iccs_pages = tmp.path().join("iccs-pages");
    let o = cyclescope(&["report", iccs_s, "--out", iccs_pages.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dirs: Vec<_> = std::fs::read_dir(&iccs_pages)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        dirs,
        ["performance"],
        "the ICCS helpers get no candidate page"
    );
    let summary_path = std::fs::read_dir(iccs_pages.join("performance"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("summary_")
        })
        .unwrap();
    let summary = std::fs::read_to_string(summary_path).unwrap();
    assert!(summary.contains("## ICCS hash helpers"), "{summary}");
    assert!(summary.contains("| `pseudoXOF` | 512 | "), "{summary}");
    // Our pages describe what cyclescope did, not the harness's C builds and relinking.
    assert!(summary.contains("as bundled with cyclescope"), "{summary}");
    assert!(summary.contains("Measured by "), "{summary}");
    // The helpers' figures hang off the summary: cycles/byte and one histogram per job, each
    // a well-formed SVG with its bars and the calls beyond the drawn body counted.
    let figures = iccs_pages.join("performance/figures");
    let mut names: Vec<String> = std::fs::read_dir(&figures)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names[0].starts_with("cpb_"), "{names:?}");
    for name in &names[1..] {
        assert!(name.starts_with("hist_pseudoXOF-512_"), "{name}");
        assert!(summary.contains(&format!("(figures/{name})")), "{summary}");
        let els = svg_elements(&figures.join(name));
        let caption = &els.iter().find(|(t, _)| t == "text").unwrap().1;
        assert!(
            caption.starts_with("pseudoXOF-512 @ ") && caption.contains(" below, "),
            "{caption}"
        );
        // The bins are the blue rectangles: at most 60, each a whole number of counter steps
        // wide, so how many depends on the spread the machine gave.
        let svg = std::fs::read_to_string(figures.join(name)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let bars = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#0000FF"))
            .count();
        assert!((1..=60).contains(&bars), "{bars} bins:\n{svg}");
    }
    let method_path = summary_path_sibling(&iccs_pages, "method_");
    let method = std::fs::read_to_string(method_path).unwrap();
    // What was measured and how: records, counter, plan, KAT status.
    assert_states(
        &method,
        &[
            "- 2 records (2 complete). Counter: ",
            "loop counter",
            "timer overhead",
            "schedstat",
            "2 trials",
            "KAT status of the timed instances: 1 PASS",
        ],
    );
    for harness_only in ["-Wl,--wrap", "Key exchange", "OpenSSL"] {
        assert!(!method.contains(harness_only), "{harness_only}: {method}");
    }

    // An ad-hoc library without a KAT manifest is a candidate of its own.
    let run = tmp.path().join("run");
    let run_s = run.to_str().unwrap();
    let faulty = deps_lib("libfaulty.so");
    let mut args = vec![
        "run",
        "--lib",
        &faulty,
        "--label",
        "X-512",
        "--digest-bits",
        "512",
    ];
    args.extend(quick);
    args.extend(["--out", run_s, "--allow-unfixed-host", "--allow-kat-fail"]);
    let o = cyclescope(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pages = tmp.path().join("pages");
    let pages_s = pages.to_str().unwrap();
    let o = cyclescope(&["report", run_s, "--out", pages_s]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The fixture library names its own candidate in ngcc_meta; any non-iccs one gets a page.
    let cand_dir = std::fs::read_dir(&pages)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.ends_with("performance"))
        .expect("a candidate page folder");
    let cand_path = std::fs::read_dir(cand_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "md"))
        .unwrap();
    let summary = std::fs::read_to_string(
        pages.join("performance").join(
            cand_path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace("perf_", "summary_"),
        ),
    )
    .unwrap();
    assert!(summary.contains("`X-512` ⚠ KAT NOKAT"), "{summary}");
    let cand = std::fs::read_to_string(&cand_path).unwrap();
    assert!(
        cand.contains("| instance | message | mean cycles | cycles/byte | mean time | MB/s | n |")
    );
    assert!(cand.contains("| `X-512` | 32 B | "), "{cand}");
    assert!(cand.contains("| `X-512` | 1024 B | "), "{cand}");
    // The KAT row names the build (and the compiler the library's KAT log names): an ad-hoc
    // library's is not known.
    assert!(
        cand.lines()
            .any(|l| l.starts_with("| `X-512` | unknown") && l.ends_with("| NOKAT |")),
        "{cand}"
    );
    assert!(
        cand.contains("⚠ Timed without a passing KAT: `X-512` (NOKAT)"),
        "{cand}"
    );

    let o = cyclescope(&["report", run_s, "--out", pages_s, "--check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let path = cand_path;
    let edited = cand.replacen("## 4. Performance", "## 4. Performance (edited)", 1);
    std::fs::write(&path, edited).unwrap();
    let o = cyclescope(&["report", run_s, "--out", pages_s, "--check"]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let line = cand.lines().position(|l| l == "## 4. Performance").unwrap() + 1;
    assert!(
        stdout.contains(&format!("{} line {line}:", path.display())),
        "{stdout}"
    );
}

/// The page under `<pages>/performance/` whose name starts with `prefix`.
fn summary_path_sibling(pages: &std::path::Path, prefix: &str) -> std::path::PathBuf {
    std::fs::read_dir(pages.join("performance"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .unwrap()
}
