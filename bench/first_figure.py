#!/usr/bin/env python3
"""First-figure benchmark (not a test): seconds from pressing `s` in the workbench to the first
trial on screen, for an unchanged library.

Drives the real workbench in tmux (120x40): selects pseudoXOF-512 at 32 B only, presses `s`,
and polls the pane every 10 ms until the histogram's title names a running trial (`· trial `);
then waits for the run to finish and quits. Three situations, each `--rounds` times:

  cold     a fresh $XDG_DATA_HOME: no tuning journal, so the KAT runs
  warm     the same library again in a new session, with the journal of an earlier one
           (the KAT cache reuses its pass where the binary has one)
  rerun    a second `s` in the same session (the session's own KAT carry-over)

  warm and rerun also reuse the host check's clock probe and tool versions (the host cache
  beside the journal) where the binary has one; cold measures them.

usage: bench/first_figure.py [--exe target/release/cyclescope] [--rounds 3] [--journal-off]
(needs tmux; --journal-off: `[settings] journal = "off"`, i.e. no KAT or host cache)
Prints one line per situation: median, min and max seconds, and the rounds; a round marked `q`
queued for its CPU behind another process's lock (the suite's lock folder: a CI run measuring),
and the medians without those. The load average is printed before and after.
"""
import argparse, os, pathlib, statistics, subprocess, tempfile, time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIG = ROOT / "config.toml"
LOCKS = pathlib.Path(tempfile.gettempdir()) / "cyclescope-test-cpus"


def tmux(sock, *args):
    return subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", *args], check=True,
                          capture_output=True, text=True).stdout


def screen(sock):
    return tmux(sock, "capture-pane", "-p", "-t", "bench")


def wait_for(sock, text, timeout=300, poll=0.05):
    end = time.time() + timeout
    while time.time() < end:
        s = screen(sock)
        if text in s:
            return s
        time.sleep(poll)
    raise SystemExit(f"timed out waiting for {text!r}:\n{screen(sock)}")


def start(sock, exe, cwd, data, config):
    env = (f"XDG_DATA_HOME={data} CYCLESCOPE_LOCK_DIR={LOCKS} CYCLESCOPE_LOCK_WAIT=1800")
    cmd = (f"{env} {exe} --config {config} --trial-target 0.05 --allow-unfixed-host; "
           "sleep 30")
    tmux(sock, "new-session", "-d", "-s", "bench", "-x", "120", "-y", "40", "-c", str(cwd), cmd)
    wait_for(sock, "Catalog · 0 selected")
    tmux(sock, "send-keys", "-t", "bench", "/")
    tmux(sock, "send-keys", "-t", "bench", "-l", "xof-5")
    for k in ["Enter", "j", "Space", "Escape", "2", "3", "4", "5", "6", "7", "8"]:
        tmux(sock, "send-keys", "-t", "bench", k)
    wait_for(sock, "Catalog · 1 selected")
    end = time.time() + 30
    while "128 B" in screen(sock) and time.time() < end:
        time.sleep(0.05)


def press_s(sock, run_no):
    t0 = time.monotonic()
    tmux(sock, "send-keys", "-t", "bench", "s")
    s = wait_for(sock, "· trial ", poll=0.01)
    first = time.monotonic() - t0
    queued = "is taken" in s or "waiting up to" in s
    wait_for(sock, f"of run #{run_no}")
    wait_for(sock, "cyclescope │ finished")
    return (first, queued)


SESSIONS = iter(range(1_000_000))


def session(exe, data, presses, config):
    # A socket of its own: a killed server may still hold the last one's name for a moment.
    sock = f"first-figure-{os.getpid()}-{next(SESSIONS)}"
    cwd = tempfile.mkdtemp()
    try:
        start(sock, exe, cwd, data, config)
        return [press_s(sock, n + 1) for n in range(presses)]
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default=str(ROOT / "target" / "release" / "cyclescope"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--journal-off", action="store_true")
    a = ap.parse_args()
    config = CONFIG
    if a.journal_off:
        config = pathlib.Path(tempfile.mkdtemp()) / "config.toml"
        config.write_text(CONFIG.read_text().replace("[settings]\n", "[settings]\njournal = \"off\"\n", 1))
    a.exe = str(pathlib.Path(a.exe).resolve())
    print("load average before:", pathlib.Path("/proc/loadavg").read_text().strip())
    times = {"cold": [], "warm": [], "rerun": []}
    for _ in range(a.rounds):
        data = tempfile.mkdtemp()
        cold, rerun = session(a.exe, data, 2, config)
        (warm,) = session(a.exe, data, 1, config)
        times["cold"].append(cold)
        times["rerun"].append(rerun)
        times["warm"].append(warm)
    for name, rounds in times.items():
        ts = [t for t, _ in rounds]
        free = [t for t, q in rounds if not q]
        shown = " ".join(f"{t:.2f}{'q' if q else ''}" for t, q in rounds)
        unqueued = f"{statistics.median(free):.2f} s" if free else "-"
        print(f"{name:6} median {statistics.median(ts):.2f} s  min {min(ts):.2f}  "
              f"max {max(ts):.2f}  not queued: median {unqueued}  rounds {shown}")
    print("load average after: ", pathlib.Path("/proc/loadavg").read_text().strip())


if __name__ == "__main__":
    main()
