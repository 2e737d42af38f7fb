/*=========================================================================
 *  CudaHierarchicalSegmentation: a process-wide cache of the large host arrays that the filters' outputs hold.
 *
 *  Why: a fresh allocation of hundreds of megabytes has no pages yet; the first write maps them one by one, and on
 *  the GPU machine's host (a virtual machine) that ran at 1.8 to 2.7 GB/s: the 285 MB of a 4096^2 image's alpha-tree
 *  took 90 to 180 ms to map, twenty times the tree's kernels, while a copy into mapped memory runs at the host
 *  link's speed (docs/design/notes.md, "Host arrays kept for reuse"). So the tree and image containers of the
 *  module (itkHostCachedContainers.h) give their storage to this cache when they are destroyed or re-sized, and
 *  take it back, pages mapped, for the next output of a similar size.
 *
 *  Rules:
 *  - Only arrays of at least HostCacheMinimumBytes are cached; smaller ones are allocated and freed as usual.
 *  - The cache holds at most GetHostCacheLimit() bytes of arrays that no output uses (default: an eighth of the
 *    physical memory; the environment variable CHS_HOST_CACHE_MB, read once, overrides it; 0 disables the cache).
 *    Giving an array to a full cache frees the arrays given longest ago until it fits, or frees the array itself when
 *    it alone exceeds the limit.
 *  - An array is taken for a request of n elements when its capacity is at least n and at most twice n plus
 *    HostCacheMinimumBytes: the smallest such array, so that a small output does not pin a large block.
 *  - Taken arrays hold unspecified values (what their last user left) up to the requested size; the backends
 *    write every element of their outputs.
 *  - Arrays that the image containers allocate for a CUDA update are page-locked once (AcquireHostVector, `pinned`),
 *    and stay so in the cache; the transfers copy straight into them. They are unlocked before they are freed.
 *  - Thread-safe; ReleaseHostCache() frees every cached array now.
 *=========================================================================*/
#ifndef chsHostCache_h
#define chsHostCache_h

#include "CudaHierarchicalSegmentationExport.h"

#include <cstdint>
#include <memory>
#include <new>
#include <typeinfo>
#include <vector>

