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
template <typename P>
__global__ void
ReduceKernel(P * L, ShapeT<P> s, unsigned rr, unsigned * changes)
{
  const volatile P * V       = L;
  bool               changed = false;
  ForEachPixelLocal(s,
                    [&](P p, uint32_t, uint32_t, uint32_t)
                    {
                      const P first = V[p];
                      P       l     = first;
                      for (unsigned i = 0; i < rr; ++i)
                      {
                        const P next = V[l];
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
template <typename P>
__global__ void
FollowKernel(P * L, ShapeT<P> s)
{
  const volatile P * V = L;
  ForEachPixelLocal(s,
                    [&](P p, uint32_t, uint32_t, uint32_t)
                    {
                      P l = V[p];
                      for (;;)
                      {
                        const P next = V[l];
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
template <bool Full, int ZR, typename P>
__global__ void
UnionKernel(const uint32_t * D, ShapeT<P> s, P * L)
{
  ForEachPixelLocal(s,
                    [&](P p, uint32_t x, uint32_t y, uint32_t z)
                    {
                      if (D[p] != kNoDistance)
                        return;
                      ForEachNeighbour<Full, ZR, true>(s,
                                                       x,
                                                       y,
                                                       z,
                                                       p,
                                                       [&](P q)
                                                       {
                                                         if (D[q] == kNoDistance)
                                                           Unite<P>(L, p, q);
                                                       });
                    });
}

/** Step IV, PRW, one launch: for neighbouring minimal-plateau pixels p and q, L(L(p)) and L(L(q)) are lowered to
 * their minimum until they agree, then L(p) is reduced to the end of its path. Repeated until no launch changes a
 * pointer. Pointers only decrease (atomicMin), so the launches end. */
template <bool Full, int ZR, typename P>
__global__ void
MinMergeKernel(const uint32_t * D, ShapeT<P> s, P * L, unsigned * changes)
{
  const volatile P * V       = L;
  bool               changed = false;
  ForEachPixelLocal(s,
                    [&](P p, uint32_t x, uint32_t y, uint32_t z)
                    {
                      if (D[p] != kNoDistance)
                        return;
                      ForEachNeighbour<Full, ZR, true>(s,
                                                       x,
                                                       y,
                                                       z,
                                                       p,
                                                       [&](P q)
                                                       {
                                                         if (D[q] != kNoDistance)
                                                           return;
                                                         const P lp = V[p], lq = V[q];
                                                         for (;;)
                                                         {
                                                           const P a = V[lp], b = V[lq];
                                                           if (a == b)
                                                             break;
                                                           const P m = a < b ? a : b;
                                                           atomicMin(L + lp, m);
                                                           atomicMin(L + lq, m);
                                                           changed = true;
                                                         }
                                                       });
                      for (;;)
                      {
                        const P l = V[p], ll = V[l];
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
