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
over every job: how near honest libraries come to the refusal line (2, plus three times the loop's own cost a call).

usage: bench/proof_cost.py --exe OLD --exe NEW [--rounds 3] [--loaded] [--cpu 1]
"""
import argparse, glob, json, os, statistics, subprocess, tempfile, time

INSTANCES = ["pseudoXOF-512", "sm3hash-256", "pseudohash-512"]


def one_run(exe, cpu):
    out = tempfile.mkdtemp(prefix="proof-cost-")
    started = time.monotonic()
    p = subprocess.run([exe, "run", *INSTANCES, "--cpus", str(cpu), "--allow-unfixed-host",
                        "--out", os.path.join(out, "run")], capture_output=True, text=True)
    wall = time.monotonic() - started
    ratios, failed = [], []
    for f in glob.glob(os.path.join(out, "run", "records", "*", "*.json")):
        r = json.load(open(f))
        add = r.get("cyclescope") or {}
        if add.get("failure"):
            failed.append(f"{r['label']} {r['input_bytes']} B: {add['failure'][:100]}")
        probe = add.get("fresh_probe")
        if probe:
            ratios.append((probe["ratio"], r["label"], r["input_bytes"]))
    subprocess.run(["rm", "-rf", out])
    return wall, p.returncode, ratios, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loaded", action="store_true")
    ap.add_argument("--cpu", type=int, default=1)
    a = ap.parse_args()
    busy = None
    if a.loaded:
        busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c", "while :; do :; done"])
    try:
        walls = {e: [] for e in a.exe}
        ratios = []
        for rnd in range(a.rounds):
            for exe in a.exe:
                wall, rc, rs, failed = one_run(exe, a.cpu)
                walls[exe].append(wall)
                ratios.extend(rs)
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
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
