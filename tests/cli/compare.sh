#!/usr/bin/env bash
# `rectwin compare` on two analytic predictions of the DLRM scenario that differ only in NIC
# bandwidth: a directory against itself has no error anywhere; against the other, the printed
# errors are (pred - meas) / meas of the two summary.json files; a measured 0 is n/a; unmatched
# ops are counted and listed; malformed input names the file and exits 1, bad usage exits 2.
set -euo pipefail
rectwin=$1
src=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() {
  echo "compare: $*"
  exit 1
}
scenario="$src/experiments/dlrm-criteo.yaml"
"$rectwin" sim "$scenario" --engine analytic --quiet --out "$out/fast" \
  --set topology.scale_out.nic_bw=400Gbps
"$rectwin" sim "$scenario" --engine analytic --quiet --out "$out/slow" \
  --set topology.scale_out.nic_bw=100Gbps
grep -q -- '--top' <<<"$("$rectwin" compare --help)" || fail "--help lacks --top"
grep -q 'compare' <<<"$("$rectwin" --help)" || fail "rectwin --help lacks compare"

# Against itself: every error is zero, in the text and in the JSON.
"$rectwin" compare "$out/fast" "$out/fast" >"$out/self.txt"
grep -q '^MAPE over ops: 0.00% ' "$out/self.txt" || fail "self MAPE over ops is not 0"
grep -q '^MAPE over phases: 0.00% ' "$out/self.txt" || fail "self MAPE over phases is not 0"
bad=$(grep -E '[+-][0-9]+\.[0-9]+%' "$out/self.txt" | grep -vE '[+-]0\.00%$' || true)
[ -z "$bad" ] || fail "nonzero error comparing a directory with itself: $bad"
"$rectwin" compare "$out/fast" "$out/fast" --json | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['ops_mape'] == 0 and j['phases_mape'] == 0, (j['ops_mape'], j['phases_mape'])
assert all(m['rel_err'] == 0 for m in j['headline'].values()), j['headline']
assert all(p['rel_err'] == 0 for p in j['phases']), j['phases']
assert j['ops_matched'] == 1024 and not j['unmatched']['pred_only'] and not j['unmatched']['meas_only']
"

# Against the slower NIC: the printed errors follow from the two summaries.
"$rectwin" compare "$out/fast" "$out/slow" >"$out/diff.txt"
"$rectwin" compare "$out/fast" "$out/slow" --json --top 3 >"$out/diff.json"
python3 -m json.tool "$out/diff.json" >/dev/null || fail "--json output is not JSON"
python3 - "$out" <<'PY'
import csv, json, re, sys
d = sys.argv[1]
pred = json.load(open(d + '/fast/summary.json'))
meas = json.load(open(d + '/slow/summary.json'))
text = open(d + '/diff.txt').read()

def printed(label):
    m = re.search(r'^%s\s+\S+\s+\S+\s+([+-][0-9.]+)%%$' % re.escape(label), text, re.M)
    assert m, 'no error printed for ' + label
    return float(m.group(1))

for k in ('iteration_time_s', 'comm_time_s', 'mfu'):
    want = 100 * (pred[k] - meas[k]) / meas[k]
    assert abs(printed(k) - want) <= 0.005 + 1e-9, (k, printed(k), want)
assert pred['iteration_time_s'] < meas['iteration_time_s']  # a faster NIC predicts less time
for ph, s in pred['phases'].items():
    want = 100 * (s - meas['phases'][ph]) / meas['phases'][ph]
    assert abs(printed(ph) - want) <= 0.005 + 1e-9, (ph, printed(ph), want)

j = json.load(open(d + '/diff.json'))
h = j['headline']['iteration_time_s']
want = (pred['iteration_time_s'] - meas['iteration_time_s']) / meas['iteration_time_s']
assert h['pred'] == pred['iteration_time_s'] and h['meas'] == meas['iteration_time_s'], h
assert abs(h['rel_err'] - want) <= 1e-12 * abs(want), (h['rel_err'], want)

# MAPE and the worst ops, recomputed from the two ops.csv files (same graph: rows pair up).
def durations(name):
    rows = csv.DictReader(open('%s/%s/ops.csv' % (d, name)))
    return {(r['rank'], r['name'], r['phase']): float(r['end_s']) - float(r['start_s'])
            for r in rows}
