// Host <-> device transfer rates that decide how the filters move ITK's buffers (docs/design-notes.md, "Host
// transfers through pinned staging buffers"): pageable and pinned cudaMemcpyAsync of a 4096x4096 uint8 input and
// uint32 labels, host memcpy on several threads, cudaHostRegister, a staged pipeline, stream-ordered allocation.
//   nvcc -O2 -arch=sm_90 -o CudaTransferBenchmark bench/Common/CudaTransferBenchmark.cu -lpthread
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>
#define CK(x) do{cudaError_t e=(x); if(e){printf("err %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} }while(0)
using clk = std::chrono::steady_clock;
static double ms(clk::time_point a, clk::time_point b){return std::chrono::duration<double,std::milli>(b-a).count();}
template<class F> double med(F f, int reps=15){ std::vector<double> t; for(int i=0;i<reps;i++){auto a=clk::now(); f(); auto b=clk::now(); t.push_back(ms(a,b));} std::sort(t.begin(),t.end()); return t[reps/2];}
void pcopy(char* dst, const char* src, size_t n, int T){
  if(T<=1){memcpy(dst,src,n);return;}
  std::vector<std::thread> th; size_t per=(n+T-1)/T; per=(per+4095)&~size_t(4095);
  for(int t=0;t<T;t++){size_t b=t*per; if(b>=n)break; size_t e=std::min(n,b+per); th.emplace_back([=]{memcpy(dst+b,src+b,e-b);});}
  for(auto&x:th)x.join();
}
int main(){
  size_t nIn=4096ull*4096, nOut=nIn*4;
  char* hIn=new char[nIn]; char* hOut=new char[nOut]; memset(hIn,1,nIn); memset(hOut,0,nOut);
  char *dIn,*dOut; CK(cudaMalloc(&dIn,nIn)); CK(cudaMalloc(&dOut,nOut)); CK(cudaMemset(dOut,3,nOut));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  printf("pageable H2D 16MB %.3f ms\n", med([&]{CK(cudaMemcpyAsync(dIn,hIn,nIn,cudaMemcpyHostToDevice,s)); CK(cudaStreamSynchronize(s));}));
  printf("pageable D2H 64MB %.3f ms\n", med([&]{CK(cudaMemcpyAsync(hOut,dOut,nOut,cudaMemcpyDeviceToHost,s)); CK(cudaStreamSynchronize(s));}));
  char *pIn,*pOut; CK(cudaMallocHost(&pIn,nIn)); CK(cudaMallocHost(&pOut,nOut));
  printf("pinned H2D 16MB %.3f ms\n", med([&]{CK(cudaMemcpyAsync(dIn,pIn,nIn,cudaMemcpyHostToDevice,s)); CK(cudaStreamSynchronize(s));}));
  printf("pinned D2H 64MB %.3f ms\n", med([&]{CK(cudaMemcpyAsync(pOut,dOut,nOut,cudaMemcpyDeviceToHost,s)); CK(cudaStreamSynchronize(s));}));
  for(int T: {1,4,8,16}) printf("host memcpy 64MB T=%d %.3f ms\n", T, med([&]{pcopy(hOut,pOut,nOut,T);}));
  printf("hostRegister+unreg 64MB %.3f ms\n", med([&]{CK(cudaHostRegister(hOut,nOut,0)); CK(cudaHostUnregister(hOut));},7));
  printf("hostRegister+D2H+unreg 64MB %.3f ms\n", med([&]{CK(cudaHostRegister(hOut,nOut,0)); CK(cudaMemcpyAsync(hOut,dOut,nOut,cudaMemcpyDeviceToHost,s)); CK(cudaStreamSynchronize(s)); CK(cudaHostUnregister(hOut));},7));
  printf("hostRegister+H2D+unreg 16MB %.3f ms\n", med([&]{CK(cudaHostRegister(hIn,nIn,0)); CK(cudaMemcpyAsync(dIn,hIn,nIn,cudaMemcpyHostToDevice,s)); CK(cudaStreamSynchronize(s)); CK(cudaHostUnregister(hIn));},7));
  // staged pipelines: chunk C, 2..4 pinned buffers, T threads
  for(size_t C: {size_t(2)<<20, size_t(4)<<20, size_t(8)<<20}) for(int T:{1,4,8}){
    const int NB=3; cudaEvent_t ev[NB]; for(int i=0;i<NB;i++) CK(cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming));
    double t=med([&]{
      size_t nch=(nOut+C-1)/C;
      for(size_t k=0;k<nch && k<NB;k++){size_t o=k*C,l=std::min(C,nOut-o); CK(cudaMemcpyAsync(pOut+(k%NB)*C,dOut+o,l,cudaMemcpyDeviceToHost,s)); CK(cudaEventRecord(ev[k%NB],s));}
      for(size_t k=0;k<nch;k++){size_t o=k*C,l=std::min(C,nOut-o); CK(cudaEventSynchronize(ev[k%NB])); pcopy(hOut+o,pOut+(k%NB)*C,l,T);
        size_t kn=k+NB; if(kn<nch){size_t o2=kn*C,l2=std::min(C,nOut-o2); CK(cudaMemcpyAsync(pOut+(kn%NB)*C,dOut+o2,l2,cudaMemcpyDeviceToHost,s)); CK(cudaEventRecord(ev[kn%NB],s));}}
    });
    printf("staged D2H chunk %zuMB T=%d %.3f ms\n", C>>20, T, t);
    t=med([&]{
      size_t nch=(nIn+C-1)/C;
      for(size_t k=0;k<nch;k++){size_t o=k*C,l=std::min(C,nIn-o); if(k>=NB) CK(cudaEventSynchronize(ev[k%NB])); pcopy(pIn+(k%NB)*C,hIn+o,l,T); CK(cudaMemcpyAsync(dIn+o,pIn+(k%NB)*C,l,cudaMemcpyHostToDevice,s)); CK(cudaEventRecord(ev[k%NB],s));}
      CK(cudaStreamSynchronize(s));
    });
    printf("staged H2D chunk %zuMB T=%d %.3f ms\n", C>>20, T, t);
  }
  // malloc async cost
  cudaMemPool_t pool; CK(cudaDeviceGetDefaultMemPool(&pool,0));
  printf("mallocAsync+free 64MB+16MB (default threshold) %.3f ms\n", med([&]{void*a,*b; CK(cudaMallocAsync(&a,nOut,s)); CK(cudaMallocAsync(&b,nIn,s)); CK(cudaFreeAsync(a,s)); CK(cudaFreeAsync(b,s)); CK(cudaStreamSynchronize(s));}));
  uint64_t thr=~0ull; CK(cudaMemPoolSetAttribute(pool,cudaMemPoolAttrReleaseThreshold,&thr));
  printf("mallocAsync+free 64MB+16MB (kept) %.3f ms\n", med([&]{void*a,*b; CK(cudaMallocAsync(&a,nOut,s)); CK(cudaMallocAsync(&b,nIn,s)); CK(cudaFreeAsync(a,s)); CK(cudaFreeAsync(b,s)); CK(cudaStreamSynchronize(s));}));
  printf("new+touch 64MB %.3f ms\n", med([&]{char*p=new char[nOut]; for(size_t i=0;i<nOut;i+=4096)p[i]=1; delete[]p;},5));
  return 0;
}
