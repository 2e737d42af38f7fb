// Watershed, the labels: each basin's first pixel (FirstPixelKernel), the first pixels flagged (FirstFlagKernel) and
// ranked by a scan (CUB), each pixel labelled with its first pixel's rank (LabelKernel); then the optional watershed
// lines (LinesKernel).
#ifndef chsWSNumbering_cuh
#define chsWSNumbering_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** F(r) = the smallest pixel whose root is r (F is all ones before). A pixel whose predecessor in raster order has
 * the same root is not the first, and skips its atomic (the first pixel of s's range reads no predecessor: those
 * before the range may be labelled already). */
template <typename P>
__global__ void
FirstPixelKernel(const P * L, ShapeT<P> s, P * F)
{
  ForEachPixelLocal(s,
                    [&](P p, uint32_t, uint32_t, uint32_t)
                    {
                      const P r = L[p];
                      if (p == s.begin || L[p - 1] != r)
                        atomicMin(F + r, p);
                    });
}

/** flag(p) = 1 where p is the first pixel of its basin (F(L(p)) = p), else 0. */
template <typename P>
__global__ void
FirstFlagKernel(const P * L, const P * F, ShapeT<P> s, P * flag)
{
  ForEachPixelLocal(s, [&](P p, uint32_t, uint32_t, uint32_t) { flag[p] = F[L[p]] == p ? 1u : 0u; });
}

/** L(p) = rank(F(L(p))): the inclusive count of first pixels up to p's basin's, so labels run from 1. Each pixel
 * reads and writes only its own L, so L is overwritten in place. */
template <typename P>
__global__ void
LabelKernel(P * L, const P * F, const P * rank, ShapeT<P> s)
{
  ForEachPixelLocal(s, [&](P p, uint32_t, uint32_t, uint32_t) { L[p] = rank[F[L[p]]]; });
}

/** out(p) = 0 where p has a neighbour in another basin that is lower, or equal and earlier in raster order; else
 * label(p). */
template <bool Full, int ZR, typename C, typename P>
__global__ void
LinesKernel(const C * I, ShapeT<P> s, const P * label, P * out)
{
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const P l    = label[p];
                 const C v    = I[p];
                 bool    line = false;
                 ForEachNeighbour<Full, ZR>(s,
                                            x,
                                            y,
                                            z,
                                            p,
                                            [&](P q)
                                            {
                                              const C c = I[q];
                                              line      = line || (label[q] != l && (c < v || (c == v && q < p)));
                                            });
                 out[p] = line ? P(0) : l;
               });
}

} // namespace ws
} // namespace chs

#endif
