//! A detached tmux session of fixed size (own socket per test) running the real binary,
//! driven with `send-keys` and read back with `capture-pane`: the terminal the workbench
//! tests draw on. Waiting is polling with a generous deadline, never a fixed sleep; without
//! tmux a test fails, saying so (CI installs it).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Long enough for a run that queues for its CPU behind another test's measuring (the suite
/// shares one lock folder across test binaries and clones), still a bound on a hang.
pub const DEADLINE: Duration = Duration::from_secs(180);

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `script` (a shell command line) in a `width`×`height` session; panics, naming
    /// the missing tool, when tmux is not installed.
    pub fn start(name: &str, width: u16, height: u16, script: &str) -> Tmux {
        Self::start_in(
            name,
            width,
            height,
            Path::new(env!("CARGO_MANIFEST_DIR")),
            script,
        )
    }

    /// As `start`, with `cwd` as the working folder (where runs are created).
    pub fn start_in(name: &str, width: u16, height: u16, cwd: &Path, script: &str) -> Tmux {
        if let Err(e) = Command::new("tmux").arg("-V").output() {
            panic!(
                "{name}: tmux is needed to drive the TUI and cannot run ({e}): apt-get install tmux"
            );
        }
        let t = Tmux {
            socket: format!("cyclescope-e2e-{}-{name}", std::process::id()),
        };
        let out = t.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
            &cwd.display().to_string(),
            script,
        ]);
        assert!(out.status.success(), "tmux new-session: {out:?}");
        t
    }

    /// tmux on this test's socket; the server it starts passes the suite's CPU locks on to
    /// every program of the session.
    pub fn tmux(&self, args: &[&str]) -> Output {
        super::suite_locks(&mut Command::new("tmux"))
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("running tmux")
    }

    pub fn send(&self, keys: &[&str]) {
        for k in keys {
            let out = self.tmux(&["send-keys", k]);
            assert!(out.status.success(), "send-keys {k}: {out:?}");
        }
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-l", text]);
        assert!(out.status.success(), "send-keys -l {text}: {out:?}");
    }

    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p"]).stdout).into_owned()
    }

    /// The pane with its attributes and colours as escape sequences (`capture-pane -e`).
    pub fn capture_escapes(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-e"]).stdout).into_owned()
    }

    /// Polls the pane until `ok` holds on two captures in a row, and returns the second; fails
    /// with the last screen after the deadline. One capture can catch a frame half drawn (tmux
    /// parses the program's output as it arrives, and a full redraw is many kilobytes): its
    /// top already new, rows below still old, a mix no real frame ever showed.
    pub fn wait(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                std::thread::sleep(Duration::from_millis(40));
                let again = self.capture();
                if ok(&again) {
                    return again;
                }
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; the pane shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait(&format!("{needle:?}"), |s| s.contains(needle))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