p, m = durations('fast'), durations('slow')
assert p.keys() == m.keys() and len(p) == j['ops_matched'] == 1024
errs = [abs(p[k] - m[k]) / m[k] for k in p if m[k] != 0]
assert abs(j['ops_mape'] - 100 * sum(errs) / len(errs)) < 1e-6, j['ops_mape']
worst = sorted((abs(p[k] - m[k]) for k in p), reverse=True)[:3]
assert len(j['worst_ops']) == 3
for w, e in zip(j['worst_ops'], worst):
    assert abs(w['abs_err_s'] - e) <= 1e-9 * e, (w, e)
    assert w['phase'].startswith('emb.') and w['phase'].endswith('a2a'), w  # the NIC-bound ops
PY

# A measured duration of 0 gives n/a; an op on one side only is listed, not dropped.
mkdir "$out/edit"
cp "$out/slow/summary.json" "$out/edit/"
python3 - "$out/slow/ops.csv" "$out/edit/ops.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
head, rows = lines[0], lines[1:]
cols = head.strip().split(',')
first = rows[0].rstrip('\n').split(',')
first[cols.index('end_s')] = first[cols.index('start_s')]  # measured 0 s
extra = rows[1].rstrip('\n').split(',')
extra[cols.index('name')] = 'only_measured'
open(sys.argv[2], 'w').write(head + ','.join(first) + '\n' + ''.join(rows[1:]) + ','.join(extra) + '\n')
PY
"$rectwin" compare "$out/fast" "$out/edit" >"$out/edit.txt"
grep -qE '^ +0 +bucketize_ids +emb\.fwd\.bucketize +\S+ +0\.000000e\+00 +n/a$' "$out/edit.txt" ||
  fail "a measured 0 is not n/a"
grep -q '^MAPE over ops: .* (1023 of 1024; ' "$out/edit.txt" || fail "MAPE does not skip the n/a op"
grep -q '^unmatched ops: 0 predicted only, 1 measured only$' "$out/edit.txt" ||
  fail "the unmatched op is not counted"
grep -qE '^ +measured +0 +only_measured ' "$out/edit.txt" || fail "the unmatched op is not listed"
if tail -n +4 "$out/edit.txt" | grep -qiE 'inf|nan'; then fail "inf or nan printed"; fi

# A set an interrupted run left mixed (a file that is not the one its manifest names) is
# refused; a directory without a manifest is read with a note.
mkdir "$out/mixed"
cp "$out/slow/summary.json" "$out/slow/manifest.json" "$out/mixed/"
cp "$out/fast/ops.csv" "$out/mixed/"
set +e
"$rectwin" compare "$out/fast" "$out/mixed" >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "a mixed set exited $rc, not 1"
grep -q "mixed/ops.csv: not the file its manifest.json names" "$out/err" || fail "$(cat "$out/err")"
"$rectwin" compare "$out/fast" "$out/edit" >/dev/null 2>"$out/err"
grep -q "has no manifest.json" "$out/err" || fail "no note for a directory without a manifest"

# Malformed input: exit 1 with FILE:LINE:COL; bad usage: exit 2.
mkdir "$out/bad"
cp "$out/slow/summary.json" "$out/bad/"
sed '3s/.*/0,1,too_few_fields/' "$out/slow/ops.csv" >"$out/bad/ops.csv"
set +e
"$rectwin" compare "$out/fast" "$out/bad" >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "malformed ops.csv exited $rc, not 1"
grep -q "^$out/bad/ops.csv:3:[0-9]*: " "$out/err" || fail "no FILE:LINE:COL: $(cat "$out/err")"
printf '{"iteration_time_s": 1,}' >"$out/bad/summary.json"
set +e
"$rectwin" compare "$out/fast" "$out/bad" >/dev/null 2>"$out/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "malformed summary.json exited $rc, not 1"
grep -q "^$out/bad/summary.json:1:[0-9]*: not valid JSON" "$out/err" || fail "$(cat "$out/err")"
for args in "$out/fast" "$out/fast $out/slow extra" "$out/fast $out/slow --top x" "--frob"; do
  set +e
  # shellcheck disable=SC2086 # the arguments are split on purpose
  "$rectwin" compare $args >/dev/null 2>&1
  rc=$?
  set -e
  [ "$rc" = 2 ] || fail "bad usage '$args' exited $rc, not 2"
done
echo "compare ok"
