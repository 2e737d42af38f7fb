// Image Foresting Transform, stage 2: the forest from the final keys. ForestKernel chooses every pixel's
// predecessor by the definition's local rule (the neighbour whose offer equals the pixel's key, with the smallest
// key, then the smallest index) and writes the cost and predecessor maps; LabelKernel follows the predecessors to
// the seed at the root (a find with path halving on a copy of them) and writes its label.
#ifndef chsIFTForest_cuh
#define chsIFTForest_cuh

#include "chsIFTCommon.cuh"

namespace chs
{
namespace ift
{

template <ArcWeightFunction F, bool Full, int ZR, typename TW, typename TCost>
__global__ void
ForestKernel(const TW * B, const uint64_t * K, Extent e, uint32_t * parent, TCost * cost, int64_t * predecessor)
{
  const uint64_t n = uint64_t(e.nx) * e.ny * e.nz;
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < n; q += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t k    = K[q];
    uint32_t       best = uint32_t(q);
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
            best    = uint32_t(p);
          }
        });
    }
    parent[q] = best;
    if (cost)
      cost[q] = Decode<TCost>(uint32_t(k >> 32));
    if (predecessor)
      predecessor[q] = k == 0 ? int64_t(-1) : int64_t(best);
  }
}

/** Labels every pixel with its root's seed label. `root` starts as a copy of the predecessors (seeds point to
 * themselves); the finds shorten it as they go. Concurrent halving stores only ever write an ancestor, so every
 * find still ends at the root. */
template <typename TLabel>
__global__ void
LabelKernel(uint32_t * root, const TLabel * seeds, TLabel * labels, uint64_t n)
{
  const volatile uint32_t * R = root;
  for (uint64_t q = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; q < n; q += uint64_t(gridDim.x) * blockDim.x)
  {
    uint32_t a = uint32_t(q);
    for (;;)
    {
      const uint32_t p = R[a];
      if (p == a)
        break;
      const uint32_t gp = R[p];
      if (gp == p)
      {
        a = p;
        break;
      }
      root[a] = gp;
      a       = gp;
    }
    labels[q] = seeds[a];
  }
}

} // namespace ift
} // namespace chs

#endif
