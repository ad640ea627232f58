#!/usr/bin/env python3
"""Campaigns at scale (benchmarks, not tests).

lanes:  wall time of the bundled campaign (12 instances x 8 lengths) measured on one CPU
        (`--cpu LAST`) and on two (`--cpus 0-1`) at the same short trial target, alternating.
watch:  what a watcher costs a run: the same small campaign with and without
        `cyclescope watch --lanes` attached on a pseudo-terminal (it redraws twice a second),
        alternating; reports the wall time of each run, the median ratio of mean cycles job by
        job (watched / alone), and the watcher's CPU time per second of wall time, from
        /proc/PID/stat (utime + stime) and from its own getrusage line.

usage: bench/scale.py lanes [--trial-target S] [--rounds N]
       bench/scale.py watch [--trial-target S] [--rounds N]
(after `cargo build --release`; PROFILE=debug uses target/debug)
"""
import argparse, json, os, pathlib, pty, statistics, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXE = ROOT / "target" / os.environ.get("PROFILE", "release") / "cyclescope"
LABELS = ["sm3hash-256", "pseudohash-512", "pseudohash-768", "pseudohash-1024",
          "pseudoXOF-256", "pseudoXOF-384", "pseudoXOF-512", "pseudoXOF-768",
          "pseudoXOF-1024", "pseudoXOF-1152", "pseudoXOF-1280", "pseudoXOF-2048"]
GUIDE = "32,128,512,1024,4096,8192,16384,65536"


def run(out, labels, lengths, target, cpu_flags):
    t0 = time.monotonic()
    subprocess.run([str(EXE), "run", *labels, "--lengths", lengths, "--trial-target",
                    str(target), "--allow-unfixed-host", "--out", str(out), *cpu_flags],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def records(out):
    recs = {}
    for f in (out / "records").glob("*/*.json"):
        r = json.loads(f.read_text())
        recs[(r["label"], r["input_bytes"])] = r
    return recs


def lanes(args, tmp):
    last = os.cpu_count() - 1
    walls = {"1 CPU": [], "2 CPUs": []}
    for i in range(args.rounds):
        for name, flags in [("1 CPU", ["--cpu", str(last)]), ("2 CPUs", ["--cpus", "0-1"])]:
            out = tmp / f"{name.replace(' ', '')}-{i}"
            wall = run(out, LABELS, GUIDE, args.trial_target, flags)
            n = sum(r["status"] == "complete" for r in records(out).values())
            walls[name].append(wall)
            print(f"round {i + 1} {name}: {wall:.1f} s wall, {n} complete records", flush=True)
    a, b = statistics.median(walls["1 CPU"]), statistics.median(walls["2 CPUs"])
    print(f"median wall: 1 CPU {a:.1f} s, 2 CPUs {b:.1f} s, speed-up {a / b:.2f}x "
          f"(trial target {args.trial_target} s, {args.rounds} round(s))")


def cpu_seconds(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def watched_run(out, target, labels, lengths):
    """The run with a watcher on a pseudo-terminal; the watcher's CPU seconds per second."""
    out.mkdir(parents=True)
    master, slave = pty.openpty()
    watcher = subprocess.Popen([str(EXE), "watch", "--lanes", str(out)], cwd=ROOT,
                               stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    started = time.monotonic()
    wall = run(out / "run", labels, lengths, target, ["--cpu", str(os.cpu_count() - 1)])
    text = b""
    cpu = None
    while watcher.poll() is None:
        try:
            text += os.read(master, 65536)
        except OSError:
            break
        try:
            cpu = cpu_seconds(watcher.pid)
        except OSError:
            pass
    watched_s = time.monotonic() - started
    try:
        while True:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            text += chunk
    except OSError:
        pass
    os.close(master)
    line = [l for l in text.decode(errors="replace").splitlines() if l.startswith("watcher:")]
    return wall, (cpu or 0.0) / watched_s, line[-1] if line else "(no watcher line)"


def watch(args, tmp):
    labels, lengths = LABELS[:4], "32,1024,65536"
    ratios, alone_w, watched_w, load = [], [], [], []
    for i in range(args.rounds):
        a = tmp / f"alone-{i}"
        alone_w.append(run(a, labels, lengths, args.trial_target,
                           ["--cpu", str(os.cpu_count() - 1)]))
        w = tmp / f"watched-{i}"
        wall, per_s, line = watched_run(w, args.trial_target, labels, lengths)
        watched_w.append(wall)
        load.append(per_s)
        ra, rw = records(a), records(w / "run")
        for k in ra:
            if k in rw and ra[k]["mean_cycles"] and rw[k]["mean_cycles"]:
                ratios.append(rw[k]["mean_cycles"] / ra[k]["mean_cycles"])
        print(f"round {i + 1}: alone {alone_w[-1]:.1f} s, watched {wall:.1f} s; "
              f"watcher {100 * per_s:.2f} % of a core (/proc); its own report: {line}",
              flush=True)
    print(f"median wall alone {statistics.median(alone_w):.1f} s, watched "
          f"{statistics.median(watched_w):.1f} s; median mean-cycles ratio watched/alone "
          f"{statistics.median(ratios):.3f} over {len(ratios)} jobs; watcher CPU "
          f"{100 * statistics.median(load):.2f} % of one core")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", choices=["lanes", "watch"])
    p.add_argument("--trial-target", type=float, default=0.05)
    p.add_argument("--rounds", type=int, default=1)
    args = p.parse_args()
    if not EXE.exists():
        sys.exit(f"{EXE} missing: cargo build --release first")
    with tempfile.TemporaryDirectory() as tmp:
        (lanes if args.what == "lanes" else watch)(args, pathlib.Path(tmp))


if __name__ == "__main__":
    main()
