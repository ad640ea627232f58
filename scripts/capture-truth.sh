#!/usr/bin/env bash
# Usage: scripts/capture-truth.sh PREFIX  — runs the real binary in tmux 160x48: run 1 (sm3hash-256 + pseudoXOF-512
# at 32 B and 1 KiB) with a CPU hog on the measurement CPU, run 2 (sm3hash-256 at 32 B, 128 B),
# captures the results screen and the table printed on leaving.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$1
bin=target/debug/cyclescope
sock="i15-$$"
t() { tmux -L "$sock" -f /dev/null "$@"; }
hog=""
cleanup() { t kill-server 2>/dev/null || true; [ -n "$hog" ] && kill "$hog" 2>/dev/null || true; }
trap cleanup EXIT
wait_for() {
  for _ in $(seq 1 6000); do
    t capture-pane -p | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2; t capture-pane -p >&2; return 1
}
t new-session -d -x 160 -y 48 -c "$PWD" "$bin --trial-target 0.05 --allow-unfixed-host; echo LEFT; sleep 600"
wait_for "Catalog · 0 selected"
t send-keys j Space j j j j j j Space 2 3 5 6 7 8
wait_for "Catalog · 2 selected"
# A competing process on the measurement CPU (the last one) during the first run.
taskset -c "$(( $(nproc) - 1 ))" sh -c 'while :; do :; done' & hog=$!
t send-keys s
wait_for "s runs again"
kill "$hog"; hog=""
t capture-pane -p > "screenshots/issue15-$prefix-run1-160x48.txt"
# Second run: sm3hash-256 only, at 32 B and 128 B.
t send-keys Space 2 4
wait_for "Catalog · 1 selected"
t send-keys s
sleep 1.5
wait_for "s runs again"
sleep 0.3
t capture-pane -p > "screenshots/issue15-$prefix-run2-160x48.txt"
t send-keys q
wait_for LEFT
t capture-pane -p -S -200 > "screenshots/issue15-$prefix-leave-160x48.txt"
echo done
