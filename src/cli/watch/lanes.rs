//! `watch --lanes`: a run on several CPUs, or a folder of shard runs, followed as text from
//! their journals, redrawn twice a second on a terminal (every 5 s as plain lines otherwise)
//! until every run has ended. The watcher keeps off the measurement CPUs it reads from each
//! `campaign.json` (where another CPU is left), reads only appended journal bytes, and on exit
//! says how much CPU time it used, measured with getrusage.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::bail;

use crate::cli::lanes::Board;
use crate::record::journal::JournalReader;
use crate::record::run_dir::read_campaign;

/// How often the journals are read.
const POLL: Duration = Duration::from_millis(500);

struct Followed {
    dir: PathBuf,
    /// The slice of a campaign this run measures, when it is a shard.
    shard: Option<cyclescope_core::campaign::Shard>,
    title: String,
    reader: JournalReader,
    board: Board,
}

/// Whether every slice of the shards followed has a run: a shard run that ended is not the
/// campaign's end while another slice has not started yet (it may be queued for its CPU).
fn every_shard_seen(followed: &[Followed]) -> bool {
    let shards: Vec<_> = followed.iter().filter_map(|f| f.shard).collect();
    shards
        .iter()
        .all(|s| (1..=s.count).all(|k| shards.iter().any(|o| o.index == k && o.count == s.count)))
}

/// The run directories under `path`: itself when it is one, else its sub-folders that are.
fn runs_in(path: &Path) -> Vec<PathBuf> {
    if path.join("campaign.json").is_file() {
        return vec![path.to_path_buf()];
    }
    let mut runs: Vec<PathBuf> = std::fs::read_dir(path)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join("campaign.json").is_file())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    runs
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// CPU seconds (user + system) this process has used.
fn own_cpu_seconds() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    })
}

pub fn follow(path: &Path) -> anyhow::Result<ExitCode> {
    if !path.is_dir() {
        bail!("{} is not a folder", path.display());
    }
    let started = Instant::now();
    let tty = std::io::stdout().is_terminal();
    let mut followed: Vec<Followed> = Vec::new();
    let mut last_plain = Instant::now() - Duration::from_secs(10);
    let mut _off = None;
    // The measurement CPUs of the runs found so far (campaign.json is read once per run).
    let mut cpus: Vec<usize> = Vec::new();
    let mut off_count = 0;
    let failed = loop {
        // Shards may start after the watcher: look for new runs each round.
        for dir in runs_in(path) {
            if followed.iter().any(|f| f.dir == dir) {
                continue;
            }
            let Ok(c) = read_campaign(&dir) else { continue };
            cpus.extend(c.cyclescope.cpus.iter().copied());
            cpus.sort_unstable();
            cpus.dedup();
            let shard = c.cyclescope.shard;
            let tag = shard.map_or(String::new(), |s| format!(" (shard {s})"));
            followed.push(Followed {
                shard,
                title: format!("{}{tag}", crate::sanitize::terminal_path(&dir)),
                reader: JournalReader::new(&dir),
                board: Board::default(),
                dir,
            });
        }
        if cpus.len() != off_count {
            // Back on the full mask first, then off every measurement CPU known now.
            _off = None;
            _off = Some(crate::cpu::OffCpu::enter_all(&cpus));
            off_count = cpus.len();
        }
        for f in &mut followed {
            for entry in f.reader.poll().unwrap_or_default() {
                let at = entry.unix_seconds().unwrap_or_else(unix_now);
                let ev = entry.event.into_event(&f.dir);
                f.board.apply(&ev, at);
            }
        }
        let now = unix_now();
        let mut text = String::new();
        for f in &followed {
            text += &format!("{}\n", f.title);
            for l in f.board.lines(now) {
                text += &format!("  {l}\n");
            }
        }
        let shards = super::shards::Shards::read(path);
        text += &shards
            .as_ref()
            .map_or(String::new(), super::shards::Shards::lines);
        if followed.is_empty() && shards.is_none() {
            text = format!(
                "waiting for runs in {} …\n",
                crate::sanitize::path_as_given(path)
            );
        }
        let done = match &shards {
            // A Slurm campaign ends when every task has left its exit status.
            Some(s) => s.all_ended(),
            None => {
                !followed.is_empty()
                    && followed.iter().all(|f| f.board.ended().is_some())
                    && every_shard_seen(&followed)
            }
        };
        let mut out = std::io::stdout().lock();
        if tty {
            // Overwritten in place (each line cleared to its end, then the rest of the
            // screen), never cleared first: a terminal, or a reader of it, never sees a blank
            // frame between two redraws.
            let _ = write!(out, "\x1b[H{}\x1b[J", text.replace('\n', "\x1b[K\n"));
        } else if done || last_plain.elapsed() >= Duration::from_secs(5) {
            last_plain = Instant::now();
            let _ = write!(out, "{text}");
        }
        let _ = out.flush();
        if done {
            break shards.is_some_and(|s| s.any_failed());
        }
        std::thread::sleep(POLL);
    };
    let wall = started.elapsed().as_secs_f64();
    let cpu = own_cpu_seconds();
    println!(
        "watcher: {} (getrusage)",
        crate::format::core_share(cpu, wall)
    );
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
