#!/usr/bin/env python3
"""Shield benchmark (not a test; root only): what `run --tune`'s quiet CPU is worth when another
process is pinned to the measurement CPU.

A busy loop is pinned to the measurement CPU (`taskset`) for the whole benchmark. Each round
measures the bundled pseudoXOF-512 at 32 B, 1 KiB and 64 KiB twice, back to back, in alternating
order: once as is (the loop shares the CPU), once with `--tune`, whose shield (a cpuset of the
other CPUs, `docs/tune.md`) moves the loop off it for the run and puts it back afterwards. It
prints, per length, the median over rounds of the guide's mean and of the robust figure in both
settings, and where the busy loop was allowed to run after every shielded run (it must be back
on the measurement CPU: the restore put it there).

usage: sudo bench/shield.py [--exe target/release/cyclescope] [--cpu 1] [--trial-target 0.2] [--rounds 4]
"""
import argparse, os, statistics, subprocess, tempfile

import robust

LENGTHS = "32,1024,65536"


def measure(exe, cpu, trial_target, out, tune):
    """pseudoXOF-512's (guide mean, robust figure) per length: robust.py's run and reading."""
    args = ["pseudoXOF-512"] + (["--tune"] if tune else [])
    figures = robust.measure(exe, cpu, trial_target, out, args, LENGTHS)
    return {length: f for (_, length), f in figures.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default="target/release/cyclescope")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--trial-target", type=float, default=0.2)
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/shield.py: the shield needs root")
    work = tempfile.mkdtemp(prefix="shield-bench-")
    busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c", "while :; do :; done"])
    runs = {False: [], True: []}
    after = []
    try:
        for r in range(a.rounds):
            for tune in ((False, True) if r % 2 == 0 else (True, False)):
                out = os.path.join(work, f"{r}-{'shielded' if tune else 'shared'}")
                runs[tune].append(measure(a.exe, a.cpu, a.trial_target, out, tune))
                if tune:
                    after.append(open(f"/proc/{busy.pid}/status").read()
                                 .split("Cpus_allowed_list:")[1].split()[0])
    finally:
        busy.kill()
        busy.wait()
    subprocess.run(["rm", "-rf", work])

    def median(rounds, length, i):
        values = [f[length][i] for f in rounds if length in f and f[length][i]]
        return statistics.median(values) if values else float("nan")

    print(f"{a.rounds} round(s), a busy loop pinned to CPU {a.cpu} throughout; medians over rounds")
    print("| message | guide mean, shared → shielded | × | robust, shared → shielded | × |")
    print("|---|---|---|---|---|")
    for length in sorted({n for f in runs[False] + runs[True] for n in f}):
        sm, tm = median(runs[False], length, 0), median(runs[True], length, 0)
        sr, tr = median(runs[False], length, 1), median(runs[True], length, 1)
        print(f"| {length} B | {sm:.0f} → {tm:.0f} | {tm / sm:.3f} | {sr:.0f} → {tr:.0f} "
              f"| {tr / sr:.3f} |")
    print(f"the busy loop's allowed CPUs after each shielded run: {', '.join(after)}")


if __name__ == "__main__":
    main()
