// Alpha-tree, level-synchronous construction (the module's own; for images whose edge weights take few distinct
// values: 8-bit and 16-bit scalar images). Kruskal's algorithm run one level at a time, every edge of a level at
// once, which builds the canonical tree directly: no edge nodes, no runs to collapse, no one-child nodes.
//  1. The work items grouped by level. 8-bit images: the tile stage (src/AlphaTree/chsAlphaTreeTileLevels.cuh) does the
//  unions
//     inside tiles in shared memory and leaves pairs of pixels to unite and "force" entries (EntrySource). 16-bit
//     images: every edge (EdgeIdSource): LevelKeysKernel writes every edge slot's level code (a slot outside the
//     image gets level 0 and no edge id), CUB's radix sort groups the edges by level (stable: raster order within a
//     level), LevelStartsKernel marks where each level starts. LevelListKernel lists the non-empty levels in
//     ascending order with the start of each one's items.
//  2. LevelLoopKernel, one cooperative launch, runs the levels in order. For a level of code L:
//     phase A: every edge of L unites its ends' sets (union-find whose root is the smallest pixel of its set, union by
//              CAS of the larger root under the smaller; find with path halving); a root linked under another is a
//              "loser" of L, written next to its edge (lost[i]; no list, no atomic counter);
//     phase B: every loser finds the root R its set has at the end of L and leaves R in its node's parent; the
//              first loser of R to stamp R with L (read first, then atomicExch) makes R's node (L, R): R's previous
//              node (a leaf or a node of a lower level) becomes its child, and it becomes R's current node;
//              a force entry {R} finds its set's root the same way and may make its node (see the tile stage);
//     phase A of the next level replaces each previous loser's R (and each force entry's) by R's node of that level.
//     A level with many edges runs on the whole grid with a grid barrier after each phase; a level with at most
//     kSmallLevelEdges edges runs on block 0 alone with block barriers (the other blocks go on to the next level
//     with many edges and wait there at a grid barrier). Before block 0 takes over, every pixel is pointed at its
//     root, so that its finds, one slow global-memory step after another, stay short. The small levels after the
//     last large one usually run instead in shared memory (src/AlphaTree/chsAlphaTreeLevelTail.cuh): the kernel takes a
//     range of the level list.
//  A node (L, R) is made exactly when at least two components of levels below L join at L (the losers and R), so
//  every internal node has two children or more and a level above theirs: the tree is canonical by construction.
//  Internal node ids are n + creation slot; the renumbering by (level, smallest pixel) is the canonicalisation's last
//  stage (src/AlphaTree/chsAlphaTreeCanonical.cu). Work: O(edges) finds plus two barriers per level, which is why the
//  construction suits 8-bit images (at most 256 levels) and not 16-bit ones with thousands of levels.
//  Device memory: per pixel 3 x 4 bytes (union-find, current node, stamp) and a 4-byte parent, per possible internal
//  node (n - 1) 3 x 4 bytes (parent, level, smallest pixel); 16-bit images: per edge slot 2 x (code + 4 bytes) for
//  the sort and the sorted ids (the alternate id buffer then holds lost[]); 8-bit images: see the tile stage.
#ifndef chsATLevels_cuh
#define chsATLevels_cuh

#include "Common/chsDeviceHelpers.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

#include <cooperative_groups.h>

namespace chs
{
namespace at
{

constexpr uint32_t kNoLevelEdge = 0xffffffffu;
/** A level's start in the level list's `start` when the level has no item (positions are 64-bit: 16-bit images may
 * have 2^32 edge slots or more). */
constexpr uint64_t kNoLevelStart = ~uint64_t(0);
/** An edge id (EdgeIdSource) for a slot outside the image: all ones in the id type, 32 or 64 bits. */
template <typename TId>
constexpr TId      kNoEdgeId     = TId(~TId(0));
constexpr uint32_t kForceEntry   = 0xffffffffu; // entry.y of a force entry (EntrySource)
constexpr unsigned kLevelThreads = 1024;

/** An edge id (pixel * slots + slot, always inside the image; 32 or 64 bits) to its ends (pixel ids of TNode: 32 bits
 * below 2^31 pixels, 64 from there on). */
struct LevelEdges
{
  uint32_t slots;
  int64_t  offset[13]; // far end - near end, per slot

