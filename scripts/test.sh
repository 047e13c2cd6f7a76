#!/usr/bin/env bash
# The README's second command (and what CI runs): install what is missing, build with
# warnings as errors, run every test; then build again under ASan + UBSan and run the unit
# tests once more; then fuzz each libFuzzer target for a fixed number of executions from a fixed seed. GPU tests report
# "skipped" (exit 77) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

BUILD_DIR=build/ci bash scripts/build.sh -DRECTWIN_WERROR=ON
ctest --test-dir build/ci --output-on-failure -j "$jobs"

# The sanitizer pass covers the C code; CUDA device code cannot run here anyway.
BUILD_DIR=build/asan BUILD_TYPE=Debug bash scripts/build.sh -DRECTWIN_WERROR=ON -DRECTWIN_CUDA=OFF \
  -DRECTWIN_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

# Bounded, seeded fuzzing (tests/fuzz/README.md): a crash, hang, leak or sanitizer report
# fails CI. The execution counts take about a minute per target on a CI machine.
bash scripts/fuzz.sh --targets scenario --runs 150000 --seed 1
bash scripts/fuzz.sh --targets graph --runs 3000 --seed 1
