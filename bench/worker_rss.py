#!/usr/bin/env python3
"""Worker footprint benchmark (not a test): the resident memory of cyclescope's trial processes
against a plain C driver hosting the same library.

Runs `cyclescope run` on the bundled instances at the given lengths (one short trial each: the
memory figures do not depend on the trial length) and reads each record's `baseline_rss_bytes`
(statm after dlopen and the buffers) and `peak_rss_bytes` (VmHWM). Then builds
bench/loopdrv.c, a C driver that takes the same two readings at the same points, and runs it
on the same library, width and length. Prints, per length, min / median / max over the
instances for both, and the worker's excess over the driver (median of the per-job
differences). The harness's published C-driver figures (uHash on arm_1: baseline 1404-1468
KiB) come from another machine and other libraries; the driver measured here is the fair
comparison.

The trial processes run in `cyclescope-worker` (crates/cyclescope-worker: no std, libc
only). The bundled candidates are Rust libraries that bring std pieces and libgcc_s of their
own; `--src tests/fixtures/submissions/fixhash` measures C candidates instead (built from that
submission tree first), which is the comparison with the published C-driver figures.

usage: bench/worker_rss.py [--exe target/release/cyclescope] [--lengths 32,65536]
                           [--labels a,b] [--src DIR] [--cpu N]
Run from the repository root after `cargo build --release`.
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUNDLED = ["sm3hash-256", "pseudohash-512", "pseudohash-768", "pseudohash-1024"] + [
    f"pseudoXOF-{w}" for w in (256, 384, 512, 768, 1024, 1152, 1280, 2048)]


def kib(b):
    return b / 1024


def spread(values):
    return f"{kib(min(values)):.0f} / {kib(statistics.median(values)):.0f} / {kib(max(values)):.0f}"


def worker_records(exe, labels, lengths, cpu, src, tmp):
    out = tmp / "run"
    cmd = [str(exe), "run", *labels, "--lengths", ",".join(map(str, lengths)), "--trials", "1",
           "--trial-target", "0.02", "--allow-unfixed-host", "--out", str(out)]
    if src:
        cmd += ["--src", src, "--no-baselines"]
    if cpu is not None:
        cmd += ["--cpu", str(cpu)]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    recs = [json.loads(p.read_text()) for p in (out / "records").rglob("*.json")]
    # Reference jobs (the × pseudoXOF baseline a run adds) are not what was asked for.
    return [r for r in recs if r["status"] == "complete" and not r["cyclescope"].get("reference_job")]


def loopdrv(drv, lib, bits, length, cpu):
    cmd = [str(drv), str(lib), str(bits), str(length), "10", "1", "1"]
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu)] + cmd
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("rss "))
    base, peak = map(int, line.split()[1:])
    return base, peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default=str(ROOT / "target" / "release" / "cyclescope"))
    ap.add_argument("--lengths", default="32,65536")
    ap.add_argument("--labels", default=None,
                    help="instances (default: the 12 bundled ones; with --src: every one built)")
    ap.add_argument("--src", help="a submission source tree to build and measure instead")
    ap.add_argument("--cpu", type=int)
    a = ap.parse_args()
    if a.labels is None and not a.src:
        a.labels = ",".join(BUNDLED)
    lengths = [int(x) for x in a.lengths.split(",")]
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        drv = tmp / "loopdrv"
        subprocess.run(["gcc", "-O2", "-o", str(drv), str(ROOT / "bench" / "loopdrv.c"), "-ldl"],
                       check=True)
        labels = a.labels.split(",") if a.labels else []
        recs = worker_records(a.exe, labels, lengths, a.cpu, a.src, tmp)
        if not recs:
            sys.exit("no complete record: did the run fail?")
        workers = sorted({r["cyclescope"]["worker"] for r in recs})
        print(f"worker: {', '.join(workers)}; {len(recs)} jobs; KiB as min / median / max")
        print("| message | worker baseline | worker peak | C driver baseline | C driver peak "
              "| worker − driver (median, baseline / peak) |")
        print("|---|---|---|---|---|---|")
        for length in lengths:
            rows = [r for r in recs if r["input_bytes"] == length]
            if not rows:
                continue
            wb = [r["baseline_rss_bytes"] for r in rows]
            wp = [r["peak_rss_bytes"] for r in rows]
            drv_figs = [loopdrv(drv, os.path.expanduser(r["library"]), 8 * int(r["processes"][0]["meta"]["digest_bytes"]), length, a.cpu)
                        for r in rows]
            db = [f[0] for f in drv_figs]
            dp = [f[1] for f in drv_figs]
            excess_b = statistics.median(w - d for w, d in zip(wb, db))
            excess_p = statistics.median(w - d for w, d in zip(wp, dp))
            print(f"| {length} B | {spread(wb)} | {spread(wp)} | {spread(db)} | {spread(dp)} "
                  f"| {kib(excess_b):+.0f} / {kib(excess_p):+.0f} |")


if __name__ == "__main__":
    main()
