// Watershed, steps III and IV: path reduction (PRUF and PRW: RR jumps per launch; APRUF: every pixel to the end of
// its path in one launch), then the merging of the labels of each minimal plateau (PRUF and APRUF: union-find;
// PRW: the iterated min-label merging of the paper's algorithm 2), then every pointer to its root.
#ifndef chsWSReduce_cuh
#define chsWSReduce_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** Step III, PRUF and PRW: L(p) = L(L(p)) up to RR times. Every value read is an ancestor of p on its path, whatever
 * other threads have written, so the launches converge to pointers to the paths' ends. */
static __global__ void
ReduceKernel(uint32_t * L, Shape s, unsigned rr, unsigned * changes)
{
  const volatile uint32_t * V       = L;
  bool                      changed = false;
  ForEachPixel(s,
               [&](uint32_t p, uint32_t, uint32_t, uint32_t)
               {
                 const uint32_t first = V[p];
                 uint32_t       l     = first;
                 for (unsigned i = 0; i < rr; ++i)
                 {
                   const uint32_t next = V[l];
                   if (next == l)
                     break;
                   l = next;
                 }
                 if (l != first)
                 {
                   L[p]    = l;
                   changed = true;
                 }
               });
  CountChange(changed, changes);
}

/** Step III, APRUF, and the last step of every algorithm: each pixel follows its pointers to the end. */
static __global__ void
FollowKernel(uint32_t * L, Shape s)
{
  const volatile uint32_t * V = L;
  ForEachPixel(s,
               [&](uint32_t p, uint32_t, uint32_t, uint32_t)
               {
                 uint32_t l = V[p];
                 for (;;)
                 {
                   const uint32_t next = V[l];
                   if (next == l)
                     break;
                   l = next;
                 }
                 L[p] = l;
               });
}

/** Step IV, PRUF and APRUF: unites the sets of neighbouring minimal-plateau pixels (both without a distance: two
 * neighbouring minimal plateaux have equal values, so they are one). After step III every pixel points to a root,
 * and roots are linked only to smaller roots, so the union-find's halving stores (atomicMin) are safe. */
template <bool Full, int ZR>
__global__ void
UnionKernel(const uint32_t * D, Shape s, uint32_t * L)
{
  ForEachPixel(s,
               [&](uint32_t p, uint32_t x, uint32_t y, uint32_t z)
               {
                 if (D[p] != kNoDistance)
                   return;
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](uint32_t q)
                                                  {
                                                    if (D[q] == kNoDistance)
                                                      Unite<uint32_t>(L, p, q);
                                                  });
               });
}

/** Step IV, PRW, one launch: for neighbouring minimal-plateau pixels p and q, L(L(p)) and L(L(q)) are lowered to
 * their minimum until they agree, then L(p) is reduced to the end of its path. Repeated until no launch changes a
 * pointer. Pointers only decrease (atomicMin), so the launches end. */
template <bool Full, int ZR>
__global__ void
MinMergeKernel(const uint32_t * D, Shape s, uint32_t * L, unsigned * changes)
{
  const volatile uint32_t * V       = L;
  bool                      changed = false;
  ForEachPixel(s,
               [&](uint32_t p, uint32_t x, uint32_t y, uint32_t z)
               {
                 if (D[p] != kNoDistance)
                   return;
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](uint32_t q)
                                                  {
                                                    if (D[q] != kNoDistance)
                                                      return;
                                                    const uint32_t lp = V[p], lq = V[q];
                                                    for (;;)
                                                    {
                                                      const uint32_t a = V[lp], b = V[lq];
                                                      if (a == b)
                                                        break;
                                                      const uint32_t m = a < b ? a : b;
                                                      atomicMin(L + lp, m);
                                                      atomicMin(L + lq, m);
                                                      changed = true;
                                                    }
                                                  });
                 for (;;)
                 {
                   const uint32_t l = V[p], ll = V[l];
                   if (l == ll)
                     break;
                   atomicMin(L + p, ll);
                   changed = true;
                 }
               });
  CountChange(changed, changes);
}

} // namespace ws
} // namespace chs

#endif
