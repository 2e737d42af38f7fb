// Watershed: what the CUDA stages share. The image shape, a pixel's coordinates, the loop over its neighbours inside
// the image (all of them, or only those after it in raster order), and the grid-stride loop.
#ifndef chsWSCommon_cuh
#define chsWSCommon_cuh

#include "Common/chsDeviceHelpers.cuh"
#include "chsWatershedRule.h"

#include <cstdint>

namespace chs
{
namespace ws
{

struct Shape
{
  uint32_t nx, ny, nz;
  uint32_t n; // nx * ny * nz, below 2^32 - 1
};

/** Calls f(q) for every neighbour q of p = (x, y, z) inside the image, in increasing raster order; with Forward,
 * only for those after p. */
template <bool Full, int ZR, bool Forward = false, class F>
__device__ __forceinline__ void
ForEachNeighbour(const Shape & s, uint32_t x, uint32_t y, uint32_t z, uint32_t p, F && f)
{
  ForNeighbours<Full, ZR>(
    [&](int dx, int dy, int dz)
    {
      if (Forward && (dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)))))
        return;
      if ((dx < 0 && x == 0) || (dx > 0 && x + 1 == s.nx) || (dy < 0 && y == 0) || (dy > 0 && y + 1 == s.ny) ||
          (dz < 0 && z == 0) || (dz > 0 && z + 1 == s.nz))
        return;
      f(p + uint32_t(dx) + uint32_t(dy) * s.nx + uint32_t(dz) * s.nx * s.ny);
    });
}

/** Calls f(p, x, y, z) for every pixel, grid-stride. */
template <class F>
__device__ __forceinline__ void
ForEachPixel(const Shape & s, F && f)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < s.n; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t p = uint32_t(i);
    const uint32_t x = p % s.nx, y = p / s.nx % s.ny, z = p / (s.nx * s.ny);
    f(p, x, y, z);
  }
}

/** Adds 1 to *count when any thread of the block saw a change; called by every thread of the block. */
__device__ __forceinline__ void
CountChange(bool changed, unsigned * count)
{
  if (__syncthreads_or(changed) && threadIdx.x == 0)
    atomicAdd(count, 1u);
}

} // namespace ws
} // namespace chs

#endif
