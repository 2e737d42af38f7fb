// The two implementations of include/chs/ConnectedComponents.h's operations, the CUDA backend and the sequential CPU
// reference (one definition, the same results), and the one entry that runs either as its execution context says.
// Internal: the entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsConnectedComponentsBackends_h
#define chsConnectedComponentsBackends_h

#include "chs/ConnectedComponents.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponentsCPU(const TPixel *                       input,
                            const uint8_t *                      mask,
                            TLabel *                             labels,
                            const Grid &                         grid,
                            const ConnectedComponentParameters & parameters,
                            ConnectedComponentStatistics *       statistics);

template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponentsCUDA(const TPixel *                       input,
                             const uint8_t *                      mask,
                             TLabel *                             labels,
                             const Grid &                         grid,
                             const ConnectedComponentParameters & parameters,
                             ConnectedComponentStatistics *       statistics,
                             const ExecutionContext &             context,
                             RunInfo *                            info = nullptr);

/** The one entry (include/chs/ConnectedComponents.h): the backend that `context` names. */
template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponents(const TPixel *                       input,
                         const uint8_t *                      mask,
                         TLabel *                             labels,
                         const Grid &                         grid,
                         const ConnectedComponentParameters & parameters,
                         ConnectedComponentStatistics *       statistics,
                         const ExecutionContext &             context,
                         RunInfo *                            info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return LabelConnectedComponentsCUDA(input, mask, labels, grid, parameters, statistics, context, info); },
    [&] { return LabelConnectedComponentsCPU(input, mask, labels, grid, parameters, statistics); });
}
#define CHS_INSTANTIATE_ENTRY_LABEL_CONNECTED_COMPONENTS(TPixel, TLabel)                                               \
  template CudaHierarchicalSegmentation_EXPORT uint64_t LabelConnectedComponents<TPixel, TLabel>(                      \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    TLabel *,                                                                                                          \
    const Grid &,                                                                                                      \
    const ConnectedComponentParameters &,                                                                              \
    ConnectedComponentStatistics *,                                                                                    \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

} // namespace chs

#endif
