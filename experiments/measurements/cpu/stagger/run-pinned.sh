#!/bin/bash
cd /work/stagger
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
R=/work/main
for round in 1 2 3; do
  for b in block cyclic; do
  for c in "dlrm-flat|$R/experiments/exec-cpu.yaml|plan.name=flat" "dcn-flat|$R/experiments/exec-cpu-dcn.yaml|plan.name=flat"; do
    IFS='|' read -r name scen set <<<"$c"
    d=out/$name-4-$b-r$round; mkdir -p $d
    BIND=$b RT_STAGGER_DIR=$d mpirun --oversubscribe --allow-run-as-root -x BIND -x RT_STAGGER_DIR -np 4 ./bind.sh ./rectwin-exec-probe $scen --quiet --out $d --set $set --set topology.nodes=4 </dev/null > $d/log 2>&1
    echo "$name $b r$round rc=$? $(date -u +%T)" >> run2.log
  done
  done
done
echo done >> run2.log
