// Boruvka's minimum spanning tree on the device, for image graphs and for edge lists. Every edge has a unique 64-bit
// key that orders edges by (weight, edge index): (weight code << shift | edge index) for images (EdgeKeys: shift 32
// below 2^32 edge slots), the rank of the edge in the sorted list for graphs. Each round:
//   1. every live edge offers its key to both of its components (atomicMin on the component's best key);
//   2. every component with an offer hooks onto the component across its lightest edge, and records that edge as a
//      tree edge. Keys are unique, so the hooks form trees whose only cycles are pairs of components that chose the
//      same edge; in such a pair the smaller root stays a root, and the edge is recorded once;
//   3. the hook trees are compressed (path halving from every root) into each component's new root;
//   4. the edges inside one component are dropped, the others keep their key and their two components' new roots.
// For graphs the first round runs on the vertices and the input's edges; images start with rounds inside tiles in
// shared memory (src/Engines/SingleLinkage/chsSingleLinkageTileBoruvka.cuh), which leave each tile's components and the
// edges between them. Later rounds run on the contracted graph: live edges carry their components, and only the list of
// current roots is visited, so a round costs time in the live edges and the components left, not in the vertices. Their
// kernels read the counts of live edges and roots from the device, so that several rounds are queued between two reads
// of them. The set of tree edges is the unique minimum spanning tree whatever the order of the atomics, so the result
// does not depend on the run.
#ifndef chsSLBoruvka_cuh
#define chsSLBoruvka_cuh

#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "chsSingleLinkageRule.h"

#include <cuda_runtime.h>

namespace chs
{
namespace sl
{

constexpr unsigned long long kNoEdge = ~0ull;

/** An edge of the contracted graph: its key and its two components. */
struct alignas(16) LiveEdge
{
  unsigned long long key;
  uint32_t           a, b;
};

/** Edges of a sorted edge list, keyed by rank: the ends are the sorted end arrays. */
struct RankedEdges
{
  const uint32_t * su;
  const uint32_t * sv;
  __device__ __forceinline__ void
  Ends(unsigned long long key, uint32_t & a, uint32_t & b) const
  {
    a = su[key];
    b = sv[key];
  }
};

static __global__ void
IotaKernel(uint32_t * a, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    a[i] = uint32_t(i);
}

/** Step 1 of a graph's first round: every edge of the sorted list (key = rank) offers its key to both its ends. */
template <class E>
static __global__ void
OfferKernel(uint64_t count, E edges, unsigned long long * best)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    uint32_t a, b;
    edges.Ends(i, a, b);
    if (a == b)
      continue;
    if (i < best[a])
      atomicMin(best + a, (unsigned long long)i);
    if (i < best[b])
      atomicMin(best + b, (unsigned long long)i);
  }
}

/** Step 2 of the first round: every vertex with an offer hooks across it (link), and the tree edge is recorded
 * once. */
template <class E>
static __global__ void
HookKernel(uint64_t                   n,
           E                          edges,
           const unsigned long long * best,
           uint32_t *                 link,
           unsigned long long *       tree,
           unsigned long long *       treeCount)
{
  const uint64_t stride  = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (n + 31) / 32 * 32;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < rounded; x += stride)
  {
    bool               record = false;
    unsigned long long key    = kNoEdge;
    if (x < n)
    {
      key             = best[x];
      uint32_t target = uint32_t(x);
      if (key != kNoEdge)
      {
        uint32_t a, b;
        edges.Ends(key, a, b);
        const uint32_t other  = a == x ? b : a;
        const bool     mutual = best[other] == key;
        record                = !mutual || x < other;
        target                = mutual && x < other ? uint32_t(x) : other;
      }
      link[x] = target;
    }
    WarpAppend(record, key, tree, treeCount);
  }
}

/** Step 3 of the first round: every vertex follows the hooks to its component's root (path halving; the hook forest
 * does not change here) and writes it to `root`: not into `link`, where a slower thread's halving store may later put
 * back an intermediate ancestor. It also clears its best key for the next round. */
static __global__ void
CompressHooksKernel(uint64_t n, uint32_t * link, uint32_t * root, unsigned long long * best)
{
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < n; x += uint64_t(gridDim.x) * blockDim.x)
  {
    root[x] = FollowToRoot(link, uint32_t(x));
    best[x] = kNoEdge;
  }
}

/** Step 4 of a graph's first round: the crossing edges of the sorted list, with their components' new roots. */
template <class E>
static __global__ void
FirstKeepKernel(uint64_t count, E edges, const uint32_t * root, LiveEdge * out, unsigned long long * outCount)
{
  const uint64_t stride  = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (count + 31) / 32 * 32; // whole warps, for the warp's append
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < rounded; i += stride)
  {
    LiveEdge e{ i, 0, 0 };
    bool     keep = false;
    if (i < count)
    {
      uint32_t a, b;
      edges.Ends(i, a, b);
      e.a  = root[a];
      e.b  = root[b];
      keep = e.a != e.b;
    }
    WarpAppend(keep, e, out, outCount);
  }
}

