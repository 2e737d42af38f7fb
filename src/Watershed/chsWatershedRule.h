// The checks both watershed backends make before anything is written, and the order-preserving codes the CUDA
// backend compares instead of pixel values (one set of kernels per code width, whatever the pixel type).
#ifndef chsWatershedRule_h
#define chsWatershedRule_h

#include "chs/Watershed.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(__CUDACC__)
#  define CHS_WS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#  define CHS_WS_HOST_DEVICE inline
#endif

namespace chs
{
namespace ws
{

/** A plateau pixel no distance has reached: a pixel of a minimal plateau once the resolution is over. */
constexpr uint32_t kNoDistance = 0xffffffffu;

/** The unsigned code of the width of T whose order is the order of the values: the value for unsigned integers,
 * the value with its sign bit flipped for signed ones, and for floating point the bits with the sign bit flipped
 * (non-negative values) or all bits flipped (negative values), with -0 coded as +0. NaN has no place in the order
 * and is rejected before coding. */
template <typename T>
struct Code
{
  using Type = std::conditional_t<
    sizeof(T) == 1,
    uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
};

template <typename T>
CHS_WS_HOST_DEVICE typename Code<T>::Type
Encode(T v)
{
  using C          = typename Code<T>::Type;
  constexpr C sign = C(C(1) << (8 * sizeof(C) - 1));
  if constexpr (std::is_floating_point<T>::value)
  {
    const T zeroed = v == T(0) ? T(0) : v;
    C       bits;
    std::memcpy(&bits, &zeroed, sizeof(bits));
    return (bits & sign) ? C(~bits) : C(bits | sign);
  }
  else if constexpr (std::is_signed<T>::value)
    return C(C(v) ^ sign);
  else
    return C(v);
}

/** The pixel value of a code (Encode's inverse; -0 comes back as +0). */
template <typename T>
CHS_WS_HOST_DEVICE T
Decode(typename Code<T>::Type c)
{
  using C          = typename Code<T>::Type;
  constexpr C sign = C(C(1) << (8 * sizeof(C) - 1));
  if constexpr (std::is_floating_point<T>::value)
  {
    const C bits = (c & sign) ? C(c & C(~sign)) : C(~c);
    T       v;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  else if constexpr (std::is_signed<T>::value)
    return T(C(c ^ sign));
  else
    return T(c);
}

/** The voxel count, checked: any number of voxels (from 2^32 - 1 on, 64-bit voxel indices), each axis below 2^32. */
inline uint64_t
CheckedVoxelCount(const Grid & grid)
{
  const uint64_t n = grid.NumberOfVoxels();
  if (grid.dimension != 2 && grid.dimension != 3)
    throw std::invalid_argument("chs: the watershed takes 2D images and 3D volumes");
  if (n == 0)
    throw std::invalid_argument("chs: the image has no voxels");
  for (unsigned d = 0; d < 3; ++d)
    if (grid.size[d] > 0xffffffffull)
      throw std::invalid_argument("chs: the watershed takes images of fewer than 2^32 voxels along each axis");
  return n;
}

/** The waterfall numbers its regions in 32 bits: level 0, the watershed's basins, must be fewer than 2^32 - 1. */
inline void
CheckWaterfallRegions(uint64_t regions)
{
  if (regions >= 0xffffffffull)
    throw std::invalid_argument("chs: the waterfall numbers its regions in 32 bits (at most 4294967294); the "
                                "watershed of this image has " +
                                std::to_string(regions) + " basins");
}

/** Whether a watershed from markers takes 64-bit voxel indices: from 2^32 - 1 voxels on, or when a test forces it. */
inline bool
WideIndex(const Grid & grid, const MarkerWatershedParameters & p)
{
  return grid.NumberOfVoxels() >= 0xffffffffull || p.forceWideIndex;
}

/** Whether a watershed run takes 64-bit voxel indices: from 2^32 - 1 voxels on, or when a test forces it. */
inline bool
WideIndex(const Grid & grid, const WatershedParameters & p)
{
  return grid.NumberOfVoxels() >= 0xffffffffull || p.forceWideIndex;
}

/** The block of the plateau resolution, checked: the defaults for 0 0 0. */
inline void
CheckedBlock(const Grid & grid, const WatershedParameters & p, unsigned (&block)[3])
{
  const bool zero = p.blockSize[0] == 0 && p.blockSize[1] == 0 && p.blockSize[2] == 0;
  for (int d = 0; d < 3; ++d)
    block[d] = zero ? (grid.dimension == 3 ? 8u : (d < 2 ? 16u : 1u)) : p.blockSize[d];
  const uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  if (block[0] == 0 || block[1] == 0 || block[2] == 0 || threads > 1024 || (grid.dimension == 2 && block[2] != 1))
    throw std::invalid_argument("chs: the watershed's block size must be positive, at most 1024 threads, and 1 "
                                "across z in 2D; it is " +
                                std::to_string(block[0]) + " x " + std::to_string(block[1]) + " x " +
                                std::to_string(block[2]));
}

inline void
CheckParameters(const Grid & grid, const WatershedParameters & p)
{
  if (p.reductionRate < 1 || p.reductionRate > 64)
    throw std::invalid_argument("chs: the watershed's reduction rate RR must be 1 to 64; it is " +
                                std::to_string(p.reductionRate));
  if (int(p.algorithm) < 0 || int(p.algorithm) > 2)
    throw std::invalid_argument("chs: unknown watershed algorithm " + std::to_string(int(p.algorithm)));
  if (int(p.plateaus) < 0 || int(p.plateaus) > 2)
    throw std::invalid_argument("chs: unknown plateau resolution " + std::to_string(int(p.plateaus)));
  unsigned block[3];
  CheckedBlock(grid, p, block);
}

inline void
CheckWaterfallParameters(const Grid & grid, const WaterfallParameters & p)
{
  CheckParameters(grid, p.watershed);
  if (p.watershed.markLines)
    throw std::invalid_argument("chs: the waterfall's levels are partitions; watershed lines are not available");
}

inline std::string
PixelName(const Grid & grid, uint64_t index)
{
  const uint64_t x = index % grid.size[0], y = index / grid.size[0] % grid.size[1],
                 z  = index / (grid.size[0] * grid.size[1]);
  std::string where = "(" + std::to_string(x) + ", " + std::to_string(y);
  if (grid.dimension == 3)
    where += ", " + std::to_string(z);
  return where + ")";
}

inline std::invalid_argument
NaNError(const Grid & grid, uint64_t index)
{
  return std::invalid_argument("chs: the image has a NaN at pixel " + PixelName(grid, index) +
                               "; the watershed needs ordered values");
}

/** Throws unless labels 1 .. count fit TLabel. */
template <typename TLabel>
void
CheckLabelCapacity(uint64_t count)
{
  if (count > uint64_t(TLabel(~TLabel(0))))
    throw std::invalid_argument("chs: the watershed found " + std::to_string(count) +
                                " basins, more than the label type holds (" +
                                std::to_string(uint64_t(TLabel(~TLabel(0)))) + "); use a wider label type");
}

/** The checks of the watershed from markers that do not read the image (include/chs/Watershed.h). */
template <typename T>
void
CheckMarkerParameters(const Grid & grid, const MarkerWatershedParameters & p, bool markers)
{
  CheckedVoxelCount(grid);
  if (sizeof(T) > 4)
    throw std::invalid_argument("chs: the watershed from markers takes pixels of up to 32 bits (its flood's costs are "
                                "32-bit codes); cast 64-bit images to float or a 32-bit integer type");
  if (!(p.level >= 0) || p.level > 1e300)
    throw std::invalid_argument("chs: the watershed's level must be finite and not negative; it is " +
                                std::to_string(p.level));
  if (std::is_integral<T>::value && p.level != std::floor(p.level))
    throw std::invalid_argument("chs: the watershed's level must be a whole number for integer pixels; it is " +
                                std::to_string(p.level));
  if (markers && p.level != 0)
    throw std::invalid_argument("chs: the level (h-minima) finds the markers; it must be 0 when a marker image is "
                                "given");
}

inline std::invalid_argument
TooManyMarkers(uint64_t count, uint64_t maximum)
{
  return std::invalid_argument("chs: the watershed found " + std::to_string(count) +
                               " markers, more than the label type holds (" + std::to_string(maximum) +
                               "); use a wider label type");
}

/** min(v + level, the type's largest value), computed in double and rounded to T (as ITK's shift filter does). */
template <typename T>
CHS_WS_HOST_DEVICE T
Shifted(T v, double level)
{
  const double s = double(v) + level;
  if constexpr (std::is_integral<T>::value)
  {
    constexpr double top = double(std::numeric_limits<T>::max());
    return s >= top ? std::numeric_limits<T>::max() : T(s);
  }
  else
    return T(s);
}

} // namespace ws
} // namespace chs

#endif
