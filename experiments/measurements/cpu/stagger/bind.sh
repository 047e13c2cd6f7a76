#!/bin/bash
# Pins this MPI rank to one core: BIND=block puts ranks 2c, 2c+1 on core c; BIND=cyclic rank r on r % cores.
r=${OMPI_COMM_WORLD_LOCAL_RANK:?} n=$(nproc --all) s=${OMPI_COMM_WORLD_LOCAL_SIZE:?}
case ${BIND:-block} in
  block) c=$(( r * n / s )) ;;
  cyclic) c=$(( r % n )) ;;
esac
exec taskset -c "$c" "$@"
