//! A published performance page in the text form a user copies from the web (the x86_1 pages:
//! cells apart by spaces, tabs or `|`, a row's cells sometimes split over two lines, labels
//! sometimes in backticks) read as one side of a comparison: the §4 table's measured figures
//! (instance, message, mean cycles, calls as trials × calls) and what the comparability checks
//! need from §2 and §3 (processor, clock, compiler, each instance's build flags). Reads text
//! only; never guesses a figure the page does not print (it prints no interval and no trial's
//! own mean, so its figures have none).

use std::collections::BTreeMap;
use std::path::Path;

use crate::record::TimingRecord;

pub mod checks;

/// What a page states, as read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PublishedPage {
    /// The system the title names (`x86_1`).
    pub system: Option<String>,
    /// The candidate the title names (`hash-10`).
    pub candidate: Option<String>,
    /// §2: `processor`, `clock`, `compiler / build tool` as printed.
    pub processor: Option<String>,
    pub clock: Option<String>,
    pub compiler: Option<String>,
    /// §3: each instance's build flags as printed (`guide`).
    pub flags: BTreeMap<String, String>,
    /// §4, in the page's order.
    pub rows: Vec<PageRow>,
}

/// One row of the §4 table.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRow {
    pub label: String,
    pub input_bytes: u64,
    /// Mean cycles per call as printed (`58.0 k` → 58000: the page's own rounding).
    pub mean_cycles: f64,
    /// `n` = trials × calls per trial.
    pub trials: u32,
    pub calls_per_trial: u64,
}

/// Why a page cannot be read.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PageError {
    #[error("{0}: cannot read: {1}")]
    Read(String, String),
    #[error(
        "{0}: no `4. Performance` table with rows such as `uHash-512 32 B 58.0 k 1811.0 27.8 µs \
         1.2 100000 (5 × 20000)` (is it a published performance page in text form?)"
    )]
    NoTable(String),
}

/// The numbered section headings the page is cut at (`4. Performance`).
fn heading(line: &str) -> Option<u32> {
    let (num, rest) = line.trim().split_once(". ")?;
    let n: u32 = num.parse().ok()?;
    rest.chars().next()?.is_uppercase().then_some(n)
}

/// The lines of each numbered section, by number.
fn sections(text: &str) -> BTreeMap<u32, Vec<&str>> {
    let mut out: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(n) = heading(line) {
            current = Some(n);
            out.entry(n).or_default();
            continue;
        }
        if let Some(n) = current {
            out.entry(n).or_default().push(line);
        }
    }
    out
}

/// A section's cells as one stream of words: `|`, tabs and line ends are all separators, the
/// Markdown rule lines and backticks go.
fn words(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| !l.trim_start().starts_with("|---"))
        .flat_map(|l| l.split(['|', '\t', ' ']))
        .map(|w| w.trim().trim_matches('`').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// `58.0` with `k` → 58000; `2014` alone → 2014.
fn scaled(number: &str, suffix: Option<&str>) -> Option<f64> {
    let x: f64 = number.parse().ok()?;
    let factor = match suffix {
        None => 1.0,
        Some("k") => 1e3,
        Some("M") => 1e6,
        Some("G") => 1e9,
        Some(_) => return None,
    };
    x.is_finite().then_some(x * factor)
}

/// One §4 row starting at `w[i]` (the label), and the index after it.
fn row_at(w: &[String], i: usize) -> Option<(PageRow, usize)> {
    let at = |k: usize| w.get(k).map(String::as_str);
    let input_bytes: u64 = at(i + 1)?.parse().ok()?;
    if at(i + 2)? != "B" {
        return None;
    }
    let mut j = i + 3;
    let suffix = at(j + 1).filter(|s| matches!(*s, "k" | "M" | "G"));
    let mean_cycles = scaled(at(j)?, suffix)?;
    if suffix.is_some() {
        j += 1;
    }
    // cycles/byte, mean time and its unit, MB/s: printed, not needed.
    let n: u64 = at(j + 5)?.parse().ok()?;
    let trials: u32 = at(j + 6)?.strip_prefix('(')?.parse().ok()?;
    if at(j + 7)? != "×" {
        return None;
    }
    let calls_per_trial: u64 = at(j + 8)?.strip_suffix(')')?.parse().ok()?;
    if u64::from(trials).checked_mul(calls_per_trial) != Some(n) {
        return None;
    }
    let row = PageRow {
        label: w[i].clone(),
        input_bytes,
        mean_cycles,
        trials,
        calls_per_trial,
    };
    Some((row, j + 9))
}

/// The §4 rows among a section's words: every place a row reads whole.
fn rows(w: &[String]) -> Vec<PageRow> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        match row_at(w, i) {
            Some((row, next)) => {
                out.push(row);
                i = next;
            }
            None => i += 1,
        }
    }
    out
}

/// §3's instance → build flags: a row is the label, its flags, and an upper-case KAT verdict.
fn flags(w: &[String]) -> BTreeMap<String, String> {
    let head = ["instance", "build", "flags", "KAT"];
    let w: Vec<&String> = w.iter().filter(|x| !head.contains(&x.as_str())).collect();
    let mut out = BTreeMap::new();
    let mut row: Vec<&str> = Vec::new();
    for x in w {
        let verdict = x.len() > 1 && x.chars().all(|c| c.is_ascii_uppercase());
        if verdict {
            if let [label, rest @ ..] = row.as_slice()
                && !rest.is_empty()
            {
                out.insert(label.to_string(), rest.join(" "));
            }
            row.clear();
        } else {
            row.push(x);
        }
    }
    out
}

