#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang and runs each for a bounded time or
# number of executions, starting from the committed corpus (never writing into it). Exits
# non-zero on any crash, hang (-timeout), out-of-memory (-rss_limit_mb), leak or sanitizer
# report; the input that caused it is kept under $BUILD_DIR/artifacts/.
#
#   scripts/fuzz.sh [--seconds S | --runs N] [--seed N] [--targets "scenario graph"] [--log DIR]
#
# CI runs a fixed number of executions per target from a fixed seed (scripts/test.sh), so a
# CI finding is reproduced by the same command anywhere and an unrelated commit never fails
# on a new random draw; campaigns use --seconds and a random seed.
# Environment: BUILD_DIR (build/fuzz),
# SANITIZE (address,undefined; "undefined" alone runs about 5x faster, for long campaigns).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/fuzz}
sanitize=${SANITIZE-address,undefined}
limit=(-max_total_time=60)
targets="scenario graph"
log=""
seed=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    --seed) seed=(-seed="$2"); shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    *) echo "fuzz.sh: unknown argument '$1'; allowed: --seconds S, --runs N, --seed N, --targets LIST, --log DIR" >&2; exit 2 ;;
  esac
done
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/install-deps.sh installs it)" >&2; exit 1; }

CC=clang cmake -S . -B "$build" -DRECTWIN_FUZZ=ON -DRECTWIN_WERROR=ON -DRECTWIN_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECTWIN_SANITIZE="$sanitize" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
for t in $targets; do
  cmake --build "$build" -j "$(nproc)" --target "fuzz_${t}_libfuzzer" >/dev/null
done

# The targets write their scratch files per process; tmpfs keeps that off the disk.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
mkdir -p "$build/artifacts"
[ -z "$log" ] || mkdir -p "$log"
status=0
for t in $targets; do
  work=$build/corpus-work/$t
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
  out=${log:+$log/fuzz-$t.log}
  out=${out:-$build/fuzz-$t.log}
  echo "fuzz.sh: $t (${limit[*]}, sanitize=${sanitize:-none}) -> $out"
  rc=0
  "$build/tests/fuzz/fuzz_${t}_libfuzzer" "$work" tests/fuzz/regressions/"$t" "${limit[@]}" ${seed[@]+"${seed[@]}"} \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" >"$out" 2>&1 || rc=$?
  grep -E '^#[0-9]+\s+DONE|stat::number_of_executed_units|SUMMARY|ERROR' "$out" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: $t FAILED (exit $rc); the input is in $build/artifacts/, the log in $out" >&2
    # CI keeps only what is printed: the report's stack and the input, to reproduce it anywhere
    # (echo LINE | base64 -d > input; fuzz_main input).
    sed -n '/ERROR: \(Address\|Leak\|Undefined\)Sanitizer\|ERROR: libFuzzer\|runtime error/,/^SUMMARY/p' "$out" |
      grep -v 'in fuzzer::\|libc_start\| in _start ' | head -60 >&2 || true
    grep -E '^Base64: ' "$out" | head -1 >&2 || true
    status=1
  fi
done
exit $status
