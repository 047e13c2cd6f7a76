#!/usr/bin/env bash
# The README's first command: install what is missing, build, and predict one training
# iteration of the built-in default scenario (DLRM on Criteo, flat plan, 64 H100s).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
scenario=${1:-experiments/dlrm-criteo.yaml}
./build/release/cli/rectwin sim "$scenario"
