//! The job scripts, as text: `shards.sh` (the array, one `run --shard K/N` per task, bound to
//! its CPUs with `srun`, CPU locks kept on the node, its exit status — 143 when Slurm ends it
//! — left in `shard-K.exit`), `merge.sh` (every shard's
//! run present, then `merge`, `validate`, `report`) and `submit.sh` (both, the merge after the
//! array). Values reach the shell as single quoted words (`sanitize::shell`) and `#SBATCH`
//! lines only when they need no quoting; control characters are refused outright. Also reads
//! back the exit files and the campaign's `slurm.json`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::site::sbatch_word;
use super::{MERGE_SCRIPT, SHARDS_SCRIPT, SUBMIT_SCRIPT, SlurmCampaign, SlurmError};
use crate::sanitize::shell;

/// More array tasks than any site allows by default (`MaxArraySize` is 1001).
pub(crate) const MAX_SHARDS: u32 = 100_000;

/// The campaign's own record of its layout (and, once submitted, its job ids).
pub const LAYOUT_FILE: &str = "slurm.json";

/// Run arguments `cyclescope slurm` sets for every shard.
const OWN_RUN_ARGS: [&str; 5] = ["--shard", "--out", "--resume", "--cpu", "--cpus"];

/// What `slurm.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Layout {
    pub shards: u32,
    #[serde(default)]
    pub array_job: Option<String>,
    #[serde(default)]
    pub merge_job: Option<String>,
}

/// How one shard's task ended, from its `shard-K.exit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardExit {
    pub shard: u32,
    pub code: i32,
}

