//! One rule for every string a candidate or a file controls (issue 20, item 4), through the
//! real binary. A C library built here carries ESC/OSC sequences (title, clear screen, OSC 52
//! clipboard), newlines that spell `RESULT … PASS` and `timing` lines, `<script>`, `<iframe>`,
//! `|` and `#` in its `ngcc_meta` and on its stderr; a library path carries ESC and a newline;
//! a run folder carries a space and `;`; a config value and a manifest token are megabytes
//! long. Nothing of it may act on a terminal, forge a line of a KAT log, or become markup on
//! a page, and every echo is bounded.

mod common;
use common::hostile as support;

use std::path::Path;
use std::time::Duration;

use support::*;

const BOUND: Duration = Duration::from_secs(120);

/// What must never appear raw in anything shown to a person: ESC, BEL, CSI/OSC starts, the
/// bidi override.
fn assert_inert(what: &str, text: &str) {
    for bad in ['\x1b', '\x07', '\u{9b}', '\u{9d}', '\u{202e}'] {
        assert!(!text.contains(bad), "{what} carries {bad:?} raw:\n{text}");
    }
}

/// A library whose metadata and stderr are hostile. `fail`: CryptHash returns -1 (its real
/// KAT result is CRYPTOFAIL), else it returns a fixed digest.
fn hostile_library(dir: &Path, name: &str, fail: bool) -> std::path::PathBuf {
    let ret = if fail { "-1" } else { "0" };
    let source = format!(
        r#"#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef struct {{
    uint32_t magic, abi, type, struct_size;
    char id[16], algorithm[64], instance[64], variant[32], source_dir[256], compiler[64], build_flags[128];
}} ngcc_meta_common_t;
typedef struct {{ ngcc_meta_common_t h; uint64_t digest_bits, digest_len; }} ngcc_meta_hash_t;
static const ngcc_meta_hash_t META = {{
    {{ 0x4347474Eu, 1, 4, sizeof(ngcc_meta_hash_t), "hash-79", "A|B\n# INJECTED\n<iframe src=x>",
       "FL-256", "\x1b]0;HACKED\x07<script>",
       "x\nRESULT hash-80 FL-256 PASS \nRESULT hash-80 FL-256 PASS \ntiming 0.1 s\n",
       "cc\x1b[2J\x1b[H\xe2\x80\xae",
       "-O2 | `x` *y*\nRESULT hash-80 FL-256 PASS \nRESULT hash-80 FL-256 PASS " }},
    256u, 32u
}};
const ngcc_meta_hash_t *ngcc_meta(void) {{ return &META; }}
int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest) {{
    fputs("\x1b[2J\x1b[H\x1b]0;HACKED\x07\x1b]52;c;aGFja2Vk\x07 boom\n", stderr);
    fflush(stderr);
    (void)msg; (void)msg_len_bits;
    memset(digest, 0x5a, (size_t)digest_len_bits / 8);
    return {ret};
}}
"#
    );
    common::cc::build_library(dir, name, &source)
}

fn run(args: &[&str], m: &str) -> std::process::Output {
    run_bounded(command(args, m, &[]), BOUND).0
}

fn shown(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn files_with(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_with(&p, ext));
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
    out
}

#[test]
fn hostile_metadata_and_stderr_stay_inert_in_list_kat_and_the_kat_log() {
    let t = tempfile::tempdir().unwrap();
    let lib = hostile_library(t.path(), "failing", true);
    let m = marker("strings-kat");
    let _sweep = Sweep(m.clone());

    let list = run(&["list", "--lib", path_str(&lib)], &m);
    assert_inert("list", &shown(&list));

    let out = t.path().join("k");
    let kat = run(
        &["kat", "--lib", path_str(&lib), "--out", path_str(&out)],
        &m,
    );
    assert_eq!(kat.status.code(), Some(3), "CRYPTOFAIL: {}", text(&kat));
    assert_inert("kat", &shown(&kat));

    let logs = files_with(&out.join("kat"), "log");
    assert_eq!(logs.len(), 1, "{}", text(&kat));
    let log = std::fs::read_to_string(&logs[0]).unwrap();
    assert_inert("the KAT log", &log);
    let results: Vec<&str> = log.lines().filter(|l| l.starts_with("RESULT")).collect();
    assert_eq!(results.len(), 1, "one RESULT line, cyclescope's:\n{log}");
    assert!(
        results[0].starts_with("RESULT hash-79 FL-256 CRYPTOFAIL"),
        "{log}"
    );
    assert!(log.ends_with(&format!("{}\n", results[0])), "{log}");
    assert!(
        !log.lines().any(|l| l.starts_with("timing 0.1")),
        "a forged timing line:\n{log}"
    );
    assert!(
        log.contains("source_dir  = x\\nRESULT hash-80 FL-256 PASS \\n"),
        "the field is kept, escaped, on its line:\n{log}"
    );
    assert_none_left(&m);
}

