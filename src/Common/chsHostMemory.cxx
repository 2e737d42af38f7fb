#include "chsHostMemory.h"

#include <algorithm>
#include <thread>
#include <vector>

#if defined(__linux__)
#  include <sys/mman.h>
#  include <unistd.h>
#  ifndef MADV_POPULATE_WRITE
#    define MADV_POPULATE_WRITE 23
#  endif
#endif

namespace chs
{

void
PopulatePages(void * p, uint64_t bytes)
{
#if defined(__linux__)
  constexpr uint64_t kMinimum = uint64_t(64) << 20; // below this, faulting in one thread is quick enough
  if (p == nullptr || bytes < kMinimum)
    return;
  const uint64_t page  = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t begin = (reinterpret_cast<uint64_t>(p) + page - 1) / page * page;
  const uint64_t end   = (reinterpret_cast<uint64_t>(p) + bytes) / page * page;
  if (end <= begin)
    return;
  const unsigned           threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const uint64_t           chunk   = ((end - begin) / threads + page - 1) / page * page;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
  {
    const uint64_t a = begin + t * chunk, b = std::min(end, a + chunk);
    if (a >= b)
      break;
    // A failure (an older kernel without MADV_POPULATE_WRITE) leaves the pages to be mapped on first write.
    pool.emplace_back([a, b] { madvise(reinterpret_cast<void *>(a), b - a, MADV_POPULATE_WRITE); });
  }
  for (auto & t : pool)
    t.join();
#else
  (void)p;
  (void)bytes;
#endif
}

} // namespace chs
