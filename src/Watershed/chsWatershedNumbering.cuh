// Watershed, the labels: each basin's first pixel (FirstPixelKernel, FirstOfKernel), the first pixels flagged and
// ranked by a scan (FlagKernel, then CUB), each pixel labelled with its first pixel's rank (RankKernel); then the
// optional watershed lines (LinesKernel).
#ifndef chsWSNumbering_cuh
#define chsWSNumbering_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** F(r) = the smallest pixel whose root is r (F is all ones before). A pixel whose predecessor in raster order has
 * the same root is not the first, and skips its atomic. */
static __global__ void
FirstPixelKernel(const uint32_t * L, Shape s, uint32_t * F)
{
  ForEachPixel(s,
               [&](uint32_t p, uint32_t, uint32_t, uint32_t)
               {
                 const uint32_t r = L[p];
                 if (p == 0 || L[p - 1] != r)
                   atomicMin(F + r, p);
               });
}

/** X(p) = the first pixel of p's basin. */
static __global__ void
FirstOfKernel(const uint32_t * L, const uint32_t * F, Shape s, uint32_t * X)
{
  ForEachPixel(s, [&](uint32_t p, uint32_t, uint32_t, uint32_t) { X[p] = F[L[p]]; });
}

/** flag(i) = 1 where X(i) = i (i is a first pixel), for i below count; else 0. */
static __global__ void
FlagKernel(const uint32_t * X, uint32_t count, uint32_t * flag)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    flag[i] = X[i] == uint32_t(i) ? 1u : 0u;
}

/** out(i) = rank(X(i)): the inclusive count of first pixels up to p's, so labels run from 1. */
static __global__ void
RankKernel(const uint32_t * X, const uint32_t * rank, uint32_t count, uint32_t * out)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = rank[X[i]];
}

/** out(p) = 0 where p has a neighbour in another basin that is lower, or equal and earlier in raster order; else
 * label(p). */
template <bool Full, int ZR, typename C>
__global__ void
LinesKernel(const C * I, Shape s, const uint32_t * label, uint32_t * out)
{
  ForEachPixel(s,
               [&](uint32_t p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t l    = label[p];
                 const C        v    = I[p];
                 bool           line = false;
                 ForEachNeighbour<Full, ZR>(s,
                                            x,
                                            y,
                                            z,
                                            p,
                                            [&](uint32_t q)
                                            {
                                              const C c = I[q];
                                              line      = line || (label[q] != l && (c < v || (c == v && q < p)));
                                            });
                 out[p] = line ? 0u : l;
               });
}

} // namespace ws
} // namespace chs

#endif
