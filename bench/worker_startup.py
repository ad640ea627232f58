#!/usr/bin/env python3
"""Worker start-up benchmark (not a test): how long the engine takes from starting a worker to
the worker's first protocol line, and to being done with it, per kind of worker, for one or
more cyclescope binaries side by side.

Two ways of timing, both from outside the binaries (they print no timings of their own):

* traced: each command runs under `strace -f --seccomp-bpf` stopping only on the few calls
  that mark the phases (mkdir/rmdir of the worker's control groups, clone, execve, write,
  exit_group, wait4), with their times (`-ttt`). Per worker: `start` is the engine's mkdir of
  the worker's control group (the first step of its set-up; the clone where there is none),
  `first line` the worker's first write that starts with a session token (32 hex digits and
  a space), `end` the later of the engine's wait4 that reaps it and the rmdir of its groups;
  `its exit → reaped` is the worker's exit_group to the engine's wait4.
  Each stop costs a switch to strace and back, so these figures are a little high; the
  difference between binaries is what they are for.
  The engine kills a worker it finds in ptrace's stop state (`t`: stopped, by all it can
  tell). One killed after its first line counts for the first line only; a command whose
  worker was killed before it is run again (the table says how often).
* untraced: `cyclescope hash` end to end, against the same command stopped by a bad `--bits`
  before any worker starts (same catalog, same start of the engine). The difference of the
  medians is one hash worker, start to end, with nothing traced.

Kinds: `hash` (`cyclescope hash`: a one-shot `cyclescope worker hash`), `kat` (`cyclescope kat`:
the KAT worker; its end includes generating the two small KAT files), `trial` (`cyclescope run`
at 32 bytes, one short trial: the no_std `cyclescope-worker`; its end includes the trial).

Run as root from the repository root (the engine's protections need root: privilege drop,
namespaces, control groups). Do not run it next to a busy loop; other load spreads the p90.

usage: bench/worker_startup.py --exe [LABEL=]PATH [--exe [LABEL=]PATH ...] [--runs 30]
                               [--kinds hash,kat,trial] [--instance sm3hash-256]
                               [--keep-traces DIR]
"""
import argparse, os, pathlib, re, shutil, statistics, subprocess, sys, tempfile, time

TRACED = "mkdir,rmdir,clone,clone3,fork,vfork,execve,write,exit_group,wait4"
LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")
TOKEN_WRITE = re.compile(r'^write\(\d+, "[0-9a-f]{32} ')
GROUP = re.compile(r'"[^"]*/(cyclescope-\d+-worker-\d+)"')


def percentile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def ms(values):
    if not values:
        return "–"
    return f"{1e3 * statistics.median(values):7.1f} / {1e3 * percentile(values, 0.9):7.1f}"


def commands(exe, kind, instance, out):
    base = [str(exe)]
    if kind == "hash":
        return base + ["hash", instance, "--hex", ""]
    if kind == "kat":
        return base + ["kat", instance, "--out", str(out)]
    if kind == "trial":
        return base + ["run", instance, "--lengths", "32", "--trials", "1", "--trial-target", "0.01",
                       "--no-reference-jobs", "--allow-unfixed-host", "--out", str(out)]
    raise ValueError(kind)


def is_worker(argv):
    """Whether an execve line starts a worker (`… worker`, whatever its job)."""
    return re.search(r'\["[^"]*", "worker"\]', argv) is not None


# The engine's write of a worker's session token and job (`worker::job_block`): the job's first
# word names its kind. Workers get their job on stdin, not on their command line.
JOB_WRITE = re.compile(r'^write\(\d+, "[0-9a-f]{32}\\n\d+\\n([a-z-]+)\\0')
KINDS = {"hash": "hash", "kat": "kat", "measure": "trial"}