/** After the first round: the list of the vertices that are roots. */
static __global__ void
ListRootsKernel(uint64_t n, const uint32_t * root, uint32_t * roots, unsigned long long * count)
{
  const uint64_t stride  = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (n + 31) / 32 * 32;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < rounded; x += stride)
    WarpAppend(x < n && root[x] == x, uint32_t(x), roots, count);
}

/** Contracted rounds, step 1: every live edge offers its key to its two components. */
static __global__ void
OfferLiveKernel(const LiveEdge * live, const unsigned long long * liveCount, unsigned long long * best)
{
  const uint64_t count = *liveCount;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const LiveEdge e = live[i];
    if (e.key < best[e.a])
      atomicMin(best + e.a, e.key);
    if (e.key < best[e.b])
      atomicMin(best + e.b, e.key);
  }
}

/** Contracted rounds: the component across each component's best edge (keys are unique: one writer each). */
static __global__ void
OtherSideKernel(const LiveEdge *           live,
                const unsigned long long * liveCount,
                const unsigned long long * best,
                uint32_t *                 other)
{
  const uint64_t count = *liveCount;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const LiveEdge e = live[i];
    if (best[e.a] == e.key)
      other[e.a] = e.b;
    if (best[e.b] == e.key)
      other[e.b] = e.a;
  }
}

/** Contracted rounds, step 2, over the list of roots. */
static __global__ void
HookRootsKernel(const uint32_t *           roots,
                const unsigned long long * rootCount,
                const unsigned long long * liveCount,
                const unsigned long long * best,
                const uint32_t *           other,
                uint32_t *                 link,
                unsigned long long *       tree,
                unsigned long long *       treeCount)
{
  if (*liveCount == 0)
    return; // a round queued after the last one
  const uint64_t count   = *rootCount;
  const uint64_t stride  = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (count + 31) / 32 * 32;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < rounded; i += stride)
  {
    bool               record = false;
    unsigned long long key    = kNoEdge;
    if (i < count)
    {
      const uint32_t x = roots[i];
      key              = best[x];
      uint32_t target  = x;
      if (key != kNoEdge)
      {
        const uint32_t o      = other[x];
        const bool     mutual = best[o] == key;
        record                = !mutual || x < o;
        target                = mutual && x < o ? x : o;
      }
      link[x] = target;
    }
    WarpAppend(record, key, tree, treeCount);
  }
}

/** Contracted rounds, step 3, over the list of roots: as CompressHooksKernel (only roots have links and offers). */
static __global__ void
CompressRootsKernel(const uint32_t *           roots,
                    const unsigned long long * rootCount,
                    const unsigned long long * liveCount,
                    uint32_t *                 link,
                    uint32_t *                 root,
                    unsigned long long *       best)
{
  if (*liveCount == 0)
    return;
  const uint64_t count = *rootCount;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t x = roots[i];
    root[x]          = FollowToRoot(link, uint32_t(x));
    best[x]          = kNoEdge;
  }
}

/** Contracted rounds, step 4: live edges between two new components, renamed; and the new list of roots. */
static __global__ void
KeepLiveKernel(const LiveEdge *           live,
               const unsigned long long * liveCount,
               const uint32_t *           root,
               LiveEdge *                 out,
               unsigned long long *       outCount)
{
  const uint64_t count  = *liveCount;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  // Block-uniform iterations: the appends take one atomic per block.
  for (uint64_t start = blockIdx.x * uint64_t(blockDim.x); start < count; start += stride)
  {
    const uint64_t i = start + threadIdx.x;
    LiveEdge       e{ 0, 0, 0 };
    bool           keep = false;
    if (i < count)
    {
      e    = live[i];
      e.a  = root[e.a];
      e.b  = root[e.b];
      keep = e.a != e.b;
    }
    BlockAppend(keep, e, out, outCount);
  }
}

static __global__ void
KeepRootsKernel(const uint32_t *           roots,
                const unsigned long long * rootCount,
                const unsigned long long * liveCount,
                const uint32_t *           root,
                uint32_t *                 out,
                unsigned long long *       outCount)
{
  if (*liveCount == 0)
    return;
  const uint64_t count  = *rootCount;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t start = blockIdx.x * uint64_t(blockDim.x); start < count; start += stride)
  {
    const uint64_t i = start + threadIdx.x;
    const uint32_t x = i < count ? roots[i] : 0;
    BlockAppend(i < count && root[x] == x, x, out, outCount);
  }
}

} // namespace sl
} // namespace chs

#endif
