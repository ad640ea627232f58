#!/usr/bin/env python3
"""Verdict-rate benchmark (not a test): how often `compare` calls two identical builds
different (A/A, false positives), and how often it sees a real 5 % difference (detection),
as the host is and with a busy loop pinned to the measurement CPU.

It compiles one small C library three times into a scratch folder: A and A' with the same
work (ROUNDS=40 mixing rounds a byte), B with 5 % more (ROUNDS=42). `--work chain` (the
default) mixes one 64-bit word, one dependent step after another: latency-bound code, which
another tenant on the host's sibling thread barely slows. `--work ilp` mixes eight 32-bit lanes
the way SM3's rounds do (rotations, additions and XORs that can issue side by side): code the
host's contention slows by up to 1.75×, which is what two separate runs of it stray by. Per setting and round it
measures each once (`run --lib`, 32 B, 1 KiB and 16 KiB), then runs `compare A A'` and
`compare A B` and counts the verdicts per job, and which figure they were judged on (mean
cycles, or the uninterrupted-call means when a mean was doubtful).

With `--live` it judges the interleaved A/B instead (`compare --live`, which the workbench's `B`
runs too): per setting and round, `compare --live A A'` and `compare --live A B` over the same
three lengths, each side's trials alternating in one run, so both share every spell of the host.

usage: bench/verdicts.py [--exe target/release/cyclescope] [--rounds 4] [--cpu 1] [--work chain|ilp] [--live]
"""
import argparse, json, os, subprocess, tempfile

SOURCE = r"""
#include <stdint.h>
#include <string.h>
int CryptHash(int bits, const unsigned char *m, unsigned long long len_bits, unsigned char *d) {
    uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)bits;
    unsigned long long n = len_bits / 8;
    for (unsigned long long i = 0; i < n; i++) {
        s ^= m[i];
        for (int r = 0; r < ROUNDS; r++) {
            s = (s << 7 | s >> 57) + 0x632be59bd9b4e019ull;
            __asm__ volatile("" : "+r"(s));
        }
    }
    for (int i = 0; i < bits / 8; i++) {
        d[i] = (unsigned char)(s >> (8 * (i % 8)));
        s = s * 0x2545f4914f6cdd1dull + 1;
    }
    return 0;
}
"""

ILP_SOURCE = r"""
#include <stdint.h>
#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
int CryptHash(int bits, const unsigned char *m, unsigned long long len_bits, unsigned char *d) {
    uint32_t v[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                     0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};
    unsigned long long n = len_bits / 8;
    for (unsigned long long i = 0; i < n; i++) {
        v[i % 8] ^= m[i];
        for (int r = 0; r < ROUNDS / 8; r++) {
            v[0] += ROTL(v[1], 7) ^ v[2]; v[3] ^= ROTL(v[4], 12) + v[5];
            v[6] += ROTL(v[7], 9) ^ v[0]; v[1] ^= ROTL(v[2], 19) + v[3];
            v[4] += ROTL(v[5], 3) ^ v[6]; v[7] ^= ROTL(v[0], 17) + v[1];
            v[2] += ROTL(v[3], 5) ^ v[4]; v[5] ^= ROTL(v[6], 23) + v[7];
        }
    }
    for (int i = 0; i < bits / 8; i++)
        d[i] = (unsigned char)(v[i % 8] >> (8 * ((i / 8) % 4)));
    return 0;
}
"""

LENGTHS = "32,1024,16384"


def build(work, name, rounds, source):
    c = os.path.join(work, "mix.c")
    open(c, "w").write(source)
    lib = os.path.join(work, f"lib{name}-256.so")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-DROUNDS={rounds}", c, "-o", lib], check=True)
    return lib


def measure(exe, lib, out, cpu):
    subprocess.run([exe, "run", "--lib", lib, "--label", "MIX-256", "--digest-bits", "256",
                    "--no-baselines", "--no-reference-jobs", "--lengths", LENGTHS, "--trial-target", "0.1",
                    "--allow-unfixed-host", "--allow-kat-fail", "--cpus", str(cpu), "--out", out],
                   capture_output=True, check=True)
    return out


