#!/usr/bin/env bash
# Golden outputs in the style of SimGrid's tesh examples: every case of cases.txt runs under
# both engines and its digest (iteration, per-phase and communication times of `rectwin sim`;
# time, algbw and busbw of `rectwin collective`, at 9 significant digits) must equal
# expected/NAME.ENGINE.txt byte for byte. A changed number is a visible decision: rerun with
# --update, and the diff shows in review.
# Usage: run.sh RECTWIN SOURCE_DIR [--update] [--only NAME]
set -euo pipefail
rectwin=$1
src=$2
shift 2
update=0
only=
while [ $# -gt 0 ]; do
    case $1 in
    --update) update=1 ;;
    --only) only=$2; shift ;;
    *) echo "run.sh: unknown argument '$1'; allowed: --update, --only NAME" >&2; exit 2 ;;
    esac
    shift
done
engines="analytic simgrid"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$src"

digest_sim() {
    python3 - "$1/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = lambda v: format(v, ".9g")
print("iteration_time_s", g(s["iteration_time_s"]))
print("comm_time_s", g(s["comm_time_s"]))
print("exposed_comm_s", g(s["exposed_comm_s"]))
print("peak_hbm_bytes", g(s["peak_hbm_bytes"]))
for name, t in s["phases"].items():
    print("phase", name, g(t))
PY
}

digest_collective() {
    python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = lambda v: format(v, ".9g")
print("algo", s["algo"])
for k in ("time_s", "algbw_GBps", "busbw_GBps"):
    print(k, g(s[k]))
PY
}

failed=0
ran=0
while read -r name sub rest; do
    case $name in '' | '#'*) continue ;; esac
    [ -z "$only" ] || [ "$only" = "$name" ] || continue
    eval "args=($rest)"
    for engine in $engines; do
        got=$work/$name.$engine.txt
        if [ "$sub" = sim ]; then
            "$rectwin" sim "${args[@]}" --engine "$engine" --quiet --out "$work/r" >/dev/null
            digest_sim "$work/r" >"$got"
        else
            "$rectwin" collective "${args[@]}" --engine "$engine" >"$work/c.json"
            digest_collective "$work/c.json" >"$got"
        fi
        want=tests/golden/expected/$name.$engine.txt
        ran=$((ran + 1))
        if [ $update = 1 ]; then
            cp "$got" "$want"
        elif ! diff -u "$want" "$got"; then
            echo "golden: $name ($engine) differs from $want (rerun with --update if intended)"
            failed=$((failed + 1))
        fi
    done
done <tests/golden/cases.txt
[ $ran -gt 0 ] || { echo "golden: no case matched"; exit 2; }
echo "golden: $ran outputs, $failed differ"
[ $failed = 0 ]
