#!/bin/sh
# Runs the kernel benchmarks of a build and records them under
# experiments/measurements/<device>/: CSV, raw log, and a COMMAND file with the command, the
# date, the CPU model and, on a GPU machine, the nvidia-smi name.
#   usage: kernels/bench/run-all.sh BUILD_DIR DEVICE_NAME   (e.g. build-kernels h100)
# RT_BENCH_NOTE, when set, is copied into COMMAND (say how noisy or shared the machine was).
# RT_BENCH_REPEATS=N (default 5) re-runs the CPU gather/pool rows N more times into
# gather_pool_repeats.log, so one lucky or unlucky run is visible as such.
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR DEVICE_NAME" >&2
    exit 2
fi
build=$1
device=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/experiments/measurements/$device"
bin="$build/kernels"
if [ ! -x "$bin/rt_kbench_cpu" ]; then
    echo "$0: no $bin/rt_kbench_cpu; build the kernels first" >&2
    exit 2
fi
mkdir -p "$out"
{
    echo "command: kernels/bench/run-all.sh $build $device"
    echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
    echo "git: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo none)"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
    echo "cpus: $(nproc)"
    echo "note: ${RT_BENCH_NOTE:-none}"
    if command -v nvidia-smi >/dev/null 2>&1; then
        echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
    fi
} >"$out/COMMAND"
"$bin/rt_kbench_cpu" --device "$device-cpu" --csv "$out/bench_cpu.csv" 2>&1 | tee "$out/bench_cpu.log"
repeats=${RT_BENCH_REPEATS:-5}
echo "repeats: $bin/rt_kbench_cpu --only gather_pool, $repeats times (gather_pool_repeats.log)" \
    >>"$out/COMMAND"
: >"$out/gather_pool_repeats.log"
i=1
while [ "$i" -le "$repeats" ]; do
    echo "## repeat $i $(date -u '+%H:%M:%SZ')" >>"$out/gather_pool_repeats.log"
    "$bin/rt_kbench_cpu" --only gather_pool >>"$out/gather_pool_repeats.log" 2>&1
    i=$((i + 1))
done
if [ -x "$bin/rt_kbench_cuda" ] && command -v nvidia-smi >/dev/null 2>&1; then
    "$bin/rt_kbench_cuda" --device "$device" --csv "$out/bench_cuda.csv" 2>&1 |
        tee "$out/bench_cuda.log"
fi
echo "results in $out"
