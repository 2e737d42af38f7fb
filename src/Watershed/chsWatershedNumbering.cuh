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

/** flag(p) = 1 where p is the first pixel of its basin (F(L(p)) = p), else 0. */
static __global__ void
FirstFlagKernel(const uint32_t * L, const uint32_t * F, uint32_t count, uint32_t * flag)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    flag[i] = F[L[i]] == uint32_t(i) ? 1u : 0u;
}

/** L(p) = rank(F(L(p))): the inclusive count of first pixels up to p's basin's, so labels run from 1. Each pixel
 * reads and writes only its own L, so L is overwritten in place. */
static __global__ void
LabelKernel(uint32_t * L, const uint32_t * F, const uint32_t * rank, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    L[i] = rank[F[L[i]]];
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
