// Connected components: what every stage shares. Launch shapes, the image extent in the index type, the tile
// shapes, the root-count chunks, the sentinel and tag bit of the parents, the foreground and flat-zone predicates
// (BinaryOp, FlatOp), and the bit operations on the 32-voxel rows of a tile (run starts and run pairs).
#ifndef chsCCCommon_cuh
#define chsCCCommon_cuh

#include "Common/chsDeviceHelpers.cuh"
#include <cstdint>
#include <type_traits>

namespace chs
{
namespace cc
{

constexpr int kTileX            = 32; // one warp per tile row
constexpr int kLocalThreads     = 256;
constexpr int kLocalWarps       = kLocalThreads / 32;
constexpr int kMaxTileVoxels    = 8192; // the binary local merge's 3D tile (32 KiB of shared parents)
constexpr int kBoundaryThreads  = 256;
constexpr int kFinalizeThreads  = 256;
constexpr int kRootLabelThreads = 256;

/** Image extent in the index type: 32-bit arithmetic (cheap divisions) below 2^32 voxels. */
template <typename I>
struct Extent
{
  I nx, ny, nz;
};

/** A tile is 32 x TY x TZ voxels, one warp per row; the shape is a compile-time constant so that every division by
 * it is a shift. 32 x 32 in 2D and 32 x 8 x 8 in 3D measured best on an H200 (of 32 x {16, 32, 64} and
 * 32 x {2, 4, 8, 16} x {4, 8, 16, 32}). */
template <int TY, int TZ>
struct Tile
{
  static constexpr int Y      = TY;
  static constexpr int Z      = TZ;
  static constexpr int Rows   = TY * TZ;
  static constexpr int Voxels = kTileX * TY * TZ;
  static_assert(Voxels <= kMaxTileVoxels, "tile too large for the shared arrays");
};
using Tile2D = Tile<32, 1>;
using Tile3D = Tile<8, 8>;
/** The binary local merge keeps only an int and a bit a voxel in shared memory, so its 3D tiles can be larger,
 * which halves the voxels on y and z faces: 32 x 16 x 16 measured best on an H200 (of 32 x {8, 16, 32} x {8, 16};
 * 512^3 blobs: 3.43 -> 3.10 ms face, 9.28 -> 7.64 ms full). */
using BinaryTile3D = Tile<16, 16>;
/** And in 2D, 32 x 128: more rows a warp amortise its set-up and fill its queues (4096^2 blobs, H200: 0.245 ms face
 * and 0.263 ms full at 32 x 32; 0.224 / 0.239 at 32 x 64, 0.216 / 0.232 at 32 x 128, 0.215 / 0.235 at 32 x 256). */
using BinaryTile2D = Tile<128, 1>;

/** Roots are counted per chunk of 2^12 consecutive voxels in raster order: +1 for every local root, -1 for every
 * local root linked across a tile face. A scan of the counts numbers the roots and gives their total. Counts have
 * the index type: a 4.6e9-voxel checkerboard has more than 2^32 roots. */
constexpr int kChunkShift = 12;
constexpr int kChunk      = 1 << kChunkShift;

template <typename I>
__host__ __device__ constexpr I
Sentinel()
{
  return ~I(0);
}

/** Labels written in place over the parents carry the top bit, so that a root's label is told from a voxel index
 * (indices stay below 2^31, or 2^63, on that path). The sentinel has the bit too but is never a label. */
template <typename I>
__host__ __device__ constexpr I
TagBit()
{
  return I(1) << (8 * sizeof(I) - 1);
}

/** ITK's ConnectedComponentImageFilter: non-zero and inside the mask is foreground. */
template <typename T>
struct BinaryOp
{
  using Class = uint8_t;
  const T *       input;
  const uint8_t * mask;
  __device__ Class
  Load(uint64_t i) const
  {
    return (input[i] != T(0)) && (mask == nullptr || mask[i] != 0);
  }
  __device__ static Class
  Outside()
  {
    return 0;
  }
  __device__ static bool
  Active(Class c)
  {
    return c != 0;
  }
  __device__ static bool
  Connected(Class a, Class b)
  {
    return a && b;
  }
};

template <class Op>
struct IsBinaryOp : std::false_type
{
};
template <typename T>
struct IsBinaryOp<BinaryOp<T>> : std::true_type
{
  using Pixel = T;
};

template <typename T>
struct FlatClass
{
  T       value;
  uint8_t inside;
};

/** Flat zones: every voxel inside the mask is active; equal neighbours are connected. */
template <typename T>
struct FlatOp
{
  using Class = FlatClass<T>;
  const T *       input;
  const uint8_t * mask;
  __device__ Class
  Load(uint64_t i) const
  {
    return Class{ input[i], uint8_t(mask == nullptr || mask[i] != 0) };
  }
  __device__ static Class
  Outside()
  {
    return Class{ T(0), 0 };
  }
  __device__ static bool
  Active(Class c)
  {
    return c.inside != 0;
  }
  __device__ static bool
  Connected(Class a, Class b)
  {
    return a.inside && b.inside && a.value == b.value;
  }
};

/** NonZeroZones (cc3d's multilabel images): flat zones of the non-zero voxels inside the mask; zero is background. */
template <typename T>
struct NonZeroFlatOp : FlatOp<T>
{
  using Class = FlatClass<T>;
  __device__ Class
  Load(uint64_t i) const
  {
    const T v = this->input[i];
    return Class{ v, uint8_t(v != T(0) && (this->mask == nullptr || this->mask[i] != 0)) };
  }
};

/** Start lane of the run that holds `lane` in a row whose run starts are the bits of `starts`. */
__device__ __forceinline__ int
RunStart(unsigned starts, int lane)
{
  return 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
}

/** The pairs of adjacent runs between a row (foreground bits `m`) and another row (bits `n`) of the 32 columns, one
 * union each: bit b of `a` pairs the run of m that starts at b with the run of n that holds b, or b - 1 when b is
 * background in n (RunPartner); bit b of `c` pairs the run of m that holds b with the run of n that starts at
 * b + 1. Face connectivity: a run pair overlaps on one segment of m & n, found at its first bit (c = 0). Full
 * connectivity: a run of m meets the run of n that holds its first bit or the bit before, and every run of n that
 * starts one bit after a foreground bit of m with a background bit of n under it. */
template <bool Full>
__device__ __forceinline__ void
RunPairs(unsigned m, unsigned n, unsigned & a, unsigned & c)
{
  if (!Full)
  {
    const unsigned overlap = m & n;
    a                      = overlap & ~(overlap << 1);
    c                      = 0;
    return;
  }
  a = m & ~(m << 1) & (n | (n << 1));
  c = m & (n >> 1) & ~n;
}

/** The bit of n that bit b of RunPairs' `a` pairs with. */
__device__ __forceinline__ int
RunPartner(unsigned n, int b)
{
  return ((n >> b) & 1u) ? b : b - 1;
}

} // namespace cc
} // namespace chs

#endif
