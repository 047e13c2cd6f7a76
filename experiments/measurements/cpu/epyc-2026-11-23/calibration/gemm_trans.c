/* fwd-layout (NT) vs the backward layouts (TN: dW, NN: dX) at the same (m, n, k). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "kernels.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
static float *buf(size_t n){float*p=malloc(n*4);for(size_t i=0;i<n;i++)p[i]=(float)rand()/RAND_MAX-0.5f;return p;}
/* time of one call of layout TA,TB for (m,n,k), best of 7 loops of ~20 ms */
static double t_of(int ta,int tb,long m,long n,long k,float*a,float*b,float*c){
  long lda= ta? m:k, ldb= tb? k:n; double best=1e9;
  for(int r=0;r<7;r++){int it=0;double t0=now(),t;
    do{rt_kcpu_gemm(ta,tb,m,n,k,1,a,lda,b,ldb,0,c,n);it++;t=now()-t0;}while(t<0.02);
    if(t/it<best)best=t/it;}
  return best;}
int main(void){
  long shapes[][3]={{128,512,13},{128,256,512},{128,128,256},{128,1024,479},{128,1024,1024},{128,512,1024},{128,256,512},
                    {256,256,256},{1024,1024,1024},{64,64,64},{128,128,128}};
  float*a=buf(1<<22),*b=buf(1<<22),*c=buf(1<<22);
  printf("# %s\n",rt_kcpu_gemm_library());
  printf("%-18s %10s %10s %10s %10s %10s\n","layer rows,out,in","fwd NT us","dW TN us","fwdshape","dX NN us","fwdshape");
  for(unsigned i=0;i<sizeof shapes/sizeof*shapes;i++){
    long R=shapes[i][0],O=shapes[i][1],I=shapes[i][2];
    double f=t_of(0,1,R,O,I,a,b,c);
    double dw=t_of(1,0,O,I,R,a,b,c), dwf=t_of(0,1,O,I,R,a,b,c);
    double dx=t_of(0,0,R,I,O,a,b,c), dxf=t_of(0,1,R,I,O,a,b,c);
    printf("%4ld,%4ld,%4ld     %10.2f %10.2f %10.2f %10.2f %10.2f   dW/fwd-shape %.2f dX/fwd-shape %.2f\n",R,O,I,f*1e6,dw*1e6,dwf*1e6,dx*1e6,dxf*1e6,dw/dwf,dx/dxf);
  }
}
