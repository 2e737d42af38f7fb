// Timing helpers shared by the benchmarks.
#ifndef chsBenchTiming_h
#define chsBenchTiming_h

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
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

/** Runs f(begin, end) over [0, count) on all hardware threads. */
template <typename F>
void
ParallelFor(int64_t count, F && f)
{
  const int64_t            threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { f(count * t / threads, count * (t + 1) / threads); });
  for (auto & th : pool)
    th.join();
}

} // namespace chs_bench

#endif
