/* rt_kcpu_linear_bwd against its two GEMMs alone, DLRM's top and bottom MLP layers. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "kernels.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static float *buf(size_t n){float*p=malloc(n*4);for(size_t i=0;i<n;i++)p[i]=(float)rand()/RAND_MAX-0.5f;return p;}
int main(void){
  long L[][2]={{13,512},{512,256},{256,128},{479,1024},{1024,1024},{1024,512},{512,256},{256,1}};
  long B=128; float*x=buf(1<<21),*y=buf(1<<21),*dy=buf(1<<21),*w=buf(1<<21),*dx=buf(1<<21),*dw=buf(1<<21),*db=buf(1<<21),*dz=buf(1<<21);
  printf("%-10s %12s %12s %8s\n","in,out","linear_bwd us","2 GEMMs us","ratio");
  double ta=0,tg=0;
  for(unsigned i=0;i<sizeof L/sizeof*L;i++){long I=L[i][0],O=L[i][1];double bl=1e9,bg=1e9;
    for(int r=0;r<7;r++){int n=0;double t0=now(),t;do{rt_kcpu_linear_bwd(x,y,dy,B,I,O,w,RT_KACT_RELU,dx,dw,db);n++;t=now()-t0;}while(t<0.02);if(t/n<bl)bl=t/n;
      n=0;t0=now();do{rt_kcpu_gemm(1,0,O,I,B,1,dz,O,x,I,0,dw,I);rt_kcpu_gemm(0,0,B,I,O,1,dz,O,w,I,0,dx,I);n++;t=now()-t0;}while(t<0.02);if(t/n<bg)bg=t/n;}
    ta+=bl;tg+=bg;printf("%4ld,%4ld  %12.1f %12.1f %8.2f\n",I,O,bl*1e6,bg*1e6,bl/bg);}
  printf("sum       %12.1f %12.1f %8.2f\n",ta*1e6,tg*1e6,ta/tg);}
