//! The terminal loop: owns the terminal (raw mode, alternate screen, mouse) and gives it back
//! on every exit path — normal return, error, and panic (a hook restores before the message
//! prints). It drains engine messages and followed-journal events into the app, reads keys
//! and mouse, performs the app's effects through the engine link, and redraws at most
//! `MAX_FPS` times a second and only when something changed. SIGINT, SIGTERM and SIGHUP leave
//! like `q`: the run in flight is cancelled (its workers killed) before the terminal is given
//! back.

mod terminal;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::{self, Event};

use super::action::Effect;
use super::app::App;
use super::engine_link::{EngineLink, LinkOptions, Msg};
use super::profile_job::Profiler;
use super::records::Follower;
use super::screen::{self, Hitmap};
use crate::catalog::Catalog;
use terminal::TerminalGuard;

/// Redraws per second, at most.
pub const MAX_FPS: u32 = 15;
/// How long input polling blocks; bounds the latency of engine events on screen.
const POLL: Duration = Duration::from_millis(30);
/// How long leaving waits for a cancelled run to write its last records.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);
/// How often the host panel's load average is read again (one small file).
const LOAD_REFRESH: Duration = Duration::from_secs(5);

/// What the workbench opens on.
pub struct Options {
    pub catalog: Catalog,
    /// Labels selected at start (the `--lib` / `--scan` instances).
    pub selected: Vec<String>,
    /// `--run DIR`: reload its results, and write runs into it.
    pub run_dir: Option<PathBuf>,
    /// `watch RUN_DIR`: follow another process's run, read-only.
    pub watch: Option<PathBuf>,
    pub trial_target_s: Option<f64>,
    pub cpu: Option<usize>,
    pub allow_unfixed_host: bool,
    pub allow_kat_fail: bool,
    /// Runs out of proportion are started rather than refused (`--allow-large-plan`).
    pub allow_large_plan: bool,
    /// Host checks read below this folder instead of `/` (fixture trees).
    pub host_root: Option<PathBuf>,
    /// `--src DIR`: the submission tree the catalog was built from, and how to rebuild it.
    pub sources: Option<(PathBuf, super::engine_link::SrcBuilder)>,
    /// The key bindings in force (`[keys]` of the config applied).
    pub keys: super::keymap::Keymap,
}

/// Builds the app the options describe (catalog, settings, reloaded results), without a
/// terminal — the part of start-up tests can see.
pub fn initial_app(opts: &Options, cpus_online: usize) -> (App, Option<Follower>) {
    let mut settings = opts.catalog.settings.clone();
    if let Some(t) = opts.trial_target_s {
        settings.trial_target_s = t;
    }
    if let Some(c) = opts.cpu {
        settings.cpu = Some(c);
    }
    let mut app = App::new(opts.catalog.candidates.clone(), &settings, cpus_online);
    app.keys = opts.keys.clone();
    app.journal =
        match crate::journal::JournalTarget::of_setting(opts.catalog.settings.journal.as_deref()) {
            crate::journal::JournalTarget::At(p) => Some(p),
            _ => None,
        };
    app.selected.extend(opts.selected.iter().cloned());
    if let Some((dir, _)) = &opts.sources {
        let instances: Vec<_> = opts.catalog.instances().cloned().collect();
        app.sources = Some(super::app::Sources::new(dir.clone(), &instances));
    }
    let mut follower = None;
    if let Some(dir) = &opts.watch {
        // Records first (a harness run has no journal), then the journal replays on top.
        app.read_only = true;
        app.enter_run_folder(dir);
        for ev in super::records::load(dir) {
            app.apply(ev);
        }
        app.host = vec![super::app::HostRow {
            check: None,
            name: "host".into(),
            status: crate::host::Status::Unknown,
            value: "checked by the writing process".into(),
            hint: Some(
                "watching is read-only: the problems the writer accepted appear here".into(),
            ),
        }];
        app.run_dir = Some(dir.clone());
        follower = Some(Follower::new(dir));
    } else if let Some(dir) = &opts.run_dir {
        app.enter_run_folder(dir);
        for ev in super::records::load(dir) {
            app.apply(ev);
        }
        // A reloaded A/B run shows its result again.
        if let Some(result) = crate::campaign::ab_result::AbResult::read(dir) {
            let run = app.current_run();
            app.ab_results.push((run, result));
        }
        app.run_dir = Some(dir.clone());
    }
    (app, follower)
}

