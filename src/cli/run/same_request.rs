//! Both frontends build their run requests with the core's one builder: from the same
//! settings they ask for the same run, so no setting (the KAT timeout, the CPU, the planning,
//! the limits …) can be honoured by one and ignored by the other.

use clap::Parser;

use super::{RunArgs, build_request};
use crate::tui::action::{Action, Effect};
use crate::tui::app::App;
use crate::tui::engine_link::{LinkOptions, request};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    run: RunArgs,
}

const CONFIG: &str = r#"
[settings]
lengths = [64, 4096]
trials = 7
trial_target_s = 0.25
op_budget_s = 60.0
cpu = 0
kat_timeout_s = 42.0
runs_dir = "runs"
bundled_baselines = false

[[candidate]]
id = "iccs"
algorithm = "ICCS hash helpers"
variant = "iccs-baseline"

[[candidate.instance]]
label = "pseudoXOF-512"
library = "lib/libpseudoxof.so"
digest_bits = 512
"#;

#[test]
fn cli_and_tui_ask_for_the_same_run_from_the_same_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let run_dir = tmp.path().join("run");

    let args = Cli::parse_from(["run", "pseudoXOF-512", "--out", run_dir.to_str().unwrap()]);
    let cli = build_request(Some(&config), &args.run).unwrap();

    let catalog = crate::catalog::load_config(&config).unwrap();
    let mut app = App::new(catalog.candidates.clone(), &catalog.settings, 2);
    app.selected.insert("pseudoXOF-512".into());
    let Some(Effect::Start(spec)) = app.act(Action::Start) else {
        panic!("the workbench starts a run");
    };
    let options = LinkOptions {
        settings: catalog.settings.clone(),
        ..LinkOptions::default()
    };
    let mut tui = request(spec, run_dir.clone(), &options).unwrap();

    // Every setting reached both requests …
    for r in [&cli, &tui] {
        assert_eq!(r.kat_timeout, std::time::Duration::from_secs(42));
        assert_eq!(r.lengths, [64, 4096]);
        assert_eq!(r.cpu(), 0);
        assert_eq!(
            (
                r.planning.trials,
                r.planning.trial_target_s,
                r.planning.op_budget_s
            ),
            (7, 0.25, 60.0)
        );
    }
    // … and the requests differ in nothing but who is watching.
    assert!(tui.tui_attached && !cli.tui_attached);
    // …and so what the journal calls them.
    assert_eq!(
        (tui.origin, cli.origin),
        (
            crate::journal::Origin::Workbench,
            crate::journal::Origin::Run
        )
    );
    tui.tui_attached = false;
    tui.origin = cli.origin;
    assert_eq!(tui, cli);
}
