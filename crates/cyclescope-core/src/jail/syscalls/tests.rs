//! The filters' programs run by a small classic-BPF interpreter, as the kernel would run
//! them, over every call number and the arguments the list names; `in_kernel` installs them.

use super::*;

mod in_kernel;

const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;
const ERRNO: u32 = 0x0005_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// `struct seccomp_data` as the filter reads it: nr, arch, ip, six arguments.
fn data(arch: u32, nr: i64, args: [u64; 6]) -> [u8; 64] {
    let mut d = [0u8; 64];
    d[0..4].copy_from_slice(&(nr as u32).to_ne_bytes());
    d[4..8].copy_from_slice(&arch.to_ne_bytes());
    for (i, a) in args.iter().enumerate() {
        d[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
    }
    d
}

/// Runs one classic-BPF program over `data`, as the kernel does (the instructions the
/// programs here use).
fn run(program: &BpfProgram, data: &[u8; 64]) -> u32 {
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let i = &program[pc];
        pc += 1;
        match i.code {
            0x20 => {
                let k = i.k as usize;
                acc = u32::from_ne_bytes(data[k..k + 4].try_into().unwrap());
            }
            0x54 => acc &= i.k,
            0x06 => return i.k,
            0x05 => pc += i.k as usize,
            0x15 | 0x25 | 0x35 | 0x45 => {
                let taken = match i.code {
                    0x15 => acc == i.k,
                    0x25 => acc > i.k,
                    0x35 => acc >= i.k,
                    _ => acc & i.k != 0,
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            other => panic!("instruction {other:#x} not understood by this test"),
        }
    }
}

/// What the kernel answers with every program installed: the strictest answer.
fn verdict(kind: Kind, arch: u32, nr: i64, args: [u64; 6]) -> u32 {
    let d = data(arch, nr, args);
    let rank = |v: u32| match v & 0xffff_0000 {
        KILL_PROCESS => 0,
        ERRNO => 3,
        ALLOW => 9,
        _ => 1,
    };
    programs(kind)
        .unwrap()
        .iter()
        .map(|p| run(p, &d))
        .min_by_key(|&v| rank(v))
        .unwrap()
}

fn native(nr: i64, args: [u64; 6]) -> u32 {
    verdict(Kind::Worker, AUDIT_ARCH, nr, args)
}

#[test]
fn names_and_numbers_are_each_others_once() {
    let mut seen = std::collections::BTreeSet::new();
    for &(name, nr, _) in ALLOWED {
        assert!(seen.insert(nr), "{name} twice");
        assert_eq!(name_of(nr), Some(name));
    }
    for &(name, nr) in NAMED_DENIED.iter().chain(VALGRIND_ALSO) {
        assert!(seen.insert(nr), "{name} both allowed and denied");
        assert_eq!(name_of(nr), Some(name));
    }
}

#[test]
fn every_listed_call_passes_and_every_other_number_kills() {
    let listed: std::collections::BTreeMap<i64, Args> =
        ALLOWED.iter().map(|&(_, nr, a)| (nr, a)).collect();
    for nr in 0..1024 {
        let want = match listed.get(&nr) {
            Some(Args::Any) => ALLOW,
            Some(_) => continue,
            None if nr == libc::SYS_clone3 => ERRNO | libc::ENOSYS as u32,
            None => KILL_PROCESS,
        };
        assert_eq!(native(nr, [0; 6]), want, "{:?} ({nr})", name_of(nr));
    }
    // The x32 numbers and another architecture's calls.
    assert_eq!(native(0x4000_0000 | libc::SYS_read, [0; 6]), KILL_PROCESS);
    assert_eq!(
        verdict(Kind::Worker, 0x4000_0003, libc::SYS_read, [0; 6]),
        KILL_PROCESS
    );
}

#[test]
fn arguments_decide_where_the_list_says_so() {
    let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
    assert_eq!(native(libc::SYS_clone, [thread, 0, 0, 0, 0, 0]), ALLOW);
    assert_eq!(
        native(libc::SYS_clone, [libc::SIGCHLD as u64, 0, 0, 0, 0, 0]),
        ALLOW
    );
    for flag in [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
    ] {
        let flags = libc::SIGCHLD as u64 | flag as u64;
        assert_eq!(
            native(libc::SYS_clone, [flags, 0, 0, 0, 0, 0]),
            KILL_PROCESS,
            "{flag:#x}"
        );
    }
    assert_eq!(native(libc::SYS_ioctl, [1, 0x5401, 0, 0, 0, 0]), ALLOW);
    assert_eq!(native(libc::SYS_ioctl, [1, 0x2403, 0, 0, 0, 0]), ALLOW);
    // TIOCSTI, also with the upper half of the register set (the kernel reads 32 bits).
    assert_eq!(
        native(libc::SYS_ioctl, [0, 0x5412, 0, 0, 0, 0]),
        KILL_PROCESS
    );
    assert_eq!(
        native(libc::SYS_ioctl, [0, 0x1_0000_5412, 0, 0, 0, 0]),
        KILL_PROCESS
    );
    assert_eq!(
        native(libc::SYS_perf_event_open, [0, 0, u64::MAX, u64::MAX, 0, 0]),
        ALLOW
    );
    assert_eq!(
        native(libc::SYS_perf_event_open, [0, 1, u64::MAX, u64::MAX, 0, 0]),
        KILL_PROCESS
    );
    assert_eq!(
        native(libc::SYS_perf_event_open, [0, u64::MAX, 0, u64::MAX, 0, 0]),
        KILL_PROCESS
    );
    assert_eq!(
        native(libc::SYS_prctl, [libc::PR_SET_NAME as u64, 0, 0, 0, 0, 0]),
        ALLOW
    );
    // Its own parent-death signal concerns only the caller (the trial worker asks for it
    // under valgrind's before-exec filter).
    assert_eq!(
        native(
            libc::SYS_prctl,
            [libc::PR_SET_PDEATHSIG as u64, 9, 0, 0, 0, 0]
        ),
        ALLOW
    );
    for option in [
        libc::PR_SET_DUMPABLE,
        libc::PR_SET_PTRACER,
        libc::PR_SET_MM,
        libc::PR_CAPBSET_DROP,
    ] {
        assert_eq!(
            native(libc::SYS_prctl, [option as u64, 0, 0, 0, 0, 0]),
            KILL_PROCESS
        );
    }
    assert_eq!(native(libc::SYS_prlimit64, [0, 9, 0, 1, 0, 0]), ALLOW);
    assert_eq!(
        native(libc::SYS_prlimit64, [1, 9, 1, 0, 0, 0]),
        KILL_PROCESS
    );
}

#[test]
fn valgrind_gets_its_few_more_and_no_other() {
    let nr = libc::SYS_rt_sigtimedwait;
    assert_eq!(verdict(Kind::Worker, AUDIT_ARCH, nr, [0; 6]), KILL_PROCESS);
    assert_eq!(verdict(Kind::Valgrind, AUDIT_ARCH, nr, [0; 6]), ALLOW);
    assert!(allows(Kind::Valgrind, "rt_sigtimedwait") && !allows(Kind::Worker, "rt_sigtimedwait"));
    for &(name, nr) in NAMED_DENIED {
        assert_eq!(
            verdict(Kind::Valgrind, AUDIT_ARCH, nr, [0; 6]),
            KILL_PROCESS,
            "{name}"
        );
    }
}

#[test]
fn the_blob_holds_the_programs_in_order() {
    let blob = filter_blob(Kind::Worker).unwrap();
    let programs = programs(Kind::Worker).unwrap();
    let mut at = 0;
    for p in &programs {
        let n = u32::from_ne_bytes(blob[at..at + 4].try_into().unwrap()) as usize;
        assert_eq!(n, p.len());
        at += 4;
        let first = u16::from_ne_bytes(blob[at..at + 2].try_into().unwrap());
        assert_eq!(first, p[0].code);
        at += 8 * n;
    }
    assert_eq!(at, blob.len());
}
