// Helpers of the benchmarks that call the CUDA runtime themselves (CudaHostLinkBenchmark, CudaStagingBenchmark).
#ifndef chsBenchCuda_h
#define chsBenchCuda_h

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace chs_bench
{

/** Exits with the CUDA error's text when `e` is one. */
inline void
Check(cudaError_t e, const char * what)
{
  if (e != cudaSuccess)
  {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/** The median wall-clock milliseconds of `reps` calls of f(). */
template <class F>
double
MedianMs(F && f, int reps = 9)
{
  std::vector<double> t;
  for (int i = 0; i < reps; ++i)
  {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace chs_bench

#endif
