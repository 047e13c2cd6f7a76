#!/usr/bin/env bash
# `rectwin calibrate --quick` (CI's reduced size) measures this machine under mpirun with the
# exec backends, writes runs of 1 and 2 ranks into a copy of localhost-cpu.yaml that still
# parses as a topology, keeps the rest of the file, replaces its own section when run again,
# and leaves the file untouched when a run fails.
source "$(dirname "$0")/lib.sh"
[ -n "$RECTWIN" ] || fail "usage: calibrate.sh EXEC SRC RECTWIN"
CAL=$(dirname "$EXEC")/rectwin-calibrate
TOPO=$TMP/topo.yaml
cp "$SRC/topologies/localhost-cpu.yaml" "$TOPO"
grep -v '^calibration:' "$SRC/topologies/localhost-cpu.yaml" | sed '/^# calibration: /,$d' >"$TMP/head.yaml"

calibrate() {
  "$RECTWIN" calibrate --device cpu --comm mpi --quick --calibrator "$CAL" -o "$TOPO" "$@" \
    >"$TMP/cal.log" 2>&1
}
calibrate --ranks 1,2 || {
  cat "$TMP/cal.log"
  fail "rectwin calibrate --quick"
}
# The section's layout is rectwin-calibrate's own (fixed indentation); that it parses is
# checked below by loading the file as a topology.
sec=$TMP/section.yaml
sed -n '/^calibration:/,$p' "$TOPO" >"$sec"
for k in date host device libraries command; do
  grep -q "^  $k: \"..*\"" "$sec" || fail "no $k in the section"
done
[ "$(grep '^    - ranks:' "$sec" | tr -d ' -' | tr '\n' ' ')" = "ranks:1 ranks:2 " ] || fail "runs"
for k in gather_pool sparse_adam elementwise permute unique sort dense_adam attention interaction; do
  [ "$(grep -c "^        - kernel: $k\$" "$sec")" = 2 ] || fail "kernel $k not in both runs"
done
for op in alltoall allreduce allgather reduce_scatter sendrecv; do
  grep -A1 "^        - op: $op\$" "$sec" | grep -q '^          ranks: 2$' || fail "no 2-rank $op"
done
[ "$(grep -c '^        - op:' "$sec")" = 5 ] || fail "a one-rank run measured collectives"
# The collectives ran on cache-cold buffers: pools of twice cpu0's largest cache, or of the
# largest message (1 MiB + 8 KiB with --quick) where that is more. The cache is the larger of
# sysfs's and the C library's L3 figure, as exec/device_cpu.c reads it: in a guest they differ
# (an AMD EPYC guest: 32 MiB in sysfs, 384 MiB from getconf, the host's).
big=0
for f in /sys/devices/system/cpu/cpu0/cache/index*/size; do
  [ -r "$f" ] || continue
  v=$(cat "$f")
  case $v in *K) v=$((${v%K} * 1024)) ;; *M) v=$((${v%M} * 1048576)) ;; esac
  [ "$v" -gt "$big" ] && big=$v
done
l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || true)
case $l3 in '' | *[!0-9]*) ;; *) [ "$l3" -gt "$big" ] && big=$l3 ;; esac
mib=$(grep -o 'cache-cold buffers: pools of [0-9]* MiB' "$sec" | grep -o '[0-9][0-9]*')
[ -n "$mib" ] || fail "no cache-cold pools in the section"
if [ $((2 * big)) -gt $(((1 << 20) + 8192)) ]; then
  [ "$mib" = "$(((2 * big + 524288) / 1048576))" ] || fail "pools of $mib MiB, cache $big bytes"
fi
# The embedding kernels ran on new IDs every call, over tables of twice that cache (8 MiB
# with --quick where that is more).
tmib=$(grep -o 'IDs of tables of [0-9]* MiB' "$sec" | head -1 | grep -o '[0-9][0-9]*')
[ -n "$tmib" ] || fail "no table size of the cache-cold embedding kernels in the section"
want=$(((2 * big + 524288) / 1048576))
[ "$want" -gt 8 ] || want=8
[ "$tmib" = "$want" ] || fail "embedding tables of $tmib MiB, cache $big bytes"
# The rest of the file is kept byte for byte; the file loads as a topology.
head -c "$(wc -c <"$TMP/head.yaml")" "$TOPO" | cmp -s - "$TMP/head.yaml" || fail "the topology's own lines changed"
"$RECTWIN" collective --topology "$TOPO" --nodes 2 --op allreduce --bytes 1MiB >/dev/null ||
  fail "the calibrated topology does not load"
# Again with one rank count: one section, one run.
calibrate --ranks 2 || fail "second calibration"
[ "$(grep -c '^calibration:' "$TOPO")" = 1 ] || fail "sections piled up"
[ "$(grep -c '^    - ranks:' "$TOPO")" = 1 ] || fail "old runs kept"
[ "$(grep -c '^# numbers, in base units' "$TOPO")" = 1 ] || fail "the section's comment piled up"
# Two passes: each table swept twice, one section written; a pass count that is not a whole
# number from 1 is refused, saying what is allowed.
calibrate --ranks 1 -- --passes 2 || fail "--passes 2"
grep -q 'calibrate: pass 2 of 2' "$TMP/cal.log" || fail "no second pass"
[ "$(grep -c '^calibration:' "$TOPO")" = 1 ] || fail "--passes 2: sections piled up"
for bad in 0 1.5; do
  if calibrate --ranks 1 -- --passes "$bad"; then fail "--passes $bad accepted"; fi
  grep -q "passes '$bad'.*allowed" "$TMP/cal.log" || fail "--passes $bad: no located refusal"
done
# A run that fails leaves the file as it was.
cp "$TOPO" "$TMP/before.yaml"
if "$RECTWIN" calibrate --quick --calibrator /bin/false --ranks 1 -o "$TOPO" >/dev/null 2>&1; then
  fail "a failing run succeeded"
fi
cmp -s "$TOPO" "$TMP/before.yaml" || fail "a failing run changed the file"
echo "calibrate: 1 passed, 0 failed"
