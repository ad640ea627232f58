//! The tuning loop of instances built from a submission's sources (`--src`): each such
//! instance shows the flags it was built with; `p` chooses a profile or types compiler flags
//! for the selected instances; the next `s` has the engine thread rebuild what changed (the
//! build cache skips what did not), KAT-check and measure it, and the Results' Δ columns then
//! compare it with the earlier build. Here only the state and its changes; building is the
//! engine link's (through the frontend's builder), never the UI thread's.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::build::ProfileChoice;
use crate::catalog::Instance;

use super::{App, KatState, LogLevel, Mode};

/// The instances' sources and flags.
#[derive(Debug, Clone, PartialEq)]
pub struct Sources {
    /// The submission tree given with `--src`.
    pub dir: PathBuf,
    /// Label → the flags its library was built with, as shown (`guide`, `-O0`).
    pub built: BTreeMap<String, String>,
    /// Label → the flags chosen with `p`, built by the next `s`.
    pub pending: BTreeMap<String, ProfileChoice>,
    /// Label → the build its last rebuild replaced (for the A/B of builds, `B`).
    pub previous: BTreeMap<String, PreviousBuild>,
}

/// A build a rebuild replaced: its instance (the library stays in its flag choice's tree,
/// `build::src_tree_dir`, so it can still be loaded) and the flags it was built with.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousBuild {
    pub instance: Instance,
    pub flags: String,
}

/// What `p` typed: flags when it starts with `-`, else a profile name.
pub fn choice_of(text: &str) -> ProfileChoice {
    let text = text.trim();
    if text.starts_with('-') {
        ProfileChoice::Cflags(text.to_string())
    } else {
        ProfileChoice::Named(text.to_string())
    }
}

/// How a choice reads on screen.
pub fn choice_text(c: &ProfileChoice) -> String {
    match c {
        ProfileChoice::Default => "default".into(),
        ProfileChoice::Named(n) => n.clone(),
        ProfileChoice::Cflags(f) => f.clone(),
    }
}

impl Sources {
    /// The tree `dir` was built into at start-up, every instance with its recorded profile.
    pub fn new(dir: PathBuf, instances: &[Instance]) -> Self {
        Self {
            dir,
            built: instances
                .iter()
                .map(|i| (i.label.clone(), i.flags.clone()))
                .collect(),
            pending: BTreeMap::new(),
            previous: BTreeMap::new(),
        }
    }

    /// `guide`, or `guide → -O0` while a change waits for `s`; None for other instances.
    pub fn profile_text(&self, label: &str) -> Option<String> {
        let built = self.built.get(label)?;
        Some(match self.pending.get(label) {
            Some(c) => format!("{built} → {}", choice_text(c)),
            None => built.clone(),
        })
    }
}

impl App {
    /// `p`: start typing a profile or flags for the selected instances built from sources.
    pub(super) fn edit_profile(&mut self) {
        let Some(src) = &self.sources else {
            self.push_log(
                LogLevel::Warn,
                "profiles apply to instances built from sources (start with --src DIR)",
            );
            return;
        };
        if !self.selected.iter().any(|l| src.built.contains_key(l)) {
            self.push_log(
                LogLevel::Warn,
                "select the instances to rebuild first (Space in the catalog)",
            );
            return;
        }
        self.mode = Mode::ProfileInput(String::new());
    }

    /// Enter in the profile field: the choice waits for `s` on each selected source instance.
    pub(super) fn apply_profile(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let choice = choice_of(text);
        let labels: Vec<String> = match &self.sources {
            Some(src) => self
                .selected
                .iter()
                .filter(|l| src.built.contains_key(*l))
                .cloned()
                .collect(),
            None => return,
        };
        if let Some(src) = &mut self.sources {
            for l in &labels {
                src.pending.insert(l.clone(), choice.clone());
            }
        }
        self.push_log(
            LogLevel::Info,
            format!(
                "{}: {} on the next s (rebuild → KAT → measure)",
                labels.join(", "),
                choice_text(&choice)
            ),
        );
    }

    /// The changes the next run must build first, for `instances`.
    pub(super) fn rebuild_for(&self, instances: &[Instance]) -> Vec<(String, ProfileChoice)> {
        let Some(src) = &self.sources else {
            return Vec::new();
        };
        instances
            .iter()
            .filter_map(|i| Some((i.label.clone(), src.pending.get(&i.label)?.clone())))
            .collect()
    }

