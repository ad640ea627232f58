//! The Profile panel's state: where the cost of one instance goes at its lengths — the share
//! per function and per source line, from profile trials of its own (the `profile_job`, never
//! a timed trial) — filled as each step of the job arrives, and in the tuning loop the moves
//! per function against the previous build's profile. A rebuild of the profiled instance
//! (`p`, then `s`) has its new build profiled when the run ends. Only state and its changes;
//! the job runs on the profiler's thread, and the strings here are sanitized where drawn.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{App, LogLevel, Panel};
use crate::profile::{Counts, Overhead};
use crate::tui::action::{Action, Effect};
use crate::tui::profile_job::{PROFILE_CALLS, ProfileEvent, ProfileMsg, ProfileSpec};

/// Where one length of the profile stands.
#[derive(Debug, Clone, PartialEq)]
pub enum LengthState {
    /// Not started yet.
    Queued,
    /// Its calls run under callgrind.
    Counting,
    /// Counted exactly; the native trial times the overhead.
    Timing(Counts),
    Done(Counts, Overhead),
    Failed(String),
}

impl LengthState {
    pub fn counts(&self) -> Option<&Counts> {
        match self {
            LengthState::Timing(c) | LengthState::Done(c, _) => Some(c),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct LengthProfile {
    pub length: u64,
    pub state: LengthState,
}

/// The previous build's profile of the same instance: what the Δ is against.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousBuild {
    pub flags: String,
    pub library: PathBuf,
    pub counts: BTreeMap<u64, Counts>,
}

/// What the panel shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileView {
    /// The instance profiled (None: nothing asked yet).
    pub label: Option<String>,
    /// The build profiled: its library and the flags shown for it.
    pub library: PathBuf,
    pub flags: String,
    pub lengths: Vec<LengthProfile>,
    /// The length shown (index into `lengths`); it follows the job until ↑/↓ choose one.
    pub shown: usize,
    pub chosen: bool,
    /// The number of the job last started; messages of another are stale.
    pub job: u64,
    pub running: bool,
    /// What the CPU lock said while the job waits for the CPU.
    pub waiting: Option<String>,
    /// Why the job could not run.
    pub problem: Option<String>,
    pub previous: Option<PreviousBuild>,
    /// The profiled instance was rebuilt by the run in flight: profile it when the run ends.
    pub after_run: bool,
}

impl ProfileView {
    /// The length the panel shows.
    pub fn shown(&self) -> Option<&LengthProfile> {
        self.lengths
            .get(self.shown.min(self.lengths.len().saturating_sub(1)))
    }

    /// Every length finished (done or failed).
    fn complete(&self) -> bool {
        !self.lengths.is_empty()
            && self
                .lengths
                .iter()
                .all(|l| matches!(l.state, LengthState::Done(..) | LengthState::Failed(_)))
    }

    fn at(&mut self, length: u64) -> Option<(usize, &mut LengthProfile)> {
        self.lengths
            .iter_mut()
            .enumerate()
            .find(|(_, l)| l.length == length)
    }
}

/// How a function's count moved against the previous build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Move {
    /// Instructions per call, after minus before (exact: both are counts).
    By(f64),
    /// Only in this build (split out, or new code).
    New,
    /// Only in the previous build (inlined away, or removed).
    Gone,
}

/// One row of the function table.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionRow {
    pub function: String,
    pub object: String,
    /// Share and count per call in this build (None: gone).
    pub share: Option<f64>,
    pub per_call: Option<f64>,
    pub moved: Option<Move>,
}

