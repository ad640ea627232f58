//! Lanes with scripted runners: each CPU's lane measures its own instances on its own
//! thread, at the same time as the others; records, events and campaign.json name the CPUs;
//! a resume measures on the same lanes; an engine left on the measurement CPUs says so.

use super::script::{Scripted, Step};
use super::{instance, request, run_with};
use crate::catalog::Instance;
use crate::record::run_dir::{list_records, read_campaign};
use crate::vocabulary::EngineEvent;

/// A second bundled-style instance, so lanes have something to share.
fn instance_named(label: &str) -> Instance {
    Instance {
        label: label.into(),
        ..instance()
    }
}

#[test]
fn lanes_measure_their_own_instances_side_by_side_and_records_name_their_cpu() {
    use std::sync::{Arc, Condvar, Mutex};
    let tmp = tempfile::tempdir().unwrap();
    let mut req = request(&tmp.path().join("run"), &[32, 1024], None);
    req.instances = ["pseudoXOF-256", "pseudoXOF-512", "pseudoXOF-768"]
        .map(instance_named)
        .to_vec();
    // The fixture lacks CPU 3's cpufreq files: its checks fail, and the run is allowed to.
    req.cpus = vec![2, 3];
    req.allow_unfixed_host = true;
    let rendezvous = Arc::new((Mutex::new(0), Condvar::new()));
    let mut a = Scripted::new(&[]);
    // The second lane's third process crashes: its record fails, nothing else does.
    let mut b = Scripted::new(&[Step::Clean, Step::Clean, Step::Crash]);
    b.cancel = a.cancel.clone();
    a.rendezvous = Some((rendezvous.clone(), 2));
    b.rendezvous = Some((rendezvous, 2));
    let mut events = Vec::new();
    let cancel = a.cancel.clone();
    let outcome = run_with(
        &req,
        vec![&mut a, &mut b],
        false,
        &mut |ev| events.push(ev),
        &cancel,
    )
    .unwrap();
    assert!(a.met && b.met, "both lanes were inside a trial at once");
    assert!(
        a.threads.iter().all(|t| t == "lane-cpu2"),
        "{:?}",
        a.threads
    );
    assert!(
        b.threads.iter().all(|t| t == "lane-cpu3"),
        "{:?}",
        b.threads
    );
    // Equal costs deal the instances out by key: 256 and 768 to CPU 2, 512 to CPU 3.
    let c = read_campaign(&req.run_dir).unwrap();
    let lanes: Vec<(usize, Vec<String>)> = c
        .cyclescope
        .lanes
        .iter()
        .map(|l| (l.cpu, l.instances.clone()))
        .collect();
    assert_eq!(
        lanes,
        [
            (
                2,
                vec!["iccs/pseudoXOF-256".into(), "iccs/pseudoXOF-768".into()]
            ),
            (3, vec!["iccs/pseudoXOF-512".into()]),
        ]
    );
    assert_eq!((c.shards, c.shard_cpus.len()), (2, 2));
    assert_eq!(c.shard_cpus["2/2"], 3);
    let checked: Vec<(usize, Option<String>)> = c
        .host_checks
        .iter()
        .map(|h| (h.cpu, h.shard.clone()))
        .collect();
    assert_eq!(checked, [(2, Some("1/2".into())), (3, Some("2/2".into()))]);
    assert_eq!(
        a.measured.len(),
        4 * 5,
        "two instances × two lengths × 5 trials"
    );
    assert!(a.measured.iter().all(|m| !m.starts_with("pseudoXOF-512")));
    assert!(b.measured.iter().all(|m| m.starts_with("pseudoXOF-512")));
    let records = list_records(&req.run_dir);
    assert_eq!(records.len(), 6);
    for (_, r) in &records {
        let cpu = r.cyclescope.as_ref().unwrap().measurement_cpu;
        let want = if r.label == "pseudoXOF-512" { 3 } else { 2 };
        assert_eq!(cpu, want, "{}", r.label);
        assert_eq!(r.environment["cpu_number"], want, "{}", r.label);
    }
    assert_eq!((outcome.finished, outcome.failed), (5, 1));
    let started: Vec<Option<usize>> = events
        .iter()
        .filter_map(|e| match e {
            EngineEvent::JobStarted { cpu, .. } => Some(*cpu),
            _ => None,
        })
        .collect();
    assert_eq!(started.iter().filter(|c| **c == Some(2)).count(), 4);
    assert_eq!(started.iter().filter(|c| **c == Some(3)).count(), 2);
    // A resume on the same lanes measures only the failed job, on its lane's CPU.
    let (mut a2, mut b2) = (Scripted::new(&[]), Scripted::new(&[]));
    b2.cancel = a2.cancel.clone();
    let cancel = a2.cancel.clone();
    let again = run_with(&req, vec![&mut a2, &mut b2], false, &mut |_| {}, &cancel).unwrap();
    assert_eq!((again.skipped, again.finished), (5, 1));
    assert_eq!((a2.processes, b2.processes), (0, 5));
}

#[test]
fn an_engine_sharing_the_measurement_cpus_is_said_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let req = request(&tmp.path().join("run"), &[32], None);
    let mut runner = Scripted::new(&[]);
    let mut events = Vec::new();
    let cancel = runner.cancel.clone();
    run_with(
        &req,
        vec![&mut runner],
        true,
        &mut |ev| events.push(ev),
        &cancel,
    )
    .unwrap();
    assert!(events.iter().any(|e| matches!(e,
        EngineEvent::Warning { message } if message.contains("no CPU is left for cyclescope"))));
    let (_, rec) = &list_records(&req.run_dir)[0];
    assert!(rec.cyclescope.as_ref().unwrap().engine_shared_cpu);
    assert!(
        read_campaign(&req.run_dir)
            .unwrap()
            .cyclescope
            .engine_shared_cpu
    );
}
