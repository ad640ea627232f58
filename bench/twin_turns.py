#!/usr/bin/env python3
"""Probe-and-twin turns benchmark (not a test): how often the host's spells alone would make
the fresh-message probe's twin rule refuse an honest library, for a given order of turns.

It compiles one C program that loads a library (`--lib`, one exporting `CryptHash`), hashes
the harness's message of `--bytes` bytes again and again on one CPU, and prints its CPU time
a call (`CLOCK_THREAD_CPUTIME_ID`, the clock the engine reads from outside) for each window of
`--window-ms`. Every call does the same work, so the windows differ only by the host. The
record is then read as if its windows were probe and twin processes in turns, the fastest of
each side compared with the twin's line (1.35), for each order: N pairs (probe, twin, ...),
and N twins between N + 1 probes (the engine's: the last process is a probe).

Then the engine's whole rule, turn by turn, both ways: how often it refuses an honest library
(every window as it is) and how often it passes one that caches the timing message by `--gain`
(each probe window that many times slower; the guide's fastest trial, which such a library
passes at its cached cost, is the record's first percentile). The rule of session 26 ended
the turns at the first pass beside a calm twin; the engine's now ends them only at a settled
pass (`measure::proof::twin::settled`) and lets the last probe decide otherwise.

usage: bench/twin_turns.py --lib target/release/libsm3hash.so [--bytes 128] [--cpu 1]
                           [--windows 40000] [--window-ms 5] [--gain 1.6]
                           [--save record.txt | --record record.txt]
"""
import argparse, os, subprocess, tempfile

SOURCE = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef int (*hash_fn)(int, const unsigned char *, unsigned long long, unsigned char *);
static double cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    hash_fn f = (hash_fn)dlsym(h, "CryptHash");
    if (!f) { fprintf(stderr, "no CryptHash\n"); return 1; }
    int len = atoi(argv[2]), windows = atoi(argv[3]);
    double window = atof(argv[4]) * 1e6;
    unsigned char *msg = malloc(len + 1), digest[128];
    for (int i = 0; i < len; i++) msg[i] = (unsigned char)(i * 131 + len);
    for (int w = 0; w < windows; w++) {
        double t0 = cpu_ns();
        long n = 0;
        while (cpu_ns() - t0 < window) {
            for (int k = 0; k < 20; k++) f(256, msg, 8ull * len, digest);
            n += 20;
        }
        printf("%.1f\n", (cpu_ns() - t0) / n);
    }
    return 0;
}
"""

LINE = 1.35
SETTLED = 1.2
CALM_FACTOR, CALM_NS = 1.15, 40.0
PROCESSES = 10


def refusals(record, probes, twins):
    """How many starting windows give a refusal when `probes` probe and `twins` twin windows
    alternate from there, the probe first."""
    span = probes + twins
    count = 0
    for i in range(len(record) - span + 1):
        turns = record[i:i + span]
        if min(turns[0::2]) >= LINE * min(turns[1::2]):
            count += 1
    return count, len(record) - span + 1


def engine(record, start, gain, guide, settled_rule, processes):
    """The engine's turns from window `start`, at most `processes` probes: (refused, processes
    run)."""
    probes, twins, at = [], [], start
    for k in range(processes):
        probes.append(gain * record[at])
        at += 1
        if k + 1 < processes:
            twins.append(record[at])
            at += 1
        p, t = min(probes), min(twins)
        if p >= LINE * t:
            continue
        calm = t <= CALM_FACTOR * guide + CALM_NS
        if settled_rule:
            if p < SETTLED * t and calm:
                return False, at - start
        elif calm or k + 1 >= 2:
            return False, at - start
    return min(probes) >= LINE * min(twins), at - start


def rule_rates(record, gain):
    guide = sorted(record)[len(record) // 100]
    span = 2 * PROCESSES - 1
    starts = range(len(record) - span + 1)
    rules = (("session 26 (first calm pass, 7 probes)", False, 7),
             ("settled pass, 7 probes", True, 7),
             (f"settled pass, {PROCESSES} probes (the engine's)", True, PROCESSES))
    for name, rule, processes in rules:
        honest = [engine(record, i, 1.0, guide, rule, processes) for i in starts]
        caching = [engine(record, i, gain, guide, rule, processes) for i in starts]
        refused = sum(r for r, _ in honest)
        passed = sum(not r for r, _ in caching)
        mean = sum(n for _, n in honest) / len(honest)
        print(f"{name}: honest refused {refused} in {len(honest)} "
              f"({mean:.2f} processes on average); a gain of {gain} passed {passed} in "
              f"{len(caching)}")


def measure(a):
    """The record: CPU time a call in each window, the library hashing one message on one CPU."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "turns")
        src = exe + ".c"
        open(src, "w").write(SOURCE)
        subprocess.run(["cc", "-O2", "-o", exe, src, "-ldl"], check=True)
        out = subprocess.run(["taskset", "-c", str(a.cpu), exe, os.path.abspath(a.lib),
                              str(a.bytes), str(a.windows), str(a.window_ms)],
                             check=True, capture_output=True, text=True).stdout
    return [float(x) for x in out.split()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--bytes", type=int, default=128)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--windows", type=int, default=40000)
    ap.add_argument("--window-ms", type=float, default=5)
    ap.add_argument("--gain", type=float, default=1.6)
    ap.add_argument("--save", help="write the record of windows to this file")
    ap.add_argument("--record", help="read a saved record instead of measuring one")
    a = ap.parse_args()
    if a.record:
        record = [float(x) for x in open(a.record).read().split()]
    elif a.lib:
        record = measure(a)
        if a.save:
            open(a.save, "w").write("\n".join(f"{x:.1f}" for x in record) + "\n")
    else:
        ap.error("give --lib (to measure) or --record")
    calm = sorted(record)[len(record) // 100]
    slow = sum(x >= LINE * calm for x in record)
    print(f"{len(record)} windows: p1 {calm:.0f} ns a call, "
          f"{100 * slow / len(record):.1f} % of windows at {LINE}x that or more")
    for n in (3, 5, 7):
        c, t = refusals(record, n, n)
        print(f"{n} pairs (probe, twin, ...): {c} refusals in {t}")
    for n in (2, 4, 6, 9):
        c, t = refusals(record, n + 1, n)
        print(f"{n} twins between {n + 1} probes: {c} refusals in {t}")
    rule_rates(record, a.gain)


if __name__ == "__main__":
    main()
