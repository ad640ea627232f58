#!/usr/bin/env python3
"""ABI overhead benchmark (not a test): is a SUPERCOP `crypto_hash` timed call any dearer than
an ICCS `CryptHash` one?

Builds one C library whose `CryptHash` and `crypto_hash` both return 0 at once (so a call costs
only the call itself) plus the toy hash of tests/fixtures/supercop/twoabi.c, then alternates
`cyclescope run --lib … --abi iccs|supercop` for R rounds at 32 B (the empty function) and at
32 B / 1 KiB (the toy hash). Prints the median over rounds of each job's mean cycles per call
and the SUPERCOP/ICCS ratio.

usage: bench/abi_overhead.py [--rounds N]      (after `cargo build --release`; needs cc)
"""
import argparse, json, pathlib, statistics, subprocess, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXE = ROOT / "target" / "release" / "cyclescope"
EMPTY = r"""
int CryptHash(int b, const unsigned char *m, unsigned long long l, unsigned char *d)
{ (void)b; (void)m; (void)l; (void)d; return 0; }
int crypto_hash(unsigned char *o, const unsigned char *i, unsigned long long l)
{ (void)o; (void)i; (void)l; return 0; }
"""


def build(tmp, name, source):
    src = tmp / f"{name}.c"
    src.write_text(source)
    lib = tmp / f"lib{name}.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(src)], check=True)
    return lib


def measure(tmp, lib, abi, length, rnd):
    out = tmp / f"run-{lib.stem}-{abi}-{length}-{rnd}"
    subprocess.run([str(EXE), "run", "--lib", str(lib), "--abi", abi, "--digest-bits", "256",
                    "--lengths", str(length), "--trial-target", "0.2",
                    "--allow-unfixed-host", "--allow-kat-fail", "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rec = next((out / "records").glob(f"*/*__hash_{length}.json"))
    return json.loads(rec.read_text())["mean_cycles"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        empty = build(tmp, "empty", EMPTY)
        toy = build(tmp, "twoabi", (ROOT / "tests/fixtures/supercop/twoabi.c").read_text())
        for lib, lengths in [(empty, [32]), (toy, [32, 1024])]:
            for length in lengths:
                got = {"iccs": [], "supercop": []}
                for rnd in range(a.rounds):
                    for abi in ("iccs", "supercop"):
                        got[abi].append(measure(tmp, lib, abi, length, rnd))
                i, s = statistics.median(got["iccs"]), statistics.median(got["supercop"])
                print(f"{lib.stem:8} {length:5} B  iccs {i:9.1f}  supercop {s:9.1f}  "
                      f"ratio {s / i:.3f}  (rounds: {got})")


if __name__ == "__main__":
    main()
