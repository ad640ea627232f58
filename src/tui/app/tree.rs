//! The catalog as a tree of rows (candidate, then its instances), narrowed by the typed
//! filter, and selection over it. A candidate row stays when any of its instances matches.

use super::App;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeRow {
    /// Index into `App::candidates`.
    Candidate(usize),
    /// Candidate index, instance index.
    Instance(usize, usize),
}

impl App {
    /// The visible rows under the current filter (case-insensitive substring of the label,
    /// the candidate id or the algorithm).
    pub fn tree_rows(&self) -> Vec<TreeRow> {
        let needle = self.filter.to_lowercase();
        let mut rows = vec![];
        for (ci, c) in self.candidates.iter().enumerate() {
            let whole = c.id.to_lowercase().contains(&needle)
                || c.algorithm.to_lowercase().contains(&needle);
            let hits: Vec<usize> = c
                .instances
                .iter()
                .enumerate()
                .filter(|(_, i)| whole || i.label.to_lowercase().contains(&needle))
                .map(|(ii, _)| ii)
                .collect();
            if !hits.is_empty() {
                rows.push(TreeRow::Candidate(ci));
                rows.extend(hits.into_iter().map(|ii| TreeRow::Instance(ci, ii)));
            }
        }
        rows
    }

    /// Labels of the instances under a row (one for an instance, the visible ones for a
    /// candidate).
    fn labels_under(&self, rows: &[TreeRow], at: usize) -> Vec<String> {
        match rows.get(at) {
            Some(&TreeRow::Instance(ci, ii)) => {
                vec![self.candidates[ci].instances[ii].label.clone()]
            }
            Some(&TreeRow::Candidate(ci)) => rows
                .iter()
                .filter_map(|r| match *r {
                    TreeRow::Instance(c, ii) if c == ci => {
                        Some(self.candidates[ci].instances[ii].label.clone())
                    }
                    _ => None,
                })
                .collect(),
            None => vec![],
        }
    }

    /// Selects or unselects what is under the cursor; a candidate row toggles all of its
    /// visible instances together.
    pub fn toggle_at_cursor(&mut self) {
        let rows = self.tree_rows();
        let labels = self.labels_under(&rows, self.cursor);
        if labels.is_empty() {
            return;
        }
        let all_on = labels.iter().all(|l| self.selected.contains(l));
        for l in labels {
            if all_on {
                self.selected.remove(&l);
            } else {
                self.selected.insert(l);
            }
        }
        self.dirty = true;
    }

    /// The selected instances in catalog order.
    pub fn selected_instances(&self) -> Vec<crate::catalog::Instance> {
        self.candidates
            .iter()
            .flat_map(|c| c.instances.iter())
            .filter(|i| self.selected.contains(&i.label))
            .cloned()
            .collect()
    }

    /// The instance under the cursor, if the cursor is on one.
    pub fn cursor_instance(&self) -> Option<&crate::catalog::Instance> {
        match self.tree_rows().get(self.cursor) {
            Some(&TreeRow::Instance(ci, ii)) => Some(&self.candidates[ci].instances[ii]),
            _ => None,
        }
    }

    /// Keeps the cursor on a row after the filter changed.
    pub(super) fn clamp_cursor(&mut self) {
        let n = self.tree_rows().len();
        self.cursor = self.cursor.min(n.saturating_sub(1));
    }
}
