#!/usr/bin/env bash
# Regression tests of the hostile inputs of issue 12: each gets a clear message and a non-zero
# exit within seconds, never a crash, a hang or a silently wrong number. Under the sanitizer
# build the same script runs rectwin under ASan and UBSan.
set -euo pipefail
rectwin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# refused NAME PATTERN CMD...: exit 1 or 2 (not a timeout, not a signal) and PATTERN in stderr.
refused() {
  local name=$1 pattern=$2 rc=0
  shift 2
  timeout 20 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
  { [ "$rc" -eq 1 ] || [ "$rc" -eq 2 ]; } || { cat "$tmp/$name.err"; fail "$name: exit $rc"; }
  grep -q -- "$pattern" "$tmp/$name.err" || { cat "$tmp/$name.err"; fail "$name: no '$pattern'"; }
  echo "ok: $name"
  passed=$((passed + 1))
}
passed=0
scn=$src/experiments/dlrm-criteo.yaml
printf '%%\xff\n' >"$tmp/bad.yaml"
refused directive_scenario "bad.yaml:1:2: a malformed YAML directive" "$rectwin" plan "$tmp/bad.yaml"
refused directive_set "^--set:1:7: a malformed YAML directive" \
  "$rectwin" plan "$scn" --set "$(printf 'name=%%\xff')"
refused directive_topology "bad.yaml:1:2: a malformed YAML directive" \
  "$rectwin" collective --topology "$tmp/bad.yaml" --nodes 1 --op allreduce --bytes 1MiB
refused directive_platform "bad.yaml:1:2: a malformed YAML directive" \
  "$rectwin" platform "$tmp/bad.yaml" --nodes 1 -o "$tmp/p.xml"
printf 'name: x\nmodel: {file: %s}\ntopology: {file: %s/topologies/dgx-h100.yaml, nodes: 1}\nplan: {name: flat}\nworkload: {batch_per_rank: 8}\n' \
  "$tmp/bad.yaml" "$src" >"$tmp/with-bad-model.yaml"
refused directive_model "bad.yaml:1:2: a malformed YAML directive" "$rectwin" plan "$tmp/with-bad-model.yaml"
# The same directive after a carriage return, or after YAML 1.1's NEL: libfyaml breaks lines there.
printf 'name: x\r%%\xe1\n' >"$tmp/cr.yaml"
refused directive_after_cr "cr.yaml:2:2: a malformed YAML directive" "$rectwin" plan "$tmp/cr.yaml"
printf 'name: x\xc2\x85%%\xff' >"$tmp/nel.yaml"
refused directive_after_nel "nel.yaml:2:2: a malformed YAML directive" "$rectwin" plan "$tmp/nel.yaml"
# Bytes outside YAML's character set never reach libfyaml, which crashes on some of them.
printf '? o:\t\0' >"$tmp/nul.yaml"
refused nul_byte "nul.yaml:1:6: byte 0x00 is not a character YAML allows" "$rectwin" plan "$tmp/nul.yaml"
printf 'name: \xc0\xaf\n' >"$tmp/overlong.yaml"
refused overlong_utf8 "overlong.yaml:1:7: byte 0xc0 is not a character YAML allows" \
  "$rectwin" plan "$tmp/overlong.yaml"
mkdir -p "$tmp/nulrun"
printf '{"name": "x\0"}' >"$tmp/nulrun/summary.json"
refused nul_summary "summary.json:1:12: byte 0x00 is not a character YAML allows" \
  "$rectwin" plot breakdown "$tmp/nulrun" -o "$tmp/nul.png"
mkfifo "$tmp/fifo.yaml"
refused fifo "fifo.yaml: not a regular file" "$rectwin" plan "$tmp/fifo.yaml"
refused empty_out "cannot create directory ''" "$rectwin" sim "$scn" --engine analytic --quiet --out ''
refused rank_overflow "4096 devices = 2147483648 ranks; allowed: at most 16777216" \
  "$rectwin" plan "$scn" --set topology.nodes=524288 --set topology.node.devices=4096
