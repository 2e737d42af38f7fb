// Alpha-tree queries on the device (include/chsAlphaTree.h; drivers in src/AlphaTree/chsAlphaTreeCut.cu).
// Cut (AlphaTreeCutCUDA): every node points at its parent when the parent qualifies (level <= alpha, range <=
// omega), pointer jumping (JumpKernel of src/AlphaTree/chsAlphaTreeCanonicalKernels.cuh) takes every node to its
// region, each region's first pixel is found with atomicMin, and an exclusive scan of the first pixels numbers the
// regions in raster order. Saliency (AlphaTreeSaliencyCUDA): one pass per number of odd coordinates of the interpixel
// samples (the rule of src/AlphaTree/chsAlphaTreeRule.h, shared with the CPU): merge levels by climbing to the lowest
// common ancestor, then maxima.
#ifndef chsATCut_cuh
#define chsATCut_cuh

#include "chsAlphaTreeRule.h"

#include <cstdint>

namespace chs
{
namespace at
{

#define CHS_CUT_FOR_EACH(i, count)                                                                                     \
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < (count); i += uint64_t(gridDim.x) * blockDim.x)

/** up[x] = x's parent when the parent qualifies, else x. */
static __global__ void
CutUpKernel(const uint32_t * parent,
            const double *   level,
            const double *   range,
            uint64_t         nodes,
            double           alpha,
            double           omega,
            uint32_t *       up)
{
  CHS_CUT_FOR_EACH(x, nodes)
  {
    const uint32_t p  = parent[x];
    const bool     ok = p != x && level[p] <= alpha && (range == nullptr || range[p] <= omega);
    up[x]             = ok ? p : uint32_t(x);
  }
}

/** first[r] = the smallest pixel of region r (first holds 0xffffffff for every node before). */
static __global__ void
CutFirstKernel(const uint32_t * up, uint64_t leaves, uint32_t * first)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    const uint32_t r = up[p];
    if (static_cast<const volatile uint32_t *>(first)[r] > p) // most pixels of a large region find it lower already
      atomicMin(first + r, uint32_t(p));
  }
}

static __global__ void
CutFlagKernel(const uint32_t * up, const uint32_t * first, uint64_t leaves, uint32_t * flag)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    flag[p] = first[up[p]] == p ? 1u : 0u;
  }
}

/** labels[p] = 1 + the number of regions whose first pixel comes before p's region's. */
static __global__ void
CutLabelKernel(const uint32_t * up, const uint32_t * first, const uint32_t * rank, uint64_t leaves, uint32_t * labels)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    labels[p] = rank[first[up[p]]] + 1u;
  }
}

/** The samples with k odd coordinates (k = 0: the pixels, 0). */
static __global__ void
SaliencyKernel(SaliencyGrid s, const uint32_t * parent, const double * level, unsigned k, float * out)
{
  CHS_CUT_FOR_EACH(i, s.samples)
  {
    uint64_t c[3];
    if (OddCoordinates(s, i, c) == k)
      out[i] = k == 0 ? 0.0f : SaliencySample(s, parent, level, out, i, c, k);
  }
}

#undef CHS_CUT_FOR_EACH

} // namespace at
} // namespace chs

#endif
