// Boruvka's minimum spanning tree on the device, for image graphs and for edge lists. Every edge has a unique 64-bit
// key that orders edges by (weight, edge index): (weight code << 32 | edge index) for images, the rank of the edge
// in the sorted list for graphs. Each round:
//   1. every live edge offers its key to both of its components (atomicMin on the component's best key);
//   2. every component with an offer hooks onto the component across its lightest edge, and records that edge as a
//      tree edge. Keys are unique, so the hooks form trees whose only cycles are pairs of components that chose the
//      same edge; in such a pair the smaller root stays a root, and the edge is recorded once;
//   3. the hook trees are compressed (path halving from every root) and every vertex takes its root's new root;
//   4. the edges inside one component are dropped and the others compacted for the next round.
// The set of tree edges is the unique minimum spanning tree whatever the order of the atomics, so the result does
// not depend on the run.
#ifndef chsSLBoruvka_cuh
#define chsSLBoruvka_cuh

#include "chsCudaCommon.cuh"
#include "chsSingleLinkageRule.h"

#include <cuda_runtime.h>

namespace chs
{
namespace sl
{

constexpr unsigned long long kNoEdge = ~0ull;

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

/** Edges of an image graph, keyed by (code << 32 | edge index). */
struct ImageEdges
{
  ImageGraph g;
  __device__ __forceinline__ void
  Ends(unsigned long long key, uint32_t & a, uint32_t & b) const
  {
    g.Ends(key & 0xffffffffull, a, b);
  }
};

/** Appends `item` to out[*count] for the lanes where `keep` holds, with one atomic per warp. */
__device__ __forceinline__ void
WarpAppend(bool keep, unsigned long long item, unsigned long long * out, unsigned long long * count)
{
  const unsigned active = __activemask();
  const unsigned want = __ballot_sync(active, keep);
  if (want == 0)
    return;
  const int          lane = threadIdx.x & 31;
  const int          leader = __ffs(want) - 1;
  unsigned long long base = 0;
  if (lane == leader)
    base = atomicAdd(count, (unsigned long long)__popc(want));
  base = __shfl_sync(active, base, leader);
  if (keep)
    out[base + __popc(want & ((1u << lane) - 1u))] = item;
}

static __global__ void
IotaKernel(uint32_t * a, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    a[i] = uint32_t(i);
}

/** Step 1 over a list of live keys (or the keys 0 .. count - 1 when `live` is null). */
template <class E>
static __global__ void
OfferKernel(const unsigned long long * live, uint64_t count, E edges, const uint32_t * label, unsigned long long * best)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const unsigned long long key = live ? live[i] : i;
    uint32_t                 a, b;
    edges.Ends(key, a, b);
    const uint32_t ra = label[a], rb = label[b];
    if (ra == rb)
      continue;
    if (key < best[ra])
      atomicMin(best + ra, key);
    if (key < best[rb])
      atomicMin(best + rb, key);
  }
}

/** Step 1 of an image's first round: every pixel's lightest incident edge, read from the image (no atomics). */
template <typename T>
static __global__ void
ImageOfferKernel(const T * pixels, ImageGraph g, unsigned components, VectorDistance distance,
                 unsigned long long * best)
{
  const uint64_t n = g.Pixels();
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < n; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const int64_t      x = int64_t(p % uint64_t(g.nx)), rest = int64_t(p / uint64_t(g.nx));
    const int64_t      y = rest % g.ny, z = rest / g.ny;
    unsigned long long m = kNoEdge;
    for (unsigned s = 0; s < g.slots; ++s)
    {
      const int64_t q = g.Neighbour(x, y, z, s);
      if (q >= 0)
      {
        const uint32_t code = EdgeCode(pixels + p * components, pixels + uint64_t(q) * components, components, distance);
        const unsigned long long key = (uint64_t(code) << 32) | (p * g.slots + s);
        m = key < m ? key : m;
      }
      const int64_t r = g.Backward(x, y, z, s);
      if (r >= 0)
      {
        const uint32_t code = EdgeCode(pixels + uint64_t(r) * components, pixels + p * components, components, distance);
        const unsigned long long key = (uint64_t(code) << 32) | (uint64_t(r) * g.slots + s);
        m = key < m ? key : m;
      }
    }
    best[p] = m;
  }
}

