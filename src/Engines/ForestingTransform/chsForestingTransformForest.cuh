// Image Foresting Transform, stage 2: the forest from the final keys. ForestKernel chooses every pixel's
// predecessor by the definition's local rule (the neighbour whose offer equals the pixel's key, with the smallest
// key, then the smallest index) and writes the cost and predecessor maps; ShortcutKernel shortens the paths inside
// tiles, and LabelKernel follows the shortened paths to the seed at the root (a find with path halving) and writes
// its label. Predecessors and roots are voxel indices of type P (uint32_t below 2^32 - 1 voxels, else 64-bit).
#ifndef chsIFTForest_cuh
#define chsIFTForest_cuh

#include "chsForestingTransformCommon.cuh"

namespace chs
{
namespace ift
{

template <ArcWeightFunction F, bool Full, int ZR, typename TW, typename TCost, typename P>
__global__ void
ForestKernel(const TW * B, const uint64_t * K, Extent e, P * parent, TCost * cost, int64_t * predecessor)
{
  const uint64_t n = uint64_t(e.nx) * e.ny * e.nz;
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < n; q += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t k    = K[q];
    P              best = P(q);
    if (k != 0) // 0 is a seed's key and no other pixel's (every offer is larger than the key that makes it)
    {
      const int x = int(q % e.nx), y = int(q / e.nx % e.ny), z = int(q / (uint64_t(e.nx) * e.ny));
      const TW  bq      = B[q];
      uint64_t  bestKey = kUnreached;
      ForNeighbours<Full, ZR>(
        [&](int dx, int dy, int dz)
        {
          const int px = x + dx, py = y + dy, pz = z + dz;
          if (px < 0 || py < 0 || pz < 0 || px >= int(e.nx) || py >= int(e.ny) || pz >= int(e.nz))
            return;
          const uint64_t p  = (uint64_t(pz) * e.ny + unsigned(py)) * e.nx + unsigned(px);
          const uint64_t kp = K[p];
          // Neighbours come in raster order, so the first of equal keys has the smallest index.
          if (kp != kUnreached && kp < bestKey && Offer(kp, ArcWeight<F>(B[p], bq)) == k)
          {
            bestKey = kp;
            best    = P(p);
          }
        });
    }
    parent[q] = best;
    if (cost)
      cost[q] = DecodeOrdered<TCost>(uint32_t(k >> 32));
    if (predecessor)
      predecessor[q] = k == 0 ? int64_t(-1) : int64_t(best);
  }
}

/** *full = 1 when a key's hop count has no room left (HopCountFull). */
static __global__ void
HopCountKernel(const uint64_t * K, uint64_t n, unsigned long long * full)
{
  bool any = false;
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < n; q += uint64_t(gridDim.x) * blockDim.x)
    any = any || HopCountFull(K[q]);
  if (any)
    atomicMax(full, 1ull);
}

/** Makes every seed (inside the mask) the root of its tree. */
template <typename TLabel, typename P>
__global__ void
SeedRootKernel(const TLabel * seeds, const uint8_t * mask, P * parent, uint64_t n)
{
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < n; q += uint64_t(gridDim.x) * blockDim.x)
    if (seeds[q] != 0 && (!mask || mask[q]))
      parent[q] = P(q);
}

/** Labels every pixel with its root's seed label (0 outside the mask, when there is one). `root` starts as the
 * shortcuts of ShortcutKernel (seeds point to themselves); the finds shorten it further as they go. Concurrent halving
 * stores only ever write an ancestor, so every find still ends at the root. The pixels are visited in `order`
 * (cubes of 64^3 voxels for large volumes: the finds' reads stay in a region the L2 cache holds). */
template <typename TLabel, typename P>
__global__ void
LabelKernel(P * root, const TLabel * seeds, const uint8_t * mask, TLabel * labels, detail::VoxelOrder order)
{
  const volatile P * R = root;
  ForEachVoxel(order,
               [&](uint64_t q, uint32_t, uint32_t, uint32_t)
               {
                 P a = P(q);
                 for (;;)
                 {
                   const P p = R[a];
                   if (p == a)
                     break;
                   const P gp = R[p];
                   if (gp == p)
                   {
                     a = p;
                     break;
                   }
                   root[a] = gp;
                   a       = gp;
                 }
                 labels[q] = mask && !mask[q] ? TLabel(0) : seeds[a];
               });
}

} // namespace ift
} // namespace chs

#endif
