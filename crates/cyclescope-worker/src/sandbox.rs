//! The trial worker's sandbox, the same policy as the engine's other workers (`worker::sandbox`),
//! written against the kernel interfaces directly because this program has no `std`: Landlock
//! denies every write to the file system (a layer on top of the one the engine enforced before
//! exec, `worker::confine`, which also limits reads) and, where the kernel knows scopes, signals
//! and abstract sockets outside the worker; the seccomp programs are the engine's allowlist
//! (`jail::syscalls`), handed over as bytes on descriptor [`FILTER_FD`] and installed as they are:
//! this program holds no list of its own. A kernel (or emulator) without one of the two leaves that
//! part out; any other failure stops the worker before the candidate is loaded.

use core::ffi::{c_int, c_long};

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
pub fn write_rights(abi: i64) -> u64 {
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
pub struct InForce {
    pub landlock: bool,
    pub seccomp: bool,
}

/// Installs both parts, the same for every job (this runs before the job is read). Under
/// valgrind, which answers `seccomp(2)` with ENOSYS, the filter goes in through `prctl`
/// instead, and valgrind's own calls then pass it too (the engine hands over valgrind's list:
/// `jail::syscalls::Kind::Valgrind`); qemu-user refuses both.
pub(crate) fn install(filters: &FilterBytes) -> Result<InForce, SetupError> {
    let landlock = restrict_writes()?;
    let seccomp = filter_system_calls(filters)?;
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

/// Where the engine hands over the filter programs (`jail::syscalls::WORKER_FILTER_FD`).
pub const FILTER_FD: c_int = 11;

/// Room for the programs: at most two of the kernel's largest (4096 instructions each).
const FILTER_CAPACITY: usize = 2 * (4 + 4096 * 8);

/// The filter bytes as handed over (aligned for the instructions they hold).
#[repr(C, align(8))]
pub(crate) struct FilterBytes {
    bytes: [u8; FILTER_CAPACITY],
    len: usize,
}

impl FilterBytes {
    pub(crate) fn new() -> Self {
        Self {
            bytes: [0; FILTER_CAPACITY],
            len: 0,
        }
    }
}

/// Reads the programs from [`FILTER_FD`] (from its start: every worker shares the engine's
/// one open description of it) and closes it. None handed over (the descriptor is not open)
/// leaves `filters` empty: no filter is installed, and the worker says so.
pub(crate) fn take_filters(filters: &mut FilterBytes) -> Result<(), SetupError> {
    loop {
        let room = &mut filters.bytes[filters.len..];
        if room.is_empty() {
            return Err(SetupError::Sys {
                what: "system-call filter larger than two programs",
                errno: sys::EINVAL,
            });
        }
        match sys::pread_fd(FILTER_FD, room, filters.len as i64) {
            Ok(0) => break,
            Ok(n) => filters.len += n,
            Err(sys::EBADF) => break,
            Err(errno) => {
                return Err(SetupError::Sys {
                    what: "reading the system-call filter",
                    errno,
                });
            }
        }
    }
    sys::close_fd(FILTER_FD);
    Ok(())
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

const SECCOMP_SET_MODE_FILTER: u32 = 1;
const SECCOMP_FILTER_FLAG_TSYNC: u32 = 1;

/// Installs each program of `filters` in turn (through `prctl` where `seccomp(2)` is missing);
/// false when there is none to install or the kernel has no seccomp.
fn filter_system_calls(filters: &FilterBytes) -> Result<bool, SetupError> {
    let mut at = 0;
    let mut installed = false;
    while at + 4 <= filters.len {
        let mut n = [0u8; 4];
        n.copy_from_slice(&filters.bytes[at..at + 4]);
        let n = u32::from_ne_bytes(n) as usize;
        let start = at + 4;
        at = start + n * size_of::<SockFilter>();
        if n == 0 || n > u16::MAX as usize || at > filters.len {
            return Err(SetupError::Sys {
                what: "a malformed system-call filter",
                errno: sys::EINVAL,
            });
        }
        let prog = SockFprog {
            len: n as u16,
            filter: filters.bytes[start..].as_ptr().cast(),
        };
        if !install_one(&prog)? {
            return Ok(false);
        }
        installed = true;
    }
    Ok(installed)
}

/// One program; false where the kernel (or emulator) has no seccomp.
fn install_one(prog: &SockFprog) -> Result<bool, SetupError> {
    // SAFETY: the kernel copies `prog.len` instructions from the live buffer `prog` points
    // into (4-aligned: the buffer is 8-aligned and each program starts 4 past a multiple of
    // 8); no_new_privs was set before (`setup`), as an unprivileged filter requires.
    let rc = unsafe {
        sys::syscall(
            sys::nr::SECCOMP as c_long,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_TSYNC,
            prog as *const SockFprog,
        )
    };
    let refused = |errno| SetupError::Sys {
        what: "seccomp filter",
        errno,
    };
    match (rc, sys::errno()) {
        (0.., _) => Ok(true),
        // valgrind has no seccomp(2) but passes prctl's filter on; qemu-user refuses that too.
        (_, sys::ENOSYS) => {
            // SAFETY: `prog` describes a live buffer until the call returns.
            match unsafe { sys::prctl_seccomp_filter((prog as *const SockFprog).cast()) } {
                Ok(()) => Ok(true),
                Err(sys::EINVAL | sys::ENOSYS) => Ok(false),
                Err(errno) => Err(refused(errno)),
            }
        }
        // EINVAL: a kernel built without seccomp filters.
        (_, sys::EINVAL) => Ok(false),
        (_, errno) => Err(refused(errno)),
    }
}
