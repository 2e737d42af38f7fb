// Alpha-tree, stage 3: canonicalisation and renumbering of the constructed tree (pixels and edge slots, parent
// chains sorted by (level, id)) into the definition of include/chs/AlphaTree.h. Every kernel is a grid-stride loop
// over the nodes; the tree does not change inside a kernel except where a comment says so.
//  1. RunKernel: up[x] = x's parent when x is an edge node with its parent's level (x is not canonical), else x
//     (internal nodes only: a pixel is never a parent);
//     then JumpKernel rounds (up[x] = up[up[x]]) until every node points at the top of its run of equal levels
//     (a number of rounds logarithmic in the longest run: the binary tree of the spanning-tree construction has
//     deep runs in large flat zones, which threads following the pointers one by one would climb concurrently);
//     rounds are queued four at a time, and one flag is read back per four.
//  2. CanonicalParentKernel: every leaf and every top of a run takes the top of its parent's run as parent, and
//     counts as a child of it (a count that stops at 2: only "at least two" matters, and big flat zones would make
//     every leaf add to the same counter).
//  3. KeepKernel: kept nodes are the leaves and the tops with at least two children (a top with one child is the
//     same component as its child: an edge the construction inserted although it joined nothing new). `up` becomes
//     the skip forest: a top that is not kept points to its parent.
//  4. KeptParentKernel: every kept node takes its nearest kept ancestor as parent (a kept node under a discarded
//     root becomes the root).
//     Steps 2 to 4 are TopParentKernel alone for the spanning-tree construction's binary tree: there every top of a
//     run has at least two children.
//  5. SmallestPixelKernel: each leaf climbs while it lowers its ancestors' smallest pixel (atomicMin): on
//     (parent, smallest pixel) pairs of the tops that TopParentKernel writes, or on the parents and a smallest-pixel
//     array (the child counts' buffer, reset by KeepKernel) in the general case.
//  6. GatherKernel lists the kept internal nodes with their keys (level code << levelShift | smallest pixel, where
//     levelShift is the bit width of the largest pixel index); CUB sorts them.
//  7. IdKernel and OutputKernel write the renumbered parents and the levels.
#ifndef chsATCanonical_cuh
#define chsATCanonical_cuh

#include "chsAlphaTreeConnect.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

namespace chs
{
namespace at
{

/** All ones in a node id type (32 or 64 bits). */
template <typename TNode>
constexpr TNode kAllOnes = TNode(~TNode(0));

/** The constructed tree as the canonicalisation reads it: parents of all nodes (ids of TNode: 32 bits, or 64 for the
 * spanning-tree construction's binary tree of more than 2^31 - 1 pixels), levels of the internal nodes. */
template <typename TNode>
struct NodeTree
{
  TNode *          parent;
  const uint32_t * level; // indexed by node - pixels
  TNode            pixels;

