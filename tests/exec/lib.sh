# Shared by the rectwin-exec tests: EXEC (the binary), SRC (the source tree), a scratch dir and
# an mpirun that works as root and with more ranks than cores (CI has 2 cores, the tests 4 ranks).
set -euo pipefail
EXEC=$1
SRC=$2
RECTWIN=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MPIRUN=(mpirun --oversubscribe -np 4)
if [ "$(id -u)" -eq 0 ]; then MPIRUN+=(--allow-run-as-root); fi
# Keep Open MPI off the network: the ranks of a test all live on this machine.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
# Under the sanitizer build, ASan and UBSan check every rank, but not for leaks: Open MPI keeps
# ~100 KiB of allocations to the end of the process by design, from components it loads with
# dlopen, whose frames LeakSanitizer cannot name, so they cannot be suppressed by library. The
# single-process exec tests (test_exec_*) run with leak detection.
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
SCEN=$SRC/tests/data/exec-tiny.yaml

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# run_exec OUTDIR [args...]: a 4-rank run of the tiny scenario; output in OUTDIR.log
run_exec() {
  local out=$1
  shift
  "${MPIRUN[@]}" "$EXEC" "$SCEN" --quiet --out "$out" "$@" >"$out.log" 2>&1
}

json() { # json FILE EXPR: evaluates EXPR on the parsed JSON object j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# check_core_link SUMMARY WHAT: the core link's round trip before and after the timed iterations
# (exec/core_link.c) is there, in microseconds, where two local ranks sit on distinct CPUs: with
# 4 ranks pinned in blocks, on any machine of 2 or more CPUs.
check_core_link() {
  python3 -c "
import json, os, sys
r = json.load(open(sys.argv[1]))['settings']['local_rtt_us']
pair = len(os.sched_getaffinity(0)) >= 2
ok = len(r) == 2 and all((v is not None and 0 < v < 1e6) if pair else v is None for v in r)
sys.exit(0 if ok else 1)" "$1" || fail "settings.local_rtt_us of '$2': $(json "$1" "j['settings']['local_rtt_us']")"
}

# check_variants VARIANT...: each a string of rectwin-exec arguments; runs them with the byte
# check and asserts the run is byte-exact, checked something, and wrote every rank's ops.
check_variants() {
  local i=0 v checked ranks
  for v in "$@"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run_exec "$TMP/v$i" --iterations 3 --warmup 0 --check-bytes $v || {
      cat "$TMP/v$i.log"
      fail "variant '$v'"
    }
    [ "$(json "$TMP/v$i/summary.json" "j['engine']")" = exec ] || fail "engine of '$v'"
    checked=$(json "$TMP/v$i/summary.json" "j['settings']['bytes_checked_ops']")
    [ "$checked" -gt 0 ] || fail "no op byte-checked for '$v'"
    [ "$(json "$TMP/v$i/summary.json" "j['settings']['bytes_mismatched_ops']")" = 0 ] ||
      fail "bytes differ for '$v'"
    ranks=$(python3 -c "import csv,sys; print(len({r['rank'] for r in csv.DictReader(open(sys.argv[1]))}))" "$TMP/v$i/ops.csv")
    [ "$ranks" = 4 ] || fail "ops.csv of '$v' has $ranks ranks"
    check_core_link "$TMP/v$i/summary.json" "$v"
    echo "ok: ${v:-defaults} ($checked op-rank byte checks)"
  done
}

# one_step NAME [args...]: one training step with --dump into $TMP/NAME.
one_step() {
  local name=$1
  shift
  mkdir -p "$TMP/$name"
  run_exec "$TMP/$name.out" --iterations 1 --warmup 0 --dump "$TMP/$name" "$@" || {
    cat "$TMP/$name.out.log"
    fail "$name"
  }
}
