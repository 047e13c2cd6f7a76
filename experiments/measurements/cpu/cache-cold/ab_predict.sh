# Sourced by ab.sh and ab-embedding.sh: one A/B prediction of a committed measurement set.
# ab_predict ROOT BUILD_DIR SET TOPO TABLE HEADER [EXTRA...]
#   predicts a temporary copy of experiments/measurements/cpu/SET (simgrid, node.cores 2, every
#   batch, against each case's fastest run) on TOPO and writes TABLE (atomically) with HEADER as
#   its command line; EXTRA, when given, is a command whose output is appended, with the copy's
#   directory as its last argument.
ab_predict() {
  local root=$1 B=$2 set=$3 topo=$4 t=$5 header=$6
  shift 6
  local meas
  meas=$(mktemp -d)
  cp -r "$root/experiments/measurements/cpu/$set/." "$meas/"
  {
    echo "# date: $(date -u +%FT%TZ); commit: $(git -C "$root" rev-parse --short HEAD)"
    echo "# command: $header"
    "$root/experiments/validation/cpu-mpi.sh" --batches --engine simgrid --cores 2 --topology "$topo" \
      --pred pred-batches-simgrid-cores2 --measured fastest --predict-only "$B" "$meas" 2>/dev/null
    if [ $# -gt 0 ]; then "$@" "$meas"; fi
  } >"$t.tmp"
  mv "$t.tmp" "$t"
  rm -rf "$meas"
}
