//! The C library functions the trial worker calls, declared by hand (the companion links
//! nothing but libc), with thin wrappers where a call needs a pointer or a buffer. Every
//! `unsafe` block of the companion outside the candidate call itself is here, each with the
//! reason it is sound. It never decides anything: callers get the raw result or errno.

use core::ffi::{CStr, c_char, c_int, c_long, c_ulong, c_void};

pub(crate) const O_RDONLY: c_int = 0;
pub(crate) const O_CLOEXEC: c_int = 0o2_000_000;
pub(crate) const RTLD_NOW: c_int = 2;
pub(crate) const RTLD_LOCAL: c_int = 0;
pub(crate) const CLOCK_MONOTONIC: c_int = 1;
pub(crate) const CLOCK_MONOTONIC_RAW: c_int = 4;
pub(crate) const SC_PAGESIZE: c_int = 30;
pub(crate) const PR_SET_PDEATHSIG: c_int = 1;
pub(crate) const PR_SET_NO_NEW_PRIVS: c_int = 38;
pub(crate) const SIGKILL: c_int = 9;
pub(crate) const RLIMIT_CPU: c_int = 0;
pub(crate) const RLIMIT_FSIZE: c_int = 1;
pub(crate) const RLIMIT_CORE: c_int = 4;
pub(crate) const RLIMIT_NOFILE: c_int = 7;
pub(crate) const RLIMIT_AS: c_int = 9;
pub(crate) const ENOSYS: c_int = 38;
pub(crate) const EPERM: c_int = 1;
pub(crate) const EINVAL: c_int = 22;
pub(crate) const EINTR: c_int = 4;
pub(crate) const EBADF: c_int = 9;

/// System call numbers the C library has no wrapper for (or none this old glibc exports).
#[cfg(target_arch = "x86_64")]
pub(crate) mod nr {
    pub(crate) const PERF_EVENT_OPEN: i64 = 298;
    pub(crate) const SECCOMP: i64 = 317;
}
#[cfg(target_arch = "aarch64")]
pub(crate) mod nr {
    pub(crate) const PERF_EVENT_OPEN: i64 = 241;
    pub(crate) const SECCOMP: i64 = 277;
}
/// The same on every architecture (the unified table from 5.x on).
pub(crate) const NR_CLOSE_RANGE: i64 = 436;
pub(crate) const NR_LANDLOCK_CREATE_RULESET: i64 = 444;
pub(crate) const NR_LANDLOCK_RESTRICT_SELF: i64 = 446;

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: c_long,
}

/// `Dl_info` of `<dlfcn.h>`.
#[repr(C)]
pub(crate) struct DlInfo {
    pub(crate) fname: *const c_char,
    pub(crate) fbase: *mut c_void,
    pub(crate) sname: *const c_char,
    pub(crate) saddr: *mut c_void,
}

#[repr(C)]
struct Rlimit {
    cur: u64,
    max: u64,
}

#[link(name = "c")]
unsafe extern "C" {
    fn __errno_location() -> *mut c_int;
    fn open(path: *const c_char, flags: c_int, ...) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn pread(fd: c_int, buf: *mut c_void, n: usize, offset: i64) -> isize;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn dup(fd: c_int) -> c_int;
    fn dup2(from: c_int, to: c_int) -> c_int;
    fn prctl(option: c_int, ...) -> c_int;
    fn setrlimit(resource: c_int, limit: *const Rlimit) -> c_int;
    fn getrlimit(resource: c_int, limit: *mut Rlimit) -> c_int;
    fn getppid() -> c_int;
    fn getenv(name: *const c_char) -> *const c_char;
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn sysconf(name: c_int) -> c_long;
    fn strerror(errnum: c_int) -> *const c_char;
    fn strnlen(s: *const c_char, max: usize) -> usize;
    fn malloc(n: usize) -> *mut c_void;
    pub(crate) fn syscall(number: c_long, ...) -> c_long;
    pub(crate) fn ioctl(fd: c_int, request: c_ulong, ...) -> c_int;
    pub(crate) fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void;
    pub(crate) fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
    pub(crate) fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    pub(crate) fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        offset: i64,
    ) -> *mut c_void;
    pub(crate) fn munmap(addr: *mut c_void, len: usize) -> c_int;
    pub(crate) fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int;
    pub(crate) fn abort() -> !;
    /// A second thread (`trial::together`); `pthread_t` is an `unsigned long` on Linux.
    pub(crate) fn pthread_create(
        thread: *mut c_ulong,
        attr: *const c_void,
        start: extern "C" fn(*mut c_void) -> *mut c_void,
        arg: *mut c_void,
    ) -> c_int;
    pub(crate) fn pthread_join(thread: c_ulong, ret: *mut *mut c_void) -> c_int;
}

