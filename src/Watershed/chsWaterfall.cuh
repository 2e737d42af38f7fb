// Waterfall, one level on the device: the lowest pass of every region (LowestPassKernel, the paper's step V), the
// joins across lowest passes (JoinKernel, a union-find over the regions), and the new labels (RegionRootKernel,
// RootFlagKernel and a scan of the roots, MapKernel, RelabelKernel).
#ifndef chsWSWaterfall_cuh
#define chsWSWaterfall_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** pass(r) = min over neighbouring pixels p in region r and q outside it of max(I(p), I(q)), as a code widened to
 * 32 or 64 bits (W) for the atomics; pass is all ones before. */
template <bool Full, int ZR, typename C, typename W>
__global__ void
LowestPassKernel(const C * I, Shape s, const uint32_t * label, W * pass)
{
  ForEachPixel(s,
               [&](uint32_t p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t l   = label[p];
                 const C        v   = I[p];
                 W              own = ~W(0);
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](uint32_t q)
                                                  {
                                                    const uint32_t lq = label[q];
                                                    if (lq == l)
                                                      return;
                                                    const C c = I[q];
                                                    const W h = W(c > v ? c : v);
                                                    own       = h < own ? h : own;
                                                    atomicMin(pass + lq, h);
                                                  });
                 if (own != ~W(0))
                   atomicMin(pass + l, own);
               });
}

/** P(r) = r for the regions 0 .. count - 1 (region 0 is unused). */
static __global__ void
IdentityKernel(uint32_t * P, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    P[i] = uint32_t(i);
}

/** Unites the regions of every boundary pair whose height is the lowest pass of one of them. */
template <bool Full, int ZR, typename C, typename W>
__global__ void
JoinKernel(const C * I, Shape s, const uint32_t * label, const W * pass, uint32_t * P)
{
  ForEachPixel(s,
               [&](uint32_t p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t l   = label[p];
                 const C        v   = I[p];
                 const W        own = pass[l];
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](uint32_t q)
                                                  {
                                                    const uint32_t lq = label[q];
                                                    if (lq == l)
                                                      return;
                                                    const C c = I[q];
                                                    const W h = W(c > v ? c : v);
                                                    if (h == own || h == pass[lq])
                                                      Unite<uint32_t>(P, l, lq);
                                                  });
               });
}

/** P(r) = the root of r (the smallest region of its union). */
static __global__ void
RegionRootKernel(uint32_t * P, uint32_t count)
{
  const volatile uint32_t * V = P;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    uint32_t r = V[i];
    for (;;)
    {
      const uint32_t next = V[r];
      if (next == r)
        break;
      r = next;
    }
    P[i] = r;
  }
}

/** flag(r) = 1 for the roots among regions 1 .. count - 1, else 0. */
static __global__ void
RootFlagKernel(const uint32_t * P, uint32_t count, uint32_t * flag)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    flag[i] = i > 0 && P[i] == uint32_t(i) ? 1u : 0u;
}

/** P(r) = rank(P(r)), the new label of region r (rank: the inclusive count of roots). */
static __global__ void
MapKernel(uint32_t * P, const uint32_t * rank, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    P[i] = rank[P[i]];
}

static __global__ void
RelabelKernel(uint32_t * label, const uint32_t * map, Shape s)
{
  ForEachPixel(s, [&](uint32_t p, uint32_t, uint32_t, uint32_t) { label[p] = map[label[p]]; });
}

} // namespace ws
} // namespace chs

#endif
