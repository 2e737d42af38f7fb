// Alpha-tree queries on the device (include/chs/AlphaTree.h; drivers in src/AlphaTree/chsAlphaTreeCut.cu).
// Cut (AlphaTreeCutCUDA): every node points at its parent when the parent qualifies (level <= alpha, range <=
// omega), pointer jumping (JumpKernel of src/AlphaTree/chsAlphaTreeCanonicalKernels.cuh) takes every node to its
// region, each region's first pixel is found with atomicMin, and an exclusive scan of the first pixels numbers the
// regions in raster order. Saliency (AlphaTreeSaliencyCUDA): one pass per number of odd coordinates of the interpixel
// samples (the rule of src/AlphaTree/chsAlphaTreeRule.h, shared with the CPU): merge levels by climbing to the lowest
// common ancestor, then maxima.
#ifndef chsATCut_cuh
#define chsATCut_cuh

#include "chsAlphaTreeRule.h"
#include "AlphaTree/chsAlphaTreeBackends.h"

#include <cstdint>

namespace chs
{
namespace at
{

#define CHS_CUT_FOR_EACH(i, count)                                                                                     \
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < (count); i += uint64_t(gridDim.x) * blockDim.x)

__device__ __forceinline__ void
AtomicMinNode(uint32_t * a, uint64_t v)
{
  atomicMin(a, uint32_t(v));
}
__device__ __forceinline__ void
AtomicMinNode(uint64_t * a, uint64_t v)
{
  atomicMin(reinterpret_cast<unsigned long long *>(a), static_cast<unsigned long long>(v));
}

/** up[x] = x's parent when the parent qualifies, else x. Node ids of TNode (32 or 64 bits) here and below. */
template <typename TNode>
static __global__ void
CutUpKernel(const TNode *  parent,
            const double * level,
            const double * range,
            uint64_t       nodes,
            double         alpha,
            double         omega,
            TNode *        up)
{
  CHS_CUT_FOR_EACH(x, nodes)
  {
    const TNode p  = parent[x];
    const bool  ok = p != x && level[p] <= alpha && (range == nullptr || range[p] <= omega);
    up[x]          = ok ? p : TNode(x);
  }
}

/** first[r] = the smallest pixel of region r (first holds all ones for every node before). */
template <typename TNode>
static __global__ void
CutFirstKernel(const TNode * up, uint64_t leaves, TNode * first)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    const TNode r = up[p];
    if (static_cast<const volatile TNode *>(first)[r] > p) // most pixels of a large region find it lower already
      AtomicMinNode(first + r, p);
  }
}

template <typename TNode>
static __global__ void
CutFlagKernel(const TNode * up, const TNode * first, uint64_t leaves, TNode * flag)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    flag[p] = first[up[p]] == p ? TNode(1) : TNode(0);
  }
}

/** labels[p] = 1 + the number of regions whose first pixel comes before p's region's. */
template <typename TNode>
static __global__ void
CutLabelKernel(const TNode * up, const TNode * first, const TNode * rank, uint64_t leaves, TNode * labels)
{
  CHS_CUT_FOR_EACH(p, leaves)
  {
    labels[p] = rank[first[up[p]]] + TNode(1);
  }
}

/** The samples with k odd coordinates (k = 0: the pixels, 0). */
template <typename TNode>
static __global__ void
SaliencyKernel(SaliencyGrid s, const TNode * parent, const double * level, unsigned k, float * out)
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
