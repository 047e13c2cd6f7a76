#!/usr/bin/env bash
# Faults end every rank quickly and say where: a rank that dies or hangs inside a collective,
# a world size that does not match the scenario, a plan exec cannot run, a device that is not
# there, a full disk while writing the results. Nothing hangs and no
# result file is written by a failed run.
source "$(dirname "$0")/lib.sh"
expect_failure() { # expect_failure NAME PATTERN CMD...
  local name=$1 pattern=$2
  shift 2
  local t0=$SECONDS
  if timeout 90 "$@" >"$TMP/$name.log" 2>&1; then fail "$name: exit 0"; fi
  local took=$((SECONDS - t0))
  [ "$took" -lt 60 ] || fail "$name: took $took s"
  grep -q -- "$pattern" "$TMP/$name.log" || {
    cat "$TMP/$name.log"
    fail "$name: no '$pattern' in the output"
  }
  [ ! -e "$TMP/$name.out/summary.json" ] || fail "$name: wrote a summary"
  echo "ok: $name ($took s)"
  passed=$((passed + 1))
}
passed=0
expect_failure hang "rank .: op .* 'embedding_alltoall' .*has not finished" \
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/hang.out" --op-timeout 3 \
  --inject-fault hang@1:embedding_alltoall
expect_failure die "injected fault 'die' at op 'gradient_alltoall'" \
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/die.out" --op-timeout 3 \
  --inject-fault die@2:gradient_alltoall
expect_failure fail "injected fault 'fail' at op 'sparse_update'" \
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/fail.out" --op-timeout 3 \
  --inject-fault fail@3:sparse_update
world=(mpirun --oversubscribe -np 2)
if [ "$(id -u)" -eq 0 ]; then world+=(--allow-run-as-root); fi
expect_failure world "the scenario has 4 ranks .* mpirun started 2" \
  "${world[@]}" "$EXEC" "$SCEN" --out "$TMP/world.out"
expect_failure plan "tower_module kind 'crossnet' is not executed by rectwin-exec yet" \
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/plan.out" --set plan.name=sptt --set topology.nodes=2 \
  --set topology.node.devices=2 --set model.file=exec-tiny-dcn-model.yaml \
  --set "plan.tower_module={kind: crossnet, compression: 2}"
expect_failure device "--device 'tpu' is not built in" \
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/device.out" --device tpu
# A full disk, as each rank sees it: writes past 4 KiB fail (EFBIG, with SIGXFSZ ignored), as
# they would with ENOSPC. The ranks talk over loopback TCP: Open MPI's shared-memory transport
# would hit the same limit.
expect_failure full_disk "cannot write '.*' (disk full?)" \
  env OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo "${MPIRUN[@]}" bash -c 'trap "" XFSZ; ulimit -f 4; exec "$0" "$@"' "$EXEC" "$SCEN" --quiet \
  --out "$TMP/full_disk.out"
[ -z "$(ls -A "$TMP/full_disk.out" 2>/dev/null)" ] || fail "full_disk: left files behind"
# A GPU run where there is no GPU: every rank says so (or, in a build without CUDA, that the
# device is not built in).
if ! nvidia-smi -L >/dev/null 2>&1; then
  expect_failure no_gpu "cuda device: no usable GPU\|--device 'cuda' is not built in" \
    "${MPIRUN[@]}" "$EXEC" "$SCEN" --out "$TMP/no_gpu.out" --device cuda
fi
echo "faults: $passed passed, 0 failed"