  explicit LevelEdges(const sl::ImageGraph & g)
    : slots(g.slots)
  {
    for (unsigned s = 0; s < 13; ++s)
      offset[s] = s < g.slots ? (int64_t(g.dz[s]) * g.ny + g.dy[s]) * g.nx + g.dx[s] : 0;
  }
  template <typename TId, typename TNode>
  __device__ __forceinline__ void
  Ends(TId id, TNode & p, TNode & q) const
  {
    p                = TNode(id / slots);
    const uint32_t s = uint32_t(id - TId(p) * slots);
    if constexpr (sizeof(TNode) == 4)
      q = uint32_t(int32_t(p) + int32_t(offset[s]));
    else
      q = TNode(int64_t(p) + offset[s]);
  }
};

/** No node, pixel or root (all ones in the id type, 32 or 64 bits). */
template <typename TNode>
constexpr TNode kNoNode = TNode(~TNode(0));

/** The construction's arrays: n pixels, n - 1 possible internal nodes; node and pixel ids of TNode (32 bits up to
 * MaximumDendrogramVertices pixels, 64 bits beyond or when AlphaTreeParameters::forceWideNodeIds asks). */
template <typename TNode>
struct LevelStateT
{
  TNode *              uf;         // union-find parents (n); a root is the smallest pixel of its set
  TNode *              current;    // node of the set a root stands for (n): the pixel, or the set's latest node
  uint32_t *           stamp;      // the last level code at which a root made a node (n)
  TNode *              nodeParent; // parents of all nodes (2n - 1): leaves, then n + creation slot
  uint32_t *           nodeLevel;  // level code of an internal node (n - 1, by slot)
  TNode *              nodeMin;    // smallest pixel of an internal node (n - 1, by slot)
  unsigned long long * nodes;      // internal nodes made (a counter)
  TNode                n;
};
using LevelState = LevelStateT<uint32_t>;

/** The level code of every edge slot and its id (slot index), or kNoEdgeId with code 0 outside the image. */
template <typename TKey, typename TPixel, typename TId>
static __global__ void
LevelKeysKernel(const TPixel * pixels, sl::ImageGraph g, TKey * keys, TId * ids)
{
  const uint64_t n = g.Pixels();
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < n; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const int64_t x = int64_t(p % uint64_t(g.nx)), rest = int64_t(p / uint64_t(g.nx));
    const int64_t y = rest % g.ny, z = rest / g.ny;
    const TPixel  a = pixels[p];
    for (unsigned s = 0; s < g.slots; ++s)
    {
      const int64_t  q    = g.Neighbour(x, y, z, s);
      const uint64_t slot = p * g.slots + s;
      keys[slot]          = q >= 0 ? TKey(sl::ScalarDifferenceCode(a, pixels[q])) : TKey(0);
      ids[slot]           = q >= 0 ? TId(slot) : kNoEdgeId<TId>;
    }
  }
}

/** start[code] = position of the first edge of that level in the sorted keys (untouched for absent levels). */
template <typename TKey>
static __global__ void
LevelStartsKernel(const TKey * keys, uint64_t count, uint64_t * start)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    if (i == 0 || keys[i] != keys[i - 1])
      start[keys[i]] = i;
  }
}

/** One block: the present levels in ascending order (levels[j], begins[j]; begins[count] = *total) and their
 * number in *count. `start` holds kNoLevelStart for absent codes. */
static __global__ void
LevelListKernel(const uint64_t * start,
                uint32_t         codes,
                const uint64_t * total,
                uint32_t *       levels,
                uint64_t *       begins,
                uint32_t *       count)
{
  __shared__ uint32_t warpCounts[32];
  __shared__ uint32_t base;
  if (threadIdx.x == 0)
    base = 0;
  __syncthreads();
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (uint32_t c0 = 0; c0 < codes; c0 += blockDim.x)
  {
    const uint32_t c       = c0 + threadIdx.x;
    const bool     present = c < codes && start[c] != kNoLevelStart;
    const unsigned ballot  = __ballot_sync(0xffffffffu, present);
    if (lane == 0)
      warpCounts[warp] = __popc(ballot);
    __syncthreads();
    uint32_t before = base;
    for (unsigned w = 0; w < warp; ++w)
      before += warpCounts[w];
    if (present)
    {
      const uint32_t j = before + __popc(ballot & ((1u << lane) - 1u));
      levels[j]        = c;
      begins[j]        = start[c];
    }
    __syncthreads();
    if (threadIdx.x == 0)
    {
      for (unsigned w = 0; w < warps; ++w)
        base += warpCounts[w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0)
  {
    begins[base] = *total;
    *count       = base;
  }
}

template <typename TNode>
static __global__ void
LevelInitKernel(LevelStateT<TNode> st)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < st.n; i += uint64_t(gridDim.x) * blockDim.x)
  {
    st.uf[i]         = TNode(i);
    st.current[i]    = TNode(i);
    st.stamp[i]      = 0xffffffffu;
    st.nodeParent[i] = TNode(i);
  }
}