/// The function table of `now`, most instructions first, each with its move against
/// `before` when there is one; functions only `before` had follow, largest first.
pub fn function_rows(now: &Counts, before: Option<&Counts>) -> Vec<FunctionRow> {
    let moves = before.map(|b| crate::profile::moved(b, now));
    let move_of = |name: &str| {
        let m = moves.as_ref()?.iter().find(|m| m.function == name)?;
        Some(match m.before {
            None => Move::New,
            Some(_) => Move::By(m.delta()),
        })
    };
    let mut rows: Vec<FunctionRow> = now
        .functions
        .iter()
        .map(|f| FunctionRow {
            function: f.function.clone(),
            object: f.object.clone(),
            share: Some(f.share),
            per_call: Some(now.per_call(f)),
            moved: move_of(&f.function),
        })
        .collect();
    for m in moves.iter().flatten().filter(|m| m.after.is_none()) {
        let object = before
            .and_then(|b| b.functions.iter().find(|f| f.function == m.function))
            .map(|f| f.object.clone())
            .unwrap_or_default();
        rows.push(FunctionRow {
            function: m.function.clone(),
            object,
            share: None,
            per_call: None,
            moved: Some(Move::Gone),
        });
    }
    rows
}

impl App {
    /// The instance `P` profiles: the one under the catalog cursor, else the first selected.
    fn profile_target(&self) -> Option<crate::catalog::Instance> {
        self.cursor_instance()
            .cloned()
            .or_else(|| self.selected_instances().into_iter().next())
    }

    /// `P`: shows the Profile panel and profiles the instance under the cursor at the chosen
    /// lengths — unless the panel already holds (or is taking) that build's profile.
    pub(super) fn show_profile(&mut self) -> Option<Effect> {
        self.focus_panel(Panel::Profile);
        let Some(instance) = self.profile_target() else {
            self.push_log(LogLevel::Info, "put the cursor on an instance to profile");
            return None;
        };
        let p = &self.profile;
        let same_build =
            p.label.as_deref() == Some(&instance.label) && p.library == instance.library;
        if same_build && (p.running || p.complete()) {
            return None;
        }
        if p.running {
            self.push_log(LogLevel::Info, "a profile is running (c cancels it)");
            return None;
        }
        self.start_profile(instance)
    }

