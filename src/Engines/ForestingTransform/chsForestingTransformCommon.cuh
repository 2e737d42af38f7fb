// Image Foresting Transform: what the CUDA stages share. The tile shapes of the relaxation and the image extent
// (the loop over a pixel's neighbours is in chsDeviceHelpers.cuh).
#ifndef chsIFTCommon_cuh
#define chsIFTCommon_cuh

#include "Common/chsDeviceHelpers.cuh"
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
static_assert(Tile2D::X == 32 && Tile2D::Y == 32 && Tile3D::X == 8 && Tile3D::Y == 8 && Tile3D::Z == 8,
              "TransformBytes (chsForestingTransformDevice.h) counts the tiles of these shapes");

} // namespace ift
} // namespace chs

#endif
