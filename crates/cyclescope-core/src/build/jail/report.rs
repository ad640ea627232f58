//! What the compiler's jail says of itself once per build: who the compiler runs as, and
//! what the kernel does not let the jail enforce here. Values only; the frontends print them.

/// Something the kernel does not let the jail do, with what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JailGap {
    /// No network namespace: the compiler (and a plugin it loads) may reach the network.
    NoNetworkNamespace,
    /// No Landlock: the compiler may read every file its user (`uid`) may.
    NoLandlock { why: String, uid: u32 },
    /// No control group: memory rests on RLIMIT_AS alone, processes on nothing.
    NoCgroup(String),
}

impl std::fmt::Display for JailGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JailGap::NoNetworkNamespace => write!(
                f,
                "the compiler runs without a network namespace of its own (creating one needs \
                 CAP_SYS_ADMIN, or a user namespace this kernel does not give this user; run the \
                 build as root to cut it off the network)"
            ),
            JailGap::NoLandlock { why, uid } => write!(
                f,
                "Landlock is not available ({why}): the compiler's reads are NOT restricted, \
                 a source may #include any file uid {uid} can read"
            ),
            JailGap::NoCgroup(why) => write!(
                f,
                "no control group for the compiler ({why}): its memory is bounded only by \
                 its own RLIMIT_AS, and the number of processes it starts by nothing"
            ),
        }
    }
}

/// Who the compiler runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompilerUser {
    /// cyclescope is root: the compiler is the workers' unprivileged user.
    Unprivileged { uid: u32, gid: u32 },
    /// cyclescope is not root: the compiler runs as this user, it has no other to give.
    ThisUser { uid: u32 },
}

impl CompilerUser {
    pub fn uid(&self) -> u32 {
        match self {
            CompilerUser::Unprivileged { uid, .. } | CompilerUser::ThisUser { uid } => *uid,
        }
    }
}

impl std::fmt::Display for CompilerUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompilerUser::Unprivileged { uid, gid } => write!(
                f,
                "the compiler runs as uid {uid} (gid {gid}), not root, with no capabilities, on \
                 a private copy of the submission's files"
            ),
            CompilerUser::ThisUser { uid } => write!(
                f,
                "the compiler runs as this user (uid {uid}), with no capabilities"
            ),
        }
    }
}
