/* memcpy rate of one BYTES buffer pair (L3-sized or not) in 0.25 s windows for SECONDS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc,char**argv){
  size_t bytes=strtoull(argv[1],0,10); double secs=atof(argv[2]);
  char*a=malloc(bytes),*b=malloc(bytes); memset(a,1,bytes); memset(b,2,bytes);
  double t0=now(),w0=t0; size_t done=0;
  while(now()-t0<secs){ memcpy(b,a,bytes); memcpy(a,b,bytes); done+=2*bytes;
    double t=now(); if(t-w0>=0.25){printf("%.2f %.2f\n",t-t0,done/(t-w0)/1e9);fflush(stdout);done=0;w0=t;} }
  return a[7]+b[9]==0;
}