    /// A profile job of `instance`: an earlier build's finished profile becomes the Δ's
    /// previous build.
    fn start_profile(&mut self, instance: crate::catalog::Instance) -> Option<Effect> {
        if self.is_running() {
            self.push_log(
                LogLevel::Info,
                "the profile waits until the run ends (it would share the measurement CPU)",
            );
            return None;
        }
        let mut lengths = self.lengths.clone();
        lengths.sort_unstable();
        if lengths.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "choose at least one message length first (1–8, or l)",
            );
            return None;
        }
        let p = &mut self.profile;
        let same_label = p.label.as_deref() == Some(&instance.label);
        if !same_label {
            p.previous = None;
        } else if p.library != instance.library {
            let counts: BTreeMap<u64, Counts> = p
                .lengths
                .iter()
                .filter_map(|l| match &l.state {
                    LengthState::Done(c, _) => Some((l.length, c.clone())),
                    _ => None,
                })
                .collect();
            if !counts.is_empty() {
                p.previous = Some(PreviousBuild {
                    flags: p.flags.clone(),
                    library: p.library.clone(),
                    counts,
                });
            }
        }
        // The flags mean something for a build from sources (`--src`) only.
        let flags = self
            .sources
            .as_ref()
            .and_then(|s| s.built.get(&instance.label).cloned())
            .unwrap_or_default();
        let p = &mut self.profile;
        p.job += 1;
        p.label = Some(instance.label.clone());
        p.library = instance.library.clone();
        p.flags = flags;
        p.lengths = lengths
            .iter()
            .map(|&length| LengthProfile {
                length,
                state: LengthState::Queued,
            })
            .collect();
        p.shown = 0;
        p.chosen = false;
        p.running = true;
        p.waiting = None;
        p.problem = None;
        p.after_run = false;
        self.push_log(
            LogLevel::Info,
            format!(
                "profiling {} at {} length(s) under valgrind callgrind on CPU {}",
                instance.label,
                lengths.len(),
                self.cpu
            ),
        );
        Some(Effect::Profile(ProfileSpec {
            job: self.profile.job,
            instance,
            lengths,
            cpu: self.cpu,
            calls: PROFILE_CALLS,
        }))
    }

    /// One step of the profile job.
    pub fn profile_event(&mut self, msg: ProfileMsg) {
        let p = &mut self.profile;
        if msg.job != p.job {
            return;
        }
        self.dirty = true;
        let follow = !p.chosen;
        let mut log = None;
        match msg.event {
            ProfileEvent::WaitingForCpu(why) => p.waiting = Some(why),
            ProfileEvent::Counting { length } => {
                p.waiting = None;
                if let Some((i, l)) = p.at(length) {
                    l.state = LengthState::Counting;
                    if follow {
                        p.shown = i;
                    }
                }
            }
            ProfileEvent::Counted { length, counts } => {
                if let Some((_, l)) = p.at(length) {
                    l.state = LengthState::Timing(*counts);
                }
            }
            ProfileEvent::Done { length, profile } => {
                if let Some((_, l)) = p.at(length) {
                    l.state = LengthState::Done(profile.counts(), profile.overhead);
                }
            }
            ProfileEvent::Failed { length, why } => {
                log = Some((LogLevel::Bad, format!("profile at {length} B: {why}")));
                if let Some((_, l)) = p.at(length) {
                    l.state = LengthState::Failed(why);
                }
            }
            ProfileEvent::Refused(why) => {
                log = Some((LogLevel::Bad, format!("profile: {why}")));
                p.problem = Some(why);
            }
            ProfileEvent::Finished { cancelled } => {
                p.running = false;
                p.waiting = None;
                for l in &mut p.lengths {
                    if matches!(l.state, LengthState::Queued | LengthState::Counting) {
                        l.state = LengthState::Failed(if cancelled {
                            "cancelled".into()
                        } else {
                            "not profiled".into()
                        });
                    }
                }
                log = Some((LogLevel::Info, "profile finished".to_string()));
            }
        }
        if let Some((level, text)) = log {
            self.push_log(level, text);
        }
    }

    /// ↑/↓ in the panel: the length shown.
    pub(super) fn step_profile(&mut self, up: bool) {
        let p = &mut self.profile;
        let n = p.lengths.len();
        p.shown = if up {
            p.shown.saturating_sub(1)
        } else {
            (p.shown + 1).min(n.saturating_sub(1))
        };
        p.chosen = true;
    }

    /// The engine rebuilt `label`: when it is the profiled instance, its new build is
    /// profiled once the run ends.
    pub(super) fn profile_rebuilt(&mut self, label: &str) {
        if self.profile.label.as_deref() == Some(label) {
            self.profile.after_run = true;
        }
    }

    /// A run ended: profile the rebuilt instance now (the CPU is free again).
    pub(super) fn profile_after_run(&mut self, cancelled: bool) {
        if !self.profile.after_run || cancelled || self.read_only || self.pending.is_some() {
            return;
        }
        self.profile.after_run = false;
        let Some(label) = self.profile.label.clone() else {
            return;
        };
        if let Some(instance) = self.instance(&label).cloned() {
            // The run is over by now (the state changes before this is called).
            self.pending = self.start_profile(instance);
        }
    }

    /// Cancels the profile job (`c` when no run is in flight).
    pub(super) fn cancel_profile(&mut self) -> Option<Effect> {
        if !self.profile.running {
            return None;
        }
        self.push_log(LogLevel::Warn, "cancelling the profile");
        Some(Effect::CancelProfile)
    }

    /// Whether a running profile keeps `action` from starting workers of its own.
    pub(super) fn profile_blocks(&mut self, action: Action) -> bool {
        let blocked = self.profile.running
            && matches!(
                action,
                Action::Start
                    | Action::StartLayouts
                    | Action::StartAnyway
                    | Action::RunKats
                    | Action::CompareLive
                    | Action::CompareBuilds
                    | Action::Sweep
                    | Action::Tune
                    | Action::RecheckHost
            );
        if blocked {
            self.push_log(
                LogLevel::Info,
                "a profile is running on the measurement CPU (c cancels it)",
            );
        }
        blocked
    }
}
