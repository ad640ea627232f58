//! A fresh workbench: `App::new` with every field at its starting value, and the CPUs the
//! next run measures on.

use std::collections::{BTreeSet, HashMap};

use super::{App, Chart, HelpView, HistView, HostRow, Mode, Panel, ProfileView, RunState};
use crate::catalog::{Candidate, Settings};
use crate::host::Status as CheckStatus;
use crate::measure::Planning;

impl App {
    /// A fresh workbench on `candidates` with the settings' lengths and planning.
    /// The CPUs the next run measures on: those added with `+`, else the shown one.
    pub fn measurement_cpus(&self) -> Vec<usize> {
        if self.lanes.is_empty() {
            vec![self.cpu]
        } else {
            self.lanes.iter().copied().collect()
        }
    }

    pub fn new(candidates: Vec<Candidate>, settings: &Settings, cpus_online: usize) -> Self {
        let cpus_online = cpus_online.max(1);
        Self {
            candidates,
            selected: BTreeSet::new(),
            cursor: 0,
            filter: String::new(),
            lengths: settings.lengths.clone(),
            kat: HashMap::new(),
            sources: None,
            kat_logs: HashMap::new(),
            host: vec![HostRow {
                check: None,
                name: "host".into(),
                status: CheckStatus::Unknown,
                value: "not checked yet".into(),
                hint: Some("press r to run the host checks".into()),
            }],
            host_cursor: 0,
            cpu: settings.cpu.unwrap_or(cpus_online - 1),
            lanes: Default::default(),
            cpus_online,
            planning: Planning::new(
                settings.trials,
                settings.trial_target_s,
                settings.op_budget_s,
            ),
            run: RunState::Idle,
            run_dir: None,
            run_labels: vec![],
            run_lengths: vec![],
            jobs: vec![],
            current: None,
            hist_view: HistView::Live,
            results_cursor: 0,
            log: vec![],
            log_back: 0,
            log_unseen: 0,
            focus: Panel::Catalog,
            mode: Mode::Normal,
            chart: Chart::Histogram,
            read_only: false,
            allow_unfixed_host: false,
            allow_kat_fail: false,
            counter: crate::counter::RunCounter::Cycles,
            runs: vec![],
            baseline: None,
            results_sort: None,
            xof_baseline: crate::baseline::Baseline::new(&settings.baseline),
            reference_jobs: BTreeSet::new(),
            ab_results: Vec::new(),
            curve_log: None,
            hist_log: false,
            curve_hidden: BTreeSet::new(),
            curve_series: 0,
            curve_length: usize::MAX,
            run_announced: false,
            cpu_wait: None,
            run_queue: Default::default(),
            last_spec: None,
            pending: None,
            clock: 0.0,
            dirty: true,
            sweeps: Vec::new(),
            keys: crate::tui::keymap::Keymap::default(),
            journal: None,
            history: Default::default(),
            pinned_build: None,
            profile: ProfileView::default(),
            unfinished_runs: Vec::new(),
            help: HelpView::default(),
        }
    }
}
