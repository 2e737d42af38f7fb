// Timing helpers shared by the benchmarks.
#ifndef chsBenchTiming_h
#define chsBenchTiming_h

#include <algorithm>
#include <chrono>
#include <vector>

namespace chs_bench
{

inline double
Median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/** Wall-clock milliseconds of f(). */
template <typename F>
double
WallMs(F && f)
{
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

} // namespace chs_bench

#endif