  __device__ __forceinline__ uint32_t
  Level(TNode x) const
  {
    return x < pixels ? 0u : level[x - pixels];
  }
};

/** Step 5's pair of a top: its parent and its smallest pixel, in one load (8 bytes for 32-bit ids, 16 for 64-bit). */
template <typename TNode>
struct NodePairOf;
template <>
struct NodePairOf<uint32_t>
{
  using Type = uint2;
};
template <>
struct NodePairOf<uint64_t>
{
  using Type = ulonglong2;
};
template <typename TNode>
using NodePair = typename NodePairOf<TNode>::Type;

#define CHS_AT_FOR_EACH(i, count)                                                                                      \
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < (count); i += uint64_t(gridDim.x) * blockDim.x)

/** up[x] for the internal nodes x (a pixel is never a parent, so leaves take no part in the runs). */
template <typename TNode>
static __global__ void
RunKernel(NodeTree<TNode> tree, uint64_t nodes, TNode * up)
{
  CHS_AT_FOR_EACH(i, nodes - tree.pixels)
  {
    const TNode x = TNode(tree.pixels + i), p = tree.parent[x];
    up[x] = (p != x && tree.Level(p) == tree.Level(x)) ? p : x;
  }
}

/** One round of pointer jumping; sets *changed when a pointer moved. Pointers only move up their run, so the
 * rounds may read values other threads are writing. Does nothing when the previous round (*previous, if given)
 * moved nothing, so that rounds can be queued before their flags are read. */
template <typename TNode>
static __global__ void
JumpKernel(uint64_t first, uint64_t nodes, TNode * up, const unsigned * previous, unsigned * changed)
{
  if (previous && *previous == 0)
    return;
  const volatile TNode * U     = up;
  bool                   moved = false;
  CHS_AT_FOR_EACH(j, nodes - first)
  {
    const uint64_t i = first + j;
    const TNode    a = U[i], b = U[a];
    if (a != b)
    {
      up[i] = b;
      moved = true;
    }
  }
  if (__syncthreads_or(moved) && threadIdx.x == 0)
    *changed = 1;
}

/** JumpKernel rounds on up[first .. nodes) (pointers into that range) until a round moves nothing. Rounds are
 * queued four at a time (a round after one that moved nothing does nothing) and the last one's flag is read back:
 * one synchronisation per four rounds. */
template <typename TNode>
void
JumpUntilStill(uint64_t                first,
               uint64_t                nodes,
               TNode *                 up,
               unsigned                blocks,
               unsigned                threads,
               cudaStream_t            stream,
               detail::MemoryTracker & tracker)
{
  constexpr unsigned             kQueued = 4;
  detail::DeviceBuffer<unsigned> changed(kQueued, stream, &tracker);
  for (unsigned flag = 1; flag;)
  {
    CHS_CUDA_CHECK(cudaMemsetAsync(changed.get(), 0, kQueued * sizeof(unsigned), stream));
    for (unsigned q = 0; q < kQueued; ++q)
    {
      JumpKernel<<<blocks, threads, 0, stream>>>(
        first, nodes, up, q ? changed.get() + q - 1 : nullptr, changed.get() + q);
      CHS_CUDA_CHECK_LAUNCH("JumpKernel");
    }
    ReadBack(flag, changed.get() + kQueued - 1, stream);
  }
}

/** Rewrites the parents of leaves and tops in place (no thread reads another node's parent here). */
static __global__ void
CanonicalParentKernel(NodeTree<uint32_t> tree, uint64_t nodes, const uint32_t * up, uint32_t * children)
{
  CHS_AT_FOR_EACH(i, nodes)
  {
    const uint32_t x = uint32_t(i);
    if (x >= tree.pixels && up[x] != x)
      continue; // a run's lower node: dropped
    const uint32_t p = tree.parent[x];
    if (p == x)
      continue;
    const uint32_t top = up[p];
    tree.parent[x]     = top;
    if (static_cast<const volatile uint32_t *>(children)[top] < 2)
      atomicAdd(children + top, 1u);
  }
}

static __global__ void
KeepKernel(NodeTree<uint32_t>   tree,
           uint64_t             nodes,
           uint32_t *           up,
           uint32_t *           children,
           uint8_t *            kept,
           unsigned long long * count)
{
  unsigned keptInternal = 0; // counted per thread, added once per warp
  CHS_AT_FOR_EACH(i, nodes)
  {
    const uint32_t x    = uint32_t(i);
    const bool     top  = x < tree.pixels || up[x] == x;
    const bool     keep = x < tree.pixels || (top && children[x] >= 2);
    kept[x]             = keep;
    up[x]               = (top && !keep && tree.parent[x] != x) ? tree.parent[x] : x;
    children[x]         = 0xffffffffu; // becomes the smallest pixel of the node
    keptInternal += keep && x >= tree.pixels;
  }
  WarpAdd(keptInternal, count);
}

/** Rewrites the parents of kept nodes in place (the skip forest `up` is what threads follow). */
static __global__ void
KeptParentKernel(NodeTree<uint32_t> tree, uint64_t nodes, uint32_t * up, const uint8_t * kept)
{
  CHS_AT_FOR_EACH(i, nodes)
  {
    const uint32_t x = uint32_t(i);
    const uint32_t p = tree.parent[x];
    if (!kept[x] || p == x)
      continue;
    const uint32_t a = FollowToRoot(up, p);
    tree.parent[x]   = kept[a] ? a : x;
  }
}

/** Steps 2 to 4 for a binary tree (the spanning-tree construction's binary partition tree, every internal node
 * with two children): a run of k nodes has k + 1 children outside it, so every top is kept. Leaves and tops take
 * the top of their parent's run as parent (in place: no thread reads another node's parent), the tops are counted
 * and get their (parent, smallest pixel) pair for step 5. */
template <typename TNode>
static __global__ void
TopParentKernel(NodeTree<TNode>      tree,
                uint64_t             nodes,
                const TNode *        up,
                NodePair<TNode> *    pair,
                unsigned long long * count)
{
  unsigned tops = 0; // counted per thread, added once per warp
  CHS_AT_FOR_EACH(i, nodes)
  {
    const TNode x        = TNode(i);
    const bool  internal = x >= tree.pixels;
    const bool  top      = !internal || up[x] == x;
    if (!top)
      continue;
    const TNode p = tree.parent[x];
    const TNode q = p != x ? up[p] : x;
    if (p != x)
      tree.parent[x] = q;
    if (internal)
    {
      NodePair<TNode> e;
      e.x                   = q;
      e.y                   = kAllOnes<TNode>;
      pair[x - tree.pixels] = e;
      ++tops;
    }
  }
  WarpAdd(tops, count);
}

/** Step 5's view of the nodes: each kept internal node's parent and smallest pixel. PairNodes: one 8-byte pair per
 * internal node (the spanning-tree construction's tops, written by TopParentKernel), so that a climb reads one
 * sector a step. SplitNodes: the parent array and a smallest-pixel array over all nodes (the general path, in the
 * child counts' buffer: v1 and v2 have K + 1 nodes a pixel, for which pairs would cost 8 bytes each). */
template <typename TNode>
struct PairNodes
{
  using Node = TNode;
  NodePair<TNode> *          pair;
  TNode                      pixels;
  __device__ __forceinline__ NodePair<TNode>
                             Load(TNode c) const
  {
    return __ldcg(pair + (c - pixels)); // from L2, where the atomics land
  }
  __device__ __forceinline__ void
  Lower(TNode c, TNode v) const
  {
    atomicMin(&pair[c - pixels].y, v);
  }
  __device__ __forceinline__ TNode
  Smallest(TNode c) const
  {
    return pair[c - pixels].y;
  }
};

struct SplitNodes
{
  using Node = uint32_t;
  const uint32_t * parent;
  uint32_t *       smallest;
  __device__ __forceinline__ uint2
  Load(uint32_t c) const
  {
    return make_uint2(__ldg(parent + c), __ldcg(smallest + c));
  }
  __device__ __forceinline__ void
  Lower(uint32_t c, uint32_t v) const
  {
    atomicMin(smallest + c, v);
  }
  __device__ __forceinline__ uint32_t
  Smallest(uint32_t c) const
  {
    return smallest[c];
  }
};

/** Step 5. Every leaf carries its index up its ancestors with an atomicMin on their smallest pixel, and stops at
 * the first that already holds a smaller one (the holder carries it further), on the nodes' view TNodes. Climbs too
 * far, past nodes whose smaller pixels have not arrived yet, are kept few: warps take runs of consecutive pixels in
 * increasing order from `next` (pixels far apart are never in flight together, as they were in a grid-stride loop
 * whose warps drift apart), and of the lanes of a warp at one node only the smallest pixel goes on (the others are
 * the smallest of neither that node nor any ancestor). */
template <class TNodes>
static __global__ void
SmallestPixelKernel(uint64_t pixels, const typename TNodes::Node * parent, TNodes nodes, unsigned long long * next)
{
  using TNode             = typename TNodes::Node;
  constexpr unsigned kRun = 256; // pixels a warp takes at a time
  const unsigned     lane = threadIdx.x & 31u;
  for (;;)
  {
    unsigned long long base = 0;
    if (lane == 0)
      base = atomicAdd(next, kRun);
    base = __shfl_sync(0xffffffffu, base, 0);
    if (base >= pixels)
      return;
    for (unsigned k = 0; k < kRun; k += 32)
    {
      const uint64_t i        = base + k + lane;
      const TNode    v        = TNode(i);
      TNode          c        = i < pixels ? parent[i] : v;
      bool           climbing = i < pixels && c != v;
      for (;;)
      {
        const unsigned active = __ballot_sync(0xffffffffu, climbing);
        if (active == 0)
          break;
        const unsigned peers = __match_any_sync(0xffffffffu, climbing ? c : kAllOnes<TNode>) & active;
        if (climbing && lane != unsigned(__ffs(peers)) - 1u)
          climbing = false; // a smaller pixel of this warp is at the same node
        if (!climbing)
          continue;
        // The atomic's result is not waited for.
        const auto e = nodes.Load(c);
        if (e.y < v)
        {
          climbing = false; // a smaller pixel has been or is being carried further up
          continue;
        }
        nodes.Lower(c, v);
        if (e.x == c)
          climbing = false;
        c = e.x;
      }
    }
  }
}

/** Lists the kept internal nodes: kept[x] when `kept` is given, else the tops of runs (up[x] == x). */
template <class TNodes>
static __global__ void
GatherKernel(NodeTree<typename TNodes::Node> tree,
             uint64_t                        nodes,
             const uint8_t *                 kept,
             const typename TNodes::Node *   up,
             TNodes                          smallest,
             int                             levelShift,
             unsigned long long *            keys,
             typename TNodes::Node *         ids,
             unsigned long long *            count)
{
  using TNode = typename TNodes::Node;
  // Block-uniform iterations: one atomic per block for the slots.
  const uint64_t internal = nodes - tree.pixels, stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t start = blockIdx.x * uint64_t(blockDim.x); start < internal; start += stride)
  {
    const uint64_t           i    = start + threadIdx.x;
    const TNode              x    = TNode(tree.pixels + i);
    const bool               keep = i < internal && (kept ? kept[x] != 0 : up[x] == x);
    const unsigned long long slot = BlockSlot(keep, count);
    if (keep)
    {
      keys[slot] = (uint64_t(tree.Level(x)) << levelShift) | smallest.Smallest(x);
      ids[slot]  = x;
    }
  }
}

