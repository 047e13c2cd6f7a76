/* Core-to-core state of the 2-vCPU guest over time: every 0.5 s, the round trip of one cache line
 * between a thread on CPU 0 and one on CPU 1 (median of 20000), and the rate at which CPU 1 reads
 * 9.5 MB that CPU 0 just wrote (as a shared-memory collective moves data). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static _Alignas(64) atomic_int ball; static _Alignas(64) atomic_int phase;
static size_t N; static float *buf; static volatile float sink;
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static void *peer(void *arg){(void)arg; pin(1);
  for(;;){ int p; while((p=atomic_load(&phase))==0); if(p<0) return NULL;
    if(p==1){ /* ping-pong: answer odd with even */
      for(;;){int b=atomic_load(&ball); if(atomic_load(&phase)!=1) break; if(b&1) atomic_store(&ball,b+1);} }
    else if(p==2){ float acc=0; for(size_t i=0;i<N;i+=16) acc+=buf[i]; sink=acc; atomic_store(&phase,3); while(atomic_load(&phase)==3); }
  } }
int main(int argc,char**argv){ double secs=argc>1?atof(argv[1]):30; N=9475588/4;
  buf=malloc(N*4); memset(buf,0,N*4); pin(0); pthread_t t; pthread_create(&t,0,peer,0);
  static double rt[20000]; double t0=now();
  while(now()-t0<secs){
    atomic_store(&ball,0); atomic_store(&phase,1);
    for(int i=0;i<20000;i++){ double a=now(); int b=atomic_load(&ball); atomic_store(&ball,b+1); while(atomic_load(&ball)==b+1); rt[i]=now()-a; }
    qsort(rt,20000,sizeof *rt,cmp); double lat=rt[10000];
    atomic_store(&phase,0); 
    double best=1e9; for(int r=0;r<5;r++){ for(size_t i=0;i<N;i++) buf[i]=(float)r; double a=now(); atomic_store(&phase,2); while(atomic_load(&phase)!=3); double d=now()-a; atomic_store(&phase,0); if(d<best) best=d; }
    printf("%.2f rtt_ns %.0f read_GBps %.1f\n", now()-t0, lat*1e9, N*4/best/1e9); fflush(stdout);
    struct timespec ts={0,400000000}; nanosleep(&ts,0);
  }
  atomic_store(&phase,-1); pthread_join(t,0); return 0; }
