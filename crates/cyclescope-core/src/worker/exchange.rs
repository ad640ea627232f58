//! Reading a worker's two pipes from one thread: `poll` on both with a bounded wait, protocol
//! lines cut from its stdout, the tail of its stderr kept. No thread ever blocks on a pipe, so
//! a descendant of the candidate that holds a pipe open cannot hold the caller. Lines are
//! bounded in length; a line that is too long or unterminated at the end is handed on as
//! what it is (not a protocol line), never dropped silently.

use std::io::Read;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::process::{ChildStderr, ChildStdout};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::{STDERR_TAIL_BYTES, UNDECODED_MARK};

/// The longest protocol line accepted (a full batch of samples is about 90 KB).
pub(super) const MAX_LINE_BYTES: usize = 1 << 20;

/// Bytes read from the two pipes at most per `drain` once the worker has ended: whatever the
/// worker wrote before it ended fits in the pipe buffers; more is a descendant still writing.
const DRAIN_LIMIT_BYTES: usize = 4 << 20;

/// What the reader found that is not a well-formed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Framing {
    TooLong,
    Unterminated,
}

/// What receives each line (or framing fault) and may stop the exchange with an error.
pub(super) type OnLine<'a, E> = dyn FnMut(Result<&[u8], Framing>) -> Result<(), E> + 'a;

pub(super) struct Exchange {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// The worker's pidfd, readable once it has ended: a wait for output ends then too. Its
    /// pipes reach their end a moment before it becomes a zombie, and a wait only for them
    /// would sleep through that moment.
    exit: Option<OwnedFd>,
    pending: Vec<u8>,
    tail: Vec<u8>,
    /// An allocator said memory was refused somewhere in stderr (the tail may have lost it
    /// behind a backtrace): evidence for the address-space limit.
    allocation_refused: bool,
    /// The first whole stderr line holding `UNDECODED_MARK` (valgrind's report of an
    /// instruction it cannot decode), kept wherever it falls: the tail loses it behind
    /// valgrind's explanation and stack when the path names are long.
    undecoded: Option<String>,
}

impl Exchange {
    pub(super) fn new(stdout: Option<ChildStdout>, stderr: Option<ChildStderr>) -> Self {
        Self {
            stdout,
            stderr,
            exit: None,
            pending: Vec::new(),
            tail: Vec::new(),
            allocation_refused: false,
            undecoded: None,
        }
    }

