#!/usr/bin/env bash
# Configures and builds rectwin into BUILD_DIR (default build/release). Extra arguments go to
# cmake's configure step. Used by quickstart.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BUILD_DIR:-build/release}
mkdir -p "$(dirname "$dir")"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@" >"$dir.configure.log" 2>&1 || {
  cat "$dir.configure.log" >&2
  echo "build: cmake configure failed (log above)" >&2
  exit 1
}
cmake --build "$dir" -j "$(nproc)"
