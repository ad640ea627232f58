//! `check`'s busy-CPU row measures the run queue of the measurement CPU: with a busy loop
//! pinned there, its spinning thread waits for the CPU and the row warns, saying how long.

mod common;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use cyclescope_core::cpu::lock::{LOCK_DIR_ENV, lock_all};
use serde_json::Value;

#[test]
fn a_busy_loop_pinned_on_the_measurement_cpu_makes_the_busy_cpu_row_warn_with_its_wait() {
    let cpu = common::measurement_cpu();
    // The CPU is held as a measuring test holds it: no other test measures under the loop.
    let holder = tempfile::tempdir().unwrap();
    let held = lock_all(
        &common::suite_lock_dir(),
        &[cpu],
        &holder.path().join("busy-loop"),
        Duration::from_secs(common::SUITE_LOCK_WAIT_S.parse().unwrap()),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let mut hog = common::busy_loop_on(cpu);
    // `check` looks for other cyclescopes in a folder of its own: this test's lock is not one.
    let locks = tempfile::tempdir().unwrap();
    let o = common::cyclescope()
        .env(LOCK_DIR_ENV, locks.path())
        .args(["check", "--json", "--cpu", &cpu.to_string()])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    drop(held);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", common::output_text(&o)));
    let row = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "busy_cpu")
        .expect("a busy_cpu row")
        .clone();
    let value = row["value"].as_str().unwrap();
    assert_eq!(row["status"], "warn", "{row}");
    // Against a busy loop a spinning thread gets about half the CPU: far above the 10 %.
    let waited: f64 = value
        .strip_prefix("waited ")
        .and_then(|v| v.split(" % of 0.3 s on CPU ").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the row does not start with its wait: {row}"));
    assert!(waited >= 10.0, "{row}");
    eprintln!("{value}");
    assert!(value.contains(&format!("on CPU {cpu} ")), "{row}");
}
