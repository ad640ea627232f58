//! A worker's job travels on its stdin, right after the session token, and never on its
//! command line: every worker of a program starts with the same arguments (`worker`), the
//! same environment and the same descriptors, and reads what it is to do only once its
//! system-call filter is in force. So no job kind can be told from `/proc/self/cmdline`, and
//! a process listing shows no job's parameters.
//!
//! The block is a decimal byte count on a line of its own, then that many bytes: each
//! argument followed by a NUL (an argument holds no NUL, as no path does). The `no_std` trial
//! worker reads the same block (`cyclescope_worker::setup::read_job`) into a buffer of 4 KiB, which
//! its jobs never approach (its library is a descriptor's short path).

use std::io::{self, BufRead, Read};

/// The most a `cyclescope worker` job may take (paths of the KAT's folder and its oracle).
/// With the token it fits in a pipe's buffer (64 KiB), so the engine's write never waits on
/// the worker.
pub(crate) const MAX_BYTES: usize = 16 * 1024;

/// The block of `args`; an argument with a NUL in it cannot be sent.
pub(crate) fn encode(args: &[String]) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    for a in args {
        if a.contains('\0') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a worker argument holds a NUL byte: {:?}",
                    a.replace('\0', "\\0")
                ),
            ));
        }
        body.extend_from_slice(a.as_bytes());
        body.push(0);
    }
    if body.len() > MAX_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a worker job of {} bytes (at most {MAX_BYTES})", body.len()),
        ));
    }
    let mut block = format!("{}\n", body.len()).into_bytes();
    block.extend_from_slice(&body);
    Ok(block)
}

/// Reads one block from `r` (at most `max` bytes of arguments): the arguments.
pub fn read(r: &mut impl BufRead, max: usize) -> io::Result<Vec<String>> {
    let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
    let mut head = Vec::new();
    r.take(24).read_until(b'\n', &mut head)?;
    let len: usize = std::str::from_utf8(&head)
        .ok()
        .and_then(|h| h.strip_suffix('\n'))
        .and_then(|h| h.parse().ok())
        .ok_or_else(|| bad("no job after the session token".into()))?;
    if len > max {
        return Err(bad(format!("a job of {len} bytes (at most {max})")));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let Some(body) = body.strip_suffix(&[0]) else {
        return Ok(Vec::new());
    };
    body.split(|&b| b == 0)
        .map(|a| {
            String::from_utf8(a.to_vec())
                .map_err(|_| bad("a job argument that is not UTF-8".into()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_reads_back_as_it_was_sent_and_a_bad_one_is_named() {
        let args: Vec<String> = ["kat", "--out-dir=/a b/c\nd", ""]
            .map(String::from)
            .to_vec();
        let block = encode(&args).unwrap();
        let mut r = io::BufReader::new(&block[..]);
        assert_eq!(read(&mut r, MAX_BYTES).unwrap(), args);
        assert_eq!(
            read(&mut io::BufReader::new(&b"0\n"[..]), 9).unwrap(),
            Vec::<String>::new()
        );
        let e = read(&mut io::BufReader::new(&block[..]), 4).unwrap_err();
        assert!(e.to_string().contains("at most 4"), "{e}");
        let e = read(&mut io::BufReader::new(&b""[..]), 9).unwrap_err();
        assert!(e.to_string().contains("no job"), "{e}");
        assert!(encode(&["a\0b".to_string()]).is_err());
    }
}
