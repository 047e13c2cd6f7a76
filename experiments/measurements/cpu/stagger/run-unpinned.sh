#!/bin/bash
# Stagger probe: rectwin-exec (scratch build with per-op CPU/wait probes, exec-stagger-probe.patch)
# on 4 ranks of the 2-vCPU guest, as experiments/validation/cpu-mpi.sh runs them.
cd /work/stagger
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
R=/work/main
for round in 1 2 3; do
  for c in "dlrm-flat|$R/experiments/exec-cpu.yaml|plan.name=flat" "dlrm-fused|$R/experiments/exec-cpu.yaml|plan.name=fused" "dcn-flat|$R/experiments/exec-cpu-dcn.yaml|plan.name=flat"; do
    IFS='|' read -r name scen set <<<"$c"
    d=out/$name-4-r$round; mkdir -p $d
    date -u +%T >> run.log
    RT_STAGGER_DIR=$d mpirun --oversubscribe --allow-run-as-root -np 4 ./rectwin-exec-probe $scen --quiet --out $d --set $set --set topology.nodes=4 </dev/null > $d/log 2>&1
    echo "$name r$round rc=$? $(date -u +%T)" >> run.log
  done
done
echo done >> run.log
