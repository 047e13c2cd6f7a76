#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(void){ size_t sz[]={64<<10,256<<10,512<<10};
 for(int i=0;i<3;i++){int n=0;double t0=now(),t;do{float*p=malloc(sz[i]);memset(p,1,sz[i]);__asm__ volatile(""::"r"(p):"memory");free(p);n++;t=now()-t0;}while(t<0.2);
 printf("malloc+write+free %4zu KiB: %.1f us\n",sz[i]>>10,t/n*1e6);}}
