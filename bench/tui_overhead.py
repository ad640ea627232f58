#!/usr/bin/env python3
"""TUI overhead benchmark (not a test): the same job measured headless and with the TUI attached.

Alternates `cyclescope run pseudoXOF-512 --lengths 1024` (headless) and the TUI driven in tmux
(select pseudoXOF-512, only S4 = 1 KiB, start, wait for the result, quit), both with the guide's
default planning. Reports the mean cycles of each, their ratio (median over rounds), and the UI
thread's CPU use while measuring (its schedstat on-CPU time over the wall time of the run).

usage: bench/tui_overhead.py [--rounds N]     (after `cargo build --release`; needs tmux)
"""
import argparse, json, pathlib, statistics, subprocess, sys, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXE = ROOT / "target" / "release" / "cyclescope"
CONFIG = ROOT / "config.toml"


def headless(tmp):
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp)) / "run"
    subprocess.run([str(EXE), "run", "pseudoXOF-512", "--lengths", "1024", "--out", str(out),
                    "--allow-unfixed-host"], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((out / "records/iccs/pseudoXOF-512__hash_1024.json").read_text())


def tmux(sock, *args, capture=False):
    r = subprocess.run(["tmux", "-L", sock, *args], check=True, capture_output=True, text=True)
    return r.stdout


def screen(sock):
    return tmux(sock, "capture-pane", "-p", "-t", "bench")


def wait_for(sock, text, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        s = screen(sock)
        if text in s:
            return s
        time.sleep(0.05)
    sys.exit(f"timed out waiting for {text!r}:\n{screen(sock)}")


def on_cpu_ns(pid):
    return int(pathlib.Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])


def attached(tmp, rnd):
    cwd = pathlib.Path(tempfile.mkdtemp(dir=tmp))
    sock = f"cyclescope-bench-{rnd}"
    cmd = f"exec {EXE} --config {CONFIG} --allow-unfixed-host"
    tmux(sock, "new-session", "-d", "-s", "bench", "-x", "160", "-y", "48", "-c", str(cwd), cmd)
    try:
        pid = int(tmux(sock, "display", "-p", "-t", "bench", "#{pane_pid}").strip())
        wait_for(sock, "Catalog · 0 selected")
        tmux(sock, "send-keys", "-t", "bench", *(["j"] * 7), "Space")
        wait_for(sock, "Catalog · 1 selected")
        for k in "1235678":
            tmux(sock, "send-keys", "-t", "bench", k)
        wait_for(sock, "1 KiB")
        cpu0, t0 = on_cpu_ns(pid), time.time()
        tmux(sock, "send-keys", "-t", "bench", "s")
        wait_for(sock, "Results · 1/1 jobs", timeout=300)
        cpu1, t1 = on_cpu_ns(pid), time.time()
        tmux(sock, "send-keys", "-t", "bench", "q")
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    rec = next(cwd.glob("runs/*/records/iccs/pseudoXOF-512__hash_1024.json"))
    return json.loads(rec.read_text()), (cpu1 - cpu0) / 1e9, t1 - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    if not EXE.exists():
        sys.exit("build first: cargo build --release")
    rows, ratios, ui = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            h = headless(tmp)
            t, cpu_s, wall_s = attached(tmp, rnd)
            assert t["cyclescope"]["tui_attached"] and not h["cyclescope"]["tui_attached"]
            ratios.append(t["mean_cycles"] / h["mean_cycles"])
            ui.append(cpu_s / wall_s)
            rows.append((h["mean_cycles"], t["mean_cycles"], cpu_s, wall_s))
    print("| round | headless mean cycles | TUI attached mean cycles | ratio | UI thread CPU | run wall |")
    print("|---|---|---|---|---|---|")
    for i, (h, t, c, w) in enumerate(rows):
        print(f"| {i + 1} | {h:.0f} | {t:.0f} | {t / h:.3f} | {c:.3f} s ({100 * c / w:.2f} %) | {w:.1f} s |")
    print(f"\nmedian ratio attached/headless = {statistics.median(ratios):.3f} (target 1.00 ± 0.02); "
          f"median UI thread CPU = {100 * statistics.median(ui):.2f} % of one core")


if __name__ == "__main__":
    main()
