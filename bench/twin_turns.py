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

usage: bench/twin_turns.py --lib target/release/libsm3hash.so [--bytes 128] [--cpu 1]
                           [--windows 40000] [--window-ms 5]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--bytes", type=int, default=128)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--windows", type=int, default=40000)
    ap.add_argument("--window-ms", type=float, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "turns")
        src = exe + ".c"
        open(src, "w").write(SOURCE)
        subprocess.run(["cc", "-O2", "-o", exe, src, "-ldl"], check=True)
        out = subprocess.run(["taskset", "-c", str(a.cpu), exe, os.path.abspath(a.lib),
                              str(a.bytes), str(a.windows), str(a.window_ms)],
                             check=True, capture_output=True, text=True).stdout
    record = [float(x) for x in out.split()]
    calm = sorted(record)[len(record) // 100]
    slow = sum(x >= LINE * calm for x in record)
    print(f"{len(record)} windows of {a.window_ms} ms: p1 {calm:.0f} ns a call, "
          f"{100 * slow / len(record):.1f} % of windows at {LINE}x that or more")
    for n in (3, 5, 7):
        c, t = refusals(record, n, n)
        print(f"{n} pairs (probe, twin, ...): {c} refusals in {t}")
    for n in (2, 4, 6):
        c, t = refusals(record, n + 1, n)
        print(f"{n} twins between {n + 1} probes: {c} refusals in {t}")


if __name__ == "__main__":
    main()
