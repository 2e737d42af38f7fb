// Watershed, step I and the end of step II: lowest neighbours, the pixels that descend, the first pointers
// (InitKernel); and the pointers of the non-minimal plateau pixels from their distances (PointerKernel).
#ifndef chsWSInit_cuh
#define chsWSInit_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** Step I. A pixel whose lowest neighbour (smallest value, then largest index) is lower descends: D = 0 and L points
 * to that neighbour. Every other pixel is a plateau pixel with no distance yet: L points to its last equal
 * neighbour when that comes after it (the paper's state 2), else to itself (states 1 and 3). `flat` counts the
 * blocks that saw a pixel which does not descend and has an equal neighbour: when there is none, every pixel that
 * does not descend is a regional minimum of its own, and step II has nothing to do. */
template <bool Full, int ZR, typename C, typename P>
__global__ void
InitKernel(const C * I, ShapeT<P> s, P * L, uint32_t * D, unsigned * flat)
{
  bool sawFlat = false;
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const C v   = I[p];
                 C       low = 0;
                 P       at  = p;
                 bool    any = false;
                 ForEachNeighbour<Full, ZR>(s,
                                            x,
                                            y,
                                            z,
                                            p,
                                            [&](P q)
                                            {
                                              const C c = I[q];
                                              if (!any ||
                                                  c <= low) // q ascends: the last of equal lowest neighbours wins
                                              {
                                                low = c;
                                                at  = q;
                                                any = true;
                                              }
                                            });
                 if (any && low < v)
                 {
                   L[p] = at;
                   D[p] = 0;
                 }
                 else
                 {
                   L[p]    = any && low == v && at > p ? at : p;
                   D[p]    = kNoDistance;
                   sawFlat = sawFlat || (any && low == v);
                 }
               });
  CountChange(sawFlat, flat);
}

/** A plateau pixel of distance d >= 1 points to its last equal neighbour of distance d - 1. */
template <bool Full, int ZR, typename C, typename P>
__global__ void
PointerKernel(const C * I, ShapeT<P> s, const uint32_t * D, P * L)
{
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t d = D[p];
                 if (d == 0 || d == kNoDistance)
                   return;
                 const C v  = I[p];
                 P       at = p;
                 ForEachNeighbour<Full, ZR>(s,
                                            x,
                                            y,
                                            z,
                                            p,
                                            [&](P q)
                                            {
                                              if (I[q] == v && D[q] == d - 1)
                                                at = q;
                                            });
                 L[p] = at;
               });
}

} // namespace ws
} // namespace chs

#endif