/// §2's value of `item` (`clock`), the rest of its line.
fn item(lines: &[&str], name: &str) -> Option<String> {
    lines.iter().find_map(|l| {
        let l = l.replace(['|', '\t'], " ");
        let rest = l.trim().strip_prefix(name)?;
        rest.starts_with(' ')
            .then(|| rest.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty())
    })
}

/// The title's `(system x86_1)` and its leading `hash-NN`.
fn title(text: &str) -> (Option<String>, Option<String>) {
    let line = text
        .lines()
        .take_while(|l| heading(l).is_none())
        .find(|l| l.contains("(system "));
    let Some(line) = line else {
        return (None, None);
    };
    let system = line
        .split_once("(system ")
        .and_then(|(_, r)| r.split_once(')'))
        .map(|(s, _)| s.trim().to_string());
    let candidate = line
        .split_whitespace()
        .next()
        .filter(|w| w.starts_with("hash-"))
        .map(str::to_string);
    (system, candidate)
}

impl PublishedPage {
    /// Reads the page's text.
    pub fn parse(text: &str, name: &str) -> Result<Self, PageError> {
        let s = sections(text);
        let none = Vec::new();
        let table = rows(&words(s.get(&4).unwrap_or(&none)));
        if table.is_empty() {
            return Err(PageError::NoTable(name.to_string()));
        }
        let env = s.get(&2).unwrap_or(&none);
        let (system, candidate) = title(text);
        Ok(Self {
            system,
            candidate,
            processor: item(env, "processor"),
            clock: item(env, "clock"),
            compiler: item(env, "compiler / build tool"),
            flags: flags(&words(s.get(&3).unwrap_or(&none))),
            rows: table,
        })
    }

    /// Reads the page at `path`.
    pub fn read(path: &Path) -> Result<Self, PageError> {
        let name = crate::sanitize::path_as_given(path);
        let text = std::fs::read_to_string(path)
            .map_err(|e| PageError::Read(name.clone(), e.to_string()))?;
        Self::parse(&text, &name)
    }

    /// The §4 rows as records of the harness's shape, holding only what the page prints: the
    /// mean, and its calls as one trial (the page prints no trial's own figure, so there is no
    /// interval to weigh: a verdict that needs one says so). No cyclescope section: the counter
    /// is the harness's.
    pub fn records(&self) -> Vec<TimingRecord> {
        let candidate = self.candidate.clone().unwrap_or_else(|| "published".into());
        self.rows
            .iter()
            .filter_map(|r| {
                let calls = u64::from(r.trials) * r.calls_per_trial;
                let cycles = (r.mean_cycles * calls as f64).round() as u64;
                let flags = self.flags.get(&r.label).cloned().unwrap_or_default();
                let v = serde_json::json!({
                    "schema": 2, "status": "complete", "candidate": candidate, "label": r.label,
                    "instance": r.label, "variant": "reference", "flags": flags,
                    "operation": "hash", "input_bytes": r.input_bytes,
                    "plan": {"iterations_per_trial": calls, "warmups": 0, "trials": 1,
                             "separate_processes": true, "estimated_s": 0.0,
                             "timeout_per_process_s": 0.0},
                    "kat": "PASS", "kat_not_passed": false, "disturbed_retries": 0,
                    "library": "", "library_sha256": "", "kat_log": null, "kat_log_sha256": null,
                    "started_utc": "", "ended_utc": "", "load_average_start": [0.0, 0.0, 0.0],
                    "load_average_end": [0.0, 0.0, 0.0], "environment": self.environment(),
                    "processes": [],
                    "trials": [{"measurements": calls, "seconds": 0.0, "cycles": cycles}],
                    "measurements": calls, "guide_100_measurements_met": calls >= 100,
                    "mean_seconds": null, "median_trial_seconds": null,
                    "min_trial_seconds": null, "max_trial_seconds": null,
                    "mean_cycles": r.mean_cycles, "median_trial_cycles": r.mean_cycles,
                    "operations_per_second": null, "throughput_MB_per_second": null,
                    "sizes": {}, "kex": {}, "build_flags": flags, "baseline_rss_bytes": 0,
                    "peak_rss_bytes": 0, "timing_scope": "loop"
                });
                serde_json::from_value(v).ok()
            })
            .collect()
    }

    /// The environment as a record's: what §2 prints, under the keys records use.
    fn environment(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        for (k, v) in [
            ("cpu_model", &self.processor),
            ("clock", &self.clock),
            ("compiler", &self.compiler),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), v.clone().into());
            }
        }
        m
    }
}

/// The rows of a comparison whose side A is a page: a job both sides have gets no verdict
/// but says why (the page prints a mean and no interval), unless B's record is invalid or its
/// figure doubtful, which stays said.
pub fn no_verdict_beside_a_page(rows: &mut [crate::report::compare::Comparison]) {
    use crate::report::compare::Verdict;
    for r in rows {
        if r.is_one_sided() || matches!(r.verdict, Verdict::Invalid(..) | Verdict::Doubtful(..)) {
            continue;
        }
        r.weighed = None;
        r.verdict = Verdict::NotComparable(
            "A is a published page: a mean as printed, with no interval to weigh".into(),
        );
    }
}

#[cfg(test)]
mod tests;