    /// Ends every wait for output when the process `pid` (a child not yet reaped, so the
    /// number is still its own) ends. Without pidfds (before Linux 5.3) waits end as before.
    pub(super) fn wake_on_exit(&mut self, pid: u32) {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1; the
        // descriptor is owned from here on.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if let Ok(fd) = i32::try_from(fd)
            && fd >= 0
        {
            // SAFETY: `fd` was just returned by the kernel and nothing else owns it.
            self.exit = Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }

    /// Waits up to `wait` for output and reads what is there, handing each complete stdout
    /// line to `on_line` (which may stop the exchange with an error). Returns the bytes read.
    pub(super) fn pump<E>(
        &mut self,
        wait: Duration,
        on_line: &mut OnLine<'_, E>,
    ) -> Result<usize, E> {
        let (out_ready, err_ready) = match (&self.stdout, &self.stderr, &self.exit) {
            (None, None, None) => {
                std::thread::sleep(wait.min(Duration::from_millis(10)));
                return Ok(0);
            }
            (out, err, exit) => {
                let mut fds: Vec<PollFd> = out
                    .iter()
                    .map(|o| PollFd::new(o.as_fd(), PollFlags::POLLIN))
                    .chain(
                        err.iter()
                            .map(|e| PollFd::new(e.as_fd(), PollFlags::POLLIN)),
                    )
                    .chain(
                        exit.iter()
                            .map(|x| PollFd::new(x.as_fd(), PollFlags::POLLIN)),
                    )
                    .collect();
                let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
                match poll(&mut fds, PollTimeout::from(ms)) {
                    Ok(0) | Err(_) => return Ok(0),
                    Ok(_) => {}
                }
                let ready = |f: &PollFd| f.revents().is_some_and(|r| !r.is_empty());
                let out_ready = out.is_some() && ready(&fds[0]);
                let err_ready = err.is_some() && ready(&fds[usize::from(out.is_some())]);
                (out_ready, err_ready)
            }
        };
        let mut buf = [0u8; 65536];
        let mut total = 0;
        if err_ready && let Some(err) = self.stderr.as_mut() {
            match err.read(&mut buf) {
                Ok(0) | Err(_) => self.stderr = None,
                Ok(n) => {
                    total += n;
                    // Looked for across the chunk's start too: a phrase may be split.
                    let from = self.tail.len().saturating_sub(64);
                    self.tail.extend_from_slice(&buf[..n]);
                    self.allocation_refused |= super::limits::ALLOCATION_REFUSED
                        .iter()
                        .any(|w| contains(&self.tail[from..], w.as_bytes()));
                    if self.undecoded.is_none() {
                        self.undecoded = whole_line_with(&self.tail, UNDECODED_MARK);
                    }
                    if self.tail.len() > 4 * STDERR_TAIL_BYTES {
                        self.tail.drain(..self.tail.len() - STDERR_TAIL_BYTES);
                    }
                }
            }
        }
        if out_ready && let Some(out) = self.stdout.as_mut() {
            match out.read(&mut buf) {
                Ok(0) | Err(_) => {
                    self.stdout = None;
                    if !self.pending.is_empty() {
                        self.pending.clear();
                        on_line(Err(Framing::Unterminated))?;
                    }
                }
                Ok(n) => {
                    total += n;
                    self.pending.extend_from_slice(&buf[..n]);
                    self.split_lines(on_line)?;
                }
            }
        }
        Ok(total)
    }

    fn split_lines<E>(&mut self, on_line: &mut OnLine<'_, E>) -> Result<(), E> {
        let mut start = 0;
        while let Some(nl) = self.pending[start..].iter().position(|&b| b == b'\n') {
            let line = &self.pending[start..start + nl];
            start += nl + 1;
            let r = if line.len() > MAX_LINE_BYTES {
                on_line(Err(Framing::TooLong))
            } else {
                on_line(Ok(line))
            };
            if let Err(e) = r {
                self.pending.clear();
                return Err(e);
            }
        }
        self.pending.drain(..start);
        if self.pending.len() > MAX_LINE_BYTES {
            self.pending.clear();
            on_line(Err(Framing::TooLong))?;
        }
        Ok(())
    }

    /// Once the worker has ended: reads what it left in the pipes without waiting for
    /// anyone else holding them. A partial line left over is reported as unterminated.
    pub(super) fn drain<E>(&mut self, on_line: &mut OnLine<'_, E>) -> Result<(), E> {
        let mut read = 0;
        while read < DRAIN_LIMIT_BYTES {
            match self.pump(Duration::ZERO, on_line)? {
                0 => break,
                n => read += n,
            }
        }
        if !self.pending.is_empty() {
            self.pending.clear();
            on_line(Err(Framing::Unterminated))?;
        }
        Ok(())
    }

    /// Whether an allocator's refusal appeared anywhere in stderr.
    pub(super) fn allocation_refused(&self) -> bool {
        self.allocation_refused
    }

    /// The first stderr line that named an instruction valgrind cannot decode.
    pub(super) fn undecoded(&self) -> Option<String> {
        self.undecoded.clone()
    }

    /// The last `STDERR_TAIL_BYTES` bytes of stderr, as text.
    pub(super) fn stderr_tail(&self) -> String {
        let keep = &self.tail[self.tail.len().saturating_sub(STDERR_TAIL_BYTES)..];
        String::from_utf8_lossy(keep).into_owned()
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The first complete line (ended by a newline) of `text` that holds `mark`.
fn whole_line_with(text: &[u8], mark: &str) -> Option<String> {
    let whole = &text[..text.iter().rposition(|&b| b == b'\n')?];
    whole
        .split(|&b| b == b'\n')
        .find(|l| contains(l, mark.as_bytes()))
        .map(|l| String::from_utf8_lossy(l).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valgrinds_undecoded_instruction_line_is_kept_once_whole() {
        let mark = UNDECODED_MARK;
        assert_eq!(
            whole_line_with(b"vex amd64->IR: unhandled instruction by", mark),
            None
        );
        let text =
            b"==1== Callgrind\nvex amd64->IR: unhandled instruction bytes: 0x62 0xF1\nvex x\n";
        assert_eq!(
            whole_line_with(text, mark).as_deref(),
            Some("vex amd64->IR: unhandled instruction bytes: 0x62 0xF1")
        );
    }

    #[test]
    fn an_allocators_refusal_is_found_even_when_split_across_reads() {
        let text = b"Cannot allocate memory";
        assert!(contains(b"mmap: Cannot allocate memory\n", text));
        assert!(!contains(b"Cannot alloc", text));
        // Two reads that cut the phrase: the second is searched with the first's end.
        let mut tail = b"x: Cannot al".to_vec();
        let from = tail.len().saturating_sub(64);
        tail.extend_from_slice(b"locate memory\n");
        assert!(contains(&tail[from..], text));
    }
}
