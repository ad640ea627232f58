//! The trial worker's sandbox, the same policy as the engine's other workers
//! (`worker::sandbox`), written against the kernel interfaces directly because this program
//! has no `std`: Landlock denies every write to the file system and, where the kernel knows
//! scopes, signals and abstract sockets outside the worker; a seccomp filter kills the process
//! on the system calls of `worker/forbidden.rs`. A kernel (or emulator) without one of the two
//! leaves that part out; any other failure stops the worker before the candidate is loaded.

use core::ffi::{c_int, c_long};

use super::forbidden::FORBIDDEN;
use super::setup::SetupError;
use super::sys;

/// `struct landlock_ruleset_attr` (ABI 6 layout; older kernels accept it with the newer
/// fields zero).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
/// The write rights of Landlock ABI 1 (`LANDLOCK_ACCESS_FS_WRITE_FILE` … `MAKE_SYM`).
const WRITE_V1: u64 = 1 << 1 | 0b1_1111_1111 << 4;
const REFER_V2: u64 = 1 << 13;
const TRUNCATE_V3: u64 = 1 << 14;
const IOCTL_DEV_V5: u64 = 1 << 15;
/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL` (ABI 6).
const SCOPES_V6: u64 = 0b11;

/// The write rights a kernel of Landlock ABI `abi` knows (what the `landlock` crate's
/// `AccessFs::from_write` gives for ABI 1 to 6).
pub(crate) fn write_rights(abi: i64) -> u64 {
    let mut rights = WRITE_V1;
    if abi >= 2 {
        rights |= REFER_V2;
    }
    if abi >= 3 {
        rights |= TRUNCATE_V3;
    }
    if abi >= 5 {
        rights |= IOCTL_DEV_V5;
    }
    rights
}

/// Which parts are in force, as the worker reports them in `ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InForce {
    pub(crate) landlock: bool,
    pub(crate) seccomp: bool,
}

/// Installs both parts. `count`: under valgrind, which answers `seccomp(2)` with ENOSYS, the
/// filter goes in through `prctl` instead (valgrind's own calls then pass it too; none of
/// them is forbidden).
pub(crate) fn install(count: bool) -> Result<InForce, SetupError> {
    let landlock = restrict_writes()?;
    let seccomp = filter_system_calls(count)?;
    Ok(InForce { landlock, seccomp })
}

fn restrict_writes() -> Result<bool, SetupError> {
    // SAFETY: the version query passes no pointer (NULL, size 0) and a flag.
    let abi = unsafe {
        sys::syscall(
            sys::NR_LANDLOCK_CREATE_RULESET as c_long,
            core::ptr::null::<RulesetAttr>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi <= 0 {
        // ENOSYS (no Landlock, or qemu-user) or EOPNOTSUPP (built in, turned off): nothing
        // to enforce with, as the engine's workers report in `check`.
        return Ok(false);
    }
    let attr = RulesetAttr {
        handled_access_fs: write_rights(abi),
        handled_access_net: 0,
        scoped: if abi >= 6 { SCOPES_V6 } else { 0 },
    };
    let failed = |what| SetupError::Sys {
        what,
        errno: sys::errno(),
    };
    // SAFETY: the kernel reads `size_of::<RulesetAttr>()` bytes of a live struct.
    let fd = unsafe {
        sys::syscall(
            sys::NR_LANDLOCK_CREATE_RULESET as c_long,
            &attr as *const RulesetAttr,
            size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(failed("Landlock ruleset"));
    }
    // No rule: no folder is writable. SAFETY: a ruleset descriptor and flags 0.
    let rc = unsafe { sys::syscall(sys::NR_LANDLOCK_RESTRICT_SELF as c_long, fd as c_int, 0u32) };
    let err = (rc < 0).then(|| failed("Landlock restrict_self"));
    sys::close_fd(fd as c_int);
    err.map_or(Ok(true), Err)
}

/// `struct sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SockFilter {
    pub(crate) code: u16,
    pub(crate) jt: u8,
    pub(crate) jf: u8,
    pub(crate) k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
pub(crate) const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
pub(crate) const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_SET_MODE_FILTER: u32 = 1;
const SECCOMP_FILTER_FLAG_TSYNC: u32 = 1;
/// `offsetof(struct seccomp_data, nr)` and `arch`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;

#[cfg(target_arch = "x86_64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub(crate) const AUDIT_ARCH: u32 = 0xC000_00B7;

/// Instructions: the arch check (3), the number load (1), the x32 range check (1), one test
/// per forbidden call, allow, kill.
pub(crate) const PROGRAM_LEN: usize = 5 + FORBIDDEN.len() + 2;

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> SockFilter {
    SockFilter { code, jt, jf, k }
}

/// The filter: another architecture's calls, the x32 numbers (bit 30, only meaningful on
/// x86-64 but harmless elsewhere) and every forbidden number kill; the rest is allowed.
pub(crate) fn program() -> [SockFilter; PROGRAM_LEN] {
    let kill = (PROGRAM_LEN - 1) as u8;
    let mut p = [insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS); PROGRAM_LEN];
    p[0] = insn(BPF_LD_W_ABS, 0, 0, DATA_ARCH);
    p[1] = insn(BPF_JEQ_K, 1, 0, AUDIT_ARCH);
    p[2] = insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS);
    p[3] = insn(BPF_LD_W_ABS, 0, 0, DATA_NR);
    p[4] = insn(BPF_JGE_K, kill - 5, 0, 0x4000_0000);
    for (i, (_, nr)) in FORBIDDEN.iter().enumerate() {
        let at = 5 + i;
        p[at] = insn(BPF_JEQ_K, kill - at as u8 - 1, 0, *nr as u32);
    }
    p[PROGRAM_LEN - 2] = insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW);
    p
}

fn filter_system_calls(count: bool) -> Result<bool, SetupError> {
    let filter = program();
    let prog = SockFprog {
        len: PROGRAM_LEN as u16,
        filter: filter.as_ptr(),
    };
    // SAFETY: the kernel copies the program from a live array that `prog` describes exactly;
    // no_new_privs was set before (`setup`), as an unprivileged filter requires.
    let rc = unsafe {
        sys::syscall(
            sys::nr::SECCOMP as c_long,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_TSYNC,
            &prog as *const SockFprog,
        )
    };
    let refused = |errno| SetupError::Sys {
        what: "seccomp filter",
        errno,
    };
    match (rc, sys::errno()) {
        (0.., _) => Ok(true),
        (_, sys::ENOSYS) if count => {
            // SAFETY: `prog` describes `filter`, both alive until the call returns.
            match unsafe { sys::prctl_seccomp_filter((&prog as *const SockFprog).cast()) } {
                Ok(()) => Ok(true),
                Err(sys::EINVAL | sys::ENOSYS) => Ok(false),
                Err(errno) => Err(refused(errno)),
            }
        }
        // EINVAL: a kernel built without seccomp filters; ENOSYS: no seccomp(2) at all (as
        // under qemu-user).
        (_, sys::EINVAL | sys::ENOSYS) => Ok(false),
        (_, errno) => Err(refused(errno)),
    }
}
