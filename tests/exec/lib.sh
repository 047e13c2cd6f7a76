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
