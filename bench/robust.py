#!/usr/bin/env python3
"""Robust-figure benchmark (not a test): does the uninterrupted-call mean hold when the
measurement CPU is shared?

In one invocation it measures the bundled pseudoXOF-512 and the two C instances of the fixture
submission `tests/fixtures/submissions/fixhash` (FIXH-256, FIXH-512, built by `--src` with the
guide's flags) at 32 B, 1 KiB and 64 KiB: once as the host is, then again with a busy loop pinned
to the measurement CPU. It prints, per instance and length, the guide's mean and the robust
figure (`cyclescope.robust`) in each setting and loaded/quiet for both, and the largest robust
deviation. The issue's target: every robust cell within ±3 % of the quiet one.

usage: bench/robust.py [--exe target/release/cyclescope] [--cpu 1] [--trial-target 0.2]
"""
import argparse, glob, json, os, subprocess, tempfile

LENGTHS = "32,1024,65536"


def measure(exe, cpu, trial_target, out, args):
    cmd = [exe, "run", *args, "--lengths", LENGTHS, "--cpus", str(cpu), "--allow-unfixed-host",
           "--trial-target", str(trial_target), "--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr[-2000:])
    figures = {}
    for f in glob.glob(os.path.join(out, "records", "*", "*.json")):
        r = json.load(open(f))
        add = r.get("cyclescope") or {}
        if add.get("reference_job") or r.get("status") != "complete":
            continue
        robust = (add.get("robust") or {}).get("mean_cycles")
        figures[(r["label"], r["input_bytes"])] = (r.get("mean_cycles"), robust)
    return figures


def one_setting(exe, cpu, trial_target, work, name):
    src = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "submissions", "fixhash")
    figures = measure(exe, cpu, trial_target, os.path.join(work, f"{name}-bundled"),
                      ["pseudoXOF-512", "--no-reference-jobs"])
    figures.update(measure(exe, cpu, trial_target, os.path.join(work, f"{name}-c"),
                           ["--src", os.path.abspath(src), "--no-baselines", "--no-reference-jobs"]))
    return figures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default="target/release/cyclescope")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--trial-target", type=float, default=0.2)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="robust-bench-")
    quiet = one_setting(a.exe, a.cpu, a.trial_target, work, "quiet")
    busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c", "while :; do :; done"])
    try:
        loaded = one_setting(a.exe, a.cpu, a.trial_target, work, "loaded")
    finally:
        busy.kill()
    subprocess.run(["rm", "-rf", work])
    print("| instance | message | guide mean, quiet → loaded | × | robust, quiet → loaded | × |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for key in sorted(quiet, key=lambda k: (k[0], k[1])):
        (qm, qr), (lm, lr) = quiet[key], loaded.get(key, (None, None))
        mean_x = lm / qm if qm and lm else float("nan")
        robust_x = lr / qr if qr and lr else float("nan")
        if qr and lr:
            worst = max(worst, abs(robust_x - 1))
        print(f"| {key[0]} | {key[1]} B | {qm or 0:.0f} → {lm or 0:.0f} | {mean_x:.3f} "
              f"| {qr or 0:.0f} → {lr or 0:.0f} | {robust_x:.3f} |")
    print(f"largest robust deviation: {100 * worst:.1f} % (target ±3 %)")
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
