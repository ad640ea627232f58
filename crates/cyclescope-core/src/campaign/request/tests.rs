use super::*;

fn instance() -> Instance {
    Instance {
        candidate: "iccs".into(),
        algorithm: "pseudoXOF".into(),
        label: "pseudoXOF-512".into(),
        library: "lib/libpseudoxof.so".into(),
        digest_bits: 512,
        variant: "iccs-baseline".into(),
        flags: "guide".into(),
        kat_manifest: None,
        kat_name: None,
        abi: Default::default(),
        oracle: None,
        kat_dir: None,
    }
}

fn settings() -> Settings {
    Settings {
        lengths: vec![64, 4096],
        trials: 7,
        trial_target_s: 0.25,
        op_budget_s: 60.0,
        cpu: Some(1),
        kat_timeout_s: 42.0,
        runs_dir: PathBuf::from("elsewhere"),
        bundled_baselines: true,
        baseline: "iccs".into(),
        max_address_space_mib: Some(1024),
        journal: None,
    }
}

#[test]
fn settings_are_honoured_and_overrides_win() {
    let r = RunRequest::build(
        &settings(),
        vec![instance()],
        "r".into(),
        RequestOverrides::default(),
    )
    .unwrap();
    assert_eq!(r.lengths, [64, 4096]);
    assert_eq!(r.planning, Planning::new(7, 0.25, 60.0));
    assert_eq!(r.cpus, [1]);
    assert_eq!(r.kat_timeout, Duration::from_secs(42));
    assert_eq!(r.limits.address_space_bytes, Some(1 << 30), "the setting");
    let o = RequestOverrides {
        lengths: Some(vec![32]),
        cpu: Some(0),
        trials: Some(3),
        kat_timeout_s: Some(5.0),
        max_address_space_mib: Some(512),
        max_cpu_seconds: Some(9),
        timeout_cap_s: Some(2.0),
        adaptive: Some((0.02, 1)),
        host_root: Some("fixture".into()),
        allow_unfixed_host: true,
        ..RequestOverrides::default()
    };
    let r = RunRequest::build(&settings(), vec![instance()], "r".into(), o).unwrap();
    assert_eq!(
        (r.lengths.as_slice(), r.cpu(), r.planning.trials),
        (&[32][..], 0, 3)
    );
    assert_eq!(
        r.planning.trial_target_s, 0.25,
        "not overridden: the setting"
    );
    assert_eq!(r.kat_timeout, Duration::from_secs(5));
    assert_eq!(
        r.limits,
        Limits {
            address_space_bytes: Some(512 << 20),
            cpu_seconds: Some(9),
            ..Limits::standard(512)
        }
    );
    assert_eq!(r.timeout_cap, Some(Duration::from_secs(2)));
    assert_eq!(
        r.adaptive,
        Some(Adaptive {
            precision: 0.02,
            max_trials: MIN_ADAPTIVE_TRIALS
        })
    );
    assert_eq!(r.host_root, PathBuf::from("fixture"));
    assert!(r.allow_unfixed_host && !r.allow_kat_fail);
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    let build = |o| RunRequest::build(&settings(), vec![instance()], "r".into(), o);
    let cases = [
        (
            RequestOverrides {
                lengths: Some(vec![0]),
                ..Default::default()
            },
            RequestError::Lengths(crate::catalog::bounds::check_lengths(&[0]).unwrap_err()),
        ),
        (
            RequestOverrides {
                lengths: Some(vec![]),
                ..Default::default()
            },
            RequestError::Lengths("no message length given".into()),
        ),
        (
            RequestOverrides {
                lengths: Some(vec![32, 64, 32]),
                ..Default::default()
            },
            RequestError::Lengths(crate::catalog::bounds::check_lengths(&[32, 32]).unwrap_err()),
        ),
        (
            RequestOverrides {
                cpu: Some(4095),
                ..Default::default()
            },
            RequestError::Cpu(crate::cpu::check_usable(4095).unwrap_err()),
        ),
        (
            RequestOverrides {
                trials: Some(17),
                ..Default::default()
            },
            RequestError::Trials(17),
        ),
        (
            RequestOverrides {
                op_budget_s: Some(0.0),
                ..Default::default()
            },
            RequestError::Seconds,
        ),
        (
            RequestOverrides {
                adaptive: Some((1.5, 30)),
                ..Default::default()
            },
            RequestError::Precision(1.5),
        ),
    ];
    for (o, want) in cases {
        assert_eq!(build(o), Err(want));
    }
    let none = RunRequest::build(&settings(), vec![], "r".into(), RequestOverrides::default());
    assert_eq!(none, Err(RequestError::NoInstances));
}

#[test]
fn smt_siblings_are_refused_and_a_shard_takes_its_slice() {
    let smt =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/host/smt-on");
    let o = RequestOverrides {
        cpus: Some(vec![1, 0]),
        host_root: Some(smt),
        ..Default::default()
    };
    let e = RunRequest::build(&settings(), vec![instance()], "r".into(), o).unwrap_err();
    assert!(
        e.to_string().contains("CPUs 0 and 1 are SMT siblings"),
        "{e}"
    );
    let many: Vec<Instance> = (0..5)
        .map(|i| Instance {
            label: format!("x-{i}"),
            ..instance()
        })
        .collect();
    let slice = |k| {
        let o = RequestOverrides {
            shard: Some(Shard { index: k, count: 2 }),
            cpus: Some(vec![1, 0, 1]),
            ..Default::default()
        };
        RunRequest::build(&settings(), many.clone(), "r".into(), o).unwrap()
    };
    let (one, two) = (slice(1), slice(2));
    assert_eq!(one.cpus, [0, 1], "sorted, each once");
    let labels = |r: &RunRequest| {
        r.instances
            .iter()
            .map(|i| i.label.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(labels(&one), ["x-0", "x-2", "x-4"]);
    assert_eq!(labels(&two), ["x-1", "x-3"]);
    let o = RequestOverrides {
        shard: Some(Shard { index: 2, count: 2 }),
        ..Default::default()
    };
    assert_eq!(
        RunRequest::build(&settings(), vec![instance()], "r".into(), o),
        Err(RequestError::EmptyShard(Shard { index: 2, count: 2 }))
    );
}
