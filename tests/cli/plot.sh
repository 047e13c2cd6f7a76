#!/usr/bin/env bash
# `rectwin plot`: every kind draws a non-empty PNG (and SVG and PDF) from a small input, with
# its gnuplot script and data files next to it, and the script redraws the image by itself;
# no temporary file is left. Without gnuplot on PATH the script is still written and the exit
# is 1 with a clear message; a failing gnuplot leaves no image; a bad kind, option or column
# names the closest valid one and exits 2. Skipped (77) where gnuplot is not installed.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() {
  echo "plot: $*"
  exit 1
}
gnuplot=$(command -v gnuplot) || {
  echo "plot: gnuplot is not installed; skipped"
  exit 77
}

# Inputs: the tiny scenario predicted twice (the second, slower NIC stands for a measurement)
# and a sweep table written by hand, with a failed point.
scenario="$src/tests/data/tiny.yaml"
"$rectwin" sim "$scenario" --engine analytic --quiet --out "$out/pred"
"$rectwin" sim "$scenario" --engine analytic --quiet --out "$out/meas" \
  --set topology.scale_out.nic_bw=100Gbps
"$rectwin" sim "$scenario" --engine analytic --quiet --out "$out/hsp" \
  --set plan.name=hsp --set plan.group_size=2
cat >"$out/sweep.csv" <<'CSV'
topology.nodes,plan.name,ranks,samples_per_s,iteration_time_s,exposed_comm_s,phases.emb.fwd.lookup,phases.emb.fwd.out_a2a,phases.dense.fwd,error
1,flat,8,1.0e6,0.010,0.002,0.001,0.003,0.006,
2,flat,16,1.8e6,0.011,0.003,0.001,0.004,0.006,
4,flat,32,3.0e6,0.013,0.005,0.001,0.006,0.006,
1,hsp,8,1.1e6,0.009,0.001,0.001,0.002,0.006,
2,hsp,16,2.1e6,0.0095,0.0015,0.001,0.0025,0.006,
4,hsp,32,,,,,,,"out of memory, say"
CSV
# The columns as rectwin sweep writes them: phase.<phase>_s, empty where a plan has no phase.
cat >"$out/sweep2.csv" <<'CSV'
point,status,plan.name,ranks,samples_per_s,iteration_time_s,exposed_comm_s,phase.emb.fwd.lookup_s,phase.emb.fwd.out_a2a_s,phase.emb.bwd.cross_group_sync_s,error
0,ok,flat,8,1.0e6,0.010,0.002,0.001,0.003,,
1,ok,hsp,8,1.1e6,0.009,0.001,0.001,0.002,0.001,
CSV

check_png() { # FILE: a PNG of non-zero size
  python3 - "$1" <<'PY' || fail "$1 is not a PNG image"
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
w, h = struct.unpack('>II', b[16:24])
assert w >= 100 and h >= 100 and len(b) > 2000, (w, h, len(b))
PY
}

draw() { # KIND OUTPUT ARGS...: draws, then checks the image and the script beside it
  local kind=$1 img=$2
  shift 2
  "$rectwin" plot "$kind" "$@" -o "$img" >"$out/stdout" 2>"$out/stderr" ||
    fail "$kind: exit $?: $(cat "$out/stderr")"
  [ -s "$img" ] || fail "$kind: no image"
  if grep -qi 'warning' "$out/stderr"; then fail "$kind: gnuplot warned: $(cat "$out/stderr")"; fi
  [ -s "${img%.*}.gp" ] || fail "$kind: no script"
  ls "${img%.*}".*.dat >/dev/null 2>&1 || fail "$kind: no data file"
  grep -q "^set title\|multiplot.*title" "${img%.*}.gp" || fail "$kind: no title"
  grep -q "xlabel\|xtics" "${img%.*}.gp" || fail "$kind: no x axis"
}

