// Timing helpers shared by the benchmarks.
#ifndef chsBenchTiming_h
#define chsBenchTiming_h

#include "chs/Execution.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace chs_bench
{

/** The benchmarks' --staging option: "CHUNK_KIB,SLOTS,WORKERS,STREAM" sets the shape of the staging buffers that
 * the run's copies of pageable host arrays go through (chs::testing::SetHostStaging), "default" the library's.
 * False for a malformed value. */
inline bool
SetStaging(const std::string & spec)
{
  if (spec == "default")
  {
    chs::testing::SetHostStaging(0, 0, 0, false);
    return true;
  }
  unsigned long long kib   = 0;
  unsigned           slots = 0, workers = 0, streaming = 0;
  if (std::sscanf(spec.c_str(), "%llu,%u,%u,%u", &kib, &slots, &workers, &streaming) != 4)
    return false;
  chs::testing::SetHostStaging(kib << 10, slots, workers, streaming != 0);
  std::printf(
    "staging: %llu KiB x %u slots, %u workers, %s stores\n", kib, slots, workers, streaming ? "non-temporal" : "plain");
  return true;
}

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
