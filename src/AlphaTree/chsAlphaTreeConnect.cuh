// Alpha-tree construction, shared by the tile and the border stages: the node order, FIND-LEVEL-ROOT, the lock-free
// CONNECT (a concurrent merge of two sorted parent chains with compare-and-swap) and CONNECT-WITH (the paper's
// algorithms 2, 4 and 5).
//
// Nodes are pixels (level 0) and edge slots (level = the edge's weight code). They are totally ordered by
// (level, id): a parent always comes after its child in that order, so concurrent updates cannot make a cycle. Ids of
// a tile's shared-memory nodes follow the same order as the global ids (pixels first, then edge slots, both in
// raster order), so a tile's chains stay sorted once written to global memory.
#ifndef chsATConnect_cuh
#define chsATConnect_cuh

#include <cstdint>

namespace chs
{
namespace at
{

/** Marks an edge slot whose far end lies outside the image; such a node is never touched. */
constexpr uint32_t kNoEdge = 0xffffffffu;

/** The tree in global memory: parents of all nodes, levels of the edge slots (pixels are at level 0). */
struct GlobalTree
{
  uint32_t *       parent;
  const uint32_t * level; // indexed by node - pixels
  uint32_t         pixels;

  __device__ __forceinline__ uint32_t
  Parent(uint32_t x) const
  {
    return static_cast<const volatile uint32_t *>(parent)[x];
  }
  __device__ __forceinline__ uint32_t
  Level(uint32_t x) const
  {
    return x < pixels ? 0u : level[x - pixels];
  }
  __device__ __forceinline__ bool
  IsPixel(uint32_t x) const
  {
    return x < pixels;
  }
  __device__ __forceinline__ uint32_t
  Cas(uint32_t x, uint32_t expected, uint32_t desired) const
  {
    return atomicCAS(parent + x, expected, desired);
  }
};

/** A tile's tree in shared memory: parents and levels of its local nodes (its pixels first). */
struct SharedTree
{
  uint32_t *       parent;
  const uint32_t * level;
  uint32_t         pixels;

  __device__ __forceinline__ uint32_t
  Parent(uint32_t x) const
  {
    return static_cast<const volatile uint32_t *>(parent)[x];
  }
  __device__ __forceinline__ uint32_t
  Level(uint32_t x) const
  {
    return level[x];
  }
  __device__ __forceinline__ bool
  IsPixel(uint32_t x) const
  {
    return x < pixels;
  }
  __device__ __forceinline__ uint32_t
  Cas(uint32_t x, uint32_t expected, uint32_t desired) const
  {
    return atomicCAS(parent + x, expected, desired);
  }
};

template <class Tree>
__device__ __forceinline__ uint64_t
Key(const Tree & t, uint32_t x)
{
  return (uint64_t(t.Level(x)) << 32) | x;
}

/** The highest node of x's path whose level is at most alpha (x's own level must be). Path halving within a level:
 * a node whose parent is not the top of its level (the grandparent has the parent's level) is pointed at the
 * grandparent, which keeps every level's top on the path; without it, long runs of equal levels (large flat zones)
 * would be climbed one node at a time by every thread. */
template <class Tree>
__device__ __forceinline__ uint32_t
FindLevelRoot(const Tree & t, uint32_t x, uint32_t alpha)
{
  for (;;)
  {
    const uint32_t p = t.Parent(x);
    if (p == x || t.Level(p) > alpha)
      return x;
    const uint32_t g = t.Parent(p);
    if (g != p && t.Level(g) == t.Level(p))
    {
      t.Cas(x, p, g);
      x = g;
    }
    else
      x = p;
  }
}

/** Merges the paths that start at a and b into one path sorted by (level, id), up to their common part. A parent
 * pointer only ever moves to a node between its child and its old parent (an insertion) or to a node of the old
 * parent's level (halving), so paths stay sorted under concurrent merges; a failed compare-and-swap retries from the
 * same node. */
template <class Tree>
__device__ void
Connect(const Tree & t, uint32_t a, uint32_t b)
{
  for (;;)
  {
    if (a == b)
      return;
    uint64_t ka = Key(t, a), kb = Key(t, b);
    if (kb < ka)
    {
      const uint32_t s = a;
      a                = b;
      b                = s;
      kb               = ka;
    }
    // Climb to the last node before b's key, halving runs of equal levels as FindLevelRoot does.
    uint32_t pa = t.Parent(a);
    while (pa != a && Key(t, pa) < kb)
    {
      const uint32_t g = t.Parent(pa);
      if (g != pa && t.Level(g) == t.Level(pa) && Key(t, g) < kb)
      {
        t.Cas(a, pa, g);
        a  = g;
        pa = t.Parent(a);
      }
      else
      {
        a  = pa;
        pa = g;
      }
    }
    if (pa == b)
      return;
    if (t.Cas(a, pa, b) != pa)
      continue; // a got a new parent meanwhile: climb again from a
    if (pa == a)
      return; // a was the top of its chain
    a = b;    // go on merging b's chain with a's former parent's
    b = pa;
  }
}

/** The paper's CONNECT-WITH: inserts edge node e, joining pixels p and q, only when it joins two components at its
 * level that have no edge node of its level yet (a pixel, at level 0, never becomes a parent). Returns whether e was
 * inserted. */
template <class Tree>
__device__ __forceinline__ bool
ConnectWith(const Tree & t, uint32_t p, uint32_t q, uint32_t e)
{
  const uint32_t alpha = t.Level(e);
  const uint32_t a     = FindLevelRoot(t, p, alpha);
  const uint32_t b     = FindLevelRoot(t, q, alpha);
  if (a == b)
    return false; // residual: p and q are joined at alpha or below
  if ((!t.IsPixel(a) && t.Level(a) == alpha) || (!t.IsPixel(b) && t.Level(b) == alpha))
  {
    Connect(t, a, b); // redundant: an edge node of level alpha is already there
    return false;
  }
  Connect(t, a, e);
  Connect(t, b, e);
  return true;
}

} // namespace at
} // namespace chs

#endif