mkdir "$out/img"
draw roofline "$out/img/roofline.png" "$out/pred" --measured "$out/meas"
draw bwroofline "$out/img/bwroofline.png" "$out/pred" --measured "$out/meas"
draw scaling "$out/img/scaling.png" "$out/sweep.csv"
draw breakdown "$out/img/breakdown.png" "$out/pred" "$out/hsp"
draw breakdown "$out/img/breakdown-sweep.png" "$out/sweep.csv" --by plan.name,topology.nodes
draw breakdown "$out/img/breakdown-sweep2.png" "$out/sweep2.csv"
draw compare "$out/img/compare.png" "$out/pred" "$out/meas"
draw timeline "$out/img/timeline.png" "$out/pred" --ranks 2
draw timeline "$out/img/it's a \"name\".png" "$out/pred" # quotes and spaces in the file name
for f in "$out"/img/*.png; do check_png "$f"; done

# What the images say: the title names scenario, engine and topology; axes have units.
grep -q "Roofline: tiny (plan flat), engine analytic, topology dgx-h100, 2 nodes, 4 ranks" \
  "$out/img/roofline.gp" || fail "roofline title: $(grep title "$out/img/roofline.gp")"
grep -q "FLOP/s" "$out/img/roofline.gp" || fail "roofline units"
grep -q "logscale xy" "$out/img/roofline.gp" || fail "roofline log axes"
grep -q "bf16/fp16 peak 989 TFLOP/s" "$out/img/roofline.gp" || fail "roofline ceilings"
grep -q "B/s" "$out/img/bwroofline.gp" || fail "bwroofline axes"
grep -q "scaling efficiency" "$out/img/scaling.gp" || fail "scaling panel"
grep -q "'hsp'" "$out/img/scaling.gp" || fail "scaling: no hsp line"
grep -q "'flat'" "$out/img/scaling.gp" || fail "scaling: no flat line"
grep -q "exposed comm" "$out/img/breakdown.gp" || fail "breakdown exposed comm"
grep -q "'flat / 1' 0" "$out/img/breakdown-sweep.gp" || fail "breakdown --by labels"
grep -q "title 'emb.bwd.cross_group_sync (comm)'" "$out/img/breakdown-sweep2.gp" ||
  fail "breakdown: phase.<phase>_s columns"
grep -q "MAPE over phases" "$out/img/compare.gp" || fail "compare MAPE"
grep -q "'rank 1 comm'" "$out/img/timeline.gp" || fail "timeline rows"
if grep -q "'rank 2 " "$out/img/timeline.gp"; then fail "timeline --ranks 2 drew rank 2"; fi
"$rectwin" plot scaling "$out/sweep.csv" -o "$out/img/s2.png" 2>"$out/stderr" >/dev/null
grep -q '1 rows without a GPU count or samples_per_s' "$out/stderr" || fail "$(cat "$out/stderr")"

# SVG and PDF by extension; the script alone redraws the image; no temporary files remain.
draw roofline "$out/img/r.svg" "$out/pred"
grep -q '<svg' "$out/img/r.svg" || fail "not an SVG"
draw compare "$out/img/c.pdf" "$out/pred" "$out/meas"
[ "$(head -c 4 "$out/img/c.pdf")" = "%PDF" ] || fail "not a PDF"
rm "$out/img/timeline.png"
(cd "$out/img" && "$gnuplot" timeline.gp) || fail "the script does not redraw"
check_png "$out/img/timeline.png"
no_temporaries() { # WHEN
  local f
  for f in "$out"/img/*.tmp.*; do
    [ ! -e "$f" ] || fail "$1: temporary file left: $f"
  done
}
no_temporaries "after drawing"

# No gnuplot on PATH: exit 1, a clear message, the script and data written, no image.
mkdir "$out/nognu"
set +e
PATH=/nonexistent "$rectwin" plot compare "$out/pred" "$out/meas" -o "$out/nognu/c.png" \
  >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "without gnuplot: exit $rc, not 1"
grep -q "gnuplot not found on PATH" "$out/err" || fail "without gnuplot: $(cat "$out/err")"
[ -s "$out/nognu/c.gp" ] || fail "without gnuplot: no script"
[ -s "$out/nognu/c.bars.dat" ] || fail "without gnuplot: no data"
[ ! -e "$out/nognu/c.png" ] || fail "without gnuplot: an image appeared"

# A gnuplot that fails: exit 1, the old image kept, no temporary image left.
mkdir "$out/bin"
printf '#!/bin/sh\necho "broken gnuplot" >&2\nexit 3\n' >"$out/bin/gnuplot"
chmod +x "$out/bin/gnuplot"
cp "$out/img/compare.png" "$out/img/keep.png"
set +e
PATH="$out/bin:$PATH" "$rectwin" plot compare "$out/pred" "$out/meas" -o "$out/img/keep.png" \
  >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "failing gnuplot: exit $rc, not 1"
grep -q "gnuplot failed (exit status 3)" "$out/err" || fail "failing gnuplot: $(cat "$out/err")"
cmp -s "$out/img/compare.png" "$out/img/keep.png" || fail "failing gnuplot replaced the image"
no_temporaries "failing gnuplot"

# Bad usage: exit 2 and the closest valid name (a column is known once the table is read: 1).
expect_usage() { # PATTERN ARGS...
  expect 2 "$@"
}
expect() { # RC PATTERN ARGS...
  local want=$1 pattern=$2
  shift 2
  set +e
  "$rectwin" plot "$@" >/dev/null 2>"$out/err"
  rc=$?
  set -e
  [ "$rc" = "$want" ] || fail "'$*' exited $rc, not $want"
  grep -q -- "$pattern" "$out/err" || fail "'$*': $(cat "$out/err")"
}
expect_usage "unknown kind 'rooflin'; did you mean 'roofline'?" rooflin "$out/pred"
expect_usage "unknown kind 'timelime'; did you mean 'timeline'?" timelime "$out/pred"
expect_usage "unknown option '--measure'; did you mean '--measured'?" roofline "$out/pred" \
  --measure "$out/meas"
expect 1 "unknown column of $out/sweep.csv 'plan.nmae'; did you mean 'plan.name'?" \
  scaling "$out/sweep.csv" --by plan.nmae
expect_usage "must end in .png, .svg or .pdf" timeline "$out/pred" -o "$out/x.jpg"
expect_usage "missing input" compare "$out/pred"
grep -q 'example:' <<<"$("$rectwin" plot bwroofline --help)" || fail "kind --help lacks an example"
grep -q 'plot' <<<"$("$rectwin" --help)" || fail "rectwin --help lacks plot"

# Bad input: exit 1 with the file named.
expect 1 "sweep.csv: not a result directory" roofline "$out/sweep.csv" -o "$out/x.png"
printf 'ranks,samples_per_s\n8,"1e6\n' >"$out/bad.csv"
expect 1 "bad.csv:2:3: quoted field is never closed" scaling "$out/bad.csv" -o "$out/x.png"
for f in "$out/x.png" "$out/x.gp"; do [ ! -e "$f" ] || fail "bad input left $f"; done
echo "plot ok"
