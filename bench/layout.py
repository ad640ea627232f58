#!/usr/bin/env python3
"""Layout benchmark (not a test): how much where the message and digest sit moves a figure.

Interleaves, round after round on one CPU: `cyclescope run LABEL --lengths LEN --layouts` (the
guide's layout plus the 8 layouts of `measure::layout`), and bench/loopdrv.c on the very same
library file at the harness driver's layout (`malloc`), at cyclescope's own (`guarded`: 64 guard
bytes before each buffer) and at the same 8 offsets. Prints, per placement, the median over
rounds of the mean cycles per call and its ratio to loopdrv's `malloc` figure, with the page
offsets (address mod 4096) of the message, the digest and a stack variable that loopdrv saw.

usage: flock -o /tmp/cyclescope-measure.lock bench/layout.py [--label pseudoXOF-512]
       [--length 32] [--rounds 6] [--cpu N] [--trial-target S] [--exe target/release/cyclescope]
The trial worker and the bundled libraries are built optimised in a debug build too, so
`--exe target/debug/cyclescope` measures the same code.
"""
import argparse, json, os, pathlib, statistics, subprocess, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYOUTS = [(i, 8 * i) for i in range(8)]


def library_of(exe, label):
    rows = json.loads(subprocess.run([str(exe), "list", "--json", label], check=True,
                                     capture_output=True, text=True, cwd=ROOT).stdout)
    return ROOT / os.path.expanduser(rows[0]["library"])


def cyclescope(exe, label, length, cpu, tmp, target):
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp)) / "run"
    subprocess.run([str(exe), "run", label, "--lengths", str(length), "--cpu", str(cpu),
                    "--trial-target", str(target),
                    "--out", str(out), "--allow-unfixed-host", "--layouts", "--json"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    rec = json.loads(next((out / "records").rglob(f"{label}__hash_{length}.json")).read_text())
    return rec


def cpu_lock(cpu):
    """`flock` on the CPU's lock in CYCLESCOPE_LOCK_DIR, as cyclescope takes it, so that no
    other run measures on the CPU while loopdrv does (empty without the variable)."""
    folder = os.environ.get("CYCLESCOPE_LOCK_DIR")
    return ["flock", "-x", os.path.join(folder, f".cpu{cpu}.lock")] if folder else []


def loopdrv(drv, lib, bits, length, cpu, iters, layout):
    out = subprocess.run(cpu_lock(cpu) + ["taskset", "-c", str(cpu), str(drv), str(lib), bits,
                          str(length), str(iters), "5", "3"], check=True, capture_output=True,
                         text=True,
                         env={**os.environ, "LAYOUT": layout}).stdout
    pages = next(l for l in out.splitlines() if l.startswith("layout ")).split()[1:]
    mean = float(next(l for l in out.splitlines() if l.startswith("mean ")).split()[1])
    trials = [float(l.split()[2]) for l in out.splitlines() if l.startswith("trial ")]
    return mean, "/".join(pages), trials


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="pseudoXOF-512")
    ap.add_argument("--length", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--trial-target", type=float, default=0.2)
    ap.add_argument("--exe", default=str(ROOT / "target" / "release" / "cyclescope"))
    a = ap.parse_args()
    exe = pathlib.Path(a.exe)
    lib = library_of(exe, a.label)
    bits = a.label.split("-")[1]
    figures = {}
    per_trial = {}
    pages = {}
    with tempfile.TemporaryDirectory() as tmp:
        drv = pathlib.Path(tmp) / "loopdrv"
        subprocess.run(["gcc", "-O2", "-o", str(drv), str(ROOT / "bench" / "loopdrv.c"), "-ldl"],
                       check=True)
        for _ in range(a.rounds):
            rec = cyclescope(exe, a.label, a.length, a.cpu, tmp, a.trial_target)
            iters = rec["plan"]["iterations_per_trial"]
            figures.setdefault("cyclescope guide", []).append(rec["mean_cycles"])
            per_trial.setdefault("cyclescope guide", []).extend(
                t["cycles"] / t["measurements"] for p in rec["processes"] for t in p["trials"])
            spread = rec["cyclescope"]["layouts"]
            for (m, d), v in zip(LAYOUTS, spread["mean_cycles"]):
                figures.setdefault(f"cyclescope {m},{d}", []).append(v)
            for layout in ["malloc", "guarded"] + [f"{m},{d}" for m, d in LAYOUTS]:
                v, p, trials = loopdrv(drv, lib, bits, a.length, a.cpu, iters, layout)
                figures.setdefault(f"loopdrv {layout}", []).append(v)
                per_trial.setdefault(f"loopdrv {layout}", []).extend(trials)
                pages[f"loopdrv {layout}"] = p
    base = statistics.median(figures["loopdrv malloc"])
    low = min(figures["loopdrv malloc"])
    # The fast mode: per-trial figures within 15 % of the fastest trial anywhere.
    fastest = min(min(v) for v in per_trial.values())
    print(f"| placement ({a.label} @ {a.length} B, {a.rounds} rounds) | median cycles/call | "
          f"× loopdrv malloc | lowest round | × lowest loopdrv malloc | fast-mode trials | "
          f"fast-mode median | msg/digest/stack mod 4096 (loopdrv) |")
    print("|---|---|---|---|---|---|---|---|")
    for k, vs in figures.items():
        med = statistics.median(vs)
        fast = [t for t in per_trial.get(k, []) if t <= 1.15 * fastest]
        share = f"{len(fast)}/{len(per_trial[k])}" if k in per_trial else ""
        fast_med = f"{statistics.median(fast):.0f}" if fast else ""
        print(f"| {k} | {med:.0f} | {med / base:.3f} | {min(vs):.0f} | {min(vs) / low:.3f} | "
              f"{share} | {fast_med} | {pages.get(k, '')} |")


if __name__ == "__main__":
    main()
