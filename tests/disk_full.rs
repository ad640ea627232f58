//! A full disk during a run, on a real (tiny) tmpfs: the run stops with an error that names
//! the cause and the way on, and nothing already written is torn. Needs permission to mount
//! tmpfs (root, as on CI); without it the tests fail with that reason rather than pass untested.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A tmpfs of `size` mounted on a fresh folder, unmounted on drop.
struct TinyFs(PathBuf);

impl TinyFs {
    fn mount(size: &str) -> TinyFs {
        let dir = tempfile::tempdir().expect("temp dir").keep();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) if o.status.success() => TinyFs(dir),
            other => {
                let _ = std::fs::remove_dir(&dir);
                panic!(
                    "cannot mount a {size} tmpfs on {} to fill it (this test needs root, as CI has): {other:?}",
                    dir.display()
                )
            }
        }
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn run_cmd(out: &Path, lengths: &str) -> Command {
    let mut c = common::cyclescope();
    c.args([
        "run",
        "sm3hash-256",
        "--no-reference-jobs",
        "--lengths",
        lengths,
        "--trial-target",
        "0.05",
        "--trials",
        "2",
    ])
    .arg("--out")
    .arg(out)
    .arg("--allow-unfixed-host")
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

#[test]
fn no_room_for_the_kat_text_stops_before_blaming_the_candidate() {
    let fs = TinyFs::mount("1m");
    let out = fs.0.join("run");
    let o = run_cmd(&out, "32").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("needed in") && err.contains("for the KAT text of sm3hash-256"),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");
    assert!(
        !err.contains("LOADFAIL"),
        "a full disk is not the candidate's fault: {err}"
    );
    let campaign: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("campaign.json")).unwrap()).unwrap();
    assert_eq!(
        campaign["cyclescope"]["state"], "running",
        "campaign.json is whole"
    );
}

#[test]
fn a_disk_that_fills_mid_run_stops_the_run_and_tears_nothing() {
    let fs = TinyFs::mount("12m");
    let out = fs.0.join("run");
    let child = run_cmd(&out, "32,128,512,1024,4096")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the first record is on disk, fill what is left.
    let deadline = Instant::now() + Duration::from_secs(120);
    while cyclescope_core::record::run_dir::list_records(&out).is_empty() {
        assert!(Instant::now() < deadline, "no record appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut filler = std::fs::File::create(fs.0.join("filler")).unwrap();
    let block = vec![0u8; 64 * 1024];
    while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("stopped: cannot write"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    // Every record file that exists parses; no temporary file is left behind.
    for entry in std::fs::read_dir(out.join("records/iccs"))
        .unwrap()
        .flatten()
    {
        let p = entry.path();
        assert!(
            p.extension().is_some_and(|e| e == "json"),
            "left behind: {}",
            p.display()
        );
        let bytes = std::fs::read(&p).unwrap();
        serde_json::from_slice::<cyclescope_core::record::TimingRecord>(&bytes)
            .unwrap_or_else(|e| panic!("{} is torn: {e}", p.display()));
    }
}