/** A load that bypasses L1: the value may have been written by another block since this SM last read it. */
__device__ __forceinline__ uint32_t
LoadCg(const uint32_t * p)
{
  return __ldcg(p);
}
__device__ __forceinline__ uint64_t
LoadCg(const uint64_t * p)
{
  return __ldcg(reinterpret_cast<const unsigned long long *>(p));
}

/** Find with path halving by plain stores (a pointer only ever moves to an ancestor, and a root is only linked by
 * CAS), which also points `a` itself at the root found. */
template <typename TNode>
__device__ __forceinline__ TNode
LevelFind(TNode * P, TNode a)
{
  volatile TNode * V     = P;
  const TNode      start = a;
  bool             moved = false;
  for (;;)
  {
    const TNode p = V[a];
    if (p == a)
      break;
    const TNode gp = V[p];
    if (gp == p)
    {
      a = p;
      break;
    }
    V[a]  = gp;
    moved = true;
    a     = gp;
  }
  if (moved && V[start] != a)
    V[start] = a;
  return a;
}

/** The level loop's work items as edge ids of type TId (every edge slot of the image; kNoEdgeId outside it): 32-bit,
 * or 64-bit from 2^32 - 1 edge slots on (or when AlphaTreeParameters::forceWideIds asks for them). */
template <typename TId>
struct EdgeIdSource
{
  LevelEdges  g;
  const TId * ids;

  template <typename TNode>
  __device__ __forceinline__ bool
  Pair(uint64_t i, TNode & u, TNode & v) const
  {
    const TId id = ids[i];
    if (id == kNoEdgeId<TId>)
      return false;
    g.Ends(id, u, v);
    return true;
  }
  template <typename TNode>
  __device__ __forceinline__ bool
  Force(uint64_t, TNode &) const
  {
    return false;
  }
};

/** The level loop's work items as the tile stage's entries (src/AlphaTree/chsAlphaTreeTileLevels.cuh): pairs of pixels
 * to unite, and force entries {R, kForceEntry}: the set of R makes a node at the level whatever the unions do. */
struct EntrySource
{
  const uint2 * entries;

  __device__ __forceinline__ bool
  Pair(uint64_t i, uint32_t & u, uint32_t & v) const
  {
    const uint2 e = entries[i];
    u             = e.x;
    v             = e.y;
    return e.y != kForceEntry;
  }
  __device__ __forceinline__ bool
  Force(uint64_t i, uint32_t & r) const
  {
    const uint2 e = entries[i];
    r             = e.x;
    return e.y == kForceEntry;
  }
};

/** Phase A: parents of the previous level's losers' nodes (items [pb, pe)), then the unions of the items [b, e);
 * lost[i] = the root item i linked under another, or kNoLevelEdge. A force entry's lost[i] goes from its set's
 * root (phase B) to that root's node of the level. Threads `t` of `stride` share the work. */
template <typename TSource, typename TNode>
static __device__ __forceinline__ void
PhaseA(const LevelStateT<TNode> & st,
       const TSource &            src,
       TNode *                    lost,
       uint64_t                   pb,
       uint64_t                   pe,
       uint64_t                   b,
       uint64_t                   e,
       uint64_t                   t,
       uint64_t                   stride)
{
  for (uint64_t i = pb + t; i < pe; i += stride)
  {
    const TNode r = lost[i];
    if (r == kNoNode<TNode>)
      continue;
    TNode root;
    if (src.Force(i, root))
    {
      lost[i] = LoadCg(st.current + r);
      continue;
    }
    // Phase B left the loser's root in its node's parent.
    const TNode c    = LoadCg(st.current + r);
    st.nodeParent[c] = LoadCg(st.current + LoadCg(st.nodeParent + c));
  }
  for (uint64_t i = b + t; i < e; i += stride)
  {
    TNode loser = kNoNode<TNode>, u, v;
    if (src.Pair(i, u, v))
      loser = UniteByCas(
        st.uf,
        u,
        v,
        kNoNode<TNode>,
        [&](TNode a) { return LevelFind(st.uf, a); },
        [](TNode a, TNode b) { return a < b; });
    lost[i] = loser;
  }
}

/** Phase B, items [b, e) of level `code`: each loser finds its set's root R at the end of the level and leaves it
 * in the parent of its node (phase A of the next level replaces it by R's node); a force entry finds its root R and
 * leaves it in lost[i]. R's first loser or force entry to stamp R with the level makes R's node. */