/** Step 2: every root with an offer hooks across it (link), and the tree edge is recorded once. */
template <class E>
static __global__ void
HookKernel(uint64_t n, E edges, const uint32_t * label, const unsigned long long * best, uint32_t * link,
           unsigned long long * tree, unsigned long long * treeCount)
{
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < n; x += uint64_t(gridDim.x) * blockDim.x)
  {
    bool               record = false;
    unsigned long long key = kNoEdge;
    if (label[x] == x)
    {
      key = best[x];
      uint32_t target = uint32_t(x);
      if (key != kNoEdge)
      {
        uint32_t a, b;
        edges.Ends(key, a, b);
        const uint32_t la = label[a], lb = label[b];
        const uint32_t other = la == x ? lb : la;
        const bool     mutual = best[other] == key;
        record = !mutual || x < other;
        target = mutual && x < other ? uint32_t(x) : other;
      }
      link[x] = target;
    }
    WarpAppend(record, key, tree, treeCount);
  }
}

/** Step 3a: every root follows the hooks to the new root (path halving; the hook forest does not change here) and
 * writes it to `root`: not into `link`, where a slower thread's halving store may later put back an intermediate
 * ancestor. */
static __global__ void
CompressHooksKernel(uint64_t n, const uint32_t * label, uint32_t * link, uint32_t * root)
{
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < n; x += uint64_t(gridDim.x) * blockDim.x)
  {
    if (label[x] != x)
      continue;
    volatile uint32_t * L = link;
    uint32_t            r = uint32_t(x);
    for (;;)
    {
      const uint32_t p = L[r];
      if (p == r)
        break;
      const uint32_t gp = L[p];
      if (gp == p)
      {
        r = p;
        break;
      }
      L[r] = gp;
      r = gp;
    }
    root[x] = r;
  }
}

/** Step 3b: every vertex takes its root's new root. */
static __global__ void
RelabelKernel(uint64_t n, uint32_t * label, const uint32_t * root)
{
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < n; x += uint64_t(gridDim.x) * blockDim.x)
    label[x] = root[label[x]];
}

/** Step 4 over a list of keys (or the keys 0 .. count - 1 when `live` is null). */
template <class E>
static __global__ void
KeepCrossingKernel(const unsigned long long * live, uint64_t count, E edges, const uint32_t * label,
                   unsigned long long * out, unsigned long long * outCount)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (count + 31) / 32 * 32; // whole warps, for the warp's append
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < rounded; i += stride)
  {
    bool               keep = false;
    unsigned long long key = 0;
    if (i < count)
    {
      key = live ? live[i] : i;
      uint32_t a, b;
      edges.Ends(key, a, b);
      keep = label[a] != label[b];
    }
    WarpAppend(keep, key, out, outCount);
  }
}

/** Step 4 of an image's first round: the crossing edges, read from the image. */
template <typename T>
static __global__ void
ImageKeepCrossingKernel(const T * pixels, ImageGraph g, unsigned components, VectorDistance distance,
                        const uint32_t * label, unsigned long long * out, unsigned long long * outCount)
{
  const uint64_t n = g.Pixels();
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t rounded = (n + 31) / 32 * 32;
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < rounded; p += stride)
  {
    const bool    inside = p < n;
    const int64_t x = inside ? int64_t(p % uint64_t(g.nx)) : 0, rest = inside ? int64_t(p / uint64_t(g.nx)) : 0;
    const int64_t y = rest % g.ny, z = rest / g.ny;
    for (unsigned s = 0; s < g.slots; ++s)
    {
      const int64_t q = inside ? g.Neighbour(x, y, z, s) : -1;
      bool          keep = false;
      unsigned long long key = 0;
      if (q >= 0 && label[p] != label[q])
      {
        const uint32_t code = EdgeCode(pixels + p * components, pixels + uint64_t(q) * components, components, distance);
        key = (uint64_t(code) << 32) | (p * g.slots + s);
        keep = true;
      }
      WarpAppend(keep, key, out, outCount);
    }
  }
}

} // namespace sl
} // namespace chs

#endif
