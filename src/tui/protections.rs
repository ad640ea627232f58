//! The Host panel's rows on what protects a run: the worker sandbox as `check` reports it
//! (`cli::worker_cmd::sandbox_state`: what a real worker enforced, and what the engine read of
//! it from outside), one row per protection, each missing one with what a candidate could then
//! do. It only turns those values into rows; it never asks the kernel itself.

use crate::host::Status;
use crate::tui::app::HostRow;
use crate::worker::observed::Protections;
use crate::worker::sandbox::SandboxState;

/// The protections' rows, from a worker's report and what was seen of it (None: it ended
/// before it could be read).
pub fn rows(state: &SandboxState, seen: Option<&Protections>) -> Vec<HostRow> {
    let row = |name: &str, ok: Status, value: String, hint: Option<&str>| HostRow {
        check: None,
        name: name.into(),
        status: ok,
        value,
        hint: hint.map(Into::into),
    };
    let pass_or = |ok: bool, missing: Status| if ok { Status::Pass } else { missing };
    let seccomp = seen.map_or(state.seccomp, |s| s.seccomp.starts_with("filter"));
    let mut rows = vec![
        row(
            "seccomp",
            pass_or(seccomp, Status::Fail),
            match seen {
                Some(s) if seccomp => format!("allowlist, {}", s.seccomp),
                _ if seccomp => "allowlist".into(),
                _ => format!(
                    "none ({})",
                    state.seccomp_detail.as_deref().unwrap_or("unknown")
                ),
            },
            (!seccomp).then_some(
                "without it a candidate may open sockets, run programs and trace processes",
            ),
        ),
        {
            let enforced = state.landlock != "not enforced";
            row(
                "Landlock",
                match state.landlock.as_str() {
                    "fully enforced" => Status::Pass,
                    "partially enforced" => Status::Warn,
                    _ => Status::Fail,
                },
                if enforced {
                    let scopes = match seen.and_then(|s| s.landlock.as_ref()) {
                        Some(l) if l.scopes.is_empty() => "no scopes".to_string(),
                        Some(l) => format!("scopes {}", l.scopes.join(", ")),
                        None => "signals scoped".into(),
                    };
                    format!(
                        "{}, {}: reads and writes limited, {scopes}",
                        state.landlock, state.landlock_detail
                    )
                } else {
                    format!("none ({})", state.landlock_detail)
                },
                match state.landlock.as_str() {
                    "fully enforced" => None,
                    "partially enforced" => Some(
                        "an older kernel: what its ABI lacks (truncation, signal scopes …) is \
                         open to a candidate",
                    ),
                    _ => Some("without it a candidate may read and write anywhere its uid may"),
                },
            )
        },
    ];
    let Some(seen) = seen else {
        rows.push(row(
            "worker",
            Status::Unknown,
            "ended before the engine could read it".into(),
            None,
        ));
        return rows;
    };
    let uid = seen.uids.first().copied();
    rows.extend([
        row(
            "capabilities",
            pass_or(seen.no_capabilities && seen.no_new_privs, Status::Fail),
            format!(
                "{}, no_new_privs {}",
                if seen.no_capabilities { "none" } else { "HELD" },
                if seen.no_new_privs { "set" } else { "NOT set" }
            ),
            (!seen.no_capabilities || !seen.no_new_privs).then_some(
                "a candidate may change others' files, lift its limits and set the clock",
            ),
        ),
        row(
            "uid",
            pass_or(uid.is_some_and(|u| u != 0), Status::Warn),
            uid.map_or_else(|| "unknown".into(), |u| u.to_string()),
            (uid == Some(0))
                .then_some("root's uid: what Landlock allows of root's files is the candidate's"),
        ),
        row(
            "namespaces",
            pass_or(!seen.own_namespaces.is_empty(), Status::Warn),
            match (
                seen.own_namespaces.is_empty(),
                seen.unobserved_namespaces.is_empty(),
            ) {
                (true, true) => "the engine's".into(),
                (false, true) => format!("its own: {}", seen.own_namespaces.join(", ")),
                (_, false) => format!(
                    "not readable from outside: {}",
                    seen.unobserved_namespaces.join(", ")
                ),
            },
            match seen.unobserved_namespaces.is_empty() {
                true => seen
                    .own_namespaces
                    .is_empty()
                    .then_some("a candidate shares the host's network, IPC and process list"),
                false => Some("no user namespace of its own: the engine cannot read them"),
            },
        ),
        row(
            "cgroup",
            pass_or(!seen.cgroup.is_empty(), Status::Warn),
            if seen.cgroup.is_empty() {
                "none".into()
            } else {
                format!("its own: {}", crate::sanitize::log_field(&seen.cgroup))
            },
            seen.cgroup
                .is_empty()
                .then_some("memory and processes are bounded by rlimits only, and not counted"),
        ),
    ]);
    rows
}