impl ShardExit {
    /// The exit files in `folder`, by shard.
    pub fn read_all(folder: &Path) -> Vec<ShardExit> {
        let mut out: Vec<ShardExit> = std::fs::read_dir(folder)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let name = e.file_name().into_string().ok()?;
                        let k = name.strip_prefix("shard-")?.strip_suffix(".exit")?;
                        let code = std::fs::read_to_string(e.path()).ok()?;
                        Some(ShardExit {
                            shard: k.parse().ok()?,
                            code: code.trim().parse().ok()?,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.sort_by_key(|e| e.shard);
        out
    }
}

impl Layout {
    /// The layout of the campaign in `folder`, when it is one `cyclescope slurm` wrote.
    pub fn read(folder: &Path) -> Option<Layout> {
        let text = std::fs::read(folder.join(LAYOUT_FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

fn path_word(what: &str, p: &Path) -> Result<String, SlurmError> {
    let s = p.to_str().ok_or_else(|| SlurmError::Unfit {
        what: what.into(),
        value: p.to_string_lossy().into_owned(),
        why: "it is not UTF-8".into(),
    })?;
    no_control(what, s)?;
    Ok(s.to_string())
}

fn no_control(what: &str, s: &str) -> Result<(), SlurmError> {
    if s.chars().any(char::is_control) {
        return Err(SlurmError::Unfit {
            what: what.into(),
            value: crate::sanitize::log_field(s).into_owned(),
            why: "it holds a control character".into(),
        });
    }
    Ok(())
}

/// The `#SBATCH` lines both jobs share: where they run and log, the site's options, the
/// environment they get.
fn common_lines(c: &SlurmCampaign, log: &str) -> Result<Vec<String>, SlurmError> {
    let folder = path_word("the campaign folder", &c.folder)?;
    let workdir = path_word("the working folder", &c.workdir)?;
    sbatch_word("the campaign folder", &folder)?;
    sbatch_word("the working folder", &workdir)?;
    let mut lines = vec![
        format!("--output={folder}/{log}"),
        format!("--chdir={workdir}"),
    ];
    let mut export = String::from("--export=ALL");
    for (k, v) in &c.export {
        sbatch_word(k, v)?;
        export += &format!(",{k}={v}");
    }
    lines.push(export);
    if let Some(p) = &c.site.partition {
        lines.push(format!("--partition={p}"));
    }
    if let Some(a) = &c.site.account {
        lines.push(format!("--account={a}"));
    }
    Ok(lines)
}

fn sbatch_block(lines: &[String]) -> String {
    lines.iter().map(|l| format!("#SBATCH {l}\n")).collect()
}

/// `cyclescope` and its config as the start of a shell command.
fn exe_words(c: &SlurmCampaign) -> Result<String, SlurmError> {
    Ok(shell(&path_word("the cyclescope binary", &c.exe)?))
}

fn config_words(c: &SlurmCampaign) -> Result<String, SlurmError> {
    match &c.config {
        Some(p) => Ok(format!(" --config {}", shell(&path_word("the config", p)?))),
        None => Ok(String::new()),
    }
}

fn shards_script(c: &SlurmCampaign) -> Result<String, SlurmError> {
    let n = c.shards;
    let mut lines = vec![
        "--job-name=cyclescope-shards".to_string(),
        format!("--array=1-{n}"),
        "--ntasks=1".into(),
        format!("--cpus-per-task={}", c.site.cpus_per_task),
        "--hint=nomultithread".into(),
    ];
    if c.site.exclusive {
        lines.push("--exclusive".into());
    }
    if let Some(t) = &c.site.time {
        lines.push(format!("--time={t}"));
    }
    lines.extend(common_lines(c, "shard-%a.log")?);
    lines.extend(c.site.sbatch.iter().cloned());
    for (i, a) in c.run_args.iter().enumerate() {
        no_control("a run argument", a)?;
        let name = a.split('=').next().unwrap_or(a);
        // Lanes from each task's own allocation are the one CPU choice a shard may make.
        let from_allocation = a == "--cpus=allowed"
            || (a == "--cpus" && c.run_args.get(i + 1).is_some_and(|v| v == "allowed"));
        if OWN_RUN_ARGS.contains(&name) && !from_allocation {
            return Err(SlurmError::RunArgument(name.to_string()));
        }
    }
    let run_args: Vec<String> = c.run_args.iter().map(|a| shell(a)).collect();
    let folder = shell(&path_word("the campaign folder", &c.folder)?);
    Ok(format!(
        "#!/bin/sh\n\
         # One shard of the campaign per array task, written by `cyclescope slurm`.\n\
         {sbatch}\
         # CPU locks stay the node's own (cyclescope's machine-wide folder; a shard never locks\n\
         # in the shared campaign folder, where CPU N of every node would be one lock).\n\
         k=\"$SLURM_ARRAY_TASK_ID\"\n\
         run={folder}/shard-\"$k\"\n\
         # Slurm ends a task (time limit, scancel) with SIGTERM first: say so before it kills.\n\
         exit_file={folder}/shard-\"$k\".exit\n\
         trap 'echo 143 > \"$exit_file\"; exit 143' TERM\n\
         # A requeued task finds its run and resumes it.\n\
         if [ -f \"$run/campaign.json\" ]; then\n\
         \x20   set -- run --resume \"$run\"\n\
         else\n\
         \x20   set -- run {args} --shard \"$k/{n}\" --out \"$run\"\n\
         fi\n\
         # The step is bound to its CPUs; cyclescope measures on the last and runs itself on the rest.\n\
         srun --ntasks=1 --cpus-per-task={cpt} --cpu-bind=cores {exe} \"$@\"{config}\n\
         status=$?\n\
         echo \"$status\" > \"$exit_file\"\n\
         exit \"$status\"\n",
        sbatch = sbatch_block(&lines),
        args = run_args.join(" "),
        cpt = c.site.cpus_per_task,
        exe = exe_words(c)?,
        config = config_words(c)?,
    ))
}

fn merge_script(c: &SlurmCampaign) -> Result<String, SlurmError> {
    let n = c.shards;
    let mut lines = vec![
        "--job-name=cyclescope-merge".to_string(),
        "--ntasks=1".into(),
    ];
    lines.extend(common_lines(c, "merge.log")?);
    lines.extend(c.site.sbatch.iter().cloned());
    let folder = shell(&path_word("the campaign folder", &c.folder)?);
    let exe = exe_words(c)?;
    let runs: Vec<String> = (1..=n).map(|k| format!("{folder}/shard-{k}")).collect();
    Ok(format!(
        "#!/bin/sh\n\
         # Joins the shards once every array task succeeded, written by `cyclescope slurm`.\n\
         {sbatch}\
         set -eu\n\
         k=1\n\
         while [ \"$k\" -le {n} ]; do\n\
         \x20   if [ ! -f {folder}/shard-\"$k\"/campaign.json ]; then\n\
         \x20       echo \"cyclescope slurm: shard $k/{n} has no run in \"{folder}/shard-\"$k (see shard-$k.log)\" >&2\n\
         \x20       exit 1\n\
         \x20   fi\n\
         \x20   k=$((k + 1))\n\
         done\n\
         {exe} merge {runs} --out {folder}/dataset\n\
         {exe} validate {folder}/dataset\n\
         {exe} report {folder}/dataset --out {folder}/pages\n",
        sbatch = sbatch_block(&lines),
        runs = runs.join(" "),
    ))
}

fn submit_script(c: &SlurmCampaign) -> Result<String, SlurmError> {
    let folder = shell(&path_word("the campaign folder", &c.folder)?);
    Ok(format!(
        "#!/bin/sh\n\
         # Submits the array, then the merge to run once every task succeeded (and to be\n\
         # cancelled if one failed). Written by `cyclescope slurm`.\n\
         set -eu\n\
         array=$(sbatch --parsable {folder}/{SHARDS_SCRIPT})\n\
         array=${{array%%;*}}\n\
         merge=$(sbatch --parsable --dependency=afterok:\"$array\" --kill-on-invalid-dep=yes {folder}/{MERGE_SCRIPT})\n\
         echo \"array job $array, merge job ${{merge%%;*}}; follow with: cyclescope watch \"{folder}\n"
    ))
}

/// Every file of the campaign folder, by name.
pub(crate) fn render(c: &SlurmCampaign) -> Result<Vec<(&'static str, String)>, SlurmError> {
    if !(1..=MAX_SHARDS).contains(&c.shards) {
        return Err(SlurmError::Shards(c.shards));
    }
    c.site.check()?;
    let layout = Layout {
        shards: c.shards,
        array_job: None,
        merge_job: None,
    };
    let layout = serde_json::to_string_pretty(&layout).unwrap_or_default() + "\n";
    Ok(vec![
        (SHARDS_SCRIPT, shards_script(c)?),
        (MERGE_SCRIPT, merge_script(c)?),
        (SUBMIT_SCRIPT, submit_script(c)?),
        (LAYOUT_FILE, layout),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::slurm::SlurmSite;
    use std::path::PathBuf;

    fn campaign(run_args: &[&str]) -> SlurmCampaign {
        SlurmCampaign {
            folder: PathBuf::from("/data/campaign"),
            workdir: PathBuf::from("/home/eval"),
            exe: PathBuf::from("/opt/cyclescope/bin/cyclescope"),
            config: Some(PathBuf::from("/home/eval/my config.toml")),
            shards: 3,
            run_args: run_args.iter().map(|s| s.to_string()).collect(),
            site: SlurmSite {
                partition: Some("bench".into()),
                sbatch: vec!["--qos=long".into()],
                ..SlurmSite::default()
            },
            export: vec![("CYCLESCOPE_LOCK_DIR".into(), "/shared/locks".into())],
        }
    }

    fn script(c: &SlurmCampaign, name: &str) -> String {
        render(c)
            .unwrap()
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1
    }

    #[test]
    fn the_array_carries_the_defaults_the_site_and_one_quoted_shard_command() {
        let c = campaign(&["sm3hash-256", "x'; rm -rf ~ #", "--lengths", "32,1024"]);
        let s = script(&c, SHARDS_SCRIPT);
        for line in [
            "#SBATCH --array=1-3\n",
            "#SBATCH --cpus-per-task=2\n",
            "#SBATCH --hint=nomultithread\n",
            "#SBATCH --exclusive\n",
            "#SBATCH --partition=bench\n",
            "#SBATCH --qos=long\n",
            "#SBATCH --output=/data/campaign/shard-%a.log\n",
            "#SBATCH --export=ALL,CYCLESCOPE_LOCK_DIR=/shared/locks\n",
            "srun --ntasks=1 --cpus-per-task=2 --cpu-bind=cores /opt/cyclescope/bin/cyclescope \
             \"$@\" --config '/home/eval/my config.toml'\n",
        ] {
            assert!(s.contains(line), "{line:?} in\n{s}");
        }
        // What the shell makes of the `set --` line is exactly the arguments given.
        let set_line = s
            .lines()
            .find(|l| l.trim_start().starts_with("set -- run sm3hash-256"))
            .unwrap();
        let hostile = [
            "x'; rm -rf ~ #",
            "$(id)`id`\\\"$HOME",
            "--lengths",
            "32,1024",
        ];
        let c2 = campaign(&hostile);
        let line2 = script(&c2, SHARDS_SCRIPT)
            .lines()
            .find(|l| l.trim_start().starts_with("set -- run") && !l.contains("--resume"))
            .unwrap()
            .to_string();
        let words = line2.trim_start().trim_start_matches("set -- run ");
        let words = words.split(" --shard").next().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' {words}"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            hostile.iter().map(|a| format!("{a}\n")).collect::<String>(),
            "{line2}"
        );
        assert!(
            set_line.ends_with("--shard \"$k/3\" --out \"$run\""),
            "{set_line}"
        );
        let m = script(&c, MERGE_SCRIPT);
        assert!(m.contains(
            "cyclescope merge /data/campaign/shard-1 /data/campaign/shard-2 \
             /data/campaign/shard-3 --out /data/campaign/dataset\n"
        ));
        assert!(!m.contains("--exclusive"), "the merge needs no whole node");
        let sub = script(&c, SUBMIT_SCRIPT);
        assert!(sub.contains("--dependency=afterok:\"$array\" --kill-on-invalid-dep=yes"));
    }

    #[test]
    fn what_a_script_cannot_carry_is_refused_by_name() {
        let err = |c: SlurmCampaign| render(&c).unwrap_err().to_string();
        assert!(err(campaign(&["--shard", "1/2"])).contains("`--shard` is set by"));
        assert!(err(campaign(&["--out=x"])).contains("`--out` is set by"));
        assert!(err(campaign(&["--cpu", "3"])).contains("`--cpu` is set by"));
        assert!(err(campaign(&["--cpus", "0-3"])).contains("`--cpus` is set by"));
        assert!(render(&campaign(&["--cpus", "allowed"])).is_ok());
        assert!(err(campaign(&["a\nb"])).contains("control character"));
        let mut c = campaign(&[]);
        c.folder = PathBuf::from("/data/my campaign");
        assert!(err(c).contains("cannot be carried by an #SBATCH line"));
        let mut c = campaign(&[]);
        c.export = vec![("CYCLESCOPE_LOCK_DIR".into(), "/a,b".into())];
        assert!(err(c).contains("CYCLESCOPE_LOCK_DIR \"/a,b\""));
        let mut c = campaign(&[]);
        c.shards = 0;
        assert!(err(c).contains("--shards must be from 1"));
    }

    #[test]
    fn exit_files_and_the_layout_read_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shard-2.exit"), "2\n").unwrap();
        std::fs::write(dir.path().join("shard-1.exit"), "0\n").unwrap();
        std::fs::write(dir.path().join("shard-x.exit"), "0\n").unwrap();
        assert_eq!(
            ShardExit::read_all(dir.path()),
            [
                ShardExit { shard: 1, code: 0 },
                ShardExit { shard: 2, code: 2 }
            ]
        );
        assert_eq!(Layout::read(dir.path()), None);
    }
}