#[test]
fn hostile_metadata_never_becomes_markup_in_run_report_and_validate() {
    let t = tempfile::tempdir().unwrap();
    let failing = hostile_library(t.path(), "failing", true);
    let honest = hostile_library(t.path(), "returning", false);
    let m = marker("strings-run");
    let _sweep = Sweep(m.clone());
    let common_args = [
        "--lengths",
        "32",
        "--trials",
        "2",
        "--trial-target",
        "0.01",
        "--allow-unfixed-host",
        "--allow-kat-fail",
        "--no-reference-jobs",
    ];

    // The failing one: its stderr reaches the run's progress lines.
    let out = t.path().join("failed-run");
    let mut args = vec!["run", "--lib", path_str(&failing), "--out", path_str(&out)];
    args.extend(common_args);
    let o = run(&args, &m);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        shown(&o).contains("boom"),
        "the stderr tail is shown: {}",
        text(&o)
    );
    assert_inert("run", &shown(&o));

    // The returning one: records, then pages and validation.
    let out = t.path().join("run");
    let mut args = vec!["run", "--lib", path_str(&honest), "--out", path_str(&out)];
    args.extend(common_args);
    let o = run(&args, &m);
    assert!(o.status.success(), "{}", text(&o));
    assert_inert("run", &shown(&o));

    let pages = t.path().join("pages");
    let o = run(
        &[
            "report",
            path_str(&out),
            "--out",
            path_str(&pages),
            "--no-figures",
        ],
        &m,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_inert("report", &shown(&o));
    let md = files_with(&pages, "md");
    assert!(!md.is_empty(), "{}", text(&o));
    let mut heading_seen = false;
    for page in md {
        let body = std::fs::read_to_string(&page).unwrap();
        assert_inert("a page", &body);
        for bad in ["<iframe", "<script", "\n# INJECTED", "\nRESULT"] {
            assert!(!body.contains(bad), "{bad} in {}:\n{body}", page.display());
        }
        if let Some(first) = body.lines().next().filter(|l| l.starts_with("# hash-79")) {
            assert!(
                first.starts_with("# hash-79 A\\|B # INJECTED &lt;iframe src=x&gt; — "),
                "{first}"
            );
            heading_seen = true;
        }
    }
    assert!(heading_seen, "the candidate page was written");

    let v = run(&["validate", path_str(&out)], &m);
    assert_inert("validate", &shown(&v));
    assert_none_left(&m);
}

#[test]
fn a_library_path_with_escapes_and_a_newline_is_shown_escaped() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ev\x1b]0;HACKED\x07il\nRESULT x");
    std::fs::create_dir(&dir).unwrap();
    let lib = common::cc::build_library(
        &dir,
        "plain256",
        &common::cc::candidate_source("hash-81", "plain-256", 256, "", ""),
    );
    // A file the scan cannot describe, so it prints `skipped <path>`.
    std::fs::write(dir.join("libbroken\x1b[2J.so"), b"not an ELF").unwrap();
    let m = marker("strings-path");
    let _sweep = Sweep(m.clone());
    for args in [
        vec!["list", "--lib", path_str(&lib)],
        vec!["list", "--scan", path_str(&dir)],
    ] {
        let o = run(&args, &m);
        let all = shown(&o);
        assert_inert("list", &all);
        assert!(
            !all.lines().any(|l| l.starts_with("RESULT x")),
            "a path's newline reached the terminal: {all}"
        );
        assert!(all.contains("\\x1b]0;HACKED\\x07il\\nRESULT x"), "{all}");
    }
    assert!(
        shown(&run(&["list", "--scan", path_str(&dir)], &m)).contains("skipped "),
        "the broken file is named"
    );
    assert_none_left(&m);
}

#[test]
fn the_resume_hint_is_shell_quoted() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("a b; echo INJECTED");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("campaign.json"), b"{}").unwrap();
    let m = marker("strings-resume");
    let o = run(
        &[
            "run",
            "pseudoXOF-512",
            "--out",
            path_str(&out),
            "--allow-unfixed-host",
        ],
        &m,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let quoted = format!("cyclescope run --resume '{}'", out.display());
    assert!(err.contains(&quoted), "{err}");
}

#[test]
fn huge_config_values_and_manifest_tokens_are_cut_in_errors() {
    let t = tempfile::tempdir().unwrap();
    let m = marker("strings-huge");
    let cfg = t.path().join("c.toml");
    // toml's message quotes an unknown key in full.
    let key = "v".repeat(20 << 20);
    std::fs::write(&cfg, format!("[settings]\n{key} = 1\n")).unwrap();
    let o = run(&["--config", path_str(&cfg), "list"], &m);
    assert_refused_and_cut(&o, 8 << 10, "(20.0 MiB value cut)");

    let manifest = t.path().join("kat.sha256");
    let token = "f".repeat(10 << 20);
    std::fs::write(
        &manifest,
        format!("{token} strict pseudoXOF-512/KAT_2_12_pseudoXOF-512.txt\n"),
    )
    .unwrap();
    let o = run(
        &[
            "kat",
            "pseudoXOF-512",
            "--manifest",
            path_str(&manifest),
            "--out",
            path_str(&t.path().join("k")),
        ],
        &m,
    );
    assert_refused_and_cut(&o, 32 << 10, "value cut)");
}

/// A usage error (exit 2) whose stderr stays under `max` bytes and says what it cut.
fn assert_refused_and_cut(o: &std::process::Output, max: usize, cut: &str) {
    let all = text(o);
    assert_eq!(o.status.code(), Some(2), "{}", &all[..2000.min(all.len())]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.stderr.len() < max, "{} bytes of error", o.stderr.len());
    assert!(
        err.contains(cut),
        "the cut says so: {}",
        &err[..err.len().min(2000)]
    );
}