/** The level-synchronous construction's internal nodes (src/AlphaTree/chsAlphaTreeLevels.cuh: slots in creation order,
 * with their level code and smallest pixel; ids of TNode, 32 or 64 bits): their sort keys, as GatherKernel writes
 * them, and ids. */
template <typename TNode>
static __global__ void
LevelNodeKeysKernel(uint64_t             internal,
                    uint64_t             pixels,
                    const uint32_t *     nodeLevel,
                    const TNode *        nodeMin,
                    int                  levelShift,
                    unsigned long long * keys,
                    TNode *              ids)
{
  for (uint64_t s = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; s < internal;
       s += uint64_t(gridDim.x) * blockDim.x)
  {
    keys[s] = (uint64_t(nodeLevel[s]) << levelShift) | nodeMin[s];
    ids[s]  = TNode(pixels + s);
  }
}

template <typename TNode>
static __global__ void
IdKernel(uint64_t internal, uint64_t pixels, const TNode * ids, TNode * newId)
{
  CHS_AT_FOR_EACH(r, internal)
  {
    newId[ids[r]] = TNode(pixels + r);
  }
}

/** Writes the renumbered parents and the levels, and for the check every internal node's (level code, children)
 * record with the count at 0: one 8-byte record, so that the check reads a parent's level and counts its child in
 * one sector. */
