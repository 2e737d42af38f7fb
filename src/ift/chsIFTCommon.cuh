// Image Foresting Transform: what the CUDA stages share. The tile shapes of the relaxation, the image extent, and
// the loop over a pixel's neighbours.
#ifndef chsIFTCommon_cuh
#define chsIFTCommon_cuh

#include "chsForestingTransformRule.h"

#include <cstdint>

namespace chs
{
namespace ift
{

struct Extent
{
  uint32_t nx, ny, nz;
};

/** A relaxation tile: TX x TY x TZ pixels, one thread each, with a one-pixel halo (none across z in 2D). */
template <int TX, int TY, int TZ>
struct Tile
{
  static constexpr int X       = TX;
  static constexpr int Y       = TY;
  static constexpr int Z       = TZ;
  static constexpr int ZR      = TZ > 1 ? 1 : 0; // halo depth across z
  static constexpr int HX      = TX + 2;
  static constexpr int HY      = TY + 2;
  static constexpr int HZ      = TZ + 2 * ZR;
  static constexpr int Threads = TX * TY * TZ;
  static constexpr int Cells   = HX * HY * HZ;
};
using Tile2D = Tile<32, 32, 1>;
using Tile3D = Tile<8, 8, 8>;

/** Calls f(dx, dy, dz) for every neighbour offset of the connectivity (dz = 0 only when ZR is 0), in a fixed order
 * that unrolls to constants. */
template <bool Full, int ZR, class F>
__device__ __forceinline__ void
ForNeighbours(F && f)
{
#pragma unroll
  for (int dz = -ZR; dz <= ZR; ++dz)
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int m = (dx != 0) + (dy != 0) + (dz != 0);
        if (m == 0 || (!Full && m > 1))
          continue;
        f(dx, dy, dz);
      }
}

} // namespace ift
} // namespace chs

#endif
