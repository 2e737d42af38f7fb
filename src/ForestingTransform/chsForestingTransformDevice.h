// Internal to the .cu files: the CUDA Image Foresting Transform on weights and seeds already on the device, for
// the filters that build them there (waterpixels). Instantiated with the public entry point in the generated
// generated chsForestingTransform_<weight>.cu files.
#ifndef chsForestingTransformDevice_h
#define chsForestingTransformDevice_h

#include "Common/chsCudaCommon.cuh"
#include "chsForestingTransform.h"

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
};

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
