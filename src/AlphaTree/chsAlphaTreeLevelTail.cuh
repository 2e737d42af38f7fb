// Alpha-tree, level-synchronous construction: the tail of small levels, in shared memory.
//
// After the last level with many items few sets are left (261 on the benchmark's natural 4096^2 image after its 15
// lowest levels), but up to about 190 levels with a few dozen items each follow. The level loop
// (src/AlphaTree/chsAlphaTreeLevels.cuh) runs such levels on block 0 through global memory, about 6 us a level: one
// chain of dependent global loads after another. LevelTailKernel runs them on one block in shared memory instead:
//  1. every item's ends (a force entry's one pixel) are mapped to the roots of their sets at the tail's start
//     (TailRootsKernel, on many blocks), and the roots numbered by a shared hash table (slot = local id); a root's
//     current node is read once;
//  2. the levels run in order (but those whose items all join ends already in one set at the tail's start, which
//     unite nothing) with the loop's phases on the local slots: phase A gives the previous level's losers
//     their parent (their current node's parent is the current node of their root) and a force entry its node, then
//     unites the ends of this level's items (local union-find whose root is the slot with the smallest root pixel, so
//     that a node's smallest pixel is its root's key, as in the loop); phase B finds each loser's and force entry's
//     root, and the first to stamp the root with the level makes its node;
//  3. node ids continue the tree's counter (read once at the start, written once at the end).
// When the tail meets more than kTailRoots roots, the kernel stops after step 1, having changed nothing (the finds of
// step 1 only halved paths in the union-find), and says so in *overflow: the
// caller then runs the tail with the loop. Shared memory: 16 bytes per slot (4096 slots), 4 per item of the tail
// (at most kTailItems), 9 per level of the tail (at most kTailLevels) and 8 per item of a level (at most
// kSmallLevelEdges), 180 KB.
#ifndef chsATLevelTail_cuh
#define chsATLevelTail_cuh

#include "chsAlphaTreeLevels.cuh"