def verdicts(exe, a, b):
    p = subprocess.run([exe, "compare", a, b, "--json"], capture_output=True, text=True)
    rows = json.loads(p.stdout)
    out = []
    for r in rows:
        j = r.get("judged") or {}
        out.append((r.get("verdict"), j.get("on"), r.get("message_bytes"), j.get("b_over_a"),
                    j.get("low"), j.get("high")))
    return out


def live(exe, work, cpu, a, b, out):
    p = subprocess.run([exe, "compare", "--live", "--scan", work, a, b, "--lengths", LENGTHS,
                        "--trial-target", "0.1", "--allow-unfixed-host", "--allow-kat-fail",
                        "--cpu", str(cpu), "--out", out, "--json"],
                       capture_output=True, text=True, check=True)
    out = []
    for n in json.loads(p.stdout)["lengths"]:
        r = n.get("ratio") or {}
        out.append((n.get("verdict"), r.get("basis"), n.get("input_bytes"), r.get("ratio"),
                    r.get("ci95_low"), r.get("ci95_high")))
    return out


def live_setting(exe, work, cpu, rounds, name):
    aa, ab = [], []
    for i in range(rounds):
        aa += live(exe, work, cpu, "MIXA-256", "MIXA2-256", os.path.join(work, f"{name}-{i}-aa"))
        ab += live(exe, work, cpu, "MIXA-256", "MIXB-256", os.path.join(work, f"{name}-{i}-ab"))
    return aa, ab


def setting(exe, libs, work, cpu, rounds, name, interleaved=False):
    if interleaved:
        return live_setting(exe, work, cpu, rounds, name)
    aa, ab = [], []
    for i in range(rounds):
        runs = {k: measure(exe, lib, os.path.join(work, f"{name}-{i}-{k}"), cpu)
                for k, lib in libs.items()}
        aa += verdicts(exe, runs["A"], runs["A2"])
        ab += verdicts(exe, runs["A"], runs["B"])
    return aa, ab


def summary(name, aa, ab):
    fp = sum(1 for v, *_ in aa if v in ("faster", "slower"))
    hit = sum(1 for v, *_ in ab if v == "slower")
    wrong = sum(1 for v, *_ in ab if v == "faster")
    on = sorted({o or "none" for _, o, *_ in aa + ab})
    print(f"| {name} | {fp}/{len(aa)} | {hit}/{len(ab)} | {wrong} | {', '.join(on)} |")


def detail(name, aa, ab):
    for kind, rows in (("A/A", aa), ("A/B", ab)):
        for v, on, n, x, lo, hi in rows:
            if x is not None:
                print(f"  {name} {kind} {n} B: {x:.3f} [{lo:.3f}, {hi:.3f}] on {on}: {v}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", default="target/release/cyclescope")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--work", choices=["chain", "ilp"], default="chain")
    ap.add_argument("--live", action="store_true")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="verdict-bench-")
    # The ILP body runs its eight lanes in blocks of eight rounds: 20 and 21 blocks (+5 %).
    source, (ra, rb) = (SOURCE, (40, 42)) if a.work == "chain" else (ILP_SOURCE, (160, 168))
    libs = {"A": build(work, "MIXA", ra, source), "A2": build(work, "MIXA2", ra, source),
            "B": build(work, "MIXB", rb, source)}
    quiet = setting(a.exe, libs, work, a.cpu, a.rounds, "quiet", a.live)
    busy = subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c", "while :; do :; done"])
    try:
        loaded = setting(a.exe, libs, work, a.cpu, a.rounds, "loaded", a.live)
    finally:
        busy.kill()
    subprocess.run(["rm", "-rf", work])
    print(f"work: {a.work}; {'interleaved (compare --live)' if a.live else 'separate runs (compare)'}")
    print("| setting | A/A called different | A vs +5 % called slower | called faster | judged on |")
    print("|---|---|---|---|---|")
    summary("as the host is", *quiet)
    summary("busy loop on the CPU", *loaded)
    detail("quiet", *quiet)
    detail("loaded", *loaded)
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
