// The two implementations of include/chs/ForestingTransform.h's operations, the CUDA backend and the sequential CPU
// reference (one definition, the same results), and the one entry that runs either as its execution context says.
// Internal: the entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsForestingTransformBackends_h
#define chsForestingTransformBackends_h

#include "chs/ForestingTransform.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransformCPU(const TWeight *                         weights,
                           const TLabel *                          seeds,
                           const Grid &                            grid,
                           const ForestingTransformParameters &    parameters,
                           TLabel *                                labels,
                           typename ForestingCost<TWeight>::Type * cost,
                           int64_t *                               predecessor);

template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransformCUDA(const TWeight *                         weights,
                            const TLabel *                          seeds,
                            const Grid &                            grid,
                            const ForestingTransformParameters &    parameters,
                            TLabel *                                labels,
                            typename ForestingCost<TWeight>::Type * cost,
                            int64_t *                               predecessor,
                            const ExecutionContext &                context,
                            RunInfo *                               info = nullptr);

/** The one entry (include/chs/ForestingTransform.h): the backend that `context` names. */
template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransform(const TWeight *                         weights,
                        const TLabel *                          seeds,
                        const Grid &                            grid,
                        const ForestingTransformParameters &    parameters,
                        TLabel *                                labels,
                        typename ForestingCost<TWeight>::Type * cost,
                        int64_t *                               predecessor,
                        const ExecutionContext &                context,
                        RunInfo *                               info)
{
  return detail::OnBackend(
    context,
    info,
    [&]
    { return ImageForestingTransformCUDA(weights, seeds, grid, parameters, labels, cost, predecessor, context, info); },
    [&] { return ImageForestingTransformCPU(weights, seeds, grid, parameters, labels, cost, predecessor); });
}
#define CHS_INSTANTIATE_ENTRY_IMAGE_FORESTING_TRANSFORM(TWeight, TLabel)                                               \
  template CudaHierarchicalSegmentation_EXPORT ForestingTransformResult ImageForestingTransform<TWeight, TLabel>(      \
    const TWeight *,                                                                                                   \
    const TLabel *,                                                                                                    \
    const Grid &,                                                                                                      \
    const ForestingTransformParameters &,                                                                              \
    TLabel *,                                                                                                          \
    typename ForestingCost<TWeight>::Type *,                                                                           \
    int64_t *,                                                                                                         \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

} // namespace chs

#endif
