//! The CPU locks against real files, real flocks and real owners.

use super::*;

#[test]
fn a_second_lock_names_the_first_holder_and_a_dropped_lock_frees_the_cpu() {
    let tmp = tempfile::tempdir().unwrap();
    let held = lock_all(
        tmp.path(),
        &[3, 5],
        Path::new("runs/a"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap();
    // flock locks belong to the open file description: a second open in this process is
    // refused like another process would be.
    let e = lock_all(
        tmp.path(),
        &[4, 5],
        Path::new("runs/b"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, CpuLockError::Busy { cpu: 5, .. }), "{text}");
    assert!(text.contains(&std::process::id().to_string()), "{text}");
    assert!(text.contains("writing runs/a"), "{text}");
    // The refusal names the way to queue instead.
    assert!(
        text.contains("queue for it with CYCLESCOPE_LOCK_WAIT=<seconds>"),
        "{text}"
    );
    drop(held);
    assert!(
        lock_all(
            tmp.path(),
            &[4, 5],
            Path::new("runs/b"),
            NO_WAIT,
            &GO,
            &mut |_| {}
        )
        .is_ok()
    );
}

const NO_WAIT: Duration = Duration::ZERO;
static GO: AtomicBool = AtomicBool::new(false);

#[test]
fn a_waiting_run_is_told_once_whom_it_waits_for_and_again_when_the_cpu_is_freed() {
    let tmp = tempfile::tempdir().unwrap();
    let held = lock_all(
        tmp.path(),
        &[1],
        Path::new("runs/a"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap();
    let dir = tmp.path().to_path_buf();
    let (told_tx, told_rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut told = Vec::new();
        let got = lock_all(
            &dir,
            &[1, 0],
            Path::new("runs/b"),
            Duration::from_secs(600),
            &GO,
            &mut |heard| match heard {
                LockWait::Busy(e) => {
                    told.push(e.to_string());
                    let _ = told_tx.send(());
                }
                LockWait::Free { cpu, .. } => told.push(format!("CPU {cpu} free")),
            },
        );
        (got.map(|l| l.len()), told)
    });
    // Released only once the waiter has said it waits: the wait, not a race, is tested.
    told_rx.recv().unwrap();
    drop(held);
    let (got, told) = waiter.join().unwrap();
    assert_eq!(got.unwrap(), 2, "both CPUs, CPU 0 taken before CPU 1");
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(told[0].contains("CPU 1 is taken"), "{told:?}");
    assert_eq!(
        told[1], "CPU 1 free",
        "the end of the wait is said: {told:?}"
    );
}

#[test]
fn a_wait_is_bounded_and_a_cancel_ends_it() {
    let tmp = tempfile::tempdir().unwrap();
    let _held = lock_all(
        tmp.path(),
        &[2],
        Path::new("runs/a"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap();
    let short = lock_all(
        tmp.path(),
        &[2],
        Path::new("runs/b"),
        Duration::from_millis(120),
        &GO,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(short, CpuLockError::StillBusy { .. }), "{short}");
    assert!(short.to_string().contains(LOCK_WAIT_ENV), "{short}");
    let cancelled = AtomicBool::new(true);
    let e = lock_all(
        tmp.path(),
        &[2],
        Path::new("runs/b"),
        Duration::from_secs(600),
        &cancelled,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, CpuLockError::Cancelled { cpu: 2 }), "{e}");
}

#[test]
fn the_locks_are_machine_wide_and_in_the_runs_folder() {
    let m = Path::new("/m");
    assert_eq!(lock_dirs(m, Path::new("runs/x")), [m, Path::new("runs")]);
    assert_eq!(lock_dirs(m, Path::new("x"))[1], PathBuf::from("."));
    assert_eq!(lock_dirs(m, Path::new("/m/x")), [m]);
    if std::env::var_os(LOCK_DIR_ENV).is_none() {
        let m = machine_lock_dir();
        assert!(
            m.is_absolute() && m.ends_with("cyclescope") || m.starts_with(std::env::temp_dir()),
            "{m:?}"
        );
    }
}

#[test]
fn the_holder_is_read_from_the_kernel_and_this_process_is_no_other() {
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!(holder(tmp.path(), 6), None, "no lock file");
    let held = lock_all(
        tmp.path(),
        &[6],
        Path::new("runs/a"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(holder(tmp.path(), 6), None, "held by this process");
    drop(held);
    assert_eq!(holder(tmp.path(), 6), None, "freed");
    let locks = "1: FLOCK  ADVISORY  WRITE 5817 fe:00:10035508 0 EOF\n\
                 2: -> FLOCK  ADVISORY  WRITE 77 fe:01:42 0 EOF\n\
                 3: FLOCK  ADVISORY  WRITE 6553 fe:01:42 0 EOF\n";
    let dev = libc::makedev(0xfe, 0x01);
    assert_eq!(flock_holder(locks, dev as u64, 42), Some(6553));
    assert_eq!(flock_holder(locks, dev as u64, 43), None);
}

#[test]
fn an_unwritten_note_is_an_unnamed_holder() {
    assert_eq!(holder_of(""), "(not yet named)");
    assert_eq!(
        holder_of("pid 7\ncommand cyclescope run x\nrun r\n"),
        "7 (cyclescope run x, writing r)"
    );
}

/// `nobody`: the other user planting names.
const OTHER: u32 = 65534;

#[test]
fn a_planted_link_as_a_lock_file_is_refused_by_name_and_its_target_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("profile");
    std::fs::write(&target, b"export PATH=/usr/bin\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let locks = tmp.path().join("locks");
    std::fs::create_dir(&locks).unwrap();
    let link = locks.join(".cpu1.lock");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(OTHER), Some(OTHER)).unwrap();
    let e = lock_all(&locks, &[1], Path::new("runs/a"), NO_WAIT, &GO, &mut |_| {}).unwrap_err();
    assert!(matches!(e, CpuLockError::Unsafe { cpu: 1, .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("cannot lock CPU 1") && text.contains(".cpu1.lock is a symbolic link"),
        "{text}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"export PATH=/usr/bin\n");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        holder(&locks, 1),
        None,
        "a link is not read for a holder's note"
    );
}

#[test]
fn the_fallback_folder_is_private_and_refused_when_another_user_made_it() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let machine = tmp.path().join("machine");
    let fallback = tmp.path().join("cyclescope-cpus-0");
    // Honest use: made 0700 by the first run, used again by the next.
    prepare_folder(&fallback, &machine, &fallback).unwrap();
    prepare_folder(&fallback, &machine, &fallback).unwrap();
    let mode = std::fs::metadata(&fallback).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);

    std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o777)).unwrap();
    let e = prepare_folder(&fallback, &machine, &fallback).unwrap_err();
    assert!(
        e.to_string()
            .contains("cyclescope-cpus-0 is open to other users"),
        "{e}"
    );

    std::fs::set_permissions(&fallback, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::lchown(&fallback, Some(OTHER), Some(OTHER)).unwrap();
    let e = prepare_folder(&fallback, &machine, &fallback).unwrap_err();
    assert!(
        e.to_string()
            .contains("cyclescope-cpus-0 belongs to uid 65534"),
        "{e}"
    );

    let linked = tmp.path().join("cyclescope-cpus-1");
    std::os::unix::fs::symlink(&machine, &linked).unwrap();
    std::os::unix::fs::lchown(&linked, Some(OTHER), Some(OTHER)).unwrap();
    let e = prepare_folder(&linked, &machine, &linked).unwrap_err();
    assert!(
        e.to_string()
            .contains("cyclescope-cpus-1 is a symbolic link"),
        "{e}"
    );
    assert!(!machine.exists(), "nothing made where the link points");

    // The machine-wide folder must be ours too, whatever its mode.
    let e = prepare_folder(&fallback, &fallback, &linked).unwrap_err();
    assert!(e.to_string().contains("belongs to uid 65534"), "{e}");
}

/// A held lock's descriptor closes on `exec`: a program this process starts meanwhile (a
/// worker, the compiler, valgrind) does not hold the lock, which would keep the CPU taken
/// after this process ended.
#[test]
fn a_program_started_while_a_lock_is_held_does_not_inherit_it() {
    let tmp = tempfile::tempdir().unwrap();
    let _held = lock_all(
        tmp.path(),
        &[6],
        Path::new("runs/a"),
        NO_WAIT,
        &GO,
        &mut |_| {},
    )
    .unwrap();
    let lock = std::fs::canonicalize(tmp.path().join(".cpu6.lock")).unwrap();
    let targets = |dir: &str| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .collect()
    };
    // The control: this process holds it.
    assert!(targets("/proc/self/fd").contains(&lock));
    // `ls` lists its own descriptors: those it inherited and the one it reads the folder by.
    let o = std::process::Command::new("ls")
        .args(["-l", "/proc/self/fd/"])
        .output()
        .expect("ls runs");
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && listed.contains("0 -> "), "{listed}");
    assert!(
        !listed.contains(&*lock.to_string_lossy()),
        "the child holds the lock: {listed}"
    );
}
