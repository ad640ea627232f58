#!/usr/bin/env python3
"""ETA benchmark (not a test): how far off is the ETA of a default run on a loaded CPU?

It runs `cyclescope run` on three bundled instances with the config's lengths and the guide's
trials, the way a user would, with its stderr on a pseudo-terminal so the status line (and its
ETA) is redrawn at every progress event, and stamps every ETA it shows. The run queues for its
CPU in the same lock folder as the test suite (`CYCLESCOPE_LOCK_WAIT`), and a busy loop pinned to
that CPU starts only once the run holds it (at its first KAT line) and stops when it ends. From
the run's real end it prints, at 10 %, 25 %, 50 % and 75 % of the command's elapsed time, the
last ETA shown by then against the seconds truly left, and their error.

usage: bench/eta_loaded.py [--exe target/release/cyclescope] [--cpu 1]
                           [--instances pseudoXOF-512,sm3hash-256,pseudohash-512] [--keep]
                           [--trace FILE]
(--keep leaves the run folder, its journal included, and says where; --trace writes every line
the status showed, with the second its first bytes came, and the truly left seconds beside each
ETA, and keeps the run's journal beside it as FILE.journal.jsonl for bench/eta_replay.py)
"""
import argparse, os, pty, re, select, shutil, subprocess, tempfile, time

ETA = re.compile(r"ETA (?:(\d+) h (\d+) min|(\d+) min (\d+) s|(\d+) s)")


def seconds(m):
    h, hm, mi, ms, s = m.groups()
    if h is not None:
        return int(h) * 3600 + int(hm) * 60
    if mi is not None:
        return int(mi) * 60 + int(ms)
    return int(s)


def run(a, work):
    env = dict(os.environ)
    env["CYCLESCOPE_LOCK_DIR"] = os.path.join(tempfile.gettempdir(), "cyclescope-test-cpus")
    env["CYCLESCOPE_LOCK_WAIT"] = "3600"
    env["XDG_DATA_HOME"] = os.path.join(work, "xdg")
    master, slave = pty.openpty()
    cmd = [a.exe, "run", *a.instances.split(","), "--cpu", str(a.cpu), "--allow-unfixed-host",
           "--out", os.path.join(work, "run")]
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave,
                         env=env)
    os.close(slave)
    samples, busy, held_at, pending, lines, pending_at = [], None, None, "", [], 0.0
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                if p.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 65536).decode(errors="replace")
            except OSError:
                break
            now = time.monotonic() - start
            # A line is stamped when its first bytes came: a status line is redrawn in place
            # and ends only when the next output begins.
            began = pending_at if pending else now
            pending += chunk
            *parts, pending = re.split(r"[\r\n]", pending)
            stamps = [began] + [now] * len(parts)
            pending_at = stamps[len(parts)]
            for now, part in zip(stamps, parts):
                part = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", part).strip()
                if not part:
                    continue
                lines.append((now, part))
                if busy is None and part.startswith("KAT "):
                    held_at = now
                    busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c",
                                             "while :; do :; done"])
                m = ETA.search(part)
                if m:
                    samples.append((now, seconds(m)))
        p.wait()
        end = time.monotonic() - start
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        os.close(master)
    return samples, end, held_at, p.returncode, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default="target/release/cyclescope")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--instances", default="pseudoXOF-512,sm3hash-256,pseudohash-512")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--trace")
    a = ap.parse_args()
    if not os.path.exists(a.exe):
        subprocess.run(["cargo", "build", "--release"], check=True)
    work = tempfile.mkdtemp(prefix="eta-bench-")
    samples, end, held_at, rc, lines = run(a, work)
    journal = os.path.join(work, "run", "journal.jsonl")
    if a.trace and os.path.exists(journal):
        # The run's own plans and event times, for bench/eta_replay.py.
        shutil.copyfile(journal, a.trace + ".journal.jsonl")
    if a.keep:
        print(f"run folder kept: {work}/run")
    else:
        subprocess.run(["rm", "-rf", work])
    if rc != 0:
        print("\n".join(text for _, text in lines[-20:]))
    if a.trace:
        with open(a.trace, "w") as f:
            for t, text in lines:
                m = ETA.search(text)
                truth = f"  [left {end - t:.0f} s]" if m else ""
                f.write(f"{t:8.1f}  {text}{truth}\n")
    print(f"run of {a.instances} on CPU {a.cpu}: exit {rc}, {end:.1f} s in all, busy loop from "
          f"{held_at if held_at is None else round(held_at, 1)} s, {len(samples)} ETAs shown")
    print("| share of the run | at | ETA shown | truly left | error |")
    print("|---|---|---|---|---|")
    for share in (0.10, 0.25, 0.50, 0.75):
        at = share * end
        shown = [s for s in samples if s[0] <= at]
        left = end - at
        if not shown:
            print(f"| {share:.0%} | {at:.1f} s | none yet | {left:.1f} s | — |")
            continue
        t, eta = shown[-1]
        # The ETA as of `at`: what it said, less the seconds since it said it.
        eta_now = max(eta - (at - t), 0.0)
        print(f"| {share:.0%} | {at:.1f} s | {eta_now:.0f} s (shown at {t:.1f} s) | {left:.1f} s "
              f"| {100 * (eta_now - left) / left:+.0f} % |")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