/// The rows when no worker could be asked.
pub fn unknown(why: &str) -> Vec<HostRow> {
    vec![HostRow {
        check: None,
        name: "worker sandbox".into(),
        status: Status::Unknown,
        value: crate::sanitize::log_field(why).into_owned(),
        hint: None,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::demo;

    fn state(landlock: &str) -> SandboxState {
        SandboxState {
            seccomp: true,
            seccomp_detail: None,
            landlock: landlock.into(),
            landlock_detail: "kernel ABI 7".into(),
            privileges: String::new(),
            cgroup: String::new(),
        }
    }

    fn seen(uid: u32, namespaces: &[&str], cgroup: &str) -> Protections {
        Protections {
            seccomp: "filter (2 program(s))".into(),
            no_new_privs: true,
            no_capabilities: true,
            uids: vec![uid; 4],
            own_namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
            unobserved_namespaces: Vec::new(),
            cgroup: cgroup.into(),
            landlock: None,
        }
    }

    /// The Host panel with the demo's checks and these protections, the cursor on `cursor`.
    fn draw(width: u16, height: u16, rows: Vec<HostRow>, cursor: &str) -> String {
        let mut app = demo::idle();
        app.host.extend(rows);
        app.host_cursor = app.host.iter().position(|r| r.name == cursor).unwrap();
        demo::draw_text(width, height, |f| {
            crate::tui::panel::host::render(f, f.area(), &app);
        })
    }

    #[test]
    fn every_protection_in_force_is_a_pass() {
        let seen = seen(65534, &["net", "ipc", "uts"], "/cyclescope-1-worker-0");
        let rows = rows(&state("fully enforced"), Some(&seen));
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "seccomp",
                "Landlock",
                "capabilities",
                "uid",
                "namespaces",
                "cgroup"
            ]
        );
        assert!(
            rows.iter()
                .all(|r| r.status == Status::Pass && r.hint.is_none()),
            "{rows:?}"
        );
        let text = draw(160, 48, rows, "Landlock");
        assert!(text.contains("Pass Landlock"), "{text}");
        insta::assert_snapshot!("protections_in_force_160x48", text);
    }

    #[test]
    fn a_missing_protection_says_what_a_candidate_could_then_do() {
        let mut gaps = state("not enforced");
        gaps.seccomp = false;
        gaps.seccomp_detail = Some("ENOSYS".into());
        gaps.landlock_detail = "disabled in this kernel".into();
        let mut seen = seen(0, &[], "");
        seen.seccomp = "none".into();
        seen.no_capabilities = false;
        let rows = rows(&gaps, Some(&seen));
        assert!(rows.iter().all(|r| r.status != Status::Pass), "{rows:?}");
        assert!(rows.iter().all(|r| r.hint.is_some()), "{rows:?}");
        let text = draw(80, 24, rows.clone(), "Landlock");
        assert!(
            text.contains("→ without it a candidate may read and write"),
            "{text}"
        );
        insta::assert_snapshot!("protections_missing_80x24", text);
        let text = draw(160, 48, rows, "uid");
        assert!(text.contains("→ root's uid"), "{text}");
        insta::assert_snapshot!("protections_missing_160x48", text);
    }

    #[test]
    fn a_worker_gone_before_it_was_read_leaves_only_what_it_said() {
        let rows = rows(&state("partially enforced"), None);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert_eq!(rows[1].status, Status::Warn);
        assert_eq!(rows[2].status, Status::Unknown);
        let text = draw(80, 24, rows, "Landlock");
        insta::assert_snapshot!("protections_unread_80x24", text);
    }
}
