#!/usr/bin/env bash
# `make run`: start `kiln all` (identity :5000, API :8004, engine), deploy the
# quick-start stack, show its outputs, and keep serving until Ctrl-C.
set -euo pipefail
BIN=${BIN:-.venv/bin}
DATA_DIR=${KILN_DATA_DIR:-$HOME/.local/share/kiln}
LOG="$DATA_DIR/kiln.log"
mkdir -p "$DATA_DIR"

"$BIN/kiln" all --data-dir "$DATA_DIR" "$@" > >(tee "$LOG") 2>&1 &
KILN_PID=$!
trap 'kill -INT $KILN_PID 2>/dev/null; wait $KILN_PID 2>/dev/null' INT TERM EXIT

for _ in $(seq 1 120); do
    grep -q "kiln: ready" "$LOG" 2>/dev/null && break
    kill -0 $KILN_PID 2>/dev/null || { echo "kiln all exited; see $LOG" >&2; exit 1; }
    sleep 0.5
done

export OS_CLOUD=kiln
TEMPLATE=(-t examples/quickstart.yaml -e examples/quickstart-env.yaml)
if "$BIN/kiln" stack show quickstart >/dev/null 2>&1; then
    echo "== updating stack quickstart"
    "$BIN/kiln" stack update quickstart "${TEMPLATE[@]}" --wait
else
    echo "== creating stack quickstart"
    "$BIN/kiln" stack create quickstart "${TEMPLATE[@]}" --wait
fi
echo "== outputs"
"$BIN/kiln" output show quickstart --all
echo "== kiln is serving; try: openstack --os-cloud kiln stack list   (Ctrl-C stops)"
echo "== a real application on the simulated cloud: see examples/multi-tier (README)"
wait $KILN_PID