def parse(trace):
    """Per worker pid: kind, start, first line, end (seconds, absolute), from one strace -f log."""
    pending = {}  # pid -> the call text of an unfinished call
    clones = []  # (time, tid, child pid)
    mkdirs = []  # (time, tid, group name)
    workers = {}
    reaped, removed, killed, exited = {}, {}, set(), {}
    for raw in trace.splitlines():
        m = LINE.match(raw)
        if not m:
            continue
        pid, t, call = int(m.group(1)), float(m.group(2)), m.group(3)
        if call.endswith("<unfinished ...>"):
            pending[pid] = (t, call[: -len("<unfinished ...>")])
            continue
        r = re.match(r"<\.\.\. (\w+) resumed>(.*)$", call)
        if r:
            t0, head = pending.pop(pid, (t, r.group(1) + "("))
            t, call = t0, head + r.group(2)
        if call.startswith("+++ killed"):
            killed.add(pid)
        if call.startswith("exit_group("):
            exited[pid] = t
        if call.startswith(("clone(", "clone3(", "fork(", "vfork(")):
            child = re.search(r"= (\d+)\s*$", call)
            if child and "CLONE_THREAD" not in call:
                clones.append((t, pid, int(child.group(1))))
        elif call.startswith("mkdir(") and (g := GROUP.search(call)):
            mkdirs.append((t, pid, g.group(1)))
        elif call.startswith("execve(") and call.rstrip().endswith("= 0"):
            if is_worker(call) and pid not in workers:
                workers[pid] = {"kind": None, "exec": t, "first": None, "groups": set()}
        elif call.startswith("write(") and pid not in workers and (j := JOB_WRITE.match(call)):
            # The job goes to the worker started last that has none yet.
            waiting = [w for w in workers.values() if w["kind"] is None]
            if waiting:
                waiting[-1]["kind"] = KINDS.get(j.group(1), j.group(1))
        elif call.startswith("write(") and pid in workers and workers[pid]["first"] is None:
            if TOKEN_WRITE.match(call):
                workers[pid]["first"] = t
        elif call.startswith("wait4("):
            got = re.search(r"= (\d+)\s*$", call)
            if got:
                reaped[int(got.group(1))] = t
        elif call.startswith("rmdir(") and (g := GROUP.search(call)):
            removed[g.group(1)] = max(removed.get(g.group(1), 0), t)
    rows = []
    for pid, w in workers.items():
        clone = next(((t, tid) for t, tid, c in clones if c == pid), None)
        if clone is None or w["first"] is None:
            continue
        start = clone[0]
        # The engine's own set-up of this worker: the group it made last before the clone
        # (one folder per hierarchy, one name).
        made = [(t, g) for t, tid, g in mkdirs if tid == clone[1] and 0 <= clone[0] - t < 0.05]
        group = None
        if made:
            group = max(made)[1]
            start = min(t for t, g in made if g == group)
        end = None
        if pid not in killed and pid in reaped:
            end = max(reaped[pid], removed.get(group, 0))
        rows.append({"kind": w["kind"], "first": w["first"] - start,
                     "end": None if end is None else end - start,
                     "reap": reaped[pid] - exited[pid] if end and pid in exited else None})
    return rows


