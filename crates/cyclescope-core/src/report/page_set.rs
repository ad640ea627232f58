//! Every page of one dataset, built in memory, written, or checked against files already
//! written (`report --check`). Owns which pages exist (one per hash candidate with records,
//! none for `iccs`; the method and summary pages) and where the side files are looked for.
//! Never measures; reads only the dataset, the side files and the output folder it is given.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::dataset::{Dataset, ReportError};
use super::host_view::HostView;
use super::method_page::MethodFacts;
use super::side_files::{SideFiles, read_candidates};
use super::{candidate_page, method_page, summary_page};

/// Where the report's inputs come from besides the dataset.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Default: campaign.json `system_id`.
    pub system: Option<String>,
    /// Folder with `systems.csv` & co.; default: the dataset's `../..` when it has `systems.csv`.
    pub side_dir: Option<PathBuf>,
    /// `ID;Algorithm;URL` file.
    pub candidates: Option<PathBuf>,
    /// Replaces the counted method facts (for facts of a full campaign this dataset lacks).
    pub method_facts: Option<MethodFacts>,
    /// Also draw the SVG figures (`<cand>/figures/*.svg`) and link them from the candidate
    /// pages, below their tables.
    pub figures: bool,
    /// The candidate whose `pseudoXOF` the figures draw beside each instance (default `iccs`).
    pub baseline: Option<String>,
    /// A published dataset whose `× pseudoXOF` ratios the summary page shows beside ours.
    pub published: Option<PathBuf>,
}

/// One page: its path under the output folder and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub path: PathBuf,
    pub text: String,
}

/// A page on disk that differs from the regenerated one.
#[derive(Debug, Clone, PartialEq)]
pub struct PageDifference {
    pub path: PathBuf,
    /// 1-based line of the first difference.
    pub(crate) line: usize,
    pub(crate) expected: Option<String>,
    pub(crate) found: Option<String>,
}

impl std::fmt::Display for PageDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |s: &Option<String>| s.clone().unwrap_or_else(|| "(no line)".into());
        write!(
            f,
            "{} line {}: expected {:?}, found {:?}",
            self.path.display(),
            self.line,
            show(&self.expected),
            show(&self.found)
        )
    }
}

/// The side-file folder: the given one, else `<dataset>/../..` when it holds `systems.csv`.
pub(crate) fn side_dir(dataset: &Path, given: Option<&Path>) -> Option<PathBuf> {
    given.map(Path::to_path_buf).or_else(|| {
        let up = dataset.join("../..");
        up.join("systems.csv").is_file().then_some(up)
    })
}

