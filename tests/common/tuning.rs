//! The fixture submission (`fixhash`) opened in a real workbench from its sources, with only
//! FIXH-256 at 32 B selected: where the tuning-loop tests start.

use std::path::Path;

use super::tmux::Tmux;

/// `cyclescope --src fixhash --trial-target 0.01 --allow-unfixed-host <extra>` in tmux session
/// `name` (160×48, in `cwd`, its build cache and its tuning journal, `cwd/data`, there), with
/// FIXH-256 the only instance selected and 32 B the only length.
pub fn fixh256_workbench(name: &str, cwd: &Path, extra: &str) -> Tmux {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/submissions/fixhash");
    let bin = env!("CARGO_BIN_EXE_cyclescope");
    let script = format!(
        "XDG_CACHE_HOME={} XDG_DATA_HOME={} {bin} --src {} --trial-target 0.01 --allow-unfixed-host {extra}; echo EXIT:$?; sleep 60",
        cwd.join("cache").display(),
        cwd.join("data").display(),
        src.display()
    );
    let t = Tmux::start_in(name, 160, 48, cwd, &script);
    // Built from sources with the guide's flags, each instance shows them. `--src` selects
    // what it built; only FIXH-256 (the second instance) is wanted, so the candidate's row
    // (under the cursor) clears the selection first.
    let screen = t.wait_for("FIXH-256 guide");
    if !screen.contains("Catalog · 0 selected") {
        t.send(&["Space"]);
        t.wait_for("Catalog · 0 selected");
    }
    t.send(&["j", "j", "Space"]);
    t.wait_for("[x] FIXH-256 guide");
    for k in ["2", "3", "4", "5", "6", "7", "8"] {
        t.send(&[k]);
    }
    t.wait_for("len S1 ·2 ·3 ·4 ·5 ·6 ·7 ·8");
    t
}
