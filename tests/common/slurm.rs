//! A real one-node Slurm cluster for a test: a munge key and `munged`, `slurmctld -D` and
//! `slurmd -D` on free ports, `slurm.conf`/`cgroup.conf` from `tests/fixtures/slurm/` filled in
//! with this machine's node and CPUs (`slurmd -C`), every file the daemons keep in a temporary
//! folder. Dropping it cancels what is still queued and stops the daemons, also when the test
//! failed. When the cluster cannot start, the panic carries Slurm's own words (the logs' tails).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons get to bring the node up.
const START_LIMIT: Duration = Duration::from_secs(60);

pub struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<(&'static str, Child)>,
}

/// The daemons' programs, which the packages install in sbin.
fn program(name: &str) -> Command {
    let sbin = Path::new("/usr/sbin").join(name);
    Command::new(if sbin.is_file() {
        sbin
    } else {
        PathBuf::from(name)
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// `NodeName=… CPUs=… Boards=… SocketsPerBoard=… CoresPerSocket=… ThreadsPerCore=…` of this
/// machine, as slurmd reads it.
fn this_node() -> (String, String) {
    let out = program("slurmd")
        .arg("-C")
        .output()
        .expect("slurmd -C (Debian: apt-get install slurm-wlm munge; .ci/run installs them)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "slurmd -C failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text.lines().next().unwrap_or_default();
    let field = |k: &str| {
        line.split_whitespace()
            .find(|w| w.starts_with(&format!("{k}=")))
            .map(str::to_string)
    };
    let node = field("NodeName")
        .and_then(|w| w.strip_prefix("NodeName=").map(str::to_string))
        .unwrap_or_else(|| panic!("no NodeName in `slurmd -C`: {text}"));
    let topology: Vec<String> = [
        "CPUs",
        "Boards",
        "SocketsPerBoard",
        "CoresPerSocket",
        "ThreadsPerCore",
    ]
    .iter()
    .filter_map(|k| field(k))
    .collect();
    (node, topology.join(" "))
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("({e})"));
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(15);
    format!("--- {}\n{}\n", path.display(), lines[from..].join("\n"))
}

impl Cluster {
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let d = dir.path();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let (node, topology) = this_node();
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/slurm");
        let conf = std::fs::read_to_string(fixtures.join("slurm.conf"))
            .unwrap()
            .replace("@NODE@", &node)
            .replace("@TOPOLOGY@", &topology)
            .replace("@DIR@", d.to_str().unwrap())
            .replace("@CTLD_PORT@", &free_port().to_string())
            .replace("@SLURMD_PORT@", &free_port().to_string());
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        std::fs::copy(fixtures.join("cgroup.conf"), d.join("cgroup.conf")).unwrap();
        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        cluster.start_munge();
        let conf = cluster.conf();
        for (name, log) in [("slurmctld", "slurmctld.out"), ("slurmd", "slurmd.out")] {
            let out = std::fs::File::create(cluster.path().join("log").join(log)).unwrap();
            let child = program(name)
                .args(["-D", "-f"])
                .arg(&conf)
                .env("SLURM_CONF", &conf)
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {name}: {e} (is slurm-wlm installed?)"));
            cluster.daemons.push((name, child));
        }
        cluster.wait_idle();
        cluster
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The `slurm.conf` every Slurm command of the test must be given (`SLURM_CONF`).
    pub fn conf(&self) -> PathBuf {
        self.path().join("slurm.conf")
    }

    fn start_munge(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let m = self.path().join("munge");
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key)
            .unwrap();
        std::fs::write(m.join("munge.key"), key).unwrap();
        std::fs::set_permissions(m.join("munge.key"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o711)).unwrap();
        let socket = m.join("munge.socket");
        let out = std::fs::File::create(m.join("munged.out")).unwrap();
        let child = program("munged")
            .args(["--foreground", "--force"])
            .arg(format!("--key-file={}", m.join("munge.key").display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--pid-file={}", m.join("munged.pid").display()))
            .arg(format!("--log-file={}", m.join("munged.log").display()))
            .arg(format!("--seed-file={}", m.join("munged.seed").display()))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start munged: {e} (is munge installed?)"));
        self.daemons.push(("munged", child));
        let deadline = Instant::now() + START_LIMIT;
        while !socket.exists() {
            self.assert_running("munged did not create its socket");
            assert!(
                Instant::now() < deadline,
                "munged did not create its socket\n{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every log the cluster keeps, the last lines of each.
    pub fn logs(&self) -> String {
        let p = self.path();
        [
            p.join("munge/munged.out"),
            p.join("log/slurmctld.out"),
            p.join("log/slurmctld.log"),
            p.join("log/slurmd.out"),
            p.join("log/slurmd.log"),
        ]
        .iter()
        .map(|f| tail(f))
        .collect()
    }

    fn assert_running(&mut self, why: &str) {
        let mut gone = Vec::new();
        for (name, child) in &mut self.daemons {
            if let Ok(Some(status)) = child.try_wait() {
                gone.push(format!("{name} exited ({status})"));
            }
        }
        assert!(
            gone.is_empty(),
            "{why}: {}\n{}",
            gone.join(", "),
            self.logs()
        );
    }

    /// A Slurm client command (`sinfo`, `squeue`, `scontrol`…) on this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", self.conf());
        cmd
    }

    fn wait_idle(&mut self) {
        let deadline = Instant::now() + START_LIMIT;
        loop {
            self.assert_running("the cluster did not start");
            let out = self
                .command("sinfo")
                .args(["-h", "-N", "-o", "%T"])
                .output();
            let state = out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
            if state.as_deref().is_ok_and(|s| s == "idle") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the node did not come up within {} s (sinfo: {state:?})\n{}",
                START_LIMIT.as_secs(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until nothing is queued or running, at most `limit`.
    pub fn wait_empty(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            self.assert_running("a daemon died while jobs ran");
            let out = self
                .command("squeue")
                .args(["-h", "-o", "%i %T"])
                .output()
                .unwrap();
            let queued = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && queued.is_empty() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "jobs still queued after {} s: {queued}\n{}",
                limit.as_secs(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// `scontrol show job ID`'s `JobState`.
    pub fn job_state(&self, id: &str) -> String {
        let out = self
            .command("scontrol")
            .args(["show", "job", id])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("unknown")
            .to_string()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first (their steps outlive slurmd), bounded; then the daemons, newest first.
        if let Ok(mut c) = self
            .command("scancel")
            .arg("--full")
            .arg("--user=root")
            .spawn()
        {
            let deadline = Instant::now() + Duration::from_secs(10);
            while c.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
            std::thread::sleep(Duration::from_millis(500));
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