/// Builds every page of `dataset` in memory.
pub fn build_pages(dataset: &Path, opts: &ReportOptions) -> Result<Vec<Page>, ReportError> {
    let ds = Dataset::open(dataset)?;
    let side = SideFiles::read(side_dir(dataset, opts.side_dir.as_deref()).as_deref())?;
    let names = read_candidates(opts.candidates.as_deref())?;
    let system_id = opts
        .system
        .clone()
        .or_else(|| ds.system_id().map(str::to_string))
        .unwrap_or_else(|| "local".into());
    let host = HostView::new(&ds, &system_id, side.system(&system_id));
    let by_candidate = ds.instances();
    let baseline = opts
        .baseline
        .as_deref()
        .unwrap_or(crate::baseline::DEFAULT_CANDIDATE);
    let baseline_instances = by_candidate.get(baseline).map_or(&[][..], Vec::as_slice);
    // A run with a length sweep adds its cost models to the candidate pages (§8).
    let sweep = crate::sweep::read(dataset);
    // And one with profiles, where each instance's cost goes (§9).
    let profiles = crate::profile::read(dataset);
    let mut pages = Vec::new();
    let helpers = |c: &str| c == crate::baseline::DEFAULT_CANDIDATE || c == baseline;
    for (cand, instances) in by_candidate.iter().filter(|(c, _)| !helpers(c)) {
        let algorithm = ds.catalog_algorithm(cand).unwrap_or_else(|| cand.clone());
        let mut text = candidate_page::render(
            &host,
            cand,
            names.get(cand),
            &algorithm,
            instances,
            &side.kat_issues,
        );
        if let Some(lines) = sweep
            .as_ref()
            .and_then(|s| super::sweep_section::render(s, cand))
        {
            text.push('\n');
            text.push_str(&lines.join("\n"));
        }
        if let Some(lines) = profiles
            .as_ref()
            .and_then(|p| super::profile_section::render(p, cand))
        {
            text.push('\n');
            text.push_str(&lines.join("\n"));
        }
        let mut drawn = Vec::new();
        if opts.figures {
            let title = |per_byte: &str| {
                format!("{cand} on {system_id}: {per_byte} (baseline `{baseline}`)")
            };
            drawn =
                super::figures::of_candidate(&title, &system_id, instances, baseline_instances)?;
            if !drawn.is_empty() {
                text = format!("{}\n{}", text.trim_end(), super::figures::links(&drawn));
            }
        }
        pages.push(Page {
            path: Path::new(cand).join(format!("perf_{system_id}.md")),
            text,
        });
        pages.extend(drawn.into_iter().map(|f| Page {
            path: Path::new(cand).join(f.path),
            text: f.svg,
        }));
    }
    let facts = opts
        .method_facts
        .clone()
        .unwrap_or_else(|| MethodFacts::count(&ds));
    pages.push(Page {
        path: Path::new("performance").join(format!("method_{system_id}.md")),
        text: if super::method_cyclescope::is_cyclescope_run(&ds) {
            super::method_cyclescope::render(&host, &ds)
        } else {
            method_page::render(&host, &ds, &facts)
        },
    });
    // A cyclescope run names each candidate's algorithm in its campaign (from the catalog or
    // the library's metadata): the summary says it where no candidates file does.
    let algorithms: BTreeMap<String, String> = by_candidate
        .keys()
        .filter_map(|c| Some((c.clone(), ds.catalog_algorithm(c)?)))
        .collect();
    let mut summary = summary_page::render(
        &host,
        &by_candidate,
        &summary_page::Names {
            published: &names,
            catalog: &algorithms,
        },
        &side.summary_notes,
        baseline,
    );
    if let Some(path) = opts.published.as_ref().filter(|p| p.is_file()) {
        let page = super::published_page::PublishedPage::read(path)?;
        let ours: Vec<crate::record::TimingRecord> =
            ds.records.iter().map(|(_, r)| r.clone()).collect();
        if !super::published::any_in_common(&ours, &page.records()) {
            return Err(ReportError::NoJobInCommon {
                published: path.clone(),
                dataset: dataset.to_path_buf(),
            });
        }
        let lines =
            super::published::page_section(&ours, &page, &crate::catalog::display_path(path));
        summary = format!("{}\n\n{}", summary.trim_end(), lines.join("\n"));
    } else if let Some(dir) = &opts.published {
        let theirs: Vec<crate::record::TimingRecord> = Dataset::open(dir)?
            .into_records()
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        let ours: Vec<crate::record::TimingRecord> =
            ds.records.iter().map(|(_, r)| r.clone()).collect();
        // Published figures with nothing to stand beside are a mistaken pairing (another
        // candidate, other lengths), not a section to leave out without a word.
        if !super::published::any_in_common(&ours, &theirs) {
            return Err(ReportError::NoJobInCommon {
                published: dir.clone(),
                dataset: dataset.to_path_buf(),
            });
        }
        let lines = super::published::section(&ours, &theirs, &crate::catalog::display_path(dir));
        if !lines.is_empty() {
            summary = format!("{}\n\n{}", summary.trim_end(), lines.join("\n"));
        }
    }
    if opts.figures {
        // The helpers have no candidate page: their figures hang off the summary.
        let title =
            |per_byte: &str| format!("ICCS helpers ({baseline}) on {system_id}: {per_byte}");
        let drawn = super::figures::of_candidate(&title, &system_id, baseline_instances, &[])?;
        if !drawn.is_empty() {
            summary = format!("{}\n{}", summary.trim_end(), super::figures::links(&drawn));
        }
        pages.extend(drawn.into_iter().map(|f| Page {
            path: Path::new("performance").join(f.path),
            text: f.svg,
        }));
    }
    pages.push(Page {
        path: Path::new("performance").join(format!("summary_{system_id}.md")),
        text: summary,
    });
    Ok(pages)
}

/// Writes the pages under `out`.
pub fn write_pages(out: &Path, pages: &[Page]) -> Result<(), ReportError> {
    // `out` itself must be this user's real folder: as root, a link there would put the
    // pages (and replace files) wherever it points.
    crate::owned::create_run_folder(out)?;
    for p in pages {
        // Page names come from the dataset (candidate ids, the system id): kept inside `out`.
        let path = crate::record::safe_path::inside(out, &p.path)?;
        crate::owned::write_own_file(&path, p.text.as_bytes())?;
    }
    Ok(())
}

/// Compares the pages with the files under `out`: one entry per differing or missing file.
pub fn check_pages(out: &Path, pages: &[Page]) -> Vec<PageDifference> {
    let mut diffs = Vec::new();
    for p in pages {
        let on_disk = std::fs::read_to_string(out.join(&p.path)).ok();
        let Some(found) = on_disk else {
            diffs.push(PageDifference {
                path: p.path.clone(),
                line: 1,
                expected: p.text.lines().next().map(str::to_string),
                found: None,
            });
            continue;
        };
        if found == p.text {
            continue;
        }
        let want: Vec<&str> = p.text.split('\n').collect();
        let have: Vec<&str> = found.split('\n').collect();
        let line = (0..want.len().max(have.len()))
            .find(|&i| want.get(i) != have.get(i))
            .unwrap_or(0);
        diffs.push(PageDifference {
            path: p.path.clone(),
            line: line + 1,
            expected: want.get(line).map(|s| s.to_string()),
            found: have.get(line).map(|s| s.to_string()),
        });
    }
    diffs
}
