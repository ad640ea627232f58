use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;

/// A copy of the tuned-intel fixture (CPU 2 under cpufreq, governor `performance`), to change.
fn fixture_copy() -> tempfile::TempDir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/host/tuned-intel");
    let to = tempfile::tempdir().unwrap();
    copy_tree(&from, to.path());
    to
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        let kind = e.file_type().unwrap();
        if kind.is_symlink() {
            // sysfs's own links (cpuN/cpufreq -> ../cpufreq/policyN), kept as links.
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else if kind.is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

fn at(s: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(s)
}

const T0: u64 = 1_800_000_000;

/// The check of CPU 2 at `now`: when it reused a result, that result's time.
fn check(root: &Path, cache: &HostCache, now: SystemTime) -> Option<String> {
    let checked = check_cached(&HostRoot::new(root), 2, Some(cache), now).unwrap();
    assert_eq!(
        checked.environment.get(REUSED_KEY).and_then(|v| v.as_str()),
        checked.reused.as_deref(),
        "the environment block records the reuse"
    );
    assert_eq!(checked.environment["core_clock_hz"], 2_099_871_234u64);
    assert!(checked.report.is_ready(), "{:?}", checked.report.problems());
    checked.reused
}

#[test]
fn an_unchanged_host_reuses_its_probe_and_a_changed_governor_probes_again() {
    let root = fixture_copy();
    let data = tempfile::tempdir().unwrap();
    let cache = HostCache::new(data.path(), DEFAULT_MAX_AGE);
    assert_eq!(
        check(root.path(), &cache, at(T0)),
        None,
        "nothing stored yet"
    );
    let first = "2027-01-15T08:00:00Z";
    assert_eq!(
        check(root.path(), &cache, at(T0 + 60)).as_deref(),
        Some(first)
    );
    assert_eq!(
        check(root.path(), &cache, at(T0 + 120)).as_deref(),
        Some(first)
    );

    let governor = root
        .path()
        .join("sys/devices/system/cpu/cpu2/cpufreq/scaling_governor");
    std::fs::write(&governor, "powersave\n").unwrap();
    let changed = check_cached(&HostRoot::new(root.path()), 2, Some(&cache), at(T0 + 180));
    assert_eq!(changed.unwrap().reused, None, "the governor is an input");
    // Back to what it was: the result stored after the change is for the changed host.
    std::fs::write(&governor, "performance\n").unwrap();
    assert_eq!(check(root.path(), &cache, at(T0 + 240)), None);
    assert_eq!(
        check(root.path(), &cache, at(T0 + 300)).as_deref(),
        Some("2027-01-15T08:04:00Z")
    );
}

#[test]
fn a_result_older_than_the_bound_is_not_reused() {
    let root = fixture_copy();
    let data = tempfile::tempdir().unwrap();
    let cache = HostCache::new(data.path(), Duration::from_secs(600));
    assert_eq!(check(root.path(), &cache, at(T0)), None);
    assert!(
        check(root.path(), &cache, at(T0 + 600)).is_some(),
        "at the bound"
    );
    assert_eq!(check(root.path(), &cache, at(T0 + 601)), None, "past it");
    // A clock that went back is no reason to trust an entry from the future.
    assert_eq!(check(root.path(), &cache, at(T0)), None);
    let never = HostCache::new(data.path(), Duration::ZERO);
    assert_eq!(check(root.path(), &never, at(T0 + 1)), None);
}

#[test]
fn other_cpus_roots_and_probe_files_have_their_own_results() {
    let a = fixture_copy();
    let b = fixture_copy();
    let data = tempfile::tempdir().unwrap();
    let cache = HostCache::new(data.path(), DEFAULT_MAX_AGE);
    assert_eq!(check(a.path(), &cache, at(T0)), None);
    assert_eq!(check(b.path(), &cache, at(T0 + 1)), None, "another root");
    assert!(check(a.path(), &cache, at(T0 + 2)).is_some());
    let probes = a.path().join(crate::host::PROBES_FILE);
    let text = std::fs::read_to_string(&probes).unwrap();
    std::fs::write(&probes, text.replace("6.12.107", "6.12.108")).unwrap();
    assert_eq!(check(a.path(), &cache, at(T0 + 3)), None, "another kernel");
}

#[test]
fn an_unsteady_probe_is_not_kept() {
    let root = fixture_copy();
    let probes = root.path().join(crate::host::PROBES_FILE);
    let text = std::fs::read_to_string(&probes).unwrap();
    // An IQR of 1 % of the median: not steady.
    std::fs::write(
        &probes,
        text.replace("clock_iqr_hz = 95112", "clock_iqr_hz = 21000000"),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let cache = HostCache::new(data.path(), DEFAULT_MAX_AGE);
    let root = HostRoot::new(root.path());
    for s in [T0, T0 + 1] {
        let c = check_cached(&root, 2, Some(&cache), at(s)).unwrap();
        assert_eq!(c.reused, None);
    }
}

#[test]
fn the_age_setting_is_seconds_or_a_named_error() {
    assert_eq!(max_age_of(None), Ok(DEFAULT_MAX_AGE));
    assert_eq!(max_age_of(Some(" 0 ".into())), Ok(Duration::ZERO));
    assert_eq!(max_age_of(Some("90".into())), Ok(Duration::from_secs(90)));
    for bad in ["10m", "-1", "", "1.5"] {
        let e = max_age_of(Some(bad.into())).unwrap_err();
        assert!(e.starts_with(&format!("{MAX_AGE_ENV}=\"{bad}\" ")), "{e}");
    }
    // What the environment holds reaches the terminal only escaped.
    let e = max_age_of(Some("\u{1b}[2J".into())).unwrap_err();
    assert!(!e.contains('\u{1b}'), "{e:?}");
}