namespace chs
{

constexpr uint64_t HostCacheMinimumBytes = uint64_t(1) << 20;

CudaHierarchicalSegmentation_EXPORT uint64_t
GetHostCacheLimit();
CudaHierarchicalSegmentation_EXPORT void
SetHostCacheLimit(uint64_t bytes);
/** Bytes of the arrays the cache holds now. */
CudaHierarchicalSegmentation_EXPORT uint64_t
GetHostCacheBytes();
CudaHierarchicalSegmentation_EXPORT void
ReleaseHostCache();

/** Maps the pages of [p, p + bytes) without changing their contents (Linux: madvise MADV_POPULATE_WRITE, in chunks
 * on several threads); does nothing for small ranges or where the system lacks it. */
CudaHierarchicalSegmentation_EXPORT void
PopulatePages(void * p, uint64_t bytes);

/** An allocator whose construct() default-initialises: resizing a vector of integers or floats writes nothing. */
template <typename T>
struct DefaultInitAllocator : std::allocator<T>
{
  template <typename U>
  struct rebind
  {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept
  {
  }
  template <typename U>
  void
  construct(U * p) noexcept(noexcept(::new (static_cast<void *>(p)) U))
  {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args>
  void
  construct(U * p, Args &&... args)
  {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

namespace detail
{
/** Page-locks [p, p + bytes) for the CUDA driver (cudaHostRegister, portable), so that copies between it and the
 * device run directly at the link's pinned rate; records it; false where it cannot (no driver, no device) or where
 * the arrays locked so far and this one would exceed GetHostCacheLimit() (the outputs a user keeps stay pageable
 * beyond that). Defined with the CUDA code (src/Common/chsHostRegistry.cu). */
CudaHierarchicalSegmentation_EXPORT bool
RegisterHostArray(void * p, uint64_t bytes);
/** Unlocks an array that RegisterHostArray locked at p; does nothing for any other pointer. */
CudaHierarchicalSegmentation_EXPORT void
UnregisterHostArray(void * p);
/** Whether [p, p + bytes) lies inside one array that RegisterHostArray locked. */
CudaHierarchicalSegmentation_EXPORT bool
IsRegisteredHostRange(const void * p, uint64_t bytes);

/** A cached array of some vector type, known by its type_info. */
struct HostCacheEntry
{
  virtual ~HostCacheEntry()       = default;
  const std::type_info * type     = nullptr;
  uint64_t               capacity = 0; // elements
  uint64_t               bytes    = 0;
};
template <class TVector>
struct HostCacheVectorEntry : HostCacheEntry
{
  ~HostCacheVectorEntry() override { UnregisterHostArray(vector.data()); }
  TVector vector;
};
/** Whether an array of `capacity` elements suits a request of `elements` (the rule above). */
inline bool
HostCacheSuits(uint64_t capacity, uint64_t elements, uint64_t elementBytes)
{
  return capacity >= elements && capacity * elementBytes <= 2 * elements * elementBytes + HostCacheMinimumBytes;
}
/** The smallest cached array of `type` that suits `elements` (HostCacheSuits), or null. */
CudaHierarchicalSegmentation_EXPORT std::unique_ptr<HostCacheEntry>
TakeHostCacheEntry(const std::type_info & type, uint64_t elements, uint64_t elementBytes);
/** Keeps `entry` within the limit, or frees it. */
CudaHierarchicalSegmentation_EXPORT void
GiveHostCacheEntry(std::unique_ptr<HostCacheEntry> entry);
} // namespace detail

/** Gives v's storage to the cache (when large enough; else frees it, page-unlocked first if it was locked); v is then
 * empty with no storage. */
template <class TVector>
void
ReleaseHostVector(TVector & v)
{
  using T              = typename TVector::value_type;
  const uint64_t bytes = uint64_t(v.capacity()) * sizeof(T);
  if (bytes < HostCacheMinimumBytes)
  {
    detail::UnregisterHostArray(v.data());
    TVector().swap(v);
    return;
  }
  // Never throws (it runs in destructors): without memory for the cache's bookkeeping, the array is freed.
  std::unique_ptr<detail::HostCacheVectorEntry<TVector>> entry;
  try
  {
    entry.reset(new detail::HostCacheVectorEntry<TVector>);
  }
  catch (...)
  {
    detail::UnregisterHostArray(v.data());
    TVector().swap(v);
    return;
  }
  entry->type     = &typeid(TVector);
  entry->capacity = v.capacity();
  entry->bytes    = bytes;
  entry->vector.swap(v);
  try
  {
    detail::GiveHostCacheEntry(std::move(entry)); // on failure the entry is destroyed: unlocked and freed
  }
  catch (...)
  {
  }
}

/** v holds n elements of unspecified values, in storage whose pages are mapped: its own when it suits n (the rules
 * above), else a cached array, else a new one mapped on several threads. With `pinned`, storage of at least
 * HostCacheMinimumBytes is page-locked for the CUDA driver if it is not yet (RegisterHostArray: a one-time cost,
 * 2.9 ms for 64 MB on the H200 machine, against 1 ms saved on every later download into it), whether it is new or
 * came unlocked from the cache (the output of a CPU update, given back). Elements beyond the storage's previous size
 * are value-initialised unless the allocator default-initialises. Only storage that the module owns whole asks for
 * pinned: the image containers' buffers and the backends' own host arrays; a tree's VectorContainer could be
 * reallocated by its user. */
template <class TVector>
void
AcquireHostVector(TVector & v, uint64_t n, bool pinned = false)
{
  using T = typename TVector::value_type;
  if (!detail::HostCacheSuits(v.capacity(), n, sizeof(T)))
  {
    ReleaseHostVector(v);
    if (n * sizeof(T) >= HostCacheMinimumBytes)
    {
      if (auto entry = detail::TakeHostCacheEntry(typeid(TVector), n, sizeof(T)))
        v.swap(static_cast<detail::HostCacheVectorEntry<TVector> &>(*entry).vector);
      else
      {
        v.reserve(n);
        PopulatePages(v.data(), n * sizeof(T));
      }
    }
  }
  const uint64_t bytes = uint64_t(v.capacity()) * sizeof(T);
  if (pinned && bytes >= HostCacheMinimumBytes && !detail::IsRegisteredHostRange(v.data(), bytes))
    detail::RegisterHostArray(v.data(), bytes);
  v.resize(n);
}

} // namespace chs

#endif
