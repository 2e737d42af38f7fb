// The host array cache of include/chs/HostCache.h, and the page population it uses for new arrays.
#include "chs/HostCache.h"

#include <algorithm>
#include <cstdlib>
#include <list>
#include <mutex>
#include <thread>

#if defined(__linux__)
#  include <sys/mman.h>
#  include <unistd.h>
#  ifndef MADV_POPULATE_WRITE
#    define MADV_POPULATE_WRITE 23
#  endif
#endif

namespace chs
{
namespace
{

uint64_t
DefaultLimit()
{
  if (const char * mb = std::getenv("CHS_HOST_CACHE_MB"))
  {
    char *                   end   = nullptr;
    const unsigned long long value = std::strtoull(mb, &end, 10);
    if (end != mb && *end == '\0')
      return uint64_t(value) << 20;
  }
#if defined(__linux__)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    return uint64_t(pages) * uint64_t(page) / 8;
#endif
  return uint64_t(1) << 30;
}

/** Entries in the order they were given, oldest first. */
struct Cache
{
  std::mutex                                         mutex;
  std::list<std::unique_ptr<detail::HostCacheEntry>> entries;
  uint64_t                                           bytes = 0;
  uint64_t                                           limit = DefaultLimit();

  /** Under the mutex: moves out the oldest entries until `needed` more bytes fit. */
  void
  Evict(uint64_t needed, std::list<std::unique_ptr<detail::HostCacheEntry>> & freed)
  {
    while (!entries.empty() && bytes + needed > limit)
    {
      bytes -= entries.front()->bytes;
      freed.splice(freed.end(), entries, entries.begin());
    }
  }
};

Cache &
TheCache()
{
  static Cache * cache = new Cache; // never destroyed: outputs may be released while the process exits
  return *cache;
}

} // namespace

uint64_t
GetHostCacheLimit()
{
  Cache &                     cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.limit;
}

void
SetHostCacheLimit(uint64_t bytes)
{
  Cache &                                            cache = TheCache();
  std::list<std::unique_ptr<detail::HostCacheEntry>> freed; // freed outside the lock
  std::lock_guard<std::mutex>                        lock(cache.mutex);
  cache.limit = bytes;
  cache.Evict(0, freed);
}

uint64_t
GetHostCacheBytes()
{
  Cache &                     cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.bytes;
}

void
ReleaseHostCache()
{
  Cache &                                            cache = TheCache();
  std::list<std::unique_ptr<detail::HostCacheEntry>> freed;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    freed.swap(cache.entries);
    cache.bytes = 0;
  }
}

namespace detail
{

std::unique_ptr<HostCacheEntry>
TakeHostCacheEntry(const std::type_info & type, uint64_t elements, uint64_t elementBytes)
{
  Cache &                     cache = TheCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto                        best = cache.entries.end();
  for (auto it = cache.entries.begin(); it != cache.entries.end(); ++it)
  {
    const HostCacheEntry & e = **it;
    if (*e.type == type && HostCacheSuits(e.capacity, elements, elementBytes) &&
        (best == cache.entries.end() || e.capacity < (*best)->capacity))
      best = it;
  }
  if (best == cache.entries.end())
    return nullptr;
  std::unique_ptr<HostCacheEntry> entry = std::move(*best);
  cache.entries.erase(best);
  cache.bytes -= entry->bytes;
  return entry;
}

void
GiveHostCacheEntry(std::unique_ptr<HostCacheEntry> entry)
{
  Cache &                                            cache = TheCache();
  std::list<std::unique_ptr<detail::HostCacheEntry>> freed;
  std::lock_guard<std::mutex>                        lock(cache.mutex);
  if (entry->bytes > cache.limit)
  {
    freed.push_back(std::move(entry));
    return;
  }
  cache.Evict(entry->bytes, freed);
  cache.bytes += entry->bytes;
  cache.entries.push_back(std::move(entry));
}

} // namespace detail

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
