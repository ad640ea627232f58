//! The A/B of two builds of one instance (`B`): after a rebuild from sources (`p`, then `s`),
//! the build the rebuild replaced (A) against the new one (B), by the same interleaved
//! comparison as `=`. The earlier library is still on disk: each flag choice is built into a
//! tree of its own (`build::src_tree_dir`), so a rebuild never overwrites it. A takes a label
//! of its own (`<label>.prev`) so that its records, KAT log and journal rows stay apart from
//! B's, and finds its KAT files by the instance's name (`kat_name`). Returns effects;
//! performs nothing itself.

use super::{App, LogLevel, RunSpec};
use crate::catalog::Instance;
use crate::tui::action::Effect;

/// What A's label adds to the instance's.
pub const PREVIOUS_SUFFIX: &str = ".prev";

/// The instance label of an A/B of builds `spec` started, None for any other run.
pub(super) fn of_builds(spec: &RunSpec) -> Option<String> {
    spec.interleaved_pairs?;
    let [a, b] = spec.instances.as_slice() else {
        return None;
    };
    (a.label.strip_suffix(PREVIOUS_SUFFIX) == Some(b.label.as_str())).then(|| b.label.clone())
}

/// The earlier build as side A: its library, a label of its own, the instance's KAT name.
fn previous_side(earlier: &Instance) -> Result<Instance, cyclescope_core::name::NameError> {
    let label = format!("{}{PREVIOUS_SUFFIX}", earlier.label);
    cyclescope_core::name::SafeName::new("instance label", &label)?;
    Ok(Instance {
        label,
        kat_name: Some(
            earlier
                .kat_name
                .clone()
                .unwrap_or_else(|| earlier.label.clone()),
        ),
        ..earlier.clone()
    })
}

impl App {
    /// `B`: the instance under the catalog's cursor (else the first selected), its build
    /// before the last rebuild against the new one.
    pub(super) fn compare_builds(&mut self) -> Option<Effect> {
        let Some(label) = self
            .cursor_instance()
            .map(|i| i.label.clone())
            .or_else(|| self.selected_instances().first().map(|i| i.label.clone()))
        else {
            self.push_log(
                LogLevel::Warn,
                "put the cursor on a rebuilt instance for the A/B of its builds",
            );
            return None;
        };
        self.compare_builds_of(&label)
    }

    /// The A/B of `label`'s two latest builds.
    pub(super) fn compare_builds_of(&mut self, label: &str) -> Option<Effect> {
        if self.is_running() {
            self.push_log(LogLevel::Info, "a run is in progress (c cancels it)");
            return None;
        }
        let Some(src) = &self.sources else {
            self.push_log(
                LogLevel::Warn,
                "an A/B of builds needs instances built from sources (start with --src DIR)",
            );
            return None;
        };
        let waiting = src.pending.contains_key(label);
        let earlier = src.previous.get(label).cloned();
        let flags_now = src.built.get(label).cloned().unwrap_or_default();
        if waiting {
            self.push_log(
                LogLevel::Warn,
                format!("{label}: new flags wait for s; rebuild first, then the A/B of builds"),
            );
            return None;
        }
        let Some(earlier) = earlier else {
            let edit = self.keys.key_of(crate::tui::action::Action::EditProfile);
            let ab = self.keys.key_of(crate::tui::action::Action::CompareBuilds);
            self.push_log(
                LogLevel::Warn,
                format!(
                    "{label} has no earlier build in this session: {edit} sets new flags, s rebuilds, then {ab}"
                ),
            );
            return None;
        };
        let now = self
            .candidates
            .iter()
            .flat_map(|c| c.instances.iter())
            .find(|i| i.label == label)
            .cloned()?;
        let a = match previous_side(&earlier.instance) {
            Ok(a) => a,
            Err(e) => {
                self.push_log(LogLevel::Warn, format!("no A/B of builds: {e}"));
                return None;
            }
        };
        self.push_log(
            LogLevel::Info,
            format!(
                "A/B of builds: {} = {label} built with {} (A), {label} built with {flags_now} (B)",
                a.label, earlier.flags
            ),
        );
        self.start_interleaved(vec![a, now])
    }
}

#[cfg(test)]
mod tests;
