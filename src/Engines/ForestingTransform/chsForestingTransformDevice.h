// Internal to the .cu files: the CUDA Image Foresting Transform on weights and seeds already on the device, for
// the filters that build them there (waterpixels). Instantiated with the public entry point in the generated
// generated chsForestingTransform_<weight>.cu files.
#ifndef chsForestingTransformDevice_h
#define chsForestingTransformDevice_h

#include "Common/chsCudaCommon.cuh"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"

namespace chs
{
namespace ift
{

/** What the watershed from markers (src/Watershed/chsWatershed.cu) adds to the transform; the public entry point
 * passes none of it. */
struct TransformOptions
{
  /** Device array, one byte a pixel, or null: pixels where it is 0 are left out of the graph. They are never reached,
   * offer nothing, and get label 0 (as do pixels of the mask that no seed reaches); seeds among them are ignored. */
  const uint8_t * mask = nullptr;
  /** Device array of one cost code a pixel, or null: a seed's trivial path costs handicap[s] instead of 0 (with every
   * pixel a seed and weights B(q), the costs are the reconstruction by erosion of the handicaps above B). */
  const uint32_t * handicap = nullptr;
  /** A seed's trivial path costs its own weight B(s) (the watershed from markers: a path costs its largest pixel, the
   * marker's included), and seeds stay the roots of their trees. */
  bool seedCostIsWeight = false;
  /** No seed (inside the mask): write label 0 everywhere and return, instead of the error. */
  bool emptyWithoutSeeds = false;
  /** The unsigned integer weights are the bits of signed ones (ImageForestingTransformCUDA of a signed type): a
   * weight whose top bit is set is negative, and invalid. */
  bool signBitInvalid = false;
};

/** The device bytes TransformOnDevice allocates at most (the weights and seeds it is given not included): keys,
 * parents (voxel indices of `indexBytes`), labels, the cost and predecessor maps when asked for, and two flags a tile
 * of 32 x 32 (2D) or 8 x 8 x 8 (3D) pixels. */
inline uint64_t
TransformBytes(const Grid & grid, uint64_t labelBytes, uint64_t costBytes, bool predecessor, uint64_t indexBytes = 4)
{
  const bool     threeD = grid.dimension == 3;
  const uint64_t x = threeD ? 8 : 32, y = threeD ? 8 : 32, z = threeD ? 8 : 1;
  const uint64_t tiles = ((grid.size[0] + x - 1) / x) * ((grid.size[1] + y - 1) / y) * ((grid.size[2] + z - 1) / z);
  return grid.NumberOfVoxels() *
           (sizeof(uint64_t) + indexBytes + labelBytes + costBytes + (predecessor ? sizeof(int64_t) : 0)) +
         2 * tiles + 64;
}

/** Runs the transform on device buffers, stops `timer` after the last kernel, then downloads the labels (and the
 * cost and predecessor maps when not null) into host memory (or device memory: the copies see which). */
template <typename TWeight, typename TLabel>
ForestingTransformResult
TransformOnDevice(const TWeight *                         dWeights,
                  const TLabel *                          dSeeds,
                  const Grid &                            grid,
                  const ForestingTransformParameters &    parameters,
                  TLabel *                                labels,
                  typename ForestingCost<TWeight>::Type * cost,
                  int64_t *                               predecessor,
                  const ExecutionContext &                context,
                  detail::MemoryTracker &                 tracker,
                  detail::EventTimer &                    timer,
                  const TransformOptions &                options = {});

} // namespace ift
} // namespace chs

#endif