/// `perf_event_open` of `attr` on this thread (pid 0), any CPU, no group, no flags: the new
/// descriptor, or the errno of the refusal.
pub(crate) fn perf_event_open(attr: &crate::perf_attr::PerfEventAttr) -> Result<c_int, c_int> {
    // SAFETY: the attribute pointer is to a live, fully initialised struct whose `size` field
    // is its true size; the kernel only reads it.
    let fd = unsafe {
        syscall(
            nr::PERF_EVENT_OPEN as c_long,
            attr as *const crate::perf_attr::PerfEventAttr,
            0 as c_int,
            -1 as c_int,
            -1 as c_int,
            0 as c_ulong,
        )
    };
    match fd {
        fd if fd < 0 => Err(errno()),
        fd => Ok(fd as c_int),
    }
}

/// errno of the last failed call.
pub(crate) fn errno() -> c_int {
    // SAFETY: glibc's per-thread errno slot, always a valid pointer.
    unsafe { *__errno_location() }
}

/// The C library's text for an errno (static storage; this process has one thread when it
/// asks).
pub(crate) fn strerror_text(e: c_int) -> &'static [u8] {
    // SAFETY: strerror returns a pointer to a NUL-terminated string that lives until the next
    // call; it is copied out before any other strerror call.
    unsafe { CStr::from_ptr(strerror(e)) }.to_bytes()
}

/// `open(path, O_RDONLY | O_CLOEXEC)`.
pub(crate) fn open_read(path: &CStr) -> Result<c_int, c_int> {
    // SAFETY: a NUL-terminated path; no mode argument is read without O_CREAT.
    let fd = unsafe { open(path.as_ptr(), O_RDONLY | O_CLOEXEC) };
    if fd < 0 { Err(errno()) } else { Ok(fd) }
}

/// One `read` into `buf`, retried on EINTR.
pub(crate) fn read_fd(fd: c_int, buf: &mut [u8]) -> Result<usize, c_int> {
    loop {
        // SAFETY: writes at most `buf.len()` bytes into a live, exclusively borrowed buffer.
        let n = unsafe { read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        match n {
            n if n >= 0 => return Ok(n as usize),
            _ if errno() == EINTR => continue,
            _ => return Err(errno()),
        }
    }
}

/// `pread` into `buf` at `offset`, retried on EINTR: the bytes read, or the errno.
pub(crate) fn pread_fd(fd: c_int, buf: &mut [u8], offset: i64) -> Result<usize, c_int> {
    loop {
        // SAFETY: writes at most `buf.len()` bytes into a live, exclusively borrowed buffer.
        let n = unsafe { pread(fd, buf.as_mut_ptr().cast(), buf.len(), offset) };
        match n {
            n if n >= 0 => return Ok(n as usize),
            _ if errno() == EINTR => continue,
            _ => return Err(errno()),
        }
    }
}

/// `pread` of exactly 8 bytes at `offset`, as a little-endian u64 (an MSR).
pub(crate) fn pread_u64(fd: c_int, offset: i64) -> Option<u64> {
    let mut b = [0u8; 8];
    // SAFETY: writes at most 8 bytes into a live local array.
    let n = unsafe { pread(fd, b.as_mut_ptr().cast(), 8, offset) };
    (n == 8).then(|| u64::from_le_bytes(b))
}

/// Writes all of `bytes` (several calls for a pipe that takes less at once); false when the
/// reader is gone.
pub(crate) fn write_all(fd: c_int, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: reads at most `bytes.len()` bytes from a live slice.
        let n = unsafe { write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if errno() == EINTR {
                continue;
            }
            return false;
        }
        bytes = &bytes[n as usize..];
    }
    true
}