    /// The engine rebuilt these instances: their new libraries replace the old ones in the
    /// catalog, their flags are shown, and their KAT is unknown again (a new library).
    pub fn rebuilt(&mut self, built: Vec<(Instance, ProfileChoice)>, problems: Vec<String>) {
        for (inst, choice) in built {
            let label = inst.label.clone();
            let mut replaced = None;
            for c in &mut self.candidates {
                for i in c.instances.iter_mut().filter(|i| i.label == label) {
                    replaced = Some(std::mem::replace(i, inst.clone()));
                }
            }
            self.kat.insert(label.clone(), KatState::Unknown);
            self.kat_logs.remove(&label);
            self.profile_rebuilt(&label);
            if let Some(src) = &mut self.sources {
                src.pending.remove(&label);
                let flags = src.built.insert(label.clone(), choice_text(&choice));
                // The same flags again land in the same tree: nothing earlier to compare with.
                if let Some(old) = replaced.filter(|old| old.library != inst.library) {
                    let flags = flags.unwrap_or_else(|| old.flags.clone());
                    let earlier = PreviousBuild {
                        instance: old,
                        flags,
                    };
                    src.previous.insert(label.clone(), earlier);
                }
            }
            self.push_log(
                LogLevel::Good,
                format!("{label}: rebuilt with {}", choice_text(&choice)),
            );
        }
        for p in problems {
            self.push_log(LogLevel::Bad, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use super::*;
    use crate::tui::action::Effect;
    use crate::tui::demo;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    /// The demo session as if its catalog had been built from sources.
    fn from_sources() -> App {
        let mut app = demo::finished();
        // Built from sources with the guide's flags.
        for i in &mut app.candidates[0].instances {
            i.flags = "guide".into();
        }
        let instances: Vec<Instance> = app.candidates[0].instances.clone();
        app.sources = Some(Sources::new("subm".into(), &instances));
        app
    }

    #[test]
    fn p_sets_flags_for_the_selected_and_s_rebuilds_them_with_a_fresh_kat() {
        let mut app = from_sources();
        app.selected = ["sm3hash-256".to_string()].into();
        app.on_key(key(KeyCode::Char('p')));
        assert_eq!(app.mode, Mode::ProfileInput(String::new()));
        for c in "-O0 -g".chars() {
            app.on_key(key(KeyCode::Char(c)));
        }
        app.on_key(key(KeyCode::Enter));
        assert_eq!(app.mode, Mode::Normal);
        let src = app.sources.as_ref().unwrap();
        assert_eq!(
            src.profile_text("sm3hash-256").as_deref(),
            Some("guide → -O0 -g")
        );
        assert_eq!(src.profile_text("pseudoXOF-512").as_deref(), Some("guide"));
        let Some(Effect::Start(spec)) = app.on_key(key(KeyCode::Char('s'))) else {
            panic!("s starts");
        };
        assert_eq!(
            spec.rebuild,
            [(
                "sm3hash-256".to_string(),
                ProfileChoice::Cflags("-O0 -g".into())
            )]
        );
        assert!(
            !spec.kat_passed.contains_key("sm3hash-256"),
            "a rebuilt library's KAT runs again"
        );
        // The engine's rebuild replaces the library and shows the new flags.
        let mut inst = spec.instances[0].clone();
        inst.library = "tree/lib/libsm3hash-256.so".into();
        app.rebuilt(
            vec![(inst, ProfileChoice::Cflags("-O0 -g".into()))],
            vec!["other: not built: error".into()],
        );
        let src = app.sources.as_ref().unwrap();
        assert_eq!(src.profile_text("sm3hash-256").as_deref(), Some("-O0 -g"));
        assert!(src.pending.is_empty());
        assert_eq!(app.kat_state("sm3hash-256"), &KatState::Unknown);
        assert_eq!(
            app.selected_instances()[0].library,
            PathBuf::from("tree/lib/libsm3hash-256.so")
        );
        assert!(app.log.iter().any(|l| l.text == "other: not built: error"));
    }

    #[test]
    fn profile_names_and_flags_are_told_apart_and_p_needs_sources() {
        assert_eq!(choice_of(" guide "), ProfileChoice::Named("guide".into()));
        assert_eq!(
            choice_of("-O3 -march=native"),
            ProfileChoice::Cflags("-O3 -march=native".into())
        );
        let mut app = demo::finished();
        app.on_key(key(KeyCode::Char('p')));
        assert_eq!(app.mode, Mode::Normal);
        assert!(app.log.iter().any(|l| l.text.contains("start with --src")));
    }
}
