//! Resource limits a confined process gets before it runs untrusted code: lowered, soft and
//! hard, never raised (no capability is needed, and nothing inside can lift a hard limit once
//! its capabilities are gone). Used in a forked child before exec (the compiler) and by the
//! worker on itself before it loads the candidate: async-signal-safe, nothing allocated.

use std::io;

/// Lowers `resource` to `soft` and `hard`, each capped at the limit of its kind in force.
pub(crate) fn lower(resource: libc::__rlimit_resource_t, soft: u64, hard: u64) -> io::Result<()> {
    let mut now = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write one rlimit struct on our stack.
    unsafe {
        if libc::getrlimit(resource, &mut now) != 0 {
            return Err(io::Error::last_os_error());
        }
        let hard = hard.min(now.rlim_max);
        let new = libc::rlimit {
            rlim_cur: soft.min(hard).min(now.rlim_cur),
            rlim_max: hard,
        };
        if libc::setrlimit(resource, &new) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a child of its own: the limit holds, and a second call cannot raise it.
    #[test]
    fn a_limit_is_lowered_and_never_raised() {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "ulimit -S -f; ulimit -H -f"]);
        // SAFETY: `lower` makes two system calls on a struct on the stack, nothing else.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                lower(libc::RLIMIT_FSIZE, 512 * 1024, 1024 * 1024)?;
                lower(libc::RLIMIT_FSIZE, 1 << 40, 1 << 40)
            })
        };
        let o = cmd.output().unwrap();
        // `ulimit -f` counts blocks of 512 bytes (dash) or 1024 (bash).
        let said: Vec<u64> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.trim().parse().unwrap())
            .collect();
        assert!(
            said == [1024, 2048] || said == [512, 1024],
            "soft and hard {said:?}: {o:?}"
        );
    }
}