/// Reads a whole small file into `buf` (up to its length); the bytes read.
pub(crate) fn read_file(path: &CStr, buf: &mut [u8]) -> Option<usize> {
    let fd = open_read(path).ok()?;
    let mut len = 0;
    while len < buf.len() {
        match read_fd(fd, &mut buf[len..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
    }
    close_fd(fd);
    Some(len)
}

pub(crate) fn close_fd(fd: c_int) {
    // SAFETY: closes a descriptor number; an unopened number gives EBADF and nothing else.
    unsafe { close(fd) };
}

pub(crate) fn dup_fd(fd: c_int) -> Result<c_int, c_int> {
    // SAFETY: duplicates a descriptor number; no memory is involved.
    let new = unsafe { dup(fd) };
    if new < 0 { Err(errno()) } else { Ok(new) }
}

pub(crate) fn dup2_fd(from: c_int, to: c_int) -> Result<(), c_int> {
    // SAFETY: as for `dup_fd`.
    if unsafe { dup2(from, to) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// `close_range(first, last, 0)`.
pub(crate) fn close_range(first: u32, last: u32) -> Result<(), c_int> {
    // SAFETY: closes descriptor numbers only.
    let rc = unsafe { syscall(NR_CLOSE_RANGE as c_long, first, last, 0u32) };
    if rc < 0 { Err(errno()) } else { Ok(()) }
}

/// `prctl(option, arg)` for the options that take one integer.
pub(crate) fn prctl_int(option: c_int, arg: c_ulong) -> Result<(), c_int> {
    // SAFETY: the options used (PDEATHSIG, NO_NEW_PRIVS) take integers only; the unused
    // arguments are passed as zero as the manual asks.
    let rc = unsafe { prctl(option, arg, 0 as c_ulong, 0 as c_ulong, 0 as c_ulong) };
    if rc < 0 { Err(errno()) } else { Ok(()) }
}

/// `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog)`: the older way in to a filter, for a
/// host that answers `seccomp(2)` with ENOSYS but passes `prctl` through (valgrind).
///
/// # Safety
/// `prog` must point to a live `struct sock_fprog` whose filter array it describes exactly.
pub(crate) unsafe fn prctl_seccomp_filter(prog: *const core::ffi::c_void) -> Result<(), c_int> {
    const PR_SET_SECCOMP: c_int = 22;
    const SECCOMP_MODE_FILTER: c_ulong = 2;
    // SAFETY: the caller's contract; the kernel copies the program.
    let rc = unsafe {
        prctl(
            PR_SET_SECCOMP,
            SECCOMP_MODE_FILTER,
            prog,
            0 as c_ulong,
            0 as c_ulong,
        )
    };
    if rc < 0 { Err(errno()) } else { Ok(()) }
}

pub(crate) fn set_rlimit(resource: c_int, soft: u64, hard: u64) -> Result<(), c_int> {
    let limit = Rlimit {
        cur: soft,
        max: hard,
    };
    // SAFETY: the kernel reads a live, initialised struct.
    if unsafe { setrlimit(resource, &limit) } < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

/// The hard limit of `resource`.
pub(crate) fn hard_rlimit(resource: c_int) -> Option<u64> {
    let mut limit = Rlimit { cur: 0, max: 0 };
    // SAFETY: the kernel writes a live local struct.
    (unsafe { getrlimit(resource, &mut limit) } == 0).then_some(limit.max)
}

/// The soft limit of `resource`.
pub(crate) fn soft_rlimit(resource: c_int) -> Option<u64> {
    let mut limit = Rlimit { cur: 0, max: 0 };
    // SAFETY: the kernel writes a live local struct.
    (unsafe { getrlimit(resource, &mut limit) } == 0).then_some(limit.cur)
}

pub(crate) fn parent_pid() -> c_int {
    // SAFETY: no arguments, cannot fail.
    unsafe { getppid() }
}

/// The environment variable `name`, if set.
pub(crate) fn env(name: &CStr) -> Option<&'static [u8]> {
    // SAFETY: getenv returns NULL or a NUL-terminated string in the environment block, which
    // this single-threaded process never changes.
    let p = unsafe { getenv(name.as_ptr()) };
    // SAFETY: non-NULL, NUL-terminated (above).
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// A clock's reading in nanoseconds (0 if it cannot be read).
#[inline]
pub(crate) fn clock_ns(clock: c_int) -> u64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the C library writes a live local struct.
    unsafe { clock_gettime(clock, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf takes an integer and returns one.
    match unsafe { sysconf(SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => 4096,
    }
}

/// `len` bytes from the C heap, filled with `fill`; None when the allocation fails. The
/// trial process lives as long as its buffers, so nothing is ever freed.
pub(crate) fn alloc_filled(len: usize, fill: u8) -> Option<&'static mut [u8]> {
    // SAFETY: malloc(len.max(1)) returns NULL or `len` writable bytes owned by nobody else;
    // they are initialised before the slice is made, and never freed.
    unsafe {
        let p = malloc(len.max(1)).cast::<u8>();
        if p.is_null() {
            return None;
        }
        core::ptr::write_bytes(p, fill, len);
        Some(core::slice::from_raw_parts_mut(p, len))
    }
}

/// The last dynamic-linker error, as bytes.
pub(crate) fn dl_error() -> &'static [u8] {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the next dl call.
    let p = unsafe { dlerror() };
    if p.is_null() {
        return b"unknown dlopen error";
    }
    // SAFETY: non-NULL and NUL-terminated (above); read before any other dl call.
    unsafe { CStr::from_ptr(p) }.to_bytes()
}

/// A NUL-terminated string a library returned, at most `max` bytes of it.
///
/// # Safety
/// `p` must be NULL or point at a readable NUL-terminated string (or at least `max` bytes).
pub(crate) unsafe fn c_string(p: *const c_char, max: usize) -> Option<&'static [u8]> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's contract; strnlen reads no further than `max` bytes.
    unsafe {
        let len = strnlen(p, max);
        Some(core::slice::from_raw_parts(p.cast::<u8>(), len))
    }
}
