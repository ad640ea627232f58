//! Starting things and leaving: a run of the selection (`s`), the operator's consent to
//! measure anyway (`A`), a run timed at the buffer layouts too (`L`), the KATs alone (`K`), the interleaved A/B of two instances (`=`; `B` starts it for two builds),
//! pinning a baseline run (`b`), and leaving,
//! which asks first while a run is in flight. Returns effects; performs nothing itself.

use super::{App, LogLevel, Mode, RunSpec, RunState};
use crate::tui::action::Effect;

/// Pairs per length of the workbench's A/B (`compare --live`'s default).
const LIVE_PAIRS: u32 = 10;

impl App {
    pub(super) fn start(&mut self) -> Option<Effect> {
        self.start_with_references(true)
    }

    /// A run of the selection; `references`: with the baseline jobs its ratios need (an A/B
    /// measures exactly its two instances, so it adds none).
    fn start_with_references(&mut self, references: bool) -> Option<Effect> {
        let instances = self.selected_instances();
        self.start_of(instances, references)
    }

    /// A run of `instances` (the selection, or the two builds of an A/B of builds).
    pub(super) fn start_of(
        &mut self,
        instances: Vec<crate::catalog::Instance>,
        references: bool,
    ) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        if instances.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "select at least one instance first (Space in the catalog)",
            );
            return None;
        }
        if self.lengths.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "choose at least one message length first (1–8, or l)",
            );
            return None;
        }
        let rebuild = self.rebuild_for(&instances);
        // A rebuilt library's KAT is run again, never carried over.
        let kat_passed = instances
            .iter()
            .filter(|i| !rebuild.iter().any(|(l, _)| *l == i.label))
            .filter(|i| self.kat_state(&i.label).passed())
            .filter_map(|i| Some((i.label.clone(), self.kat_logs.get(&i.label)?.clone())))
            .collect();
        self.run_labels = instances.iter().map(|i| i.label.clone()).collect();
        self.run_lengths = self.lengths.clone();
        self.run = RunState::Running { cancelling: false };
        self.run_announced = false;
        self.cpu_wait = None;
        let reference_pool = if references {
            self.reference_pool(&instances)
        } else {
            Vec::new()
        };
        let spec = RunSpec {
            reference_pool,
            instances,
            lengths: self.lengths.clone(),
            cpu: self.cpu,
            cpus: self.measurement_cpus(),
            planning: self.planning,
            kat_passed,
            allow_unfixed_host: self.allow_unfixed_host,
            allow_kat_fail: self.allow_kat_fail,
            interleaved_pairs: None,
            rebuild,
            layouts: false,
            counter: self.counter,
        };
        self.last_spec = Some(spec.clone());
        Some(Effect::Start(spec))
    }

    /// `L`: a run like `s` whose jobs are timed at the layouts of `run --layouts` too.
    pub(super) fn start_with_layouts(&mut self) -> Option<Effect> {
        let Some(Effect::Start(mut spec)) = self.start() else {
            return None;
        };
        spec.layouts = true;
        self.last_spec = Some(spec.clone());
        Some(Effect::Start(spec))
    }

    /// The baseline instances this run may add as reference jobs: every pseudoXOF of the
    /// baseline candidate, so each run that needs one measures its own (a ratio divides by
    /// its run's baseline, never an earlier run's). The engine announces which it added, and
    /// those rows are marked.
    fn reference_pool(
        &mut self,
        instances: &[crate::catalog::Instance],
    ) -> Vec<crate::catalog::Instance> {
        let pool: Vec<crate::catalog::Instance> = self
            .candidates
            .iter()
            .filter(|c| c.id == self.xof_baseline.candidate)
            .flat_map(|c| c.instances.iter())
            .cloned()
            .collect();
        let (add, _) = self.xof_baseline.missing(instances, &pool);
        if !add.is_empty() {
            let labels: Vec<&str> = add.iter().map(|i| i.label.as_str()).collect();
            self.push_log(
                LogLevel::Info,
                format!(
                    "reference jobs for × pseudoXOF (baseline {}): {}",
                    self.xof_baseline.candidate,
                    labels.join(", ")
                ),
            );
        }
        pool
    }

    /// `w`: a length sweep of the instance under the catalog's cursor (else the first
    /// selected), its dense lengths as the run's lengths.
    pub(super) fn sweep(&mut self) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        let Some(inst) = self
            .cursor_instance()
            .cloned()
            .or_else(|| self.selected_instances().into_iter().next())
        else {
            self.push_log(LogLevel::Warn, "put the cursor on an instance to sweep");
            return None;
        };
        let lengths = crate::sweep::SweepLengths::default().coarse();
        self.push_log(
            LogLevel::Info,
            format!(
                "sweep of {}: {} lengths, then byte by byte at block boundaries",
                inst.label,
                lengths.len()
            ),
        );
        self.run_labels = vec![inst.label.clone()];
        self.run_lengths = lengths.clone();
        self.run = RunState::Running { cancelling: false };
        self.run_announced = false;
        Some(Effect::Sweep(RunSpec {
            kat_passed: self
                .kat_logs
                .get(&inst.label)
                .filter(|_| self.kat_state(&inst.label).passed())
                .map(|log| (inst.label.clone(), log.clone()))
                .into_iter()
                .collect(),
            instances: vec![inst],
            lengths,
            cpu: self.cpu,
            cpus: vec![self.cpu],
            planning: self.planning,
            allow_unfixed_host: self.allow_unfixed_host,
            allow_kat_fail: self.allow_kat_fail,
            interleaved_pairs: None,
            rebuild: Vec::new(),
            reference_pool: Vec::new(),
            layouts: false,
            counter: self.counter,
        }))
    }

    /// `A`: the operator's consent to measure despite failed host checks and KATs that did
    /// not pass (both stored with the run). While a run is being prepared it applies to that
    /// run: a host refusal then starts it again with the consent.
    pub(super) fn start_anyway(&mut self) -> Option<Effect> {
        let first = !(self.allow_unfixed_host && self.allow_kat_fail);
        self.allow_unfixed_host = true;
        self.allow_kat_fail = true;
        if first {
            self.push_log(
                LogLevel::Warn,
                "measuring anyway: failed host checks and KATs that did not pass are stored with the run",
            );
        }
        match &self.run {
            RunState::Running { cancelling: false } if !self.run_announced => {
                self.push_log(LogLevel::Info, "A applies to the run being prepared");
                None
            }
            _ if self.is_running() => {
                self.push_log(
                    LogLevel::Info,
                    "A applies from the next run (c cancels this one)",
                );
                None
            }
            // After a refused A/B the consent starts the A/B again, not an ordinary run.
            _ if self
                .last_spec
                .as_ref()
                .is_some_and(|s| s.interleaved_pairs.is_some()) =>
            {
                match self
                    .last_spec
                    .as_ref()
                    .and_then(super::ab_builds::of_builds)
                {
                    Some(label) => self.compare_builds_of(&label),
                    None => self.compare_live(),
                }
            }
            _ => self.start(),
        }
    }

    /// `=`: the two selected instances measured interleaved (the first in catalog order is A).
    /// `A` afterwards starts an ordinary run: the consent is the session's, the A/B is not.
    pub(super) fn compare_live(&mut self) -> Option<Effect> {
        let n = self.selected_instances().len();
        if n != 2 && !self.is_running() {
            self.push_log(
                LogLevel::Warn,
                format!("A/B needs exactly two selected instances, not {n} (Space in the catalog)"),
            );
            return None;
        }
        let instances = self.selected_instances();
        self.start_interleaved(instances)
    }

    /// The interleaved A/B of `instances` (A first), `LIVE_PAIRS` pairs per length.
    pub(super) fn start_interleaved(
        &mut self,
        instances: Vec<crate::catalog::Instance>,
    ) -> Option<Effect> {
        match self.start_of(instances, false)? {
            Effect::Start(mut spec) => {
                spec.interleaved_pairs = Some(LIVE_PAIRS);
                self.push_log(
                    LogLevel::Info,
                    format!(
                        "A/B: {} (A) and {} (B), {LIVE_PAIRS} pairs per length, A B / B A in fresh workers",
                        spec.instances[0].label, spec.instances[1].label
                    ),
                );
                self.last_spec = Some(spec.clone());
                Some(Effect::Start(spec))
            }
            other => Some(other),
        }
    }

    /// The outcome of an A/B comparison: a result of the current run (Results, the printout
    /// and the export show it), and one log line per length.
    pub fn compared(&mut self, result: crate::campaign::ab_result::AbResult) {
        let (a, b) = (result.a.label.clone(), result.b.label.clone());
        for c in &result.lengths {
            let len = crate::format::size(c.input_bytes);
            match (&c.ratio, &c.problem) {
                (Some(r), None) => self.push_log(
                    LogLevel::Good,
                    format!(
                        "A/B {len}: {b} / {a} = {:.3} (95 % CI {:.3} … {:.3}, {} pairs): {}",
                        r.ratio,
                        r.ci95_low,
                        r.ci95_high,
                        r.pairs,
                        r.verdict()
                    ),
                ),
                (_, problem) => self.push_log(
                    LogLevel::Warn,
                    format!(
                        "A/B {len}: no interval: {}",
                        problem.as_deref().unwrap_or("fewer than two pairs")
                    ),
                ),
            }
        }
        let run = self.current_run();
        self.ab_results.push((run, result));
    }

    /// `K`: the KATs of the selection, nothing measured.
    pub(super) fn run_kats(&mut self) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        let instances = self.selected_instances();
        if instances.is_empty() {
            self.push_log(
                LogLevel::Warn,
                "select at least one instance first (Space in the catalog)",
            );
            return None;
        }
        self.run = RunState::Kats { cancelling: false };
        Some(Effect::RunKats(instances))
    }

    /// `b` in Results: pins the run of the row under the cursor as the baseline (again on
    /// the same run: unpins it).
    pub(super) fn pin_baseline(&mut self) {
        let Some(run) = self.result_rows().get(self.results_cursor).map(|r| r.run) else {
            self.push_log(LogLevel::Info, "no results to pin yet");
            return;
        };
        if self.baseline == Some(run) {
            self.baseline = None;
            self.push_log(
                LogLevel::Info,
                format!("run #{} is no longer the baseline", run + 1),
            );
        } else {
            self.baseline = Some(run);
            let dir = self.runs.get(run).map(|d| crate::catalog::display_path(d));
            self.push_log(
                LogLevel::Good,
                format!("baseline: run #{} {}", run + 1, dir.unwrap_or_default()),
            );
        }
    }

    /// `q` / Esc: leaves, but asks first while a run is in flight.
    pub(super) fn leave(&mut self) -> Option<Effect> {
        if self.is_running() && !self.read_only {
            self.mode = Mode::ConfirmQuit;
            return None;
        }
        Some(Effect::Quit)
    }
}
