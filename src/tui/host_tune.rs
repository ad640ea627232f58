//! The workbench's `T` key: first the tuning plan for the measurement CPU goes to the log, then
//! (again `T`) it is applied, owned by this process, and (`T` once more, or leaving) restored.
//! The plan, the restore file and the restore are `tune`'s; this only steps through them and
//! writes what happened to the log, never to the terminal.

use crate::cli::tune::HeldTuning;
use crate::host::HostRoot;
use crate::tui::app::{App, LogLevel};

/// Where the key is in its cycle.
pub enum HostTuning {
    Idle,
    /// The plan for this CPU was shown; the next press applies it.
    Shown {
        cpu: usize,
    },
    /// Applied by this process; the next press (or leaving) restores it.
    Held(HeldTuning),
}

impl HostTuning {
    /// One press of the key for measurement CPU `cpu` on `root`. True when the host changed
    /// (the caller re-runs the host checks).
    pub fn step(&mut self, app: &mut App, root: &HostRoot, cpu: usize) -> bool {
        match std::mem::replace(self, HostTuning::Idle) {
            HostTuning::Held(held) => {
                app.push_log(LogLevel::Good, format!("tune: {}", held.release()));
                true
            }
            HostTuning::Shown { cpu: shown } if shown == cpu => {
                let applied = crate::tune::plan(root, cpu, std::process::id())
                    .map_err(anyhow::Error::from)
                    .and_then(|plan| HeldTuning::apply(&plan));
                match applied {
                    Ok((held, lines)) => {
                        for line in lines {
                            app.push_log(LogLevel::Good, format!("tune: {line}"));
                        }
                        app.push_log(
                            LogLevel::Info,
                            "tune: T again restores (leaving the workbench does too)",
                        );
                        *self = HostTuning::Held(held);
                        true
                    }
                    Err(e) => {
                        app.push_log(LogLevel::Bad, format!("tune: {e}"));
                        false
                    }
                }
            }
            HostTuning::Idle | HostTuning::Shown { .. } => {
                match crate::tune::plan(root, cpu, std::process::id()) {
                    Ok(plan) => {
                        let n = plan.change_count();
                        app.push_log(
                            LogLevel::Info,
                            format!("tune: plan for CPU {cpu}: {n} change(s)"),
                        );
                        for line in plan.lines() {
                            app.push_log(LogLevel::Info, format!("tune: {line}"));
                        }
                        app.push_log(
                            LogLevel::Warn,
                            "tune: T again applies this (root only; previous values saved first)",
                        );
                        *self = HostTuning::Shown { cpu };
                    }
                    Err(e) => app.push_log(LogLevel::Bad, format!("tune: {e}")),
                }
                false
            }
        }
    }
}