/// Runs the workbench until the operator leaves; returns the results as the report's §4
/// Markdown table (empty when nothing finished), for the caller to print after the terminal
/// is restored.
pub fn run(opts: Options) -> io::Result<String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (mut app, mut follower) = initial_app(&opts, cpus);
    let mut link = EngineLink::new(LinkOptions {
        builder: opts.sources.as_ref().map(|(_, b)| b.clone()),
        run_dir: opts.run_dir.clone(),
        runs_dir: opts.catalog.settings.runs_dir.clone(),
        allow_unfixed_host: opts.allow_unfixed_host,
        allow_kat_fail: opts.allow_kat_fail,
        allow_large_plan: opts.allow_large_plan,
        settings: opts.catalog.settings.clone(),
        host_root: opts.host_root.clone(),
    });
    let mut profiler = Profiler::new(opts.catalog.settings.max_address_space_mib);
    link.keep_off(app.cpu);
    if !app.read_only
        && let Some(e) = app.act(super::action::Action::RecheckHost)
    {
        perform(&mut app, &mut link, &mut profiler, e);
    }
    let host_root =
        crate::host::HostRoot::new(opts.host_root.clone().unwrap_or_else(|| "/".into()));
    // Dropped after the terminal is given back: a tuning still held is restored then.
    let mut tuning = super::host_tune::HostTuning::Idle;

    let stop = Arc::new(AtomicBool::new(false));
    crate::interrupt::stop_on_signals(&stop)?;
    let clock = Instant::now();
    let mut load_read = Instant::now();
    let (guard, mut terminal) = TerminalGuard::enter()?;
    let mut last_draw: Option<Instant> = None;
    let mut map = Hitmap::default();
    let monochrome = super::monochrome::requested();
    while !stop.load(Ordering::Relaxed) {
        for m in link.drain() {
            if matches!(m, Msg::Repaint) {
                terminal.clear()?;
            }
            app.clock = clock.elapsed().as_secs_f64();
            deliver(&mut app, m);
        }
        for m in profiler.drain() {
            app.clock = clock.elapsed().as_secs_f64();
            app.profile_event(m);
        }
        if let Some(e) = app.pending.take() {
            perform(&mut app, &mut link, &mut profiler, e);
        }
        // Queueing for a CPU, no event arrives: the seconds waited still count up on screen.
        if app.cpu_wait.is_some() && clock.elapsed().as_secs_f64() - app.clock >= 1.0 {
            app.clock = clock.elapsed().as_secs_f64();
            app.dirty = true;
        }
        // Other work on the machine changes during a run: the load average row follows it.
        if !app.read_only && load_read.elapsed() >= LOAD_REFRESH {
            app.refresh_host_check(crate::host::load_average(&host_root));
            load_read = Instant::now();
        }
        if let Some(f) = follower.as_mut() {
            for (at, ev) in f.poll(&mut app) {
                app.clock = at;
                app.apply(ev);
            }
        }
        if redraw_due(app.dirty, last_draw, Instant::now()) {
            terminal.draw(|f| {
                map = screen::draw(f, &app);
                if monochrome {
                    super::monochrome::strip(f.buffer_mut());
                }
            })?;
            app.dirty = false;
            if let Some(page) = map.help_page {
                app.help.page = page;
            }
            last_draw = Some(Instant::now());
            // Lets the end-to-end tests prove the panic path restores the terminal.
            #[cfg(debug_assertions)]
            if std::env::var_os("CYCLESCOPE_TEST_PANIC").is_some() {
                panic!("CYCLESCOPE_TEST_PANIC is set");
            }
        }
        // Wait for the terminal ourselves, then ask crossterm without waiting: its reader spins
        // forever on a terminal that hung up, so it is only asked while ours is alive.
        if terminal_wait(POLL) == TerminalState::Gone {
            break;
        }
        if !event::poll(Duration::ZERO)? {
            continue;
        }
        let effect = match event::read()? {
            Event::Key(k) => app.on_key(k),
            Event::Mouse(m) => app.on_mouse(m, &map),
            Event::Resize(..) => {
                app.dirty = true;
                None
            }
            _ => None,
        };
        match effect {
            Some(Effect::Quit) => break,
            Some(Effect::Tune { cpu }) => {
                if tuning.step(&mut app, &host_root, cpu)
                    && let Some(e) = app.act(super::action::Action::RecheckHost)
                {
                    perform(&mut app, &mut link, &mut profiler, e);
                }
                app.dirty = true;
            }
            Some(e) => perform(&mut app, &mut link, &mut profiler, e),
            None => {}
        }
    }
    profiler.shutdown(SHUTDOWN_WAIT);
    for m in link.shutdown(SHUTDOWN_WAIT) {
        deliver(&mut app, m);
    }
    drop(terminal);
    drop(guard);
    drop(tuning);
    Ok(super::panel::results::leaving_text(&app))
}

