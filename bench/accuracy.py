#!/usr/bin/env python3
"""Accuracy benchmark (not a test): cyclescope's mean cycles against an independent C driver.

Builds bench/loopdrv.c (our own independent C driver of the guide's loop method: the whole
loop timed with rdtscp / cntvct_el0 at both ends), then alternates `cyclescope run` and loopdrv on the bundled libraries at 32 B, 1 KiB and
64 KiB, both pinned to the same CPU, with loopdrv using the iteration count cyclescope planned.
Prints, per instance x length, the median over rounds of cyclescope/loopdrv and the per-call
histogram's median against the loop mean.

usage: bench/accuracy.py [--rounds N] [--cpu N] [--labels a,b] [--lengths 32,1024,65536]
Run from the repository root after `cargo build --release`.
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXE = ROOT / "target" / "release" / "cyclescope"


def library_of(label):
    """The file cyclescope loads for `label` (the bundled libraries live in its cache), so both
    drivers time the very same shared library."""
    rows = json.loads(subprocess.run([str(EXE), "list", "--json", label], check=True, capture_output=True,
                                     text=True, cwd=ROOT).stdout)
    return ROOT / os.path.expanduser(rows[0]["library"])


def build_loopdrv(out):
    exe = out / "loopdrv"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(ROOT / "bench" / "loopdrv.c"), "-ldl"], check=True)
    return exe


def cyclescope(label, length, cpu, tmp, trials):
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp))
    subprocess.run([str(EXE), "run", label, "--lengths", str(length), "--cpu", str(cpu), "--trials", str(trials),
                    "--out", str(out / "run"), "--allow-unfixed-host", "--json"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    rec = next((out / "run" / "records").rglob(f"{label}__hash_{length}.json"))
    return json.loads(rec.read_text())


def loopdrv(exe, label, length, cpu, iters, trials):
    lib = library_of(label)
    bits = label.split("-")[1]
    out = subprocess.run(["taskset", "-c", str(cpu), str(exe), str(lib), bits, str(length), str(iters), str(trials), "3"],
                         check=True, capture_output=True, text=True).stdout
    mean = next(l for l in out.splitlines() if l.startswith("mean "))
    return float(mean.split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--labels", default="sm3hash-256,pseudohash-512,pseudoXOF-512,pseudoXOF-2048")
    ap.add_argument("--lengths", default="32,1024,65536")
    a = ap.parse_args()
    if not EXE.exists():
        sys.exit("build first: cargo build --release")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        drv = build_loopdrv(tmp)
        print(f"| instance | message | cyclescope mean cycles | loopdrv mean cycles | ratio (median of {a.rounds}) | per-call p50 / loop mean | timer overhead (ticks) |")
        print("|---|---|---|---|---|---|---|")
        worst = 0.0
        for label in a.labels.split(","):
            for length in map(int, a.lengths.split(",")):
                ratios, ours, theirs, p50s = [], [], [], []
                overhead = None
                for _ in range(a.rounds):
                    rec = cyclescope(label, length, a.cpu, tmp, a.trials)
                    iters = rec["plan"]["iterations_per_trial"]
                    ref = loopdrv(drv, label, length, a.cpu, iters, a.trials)
                    ours.append(rec["mean_cycles"]); theirs.append(ref)
                    ratios.append(rec["mean_cycles"] / ref)
                    extra = rec.get("cyclescope") or {}
                    if extra.get("per_call"):
                        p50s.append(extra["per_call"]["p50"] / rec["mean_cycles"])
                    overhead = extra.get("timer_overhead_ticks")
                r = statistics.median(ratios)
                worst = max(worst, abs(r - 1))
                p = f"{statistics.median(p50s):.3f}" if p50s else "–"
                print(f"| {label} | {length} B | {statistics.median(ours):.0f} | {statistics.median(theirs):.0f} | {r:.3f} | {p} | {overhead} |")
        print(f"\nworst |ratio - 1| = {worst:.3f} (target <= 0.03)")


if __name__ == "__main__":
    main()
