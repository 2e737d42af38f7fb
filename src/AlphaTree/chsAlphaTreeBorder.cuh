// Alpha-tree construction, stage 2: the edges that cross a tile border join the tiles' partial trees in global
// memory (the paper's "global merges"), with the same CONNECT as inside the tiles. One thread per
// pixel; only pixels on a tile's first or last column or row, or its last layer, have forward edges that can leave
// their tile (backward x and y steps are forward edges with 8- and 26-connectivity), the others return at once.
#ifndef chsATBorder_cuh
#define chsATBorder_cuh

#include "chsAlphaTreeTile.cuh"

namespace chs
{
namespace at
{

/** Inserts the edges that cross tile borders; counts the inserted edges. */
template <bool kInsertAll>
__global__ void
BorderMergeKernel(sl::ImageGraph g, TileShape s, GlobalTree tree, unsigned long long * inserted)
{
  const uint64_t n    = g.Pixels();
  const unsigned K    = g.slots;
  unsigned       mine = 0;
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < n; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const int64_t x = int64_t(p % uint64_t(g.nx)), rest = int64_t(p / uint64_t(g.nx));
    const int64_t y = rest % g.ny, z = rest / g.ny;
    const int64_t lx = x % s.x, ly = y % s.y, lz = z % s.z;
    if (lx != 0 && lx != int64_t(s.x) - 1 && ly != 0 && ly != int64_t(s.y) - 1 && lz != int64_t(s.z) - 1)
      continue;
    for (unsigned k = 0; k < K; ++k)
    {
      const int64_t q = g.Neighbour(x, y, z, k);
      if (q < 0 || SameTile(g, s, x, y, z, k))
        continue;
      const uint32_t e = uint32_t(n + p * K + k);
      if (kInsertAll)
      {
        Connect(tree, uint32_t(p), e);
        Connect(tree, uint32_t(q), e);
        ++mine;
      }
      else if (ConnectWith(tree, uint32_t(p), uint32_t(q), e))
        ++mine;
    }
  }
  if (mine)
    atomicAdd(inserted, (unsigned long long)mine);
}

} // namespace at
} // namespace chs

#endif