#[derive(Debug, PartialEq)]
enum TerminalState {
    /// Input may be waiting (or the wait ended): crossterm is asked without waiting.
    Alive,
    /// The terminal hung up (its window closed, the tmux server killed, an ssh session
    /// dropped); the process may not even get SIGHUP if it is not in the foreground group.
    Gone,
}

/// Waits up to `timeout` for input on the terminal, or for it to hang up.
fn terminal_wait(timeout: Duration) -> TerminalState {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::ZERO);
    let hung_up = poll(&mut fds, ms).is_ok()
        && fds[0].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL)
        });
    if hung_up {
        TerminalState::Gone
    } else {
        TerminalState::Alive
    }
}

/// Whether to draw now: only when something changed, and never twice within 1/`MAX_FPS` s.
pub fn redraw_due(dirty: bool, last: Option<Instant>, now: Instant) -> bool {
    let gap = Duration::from_secs(1) / MAX_FPS;
    dirty && last.is_none_or(|t| now.saturating_duration_since(t) >= gap)
}

fn deliver(app: &mut App, m: Msg) {
    match m {
        Msg::Engine(ev) => app.apply(*ev),
        Msg::Host(rows) => app.set_host(rows),
        Msg::Repaint => app.dirty = true,
        Msg::Refused { reason, host } => app.refused(reason, host),
        Msg::KatsDone => app.kats_done(),
        Msg::Rebuilt { built, problems } => app.rebuilt(built, problems),
        Msg::Compared(result) => app.compared(*result),
        Msg::Swept(file) => app.swept(*file),
    }
}

fn perform(app: &mut App, link: &mut EngineLink, profiler: &mut Profiler, e: Effect) {
    match e {
        Effect::Quit => {}
        Effect::Profile(spec) => {
            link.keep_off(spec.cpu);
            profiler.start(spec);
        }
        Effect::CancelProfile => profiler.cancel(),
        Effect::Start(spec) => link.start(spec),
        Effect::RunKats(instances) => link.start_kats(instances),
        Effect::Sweep(spec) => link.start_sweep(spec),
        Effect::Export => {
            // Into the current run folder, else the working folder.
            let dir = app
                .runs
                .last()
                .filter(|d| !d.as_os_str().is_empty())
                .cloned()
                .unwrap_or_else(|| PathBuf::from("."));
            let history = app.tuning_history();
            match super::export::write(app, history.as_ref(), &dir) {
                Ok(paths) => {
                    let names: Vec<String> = paths
                        .iter()
                        .map(|p| crate::catalog::display_path(p))
                        .collect();
                    app.push_log(
                        super::app::LogLevel::Good,
                        format!("exported {}", names.join(", ")),
                    )
                }
                Err(e) => app.push_log(
                    super::app::LogLevel::Bad,
                    format!("export into {} failed: {e}", dir.display()),
                ),
            }
        }
        Effect::Cancel => link.cancel(),
        // Stepped in the loop, which holds the tuning; it never arrives here.
        Effect::Tune { .. } => {}
        Effect::RecheckHost { cpu } => {
            link.keep_off(cpu);
            link.check_host(cpu);
        }
    }
    app.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redraws_only_when_dirty_and_at_most_fifteen_times_a_second() {
        let t0 = Instant::now();
        assert!(redraw_due(true, None, t0));
        assert!(!redraw_due(false, None, t0));
        assert!(!redraw_due(true, Some(t0), t0 + Duration::from_millis(50)));
        assert!(redraw_due(true, Some(t0), t0 + Duration::from_millis(67)));
        assert!(!redraw_due(false, Some(t0), t0 + Duration::from_secs(5)));
    }
}