def traced_run(exe, kind, instance, tmp, keep, i):
    """The workers of `kind` one traced command started, and how many tries that took: the
    engine kills a worker it finds in ptrace's stop state (it is stopped, by all it can
    tell) before its first line now and then; such a run is tried again, up to 4 times."""
    for attempt in range(1, 5):
        out = tmp / f"{kind}-{i}"
        log = tmp / f"{kind}-{i}.strace"
        cmd = ["strace", "-f", "--seccomp-bpf", "-ttt", "-s", "100", "-e", f"trace={TRACED}",
               "-e", "signal=none", "-o", str(log)] + commands(exe, kind, instance, out)
        subprocess.run(cmd, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = [r for r in parse(log.read_text()) if r["kind"] == kind]
        if keep:
            shutil.copy(log, keep / f"{exe.name}-{kind}-{i}-{attempt}.strace")
        shutil.rmtree(out, ignore_errors=True)
        log.unlink()
        if rows:
            return rows, attempt
    return [], attempt


def wall(cmd, cwd):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def untraced_hash(exe, instance, tmp, runs):
    full = [str(exe), "hash", instance, "--hex", ""]
    # Refused after the catalog is read, before any worker: `--bits` longer than the message.
    bare = [str(exe), "hash", instance, "--hex", "00", "--bits", "9"]
    if subprocess.run(bare, cwd=tmp, capture_output=True).returncode == 0:
        sys.exit(f"{exe}: `hash --bits 9` of one byte did not fail: no baseline without a worker")
    with_worker, without = [], []
    for _ in range(runs):
        with_worker.append(wall(full, tmp))
        without.append(wall(bare, tmp))
    return with_worker, without


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", action="append", required=True, help="[LABEL=]PATH, repeatable")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--kinds", default="hash,kat,trial")
    ap.add_argument("--instance", default="sm3hash-256")
    ap.add_argument("--keep-traces", type=pathlib.Path)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the workers' protections (and their cost) need it")
    if not shutil.which("strace"):
        sys.exit("strace is not installed")
    exes = []
    for e in a.exe:
        label, _, path = e.rpartition("=")
        path = pathlib.Path(path).resolve()
        if not path.is_file():
            sys.exit(f"--exe {e}: no such file")
        exes.append((label or path.parent.parent.parent.name, path))
    kinds = a.kinds.split(",")
    if a.keep_traces:
        a.keep_traces.mkdir(parents=True, exist_ok=True)
    results, retries = {}, {}
    with tempfile.TemporaryDirectory(prefix="worker-startup-") as tmp:
        tmp = pathlib.Path(tmp)
        for label, exe in exes:
            # Warm the page cache and the caches the engine keeps (bundled worker, host check).
            for kind in kinds:
                traced_run(exe, kind, a.instance, tmp, None, "warm")
        # Binaries interleaved run by run: a change of load hits all of them alike.
        for i in range(a.runs):
            for label, exe in exes:
                for kind in kinds:
                    rows, tries = traced_run(exe, kind, a.instance, tmp, a.keep_traces, i)
                    results.setdefault((label, kind), []).extend(rows)
                    retries[(label, kind)] = retries.get((label, kind), 0) + tries - 1
            print(f"\rrun {i + 1}/{a.runs}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        walls = {label: untraced_hash(exe, a.instance, tmp, a.runs) for label, exe in exes}
    print(f"worker start-up, ms, median / p90 over {a.runs} runs (traced: strace -f --seccomp-bpf)")
    print()
    print(f"| binary | worker | n | start → first line | start → end | its exit → reaped "
          f"| no end (killed in a ptrace stop) | runs tried again |")
    print("|---|---|---|---|---|---|---|---|")
    for label, _ in exes:
        for kind in kinds:
            rows = results.get((label, kind), [])
            firsts = [r["first"] for r in rows]
            ends = [r["end"] for r in rows if r["end"] is not None]
            reaps = [r["reap"] for r in rows if r["reap"] is not None]
            print(f"| {label} | {kind} | {len(rows)} | {ms(firsts)} | {ms(ends)} | {ms(reaps)} "
                  f"| {len(rows) - len(ends)} | {retries.get((label, kind), 0)} |")
    print()
    print(f"`cyclescope hash` untraced, ms, median / p90 over {a.runs} runs")
    print()
    print("| binary | with its worker | stopped before the worker | one worker (Δ medians) |")
    print("|---|---|---|---|")
    for label, _ in exes:
        w, b = walls[label]
        delta = 1e3 * (statistics.median(w) - statistics.median(b))
        print(f"| {label} | {ms(w)} | {ms(b)} | {delta:7.1f} |")


if __name__ == "__main__":
    main()