template <typename TNode>
static __global__ void
OutputKernel(const TNode *              treeParent,
             uint64_t                   pixels,
             uint64_t                   internal,
             const TNode *              ids,
             const unsigned long long * keys,
             const TNode *              newId,
             int                        levelShift,
             bool                       isFloat,
             TNode *                    outParent,
             double *                   outLevel,
             uint2 *                    record)
{
  const uint64_t total = pixels + internal;
  CHS_AT_FOR_EACH(i, total)
  {
    if (i < pixels)
    {
      outParent[i] = newId[treeParent[i]];
      continue;
    }
    const uint64_t r = i - pixels;
    const TNode    x = ids[r], p = treeParent[x];
    const uint32_t code = uint32_t(keys[r] >> levelShift);
    outParent[i]        = p == x ? TNode(i) : newId[p];
    outLevel[r]         = sl::WeightOf(code, isFloat);
    record[r]           = make_uint2(code, 0u);
  }
}

/** The output's structure: the last node is the root, every other node's parent is an internal node after it, an
 * internal node's level code is below its parent's; counts children in the records (up to 2 and a warp). Sets
 * *broken on a violation. */
template <typename TNode>
static __global__ void
CheckParentsKernel(uint64_t pixels, uint64_t total, const TNode * parent, uint2 * record, unsigned * broken)
{
  CHS_AT_FOR_EACH(i, total)
  {
    const TNode p = parent[i];
    bool        bad;
    uint2       rp = make_uint2(0u, 2u);
    if (i + 1 == total)
      bad = p != i;
    else
    {
      bad = p <= i || p >= total || p < pixels;
      if (!bad)
      {
        rp  = __ldcg(record + (p - pixels)); // from L2, where the counts are added
        bad = i >= pixels && record[i - pixels].x >= rp.x;
      }
    }
    if (bad)
      *broken = 1;
    // Lanes with the same parent (neighbouring pixels often share one) add their count with one atomic.
    const bool     counts = !bad && i + 1 < total;
    const unsigned peers  = __match_any_sync(__activemask(), counts ? p : kAllOnes<TNode>);
    if (counts && (threadIdx.x & 31u) == unsigned(__ffs(peers)) - 1u && rp.y < 2)
      atomicAdd(reinterpret_cast<unsigned *>(record + (p - pixels)) + 1, uint32_t(__popc(peers)));
  }
}

static __global__ void
CheckChildrenKernel(uint64_t internal, const uint2 * record, unsigned * broken)
{
  CHS_AT_FOR_EACH(i, internal)
  {
    if (record[i].y < 2)
      *broken = 1;
  }
}

#undef CHS_AT_FOR_EACH

} // namespace at
} // namespace chs

#endif
