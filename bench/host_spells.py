#!/usr/bin/env python3
"""Host-spell benchmark (not a test): how much slower the host makes the same calls, window by
window, with nothing of cyclescope involved.

It compiles one C program that times a fixed, branch-free piece of work again and again on one
CPU with the TSC: eight 32-bit lanes mixed by rotations, additions and XORs, as SM3's rounds
are (`--work ilp`), or one 64-bit word mixed one dependent step after another (`--work
chain`). No call is preempted long enough to matter at these sizes, and the work never
changes, so every call would cost the same on an idle host. Per window of `--window-ms` it
prints the fastest call, p1, p10, p50 and the mean of the fastest half, in TSC ticks, and at
the end the spread of each over the windows (largest over smallest).

On a VM whose physical cores other tenants share, the fastest call stays put while the
others move together: while a sibling thread is busy, instruction-level parallel code runs
slower per call, preemption-free calls included. That is what `noise::HOST_RUN_STRAY` (two
separate runs are taken to stray by 20 % at least) rests on.

usage: bench/host_spells.py [--cpu 1] [--windows 40] [--window-ms 2] [--work ilp|chain]
"""
import argparse, os, subprocess, tempfile

SOURCE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>
#define R(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
static uint32_t ilp(uint32_t s) {
    uint32_t a = s, b = s + 1, c = s + 2, d = s + 3, e = s + 5, f = s + 7, g = s + 11, h = s + 13;
    for (int i = 0; i < 100; i++) {
        a += R(b, 7) ^ c; d ^= R(e, 12) + f; g += R(h, 9) ^ a; b ^= R(c, 19) + d;
        e += R(f, 3) ^ g; h ^= R(a, 17) + b; c += R(d, 5) ^ e; f ^= R(g, 23) + h;
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}
static uint32_t chain(uint32_t s) {
    uint64_t x = s;
    for (int i = 0; i < 400; i++) { x = (x << 7 | x >> 57) + 0x632be59bd9b4e019ull; __asm__ volatile("" : "+r"(x)); }
    return (uint32_t)x;
}
static int cmp(const void *p, const void *q) {
    uint64_t x = *(const uint64_t *)p, y = *(const uint64_t *)q;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv) {
    int windows = atoi(argv[1]), use_ilp = atoi(argv[3]);
    uint64_t span = (uint64_t)atoll(argv[2]) * (uint64_t)atoll(argv[4]); /* ms × kHz = ticks */
    static uint64_t t[400000];
    uint32_t acc = 0;
    for (int w = 0; w < windows; w++) {
        int n = 0;
        uint64_t t0 = __rdtsc();
        while (__rdtsc() - t0 < span && n < 400000) {
            uint64_t a = __rdtsc();
            acc += use_ilp ? ilp(acc) : chain(acc);
            uint64_t b = __rdtsc();
            t[n++] = b - a;
        }
        qsort(t, n, sizeof t[0], cmp);
        double half = 0;
        for (int i = 0; i < n / 2; i++) half += (double)t[i];
        printf("%d %llu %llu %llu %llu %.0f\n", n, (unsigned long long)t[0],
               (unsigned long long)t[n / 100], (unsigned long long)t[n / 10],
               (unsigned long long)t[n / 2], half / (n / 2 ? n / 2 : 1));
    }
    return acc == 7;
}
"""


def tsc_khz():
    """The clock cpuinfo states, kHz (the TSC's rate on an x86 VM), else 2.5 GHz."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                return int(float(line.split(":")[1]) * 1000)
    except OSError:
        pass
    return 2_500_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--window-ms", type=int, default=2)
    ap.add_argument("--work", choices=["ilp", "chain"], default="ilp")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="host-spells-") as d:
        c, exe = os.path.join(d, "spells.c"), os.path.join(d, "spells")
        open(c, "w").write(SOURCE)
        subprocess.run(["cc", "-O2", c, "-o", exe], check=True)
        out = subprocess.run(["taskset", "-c", str(a.cpu), exe, str(a.windows), str(a.window_ms),
                              "1" if a.work == "ilp" else "0", str(tsc_khz())],
                             capture_output=True, text=True, check=True).stdout
    rows = [list(map(float, l.split())) for l in out.split("\n") if l.strip()]
    # A window the process spent mostly preempted holds too few calls to have quantiles.
    kept = [r[1:] for r in rows if r[0] >= 100]
    names = ["fastest", "p1", "p10", "p50", "fastest-half mean"]
    print(f"work: {a.work}; {len(kept)} windows of {a.window_ms} ms on CPU {a.cpu} "
          f"({len(rows) - len(kept)} left out: fewer than 100 calls); TSC ticks a call")
    rows = kept
    print("| statistic | smallest window | largest window | largest / smallest |")
    print("|---|---|---|---|")
    for i, n in enumerate(names):
        col = [r[i] for r in rows]
        print(f"| {n} | {min(col):.0f} | {max(col):.0f} | {max(col) / min(col):.3f} |")


if __name__ == "__main__":
    main()
