#!/bin/bash
# Validation runs with every rank pinned (bind.sh, BIND=block), 3 rounds.
cd /work/main
export BIND=block OMPI_MCA_hwloc_base_binding_policy=none
experiments/validation/cpu-mpi.sh --topology topologies/localhost-cpu-epyc-zen4.yaml /work/stagger/bb /work/stagger/valblock 3 > /work/stagger/val.log 2>&1
date -u +%T >> /work/stagger/val.log
