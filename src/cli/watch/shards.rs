//! The tasks of a Slurm campaign (a folder `cyclescope slurm` wrote) as `watch` shows them:
//! how many of the N shards have ended, and each failed one by number, with its exit status
//! and its log, from the `shard-K.exit` files the array's tasks leave. A shard that failed
//! before its run folder existed is named too, which the journals alone could not do.

use std::path::Path;

use crate::campaign::slurm::{Layout, ShardExit};

pub(super) struct Shards {
    layout: Layout,
    exits: Vec<ShardExit>,
}

impl Shards {
    /// The campaign's state now, when `folder` is a Slurm campaign.
    pub(super) fn read(folder: &Path) -> Option<Shards> {
        let layout = Layout::read(folder)?;
        Some(Shards {
            exits: ShardExit::read_all(folder),
            layout,
        })
    }

    /// Whether every shard's task has left its exit status.
    pub(super) fn all_ended(&self) -> bool {
        (1..=self.layout.shards).all(|k| self.exits.iter().any(|e| e.shard == k))
    }

    pub(super) fn any_failed(&self) -> bool {
        self.exits.iter().any(|e| e.code != 0)
    }

    /// One line of totals, then one per failed shard.
    pub(super) fn lines(&self) -> String {
        let n = self.layout.shards;
        let ended = self.exits.iter().filter(|e| e.shard <= n).count();
        let jobs = match (&self.layout.array_job, &self.layout.merge_job) {
            (Some(a), Some(m)) => format!(" (array job {a}, merge job {m})"),
            _ => String::new(),
        };
        let mut text = format!("slurm: {ended} of {n} shard task(s) ended{jobs}\n");
        for e in self.exits.iter().filter(|e| e.code != 0) {
            text += &format!(
                "  shard {}/{n} failed: its task exited with status {} (see shard-{}.log); the \
                 merge job will not run\n",
                e.shard, e.code, e.shard
            );
        }
        text
    }
}