template <typename TSource, typename TNode>
static __device__ __forceinline__ void
PhaseB(const LevelStateT<TNode> & st,
       const TSource &            src,
       TNode *                    lost,
       uint32_t                   code,
       uint64_t                   b,
       uint64_t                   e,
       uint64_t                   t,
       uint64_t                   stride)
{
  // Block-uniform iterations (t - threadIdx.x and stride are the same in a block): node slots with one atomic per
  // block.
  for (uint64_t base = b + t - threadIdx.x; base < e; base += stride)
  {
    const uint64_t i     = base + threadIdx.x;
    const bool     valid = i < e;
    const TNode    r     = valid ? lost[i] : kNoNode<TNode>;
    TNode          R     = 0, forced;
    bool           make  = false;
    if (valid && r != kNoNode<TNode>)
    {
      R                                     = LevelFind(st.uf, r);
      st.nodeParent[LoadCg(st.current + r)] = R;
      make                                  = LoadCg(st.stamp + R) != code && atomicExch(st.stamp + R, code) != code;
    }
    else if (valid && src.Force(i, forced))
    {
      R       = LevelFind(st.uf, forced);
      lost[i] = R;
      make    = LoadCg(st.stamp + R) != code && atomicExch(st.stamp + R, code) != code;
    }
    const unsigned long long slot = BlockSlot(make, st.nodes);
    if (make)
    {
      const TNode node                      = st.n + TNode(slot);
      st.nodeParent[LoadCg(st.current + R)] = node;
      st.nodeParent[node]                   = node;
      st.current[R]                         = node;
      st.nodeLevel[slot]                    = code;
      st.nodeMin[slot]                      = R;
    }
  }
}

/** Points every pixel at its root (threads t of stride): the next level's finds start one step from the root. */
template <typename TNode>
static __device__ __forceinline__ void
Flatten(const LevelStateT<TNode> & st, uint64_t t, uint64_t stride)
{
  for (uint64_t p = t; p < st.n; p += stride)
    LevelFind(st.uf, TNode(p));
}

/** The levels [firstLevel, endLevel) of the level list, in ascending order (see the file's comment); endLevel at
 * most *levelCount. Launched cooperatively, kLevelThreads per block; `lost` has room for every item. */
template <typename TSource, typename TNode>
static __global__ void
__launch_bounds__(kLevelThreads, 1) LevelLoopKernel(TSource            src,
                                                    TNode *            lost,
                                                    const uint32_t *   levels,
                                                    const uint64_t *   begins,
                                                    const uint32_t *   levelCount,
                                                    uint32_t           firstLevel,
                                                    uint32_t           endLevel,
                                                    LevelStateT<TNode> st,
                                                    uint32_t           smallLevel,
                                                    const unsigned *   onlyIf)
{
  if (onlyIf && *onlyIf == 0)
    return; // queued for a case that did not arise (every block returns: no grid barrier is left waiting)
  namespace cg         = cooperative_groups;
  cg::grid_group grid  = cg::this_grid();
  const uint32_t count = *levelCount < endLevel ? *levelCount : endLevel;
  const uint64_t gt = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x, gs = uint64_t(gridDim.x) * blockDim.x;
  uint64_t       pb = 0, pe = 0;    // the previous level's edges
  bool           blockMode = false; // block 0 has run levels alone since the last grid barrier
  for (uint32_t j = firstLevel; j < count; ++j)
  {
    const uint64_t b = begins[j], e = begins[j + 1];
    const uint32_t code = levels[j];
    if (e - b <= smallLevel)
    {
      if (blockIdx.x == 0)
      {
        PhaseA(st, src, lost, pb, pe, b, e, threadIdx.x, blockDim.x);
        __syncthreads();
        PhaseB(st, src, lost, code, b, e, threadIdx.x, blockDim.x);
        __syncthreads();
      }
      blockMode = true;
      pb        = b;
      pe        = e;
      continue;
    }
    if (blockMode)
    {
      grid.sync();
      blockMode = false;
    }
    PhaseA(st, src, lost, pb, pe, b, e, gt, gs);
    grid.sync();
    PhaseB(st, src, lost, code, b, e, gt, gs);
    // Before levels run by block 0 alone, which would climb long paths one slow step at a time.
    if (j + 1 < count && begins[j + 2] - begins[j + 1] <= smallLevel)
      Flatten(st, gt, gs);
    grid.sync();
    pb = b;
    pe = e;
  }
  // The last level's losers.
  grid.sync();
  PhaseA(st, src, lost, pb, pe, 0, 0, gt, gs);
}

} // namespace at
} // namespace chs

#endif