namespace chs
{
namespace at
{

constexpr uint32_t kTailSlots     = 4096;  // hash table slots, a power of two
constexpr uint32_t kTailRoots     = 3072;  // at most that many roots (load factor 3/4), else the loop runs the tail
constexpr uint32_t kTailItems     = 16384; // at most that many items in the tail
constexpr uint32_t kTailLevels    = 4096;  // at most that many levels in the tail
constexpr uint32_t kTailEmpty     = 0xffffffffu;
constexpr uint16_t kTailNone      = 0xffffu;     // an item that unites nothing
constexpr uint16_t kTailForce     = 0xfffeu;     // a force entry
constexpr uint32_t kTailForceRoot = 0xfffffffeu; // roots[2 t + 1] of a force entry
constexpr unsigned kTailThreads   = 256;

/** Shared memory of LevelTailKernel for levels of at most `levelItems` items. */
inline size_t
TailSharedBytes(uint32_t levelItems)
{
  return size_t(kTailSlots) * 4 * 4 + size_t(kTailItems) * 4 + size_t(kTailLevels) * 2 * 4 + 4 +
         size_t(levelItems) * 2 * 2 * 2;
}

/** The slot of root r in the hash table, inserting it; kTailSlots when the table is full. */
__device__ __forceinline__ uint32_t
TailSlot(uint32_t * key, uint32_t r, uint32_t * used)
{
  uint32_t h = (r * 2654435761u) & (kTailSlots - 1);
  for (uint32_t probe = 0; probe < kTailSlots; ++probe)
  {
    // Many items share a root: a read first spares the slot an atomic of every thread.
    const uint32_t seen = static_cast<volatile uint32_t *>(key)[h];
    if (seen == r)
      return h;
    const uint32_t old = seen == kTailEmpty ? atomicCAS(key + h, kTailEmpty, r) : seen;
    if (old == kTailEmpty)
      atomicAdd(used, 1u);
    if (old == kTailEmpty || old == r)
      return h;
    h = (h + 1) & (kTailSlots - 1);
  }
  atomicAdd(used, kTailSlots);
  return kTailSlots;
}

/** Find in the local union-find, path halving by CAS (a slot only ever moves to an ancestor). */
__device__ __forceinline__ uint32_t
TailFind(uint32_t * uf, uint32_t a)
{
  for (;;)
  {
    const uint32_t p = uf[a];
    if (p == a)
      return a;
    const uint32_t gp = uf[p];
    if (gp != p)
      atomicCAS(uf + a, p, gp);
    a = gp;
  }
}

/** The roots of the sets of the tail's items' ends at the tail's start (the levels [firstLevel, *levelCount)):
 * roots[2 t] and roots[2 t + 1] for item t of the tail; a force entry: its pixel's root and kTailForceRoot; an item
 * that unites nothing: kTailEmpty twice. Any grid: the finds climb global memory one load after another, and many
 * threads climb at once. */
template <typename TSource>
static __global__ void
TailRootsKernel(TSource          src,
                const uint64_t * begins,
                const uint32_t * levelCount,
                uint32_t         firstLevel,
                LevelState       st,
                uint32_t *       roots)
{
  const uint32_t count = *levelCount;
  if (firstLevel >= count)
    return;
  const uint64_t tb    = begins[firstLevel];
  const uint32_t items = uint32_t(begins[count] - tb);
  for (uint32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < items; t += gridDim.x * blockDim.x)
  {
    uint32_t u, v, a = kTailEmpty, b = kTailEmpty;
    if (src.Pair(tb + t, u, v))
    {
      a = LevelFind(st.uf, u);
      b = LevelFind(st.uf, v);
    }
    else if (src.Force(tb + t, u))
    {
      a = LevelFind(st.uf, u);
      b = kTailForceRoot;
    }
    roots[2 * t]     = a;
    roots[2 * t + 1] = b;
  }
}

/** The levels [firstLevel, *levelCount) of the level list (see the file's comment): at most kTailLevels levels of
 * at most `levelItems` items, kTailItems in all, whose ends' roots TailRootsKernel wrote to `roots`. One block of
 * kTailThreads threads, TailSharedBytes(levelItems) bytes of dynamic shared memory. */
template <typename TSource>
static __global__ void
__launch_bounds__(kTailThreads, 1) LevelTailKernel(TSource          src,
                                                   uint32_t *       lost,
                                                   const uint32_t * levels,
                                                   const uint64_t * begins,
                                                   const uint32_t * levelCount,
                                                   uint32_t         firstLevel,
                                                   uint32_t         levelItems,
                                                   const uint32_t * roots,
                                                   LevelState       st,
                                                   unsigned *       overflow)
{
  extern __shared__ uint32_t smem[];
  uint32_t *                 key    = smem;                // kTailSlots: the root pixel of a slot
  uint32_t *                 uf     = key + kTailSlots;    // kTailSlots
  uint32_t *                 cur    = uf + kTailSlots;     // kTailSlots: a root's current node
  uint32_t *                 stamp  = cur + kTailSlots;    // kTailSlots: the last level at which a root made a node
  uint32_t *                 packed = stamp + kTailSlots;  // kTailItems: the items' ends as slots
  uint32_t *                 code   = packed + kTailItems; // kTailLevels: the levels' codes
  uint32_t *                 begin  = code + kTailLevels;  // kTailLevels + 1: their first items, from the tail's
  uint16_t * lostL = reinterpret_cast<uint16_t *>(begin + kTailLevels + 1); // 2 levelItems: loser, kTailNone/Force
  uint16_t * lostR = lostL + 2 * levelItems;                                // 2 levelItems: their roots
  __shared__ uint32_t           used, made;
  __shared__ unsigned long long nodeBase;
  __shared__ bool               live[kTailLevels];
  const uint32_t                count = *levelCount, tid = threadIdx.x;
  if (firstLevel >= count)
    return;
  const uint64_t tb         = begins[firstLevel];
  const uint32_t levelsHere = count - firstLevel, items = uint32_t(begins[count] - tb);
  for (uint32_t s = tid; s < kTailSlots; s += blockDim.x)
    key[s] = kTailEmpty;
  for (uint32_t j = tid; j <= levelsHere; j += blockDim.x)
  {
    begin[j] = uint32_t(begins[firstLevel + j] - tb);
    if (j < levelsHere)
      code[j] = levels[firstLevel + j];
  }
  if (tid == 0)
  {
    used = made = 0;
    nodeBase    = *st.nodes;
  }
  __syncthreads();

  // 1. The items' ends as slots: slot of u | slot of v << 16; a force entry: its pixel's slot | kTailForce << 16; an
  // item that unites nothing: kTailEmpty.
  for (uint32_t t = tid; t < items; t += blockDim.x)
  {
    const uint32_t a = roots[2 * t], b = roots[2 * t + 1];
    uint32_t       ends = kTailEmpty;
    if (b == kTailForceRoot)
      ends = TailSlot(key, a, &used) | uint32_t(kTailForce) << 16;
    else if (a != b) // ends already in one set unite nothing in the tail
      ends = TailSlot(key, a, &used) | TailSlot(key, b, &used) << 16;
    packed[t] = ends;
  }
  __syncthreads();
  // The levels whose items all unite nothing are skipped.
  for (uint32_t j = tid; j < levelsHere; j += blockDim.x)
  {
    bool any = false;
    for (uint32_t t = begin[j]; t < begin[j + 1] && !any; ++t)
      any = packed[t] != kTailEmpty;
    live[j] = any;
  }
  if (used > kTailRoots)
  {
    if (tid == 0)
      *overflow = 1;
    return;
  }
  for (uint32_t s = tid; s < kTailSlots; s += blockDim.x)
  {
    uf[s]    = s;
    stamp[s] = kTailEmpty;
    if (key[s] != kTailEmpty)
      cur[s] = LoadCg(st.current + key[s]);
  }
  __syncthreads();

  // 2. The levels; a last round (j == levelsHere) finishes the last one. Items are numbered from the tail's first.
  uint32_t pb = 0, pe = 0; // the previous level's items
  for (uint32_t j = 0, step = 0; j <= levelsHere; ++j)
  {
    const bool last = j == levelsHere;
    if (!last && !live[j])
      continue;
    ++step;
    const uint32_t b = last ? 0 : begin[j], e = last ? 0 : begin[j + 1], c = last ? 0 : code[j];
    uint16_t *     L = lostL + (step & 1u) * levelItems, *R = lostR + (step & 1u) * levelItems;
    uint16_t *     pL = lostL + ((step + 1) & 1u) * levelItems, *pR = lostR + ((step + 1) & 1u) * levelItems;
    // Phase A: the previous level's losers' parents and force entries' nodes.
    for (uint32_t t = pb + tid; t < pe; t += blockDim.x)
    {
      const uint32_t a = pL[t - pb];
      if (a == kTailForce)
        lost[tb + t] = cur[pR[t - pb]];
      else if (a != kTailNone)
        st.nodeParent[cur[a]] = cur[pR[t - pb]];
    }
    // Phase A: this level's unions.
    for (uint32_t t = b + tid; t < e; t += blockDim.x)
    {
      const uint32_t ends  = packed[t];
      uint32_t       loser = kTailNone;
      if (ends >> 16 == kTailForce)
        loser = kTailForce;
      else if (ends != kTailEmpty) // roots ordered by their pixels, as in the loop
        loser = UniteByCas(
          uf,
          ends & 0xffffu,
          ends >> 16,
          kTailNone,
          [&](uint32_t a) { return TailFind(uf, a); },
          [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
      L[t - b] = uint16_t(loser);
      R[t - b] = uint16_t(ends & 0xffffu); // a force entry's slot
    }
    __syncthreads();
    // Phase B: roots; the first loser or force entry of a root to stamp it makes its node.
    for (uint32_t t0 = b; t0 < e; t0 += blockDim.x)
    {
      const uint32_t t    = t0 + tid;
      uint32_t       root = 0;
      bool           make = false;
      if (t < e && L[t - b] != kTailNone)
      {
        root     = TailFind(uf, L[t - b] == kTailForce ? R[t - b] : L[t - b]);
        R[t - b] = uint16_t(root);
        make     = atomicExch(stamp + root, c) != c;
      }
      const uint32_t k = WarpSlot(make, &made);
      if (make)
      {
        const uint64_t slot      = nodeBase + k;
        const uint32_t node      = st.n + uint32_t(slot);
        st.nodeParent[cur[root]] = node;
        st.nodeParent[node]      = node;
        cur[root]                = node;
        st.nodeLevel[slot]       = c;
        st.nodeMin[slot]         = key[root];
      }
    }
    __syncthreads();
    pb = b;
    pe = e;
  }
  if (tid == 0)
    *st.nodes = nodeBase + made;
}

} // namespace at
} // namespace chs

#endif
