#!/usr/bin/env bash
# Captures the real workbench in tmux (not the demo states): idle, help, and after a short run
# of pseudoXOF-512 and sm3hash-256 at 32 B and 1 KiB. Writes screenshots/tmux-*.txt.
# Usage: scripts/tui-capture.sh [BINARY]   (default: target/release/cyclescope, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/cyclescope}
[ -x "$bin" ] || cargo build --release
command -v tmux >/dev/null || { echo "tmux is needed (apt-get install tmux)" >&2; exit 2; }
sock="cyclescope-capture-$$"
t() { tmux -L "$sock" -f /dev/null "$@"; }
trap 't kill-server 2>/dev/null || true' EXIT
mkdir -p screenshots

# Polls the pane until it shows $1 (at most ~10 minutes).
wait_for() {
  for _ in $(seq 1 6000); do
    t capture-pane -p | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2
  t capture-pane -p >&2
  return 1
}

t new-session -d -x 120 -y 36 -c "$PWD" "$bin --trial-target 0.05 --allow-unfixed-host; sleep 600"
wait_for "Catalog · 0 selected"
t capture-pane -p > screenshots/tmux-idle-120x36.txt
t send-keys '?'
wait_for "Keys · Esc/?/q closes"
t capture-pane -p > screenshots/tmux-help-120x36.txt
t send-keys Escape
# sm3hash-256 is the first instance, pseudoXOF-512 the seventh; keep S1 and S4 only.
t send-keys j Space j j j j j j Space 2 3 5 6 7 8
wait_for "Catalog · 2 selected"
wait_for "32 B · 1 KiB"
t send-keys s
wait_for "s runs again"
t capture-pane -p > screenshots/tmux-after-run-120x36.txt
t send-keys q
echo "wrote screenshots/tmux-{idle,help,after-run}-120x36.txt"
