//! A `cyclescope` that travels: the built `cyclescope` copied alone into a folder outside the
//! target directory (as `cargo install` lays it out), run from `/` with no config.toml in
//! reach. The bundled libraries, the KAT manifest and the trial worker program must come from
//! the binary itself (written into the cache named by CYCLESCOPE_CACHE_DIR), and a
//! config.toml copied elsewhere must keep its KATs passing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::output_text as text;
use common::tmux::Tmux;

/// `Text file busy`: an executable someone still holds open for writing.
const ETXTBSY: i32 = 26;

/// The copied binaries and the cache they write the bundled files into.
struct Installed {
    root: tempfile::TempDir,
}

impl Installed {
    fn new() -> Installed {
        let root = tempfile::tempdir().expect("temp dir");
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_cyclescope"), bin.join("cyclescope"))
            .expect("copying the binary");
        std::fs::create_dir(root.path().join("cache")).unwrap();
        Installed { root }
    }

    fn exe(&self) -> PathBuf {
        self.root.path().join("bin/cyclescope")
    }

    fn cache(&self) -> PathBuf {
        self.root.path().join("cache")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// Runs the copy in `cwd` with nothing of the checkout in its environment.
    ///
    /// The copy was just written: a child another test thread forked while the copy was open
    /// holds its write descriptor until that child execs, and exec then fails with ETXTBSY.
    /// That lasts moments, so the start is retried (at most 5 s) on that error alone.
    fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let started = common::cyclescope_at(self.exe())
                .args(args)
                .current_dir(cwd)
                .env("CYCLESCOPE_CACHE_DIR", self.cache())
                .env_remove("CYCLESCOPE_WORKER_EXE")
                .output();
            match started {
                Err(e)
                    if e.raw_os_error() == Some(ETXTBSY)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other.expect("running the copied cyclescope"),
            }
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_copied_binary_lists_checks_and_measures_the_bundled_instances_from_the_root() {
    let inst = Installed::new();
    let root = Path::new("/");

    let o = inst.run(root, &["list", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows.len(), 12, "{}", text(&o));
    for r in &rows {
        assert_eq!(r["loads"], true, "{r}");
        let lib = r["library"].as_str().unwrap();
        assert!(lib.starts_with(s(&inst.cache())), "{lib}");
        assert!(!lib.contains("target"), "{lib}");
        let manifest = r["kat_manifest"].as_str().unwrap();
        assert!(manifest.starts_with(s(&inst.cache())), "{manifest}");
    }

    let k = inst.path("k");
    let o = inst.run(
        root,
        &["kat", "sm3hash-256", "pseudoXOF-256", "--out", s(&k)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("RESULT iccs sm3hash-256 PASS"), "{}", text(&o));
    assert!(
        out.contains("RESULT iccs pseudoXOF-256 PASS"),
        "{}",
        text(&o)
    );

    let run = inst.path("run");
    let o = inst.run(
        root,
        &[
            "run",
            "pseudoXOF-256",
            "--lengths",
            "32",
            "--trials",
            "2",
            "--trial-target",
            "0.01",
            "--allow-unfixed-host",
            "--out",
            s(&run),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let record: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run.join("records/iccs/pseudoXOF-256__hash_32.json")).unwrap(),
    )
    .unwrap();
    // The record names the file that ran, and that file has the digest it reports.
    let lib = PathBuf::from(record["library"].as_str().unwrap());
    assert!(lib.starts_with(inst.cache()), "{}", lib.display());
    assert_eq!(record["library_sha256"].as_str().unwrap(), sha256(&lib));
    // The trials ran in the worker program the binary carries, placed in the cache.
    assert_eq!(
        record["cyclescope"]["worker"], "cyclescope-worker",
        "{record}"
    );
    let command = record["processes"][0]["command"][0].as_str().unwrap();
    assert_eq!(command, "cyclescope-worker", "{record}");
    let placed = std::fs::read_dir(inst.cache().join("bundled"))
        .unwrap()
        .flatten()
        .any(|e| e.path().join("cyclescope-worker").is_file());
    assert!(placed, "no trial worker in {}", inst.cache().display());
}

#[test]
fn a_config_copied_to_another_folder_keeps_the_bundled_kats_passing() {
    let inst = Installed::new();
    let mine = inst.path("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("config.toml"),
        mine.join("config.toml"),
    )
    .unwrap();
    // Found as ./config.toml, and named with --config from elsewhere.
    let o = inst.run(&mine, &["kat", "pseudoXOF-512", "--out", "k"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("RESULT iccs pseudoXOF-512 PASS"),
        "{}",
        text(&o)
    );
    let cfg = mine.join("config.toml");
    let k2 = inst.path("k2");
    let o = inst.run(
        Path::new("/"),
        &["--config", s(&cfg), "kat", "sm3hash-256", "--out", s(&k2)],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn version_names_the_commit_profile_and_target() {
    let inst = Installed::new();
    let o = inst.run(Path::new("/"), &["--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let v = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let rest = v
        .strip_prefix(concat!(
            "cyclescope ",
            env!("CARGO_PKG_VERSION"),
            " (commit "
        ))
        .unwrap_or_else(|| panic!("{v}"));
    let (commit, rest) = rest.split_once(", ").unwrap_or_else(|| panic!("{v}"));
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    assert_eq!(
        Some(commit.to_string()),
        head.or(Some("unknown".into())),
        "{v}"
    );
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    assert!(
        rest.starts_with(&format!("{profile}, ")) && rest.contains("-linux-"),
        "{v}"
    );
}

#[test]
fn the_copied_workbench_runs_the_bundled_kats_from_the_root() {
    let inst = Installed::new();
    // Started once through the retrying `run`, so the shell below never meets a busy copy.
    assert!(inst.run(Path::new("/"), &["--version"]).status.success());
    let run = inst.path("tui-run");
    let script = format!(
        "CYCLESCOPE_CACHE_DIR={} {} --run {}; echo \"EXIT:$?\"; sleep 600",
        s(&inst.cache()),
        s(&inst.exe()),
        s(&run)
    );
    let t = Tmux::start_in("installed", 120, 36, Path::new("/"), &script);
    t.wait_for("Catalog · 0 selected");
    let screen = t.wait_for("pseudoXOF-2048");
    assert!(!screen.contains("does not exist"), "{screen}");
    t.send(&["j", "Space"]); // sm3hash-256
    t.wait_for("Catalog · 1 selected");
    t.send(&["K"]);
    t.wait_for("sm3hash-256      256 PASS");
    t.wait_for("│ idle │");
    t.send(&["q"]);
    t.wait_for("EXIT:0");
    assert!(run.join("kat/iccs/sm3hash-256.log").is_file() || has_kat_log(&run));
}

/// Whether a KAT log of sm3hash-256 lies somewhere below `dir` (the workbench may give the
/// KAT-only run a folder of its own inside it).
fn has_kat_log(dir: &Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.ends_with("iccs/sm3hash-256.log") {
                return true;
            }
        }
    }
    false
}
