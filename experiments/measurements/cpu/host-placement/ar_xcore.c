/* Per call, on 2 ranks: the round trip of a 1-byte MPI message (median of 2000, the cache-line
 * path between the two vCPUs) and then one MPI_Allreduce of BYTES, so the two can be paired. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){ MPI_Init(&argc,&argv); int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  size_t bytes=strtoull(argv[1],0,10), n=bytes/4; int reps=atoi(argv[2]);
  float *buf=malloc(bytes); for(size_t i=0;i<n;i++) buf[i]=1e-3f; char c=0; static double rt[2000];
  for(int k=0;k<reps;k++){
    for(int i=0;i<2000;i++){ MPI_Barrier(MPI_COMM_WORLD); double a=now();
      if(r==0){MPI_Send(&c,1,MPI_CHAR,1,0,MPI_COMM_WORLD);MPI_Recv(&c,1,MPI_CHAR,1,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);}
      else {MPI_Recv(&c,1,MPI_CHAR,0,0,MPI_COMM_WORLD,MPI_STATUS_IGNORE);MPI_Send(&c,1,MPI_CHAR,0,0,MPI_COMM_WORLD);}
      rt[i]=now()-a; }
    qsort(rt,2000,sizeof *rt,cmp);
    MPI_Barrier(MPI_COMM_WORLD); double a=now();
    MPI_Allreduce(MPI_IN_PLACE,buf,(int)n,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD);
    double d=now()-a, m; MPI_Reduce(&d,&m,1,MPI_DOUBLE,MPI_MAX,0,MPI_COMM_WORLD);
    if(r==0) printf("rtt_us %.2f allreduce_ms %.3f\n", rt[1000]*1e6, m*1e3);
  }
  MPI_Finalize(); return 0; }
