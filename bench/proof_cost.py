#!/usr/bin/env python3
"""Proof-of-work benchmark (not a test): what the outside checks of a run cost, and how far the
fresh-message probe's rule stands from honest libraries.

Runs the default `run` of three bundled instances (pseudoXOF-512, sm3hash-256, pseudohash-512:
every guide length, the guide's trials) with each given binary, alternating, `--rounds` times,
and prints each run's wall time, the median per binary, and the change of the median from the
first binary to each other. With `--loaded`, a busy loop runs pinned to the measurement CPU
(`--cpu`, default 1) for the whole benchmark: the setting where preemption doubles the guide's
loop mean.

For binaries that record the probe (`cyclescope.fresh_probe`), it also prints the largest and
smallest ratio of the probe's CPU time per call (the kernel's clock) to the guide's fastest trial,
over every job: how near honest libraries come to the refusal line (2, plus three times the loop's own cost a call);
and where they record the probe's twin, the ratio of the probe's CPU time per call to the twin's (the line: 1.35).

With `--breakdown`, it instead runs the same `run` once per binary under `strace -f` (stops only
on execve, write, exit_group and wait4) and prints where the wall time went: for each kind of
worker (the KAT files' tables and chain, the conformance checks' framed tables and the KAT
worker's, metadata probe, the table of
known answers and reference digests, `hash` jobs — the probe's spot checks —, trials,
fresh-message probe, its twin, loop-only probe), how many ran and the sum of their lives
from exec to reaped, beside the run's whole wall time. The kind comes from the job the engine
writes on each worker's stdin (`worker::job_block`). Tracing slows every stop a little; the
shares are what it is for.

usage: bench/proof_cost.py --exe OLD --exe NEW [--rounds 3] [--loaded] [--cpu 1] [--breakdown]
"""
import argparse, glob, json, os, re, statistics, subprocess, tempfile, time

INSTANCES = ["pseudoXOF-512", "sm3hash-256", "pseudohash-512"]


def fresh_env(out):
    """The environment of one run: its own cache and data folders, so that no run reuses a KAT
    pass another binary cached (a binary whose checks' version is newer re-runs the gate where
    an older one would take the newer's pass)."""
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = os.path.join(out, "cache")
    env["XDG_DATA_HOME"] = os.path.join(out, "data")
    return env


def one_run(exe, cpu):
    out = tempfile.mkdtemp(prefix="proof-cost-")
    started = time.monotonic()
    p = subprocess.run([exe, "run", *INSTANCES, "--cpus", str(cpu), "--allow-unfixed-host",
                        "--out", os.path.join(out, "run")], capture_output=True, text=True,
                       env=fresh_env(out))
    wall = time.monotonic() - started
    ratios, twins, failed = [], [], []
    for f in glob.glob(os.path.join(out, "run", "records", "*", "*.json")):
        r = json.load(open(f))
        add = r.get("cyclescope") or {}
        if add.get("failure"):
            failed.append(f"{r['label']} {r['input_bytes']} B: {add['failure'][:100]}")
        probe = add.get("fresh_probe")
        if probe:
            ratios.append((probe["ratio"], r["label"], r["input_bytes"]))
            if probe.get("twin_ns_per_call"):
                twins.append((probe["cpu_ns_per_call"] / probe["twin_ns_per_call"], r["label"],
                              r["input_bytes"]))
    subprocess.run(["rm", "-rf", out])
    return wall, p.returncode, ratios, twins, failed


LINE = re.compile(r"^(\d+)\s+(\d+\.\d+)\s+(.*)$")
JOB_WRITE = re.compile(r'^write\(\d+, "[0-9a-f]{32}\\n\d+\\n(.*)')


def job_kind(job):
    """A worker's kind from the start of its job as strace shows it (NULs as \\0)."""
    words = job.split("\\0")
    first = words[0]
    if first == "measure":
        # The KAT files' calls, and the known answers with the reference digests: tables of
        # the engine's messages; a `KAT_Loop` chain.
        if "--unchecked-input" in words:
            return "KAT file (table)"
        if "--chain" in words:
            return "KAT_Loop (chain)"
        if "--framed" in words:
            return "conformance, the engine's (framed table)"
        if "--table" in words:
            return "known answers and reference digests (table)"
        # A digest of a message of the engine's is a trial of one call on that message.
        if "--message-fd" in words:
            return "hash (reference, known answer, spot check)"
        if "--loop-only" in words:
            return "loop-only probe"
        if "--repeat" in words:
            return "fresh-message probe's twin"
        if "--fresh-seed" in words:
            return "fresh-message probe"
        if "--count" in words:
            return "count"
        return "trial"
    return {"hash": "hash (reference, known answer, spot check)", "kat": "conformance, the KAT worker's",
            "probe": "metadata probe"}.get(first, first)


