// The registry of host arrays the host array cache page-locks (include/chs/HostCache.h): transfers from and to a
// registered range go straight to the device, without the staging buffers.
#include "chsCudaCommon.cuh"
#include "chs/HostCache.h"
#include <map>
#include <mutex>

namespace chs
{
namespace detail
{

namespace
{
/** The arrays RegisterHostArray locked: base address -> bytes. */
struct Registry
{
  std::mutex                    mutex;
  std::map<uintptr_t, uint64_t> arrays;
  uint64_t                      bytes = 0; // locked in all
};
Registry &
TheRegistry()
{
  static Registry * registry = new Registry; // never destroyed, like the staging buffers
  return *registry;
}
} // namespace

bool
RegisterHostArray(void * p, uint64_t bytes)
{
  if (p == nullptr || bytes == 0)
    return false;
  const uint64_t              limit = GetHostCacheLimit();
  Registry &                  r     = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.bytes + bytes > limit)
    return false;
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess)
  {
    cudaGetLastError(); // no driver or device, or no memory to lock: the transfers stage through the pinned buffers
    return false;
  }
  r.arrays[reinterpret_cast<uintptr_t>(p)] = bytes;
  r.bytes += bytes;
  return true;
}

void
UnregisterHostArray(void * p)
{
  if (p == nullptr)
    return;
  Registry &                  r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto                  it = r.arrays.find(reinterpret_cast<uintptr_t>(p));
  if (it == r.arrays.end())
    return;
  cudaHostUnregister(p);
  cudaGetLastError();
  r.bytes -= it->second;
  r.arrays.erase(it);
}

bool
IsRegisteredHostRange(const void * p, uint64_t bytes)
{
  const uintptr_t             a = reinterpret_cast<uintptr_t>(p);
  Registry &                  r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto                        it = r.arrays.upper_bound(a);
  if (it == r.arrays.begin())
    return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second;
}

} // namespace detail

} // namespace chs
