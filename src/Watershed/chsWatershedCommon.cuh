// Watershed: what the CUDA stages share. The image shape, a pixel's coordinates, the loop over its neighbours inside
// the image (all of them, or only those after it in raster order), and the grid-stride loop.
#ifndef chsWSCommon_cuh
#define chsWSCommon_cuh

#include "Common/chsDeviceHelpers.cuh"
#include "chsWatershedRule.h"

#include <cub/device/device_scan.cuh>

#include <cstdint>

namespace chs
{
namespace ws
{

/** The image's extents and voxel count; voxel indices of type P (uint32_t below 2^32 - 1 voxels, else 64-bit); the
 * order in which the kernels that follow pointers visit the voxels (ForEachPixelLocal); the voxels [begin, end) that
 * ForEachPixel visits (all of them but where a stage runs on a part of the image: InRange). */
template <typename P>
struct ShapeT
{
  uint32_t           nx, ny, nz;
  P                  n; // nx * ny * nz
  detail::VoxelOrder order;
  P                  begin, end;
};

/** The shape of `grid`, every voxel in range. */
template <typename P = uint32_t>
ShapeT<P>
ShapeOf(const Grid & grid)
{
  return ShapeT<P>{ uint32_t(grid.size[0]),
                    uint32_t(grid.size[1]),
                    uint32_t(grid.size[2]),
                    P(grid.NumberOfVoxels()),
                    detail::ChooseVoxelOrder(grid.size[0], grid.size[1], grid.size[2]),
                    P(0),
                    P(grid.NumberOfVoxels()) };
}

/** `s` restricted to the voxels [begin, end) for ForEachPixel and ForEachPixelLocal (whose order must then be raster
 * order). */
template <typename P>
ShapeT<P>
InRange(ShapeT<P> s, uint64_t begin, uint64_t end)
{
  s.begin = P(begin);
  s.end   = P(end);
  return s;
}
using Shape = ShapeT<uint32_t>;

/** Calls f(q) for every neighbour q of p = (x, y, z) inside the image, in increasing raster order; with Forward,
 * only for those after p. (Unsigned wrap-around makes p + dx a neighbour's index for negative offsets too.) */
template <bool Full, int ZR, bool Forward = false, typename P, class F>
__device__ __forceinline__ void
ForEachNeighbour(const ShapeT<P> & s, uint32_t x, uint32_t y, uint32_t z, P p, F && f)
{
  ForNeighbours<Full, ZR>(
    [&](int dx, int dy, int dz)
    {
      if (Forward && (dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)))))
        return;
      if ((dx < 0 && x == 0) || (dx > 0 && x + 1 == s.nx) || (dy < 0 && y == 0) || (dy > 0 && y + 1 == s.ny) ||
          (dz < 0 && z == 0) || (dz > 0 && z + 1 == s.nz))
        return;
      f(p + P(dx) + P(dy) * s.nx + P(dz) * s.nx * s.ny);
    });
}

/** Calls f(p, x, y, z) for every pixel, grid-stride. */
template <typename P, class F>
__device__ __forceinline__ void
ForEachPixel(const ShapeT<P> & s, F && f)
{
  for (uint64_t i = s.begin + blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < s.end;
       i += uint64_t(gridDim.x) * blockDim.x)
  {
    const P p = P(i);
    if constexpr (sizeof(P) == 4)
      f(p, p % s.nx, p / s.nx % s.ny, p / (s.nx * s.ny));
    else
    {
      const uint64_t row = p / s.nx, z = row / s.ny;
      f(p, uint32_t(p - row * s.nx), uint32_t(row - z * s.ny), uint32_t(z));
    }
  }
}

/** ForEachPixel in s.order: in cubes of 64^3 voxels for large volumes (detail::VoxelOrder), for the kernels that follow
 * pointers from pixel to pixel. */
template <typename P, class F>
__device__ __forceinline__ void
ForEachPixelLocal(const ShapeT<P> & s, F && f)
{
  if (s.order.cx == 0)
    ForEachPixel(s, f);
  else
    ForEachVoxel(s.order, [&](uint64_t p, uint32_t x, uint32_t y, uint32_t z) { f(P(p), x, y, z); });
}

/** Inclusive sum of in[0 .. count) into out (in place allowed). */
template <typename T>
void
InclusiveSum(const T * in, T * out, uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  size_t bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, count, stream));
  detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), bytes, in, out, count, stream));
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