def breakdown(exe, cpu):
    out = tempfile.mkdtemp(prefix="proof-cost-")
    trace = os.path.join(out, "trace")
    started = time.monotonic()
    subprocess.run(["strace", "-f", "--seccomp-bpf", "-qq", "-ttt", "-s", "600", "-o", trace,
                    "-e", "trace=clone,clone3,execve,write,wait4", exe, "run", *INSTANCES, "--cpus",
                    str(cpu), "--allow-unfixed-host", "--out", os.path.join(out, "run")],
                   capture_output=True, text=True, env=fresh_env(out))
    wall = time.monotonic() - started
    # The engine thread that starts a worker clones it, then writes its token and job: the job
    # belongs to the last child that thread cloned.
    execs, kinds, reaped, cloned = {}, {}, {}, {}
    pending = {}
    for raw in open(trace, errors="replace"):
        m = LINE.match(raw)
        if not m:
            continue
        pid, t, call = int(m.group(1)), float(m.group(2)), m.group(3)
        if call.endswith("<unfinished ...>"):
            pending[pid] = call[: -len("<unfinished ...>")]
            continue
        if r := re.match(r"<\.\.\. \w+ resumed>(.*)$", call):
            call = pending.pop(pid, "") + r.group(1)
        if call.startswith(("clone(", "clone3(")) and "CLONE_THREAD" not in call:
            if c := re.search(r"= (\d+)\s*$", call):
                cloned[pid] = int(c.group(1))
        elif call.startswith("execve(") and '"worker"]' in call and call.rstrip().endswith("= 0"):
            execs.setdefault(pid, t)
        elif (j := JOB_WRITE.match(call)) and pid in cloned:
            kinds[cloned.pop(pid)] = job_kind(j.group(1))
        elif call.startswith("wait4(") and (r := re.search(r"= (\d+)\s*$", call)):
            reaped[int(r.group(1))] = t
    total = {}
    for pid, t0 in execs.items():
        k = kinds.get(pid, "unknown")
        n, secs = total.get(k, (0, 0.0))
        total[k] = (n + 1, secs + (reaped.get(pid, t0) - t0))
    subprocess.run(["rm", "-rf", out])
    print(f"{exe}: {wall:.1f} s in all (traced)")
    for k, (n, secs) in sorted(total.items(), key=lambda kv: -kv[1][1]):
        print(f"  {k:45} {n:5} workers  {secs:7.1f} s  {100 * secs / wall:5.1f} %")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loaded", action="store_true")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--breakdown", action="store_true")
    a = ap.parse_args()
    if a.breakdown:
        for exe in a.exe:
            breakdown(exe, a.cpu)
        return
    busy = None
    if a.loaded:
        busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c", "while :; do :; done"])
    try:
        walls = {e: [] for e in a.exe}
        ratios, twins = [], []
        for rnd in range(a.rounds):
            for exe in a.exe:
                wall, rc, rs, ts, failed = one_run(exe, a.cpu)
                walls[exe].append(wall)
                ratios.extend(rs)
                twins.extend(ts)
                print(f"round {rnd + 1} {exe}: {wall:.1f} s, exit {rc}, {len(failed)} failed")
                for f in failed:
                    print(f"    {f}")
    finally:
        if busy:
            busy.kill()
    base = statistics.median(walls[a.exe[0]])
    for exe in a.exe:
        m = statistics.median(walls[exe])
        print(f"{exe}: median {m:.1f} s (min {min(walls[exe]):.1f}, max {max(walls[exe]):.1f}),"
              f" {100 * (m / base - 1):+.1f} % against the first")
    if ratios:
        ratios.sort()
        print(f"probe/guide ratio over {len(ratios)} jobs: min {ratios[0][0]:.3f} "
              f"({ratios[0][1]} {ratios[0][2]} B), max {ratios[-1][0]:.3f} "
              f"({ratios[-1][1]} {ratios[-1][2]} B)")
    if twins:
        twins.sort()
        print(f"probe/twin ratio over {len(twins)} jobs: min {twins[0][0]:.3f} "
              f"({twins[0][1]} {twins[0][2]} B), max {twins[-1][0]:.3f} "
              f"({twins[-1][1]} {twins[-1][2]} B) (the line: 1.35, plus the loop's cost)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
