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

/** Runs the transform on device buffers, stops `timer` after the last kernel, then downloads the labels (and the
 * cost and predecessor maps when not null) into host memory. */
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
                  detail::EventTimer &                    timer);

} // namespace ift
} // namespace chs

#endif