refused huge_bytes "out of range; allowed: 0 to 1 EiB" \
  "$rectwin" collective --topology "$src/topologies/dgx-h100.yaml" --nodes 2 --op allreduce --bytes 1e21B
refused negative_bytes "--bytes ' -5'" \
  "$rectwin" collective --topology "$src/topologies/dgx-h100.yaml" --nodes 2 --op allreduce --bytes ' -5'
refused path_name "'../../../x' is not a plain file name" \
  "$rectwin" sim "$scn" --engine analytic --quiet --set name=../../../x
[ ! -e "$src/../../x" ] || fail "a run wrote outside results/"
sed "s#^name: dlrm-criteo#name: *nope#; s#\.\./models#$src/models#; s#\.\./topologies#$src/topologies#" \
  "$scn" >"$tmp/alias.yaml"
refused undefined_alias "alias.yaml:2:8: error: invalid alias" "$rectwin" plan "$tmp/alias.yaml"
refused zero_weights "the weights sum to 0; allowed: non-negative weights with a positive sum" \
  "$rectwin" plan "$scn" --set 'workload.pooling={kind: empirical, values: [1, 2], weights: [0, 0]}'
refused nan_option "--max-min-factor needs a number in \[1, 1e+06\], got 'nan'" \
  "$rectwin" partition "$scn" --towers 8 --max-min-factor nan
refused bad_set_value "^--set:1:11: 'plan.name=\[flat,': the value is not valid YAML: " \
  "$rectwin" plan "$scn" --set 'plan.name=[flat,'
# libfyaml's own report of a --set value is folded into ours, not printed beside it.
if grep -q '<memory-@' "$tmp/bad_set_value.err"; then fail "bad_set_value: libfyaml noise on stderr"; fi
printf 'name: d\nsource: t\ndense_features: 1\ntables:\n  - {name: a, rows: 5}\n  - {name: a, rows: 5}\nlayers:\n  - {type: mlp, name: top, input: [dense, embeddings], sizes: [1]}\n' \
  >"$tmp/dup-model.yaml"
printf 'name: d\nmodel: {file: %s}\ntopology: {file: %s/topologies/dgx-h100.yaml, nodes: 1}\nplan: {name: flat}\nworkload: {batch_per_rank: 4}\n' \
  "$tmp/dup-model.yaml" "$src" >"$tmp/dup.yaml"
refused duplicate_table "dup-model.yaml:6:6: key 'tables.1': duplicate table name 'a'" \
  "$rectwin" plan "$tmp/dup.yaml"
# A platform XML of tens of GiB is refused before anything is written, by the platform command
# and by the simgrid engine (which writes one for every run).
refused huge_platform "would be about .* GiB of XML .*; allowed: at most 1 GiB" \
  "$rectwin" platform "$src/topologies/dgx-h100.yaml" --nodes 131072 -o "$tmp/huge.xml"
[ ! -e "$tmp/huge.xml" ] || fail "huge_platform: a file was written"
refused huge_collective "simgrid: the SimGrid platform of 131072 nodes would be about" \
  "$rectwin" collective --topology "$src/topologies/dgx-h100.yaml" --nodes 131072 --op allreduce \
  --bytes 1GiB --engine simgrid
# A full disk while writing results (writes past 4 KiB fail with EFBIG, SIGXFSZ ignored): a
# clear message, and no result file, not even a partial set.
refused full_disk "cannot write" \
  bash -c 'trap "" XFSZ; ulimit -f 4; exec "$0" "$@"' "$rectwin" sim "$scn" --engine analytic \
  --quiet --out "$tmp/full"
[ -z "$(ls -A "$tmp/full" 2>/dev/null)" ] || fail "full_disk: left files behind: $(ls "$tmp/full")"
# A draw that cannot fit in memory is refused at once with the estimate and the keys to change
# (the figure depends on the machine, the message does not).
refused huge_exact "needs about .* GiB of IDs, more than half of this machine's" \
  "$rectwin" plan "$scn" --set workload.batch_per_rank=16000000
echo "hostile inputs: $passed passed, 0 failed"
