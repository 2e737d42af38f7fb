// The Image Foresting Transform's definition in the few functions both backends call (include/
// chs/ForestingTransform.h states it): the arc weight (as its order-preserving code, Common/chsOrderedCode.h) and
// the offer a pixel makes to its neighbour. Compiled by nvcc for the CUDA backend and by the host compiler for the CPU
// reference, so the two cannot drift apart.
#ifndef chsForestingTransformRule_h
#define chsForestingTransformRule_h

#include "chs/ForestingTransform.h"
#include "Common/chsHostDevice.h"
#include "Common/chsOrderedCode.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace chs
{
namespace ift
{

/** Key of a pixel no seed has reached yet: larger than every real key (a real D is below 2^32 - 1). */
constexpr uint64_t kUnreached = ~uint64_t(0);

/** Whether a weight may enter the transform: not negative and not NaN. */
template <typename T>
CHS_HOST_DEVICE bool
ValidWeight(T v)
{
  if constexpr (std::is_floating_point<T>::value)
    return v >= 0; // false for NaN
  else if constexpr (std::is_signed<T>::value)
    return v >= 0;
  else
    return true;
}

/** The code of w(p, q) for weights bp = B(p), bq = B(q). */
template <ArcWeightFunction F, typename T>
CHS_HOST_DEVICE uint32_t
ArcWeight(T bp, T bq)
{
  if constexpr (F == ArcWeightFunction::Target)
    return EncodeOrdered(bq);
  else if constexpr (F == ArcWeightFunction::Maximum)
    return EncodeOrdered(bp > bq ? bp : bq);
  else if constexpr (std::is_floating_point<T>::value)
    return EncodeOrdered(bp > bq ? bp - bq : bq - bp);
  else
    return static_cast<uint32_t>(bp > bq ? int64_t(bp) - int64_t(bq) : int64_t(bq) - int64_t(bp));
}

/** The key p (key kp, reached) offers its neighbour q over an arc of code w: (w, 0) when the arc rises above V(p),
 * else (V(p), D(p) + 1). Always larger than kp. */
CHS_HOST_DEVICE uint64_t
Offer(uint64_t kp, uint32_t w)
{
  return w > static_cast<uint32_t>(kp >> 32) ? uint64_t(w) << 32 : kp + 1;
}

/** The voxel count, after the check both backends make first: not empty (any number of voxels: see WideIndex). */
inline uint64_t
CheckedVoxelCount(const Grid & grid)
{
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the image has no voxels");
  return n;
}

/** Whether a run takes 64-bit voxel indices: from 2^32 - 1 voxels on (below, an index and the hop count D fit 32
 * bits), or when a test forces it. */
inline bool
WideIndex(const Grid & grid, const ForestingTransformParameters & p)
{
  return grid.NumberOfVoxels() >= 0xffffffffull || p.forceWideIndex;
}

/** D of 2^32 - 2 or more: the hop count has no room left (only images of 2^32 - 1 voxels or more reach it). */
CHS_HOST_DEVICE bool
HopCountFull(uint64_t key)
{
  return key != kUnreached && static_cast<uint32_t>(key) >= 0xfffffffeu;
}

inline std::runtime_error
HopCountError()
{
  return std::runtime_error("chs: an optimum path of the Image Foresting Transform takes 2^32 - 2 arcs or more at one "
                            "cost (a plateau of the cost map that long); its hop count is 32-bit");
}

/** The error for the first pixel (raster order) whose weight is negative or NaN. */
inline std::invalid_argument
InvalidWeightError(const Grid & grid, uint64_t index)
{
  const uint64_t x = index % grid.size[0], y = index / grid.size[0] % grid.size[1],
                 z  = index / (grid.size[0] * grid.size[1]);
  std::string where = "(" + std::to_string(x) + ", " + std::to_string(y);
  if (grid.dimension == 3)
    where += ", " + std::to_string(z);
  where += ")";
  return std::invalid_argument("chs: the weight image has a negative or NaN value at pixel " + where +
                               "; the Image Foresting Transform needs non-negative weights");
}

/** The sequential transform with the Target or Maximum arc weight on a graph restricted to the mask (pixels where mask
 * is 0 are left out; they and the pixels that no seed reaches get label 0; seeds outside the mask are ignored), where a
 * seed's trivial path costs its own weight (TransformOptions::seedCostIsWeight). No checks: the
 * caller passes order-preserving codes (src/Engines/ForestingTransform/chsForestingTransformCPU.cxx). */
template <typename TWeight, typename TLabel>
void
MaskedTransformCPU(const TWeight *                      weights,
                   const TLabel *                       seeds,
                   const uint8_t *                      mask,
                   const Grid &                         grid,
                   const ForestingTransformParameters & parameters,
                   TLabel *                             labels);

inline std::invalid_argument
NoSeedError()
{
  return std::invalid_argument("chs: the seed image has no seed (no non-zero pixel); the Image Foresting Transform "
                               "needs at least one");
}

} // namespace ift
} // namespace chs

#endif
