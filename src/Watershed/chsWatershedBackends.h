// The two implementations of include/chs/Watershed.h's operations, the CUDA backend and the sequential CPU reference
// (one definition, the same results), and the one entry that runs either as its execution context says. Internal: the
// entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsWatershedBackends_h
#define chsWatershedBackends_h

#include "chs/Watershed.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename T, typename TLabel>
WatershedResult
WatershedCPU(const T * image, const Grid & grid, const WatershedParameters & parameters, TLabel * labels);

template <typename T, typename TLabel>
WatershedResult
WatershedCUDA(const T *                   image,
              const Grid &                grid,
              const WatershedParameters & parameters,
              TLabel *                    labels,
              const ExecutionContext &    context,
              RunInfo *                   info = nullptr);

/** The one entry (include/chs/Watershed.h): the backend that `context` names. */
template <typename T, typename TLabel>
WatershedResult
Watershed(const T *                   image,
          const Grid &                grid,
          const WatershedParameters & parameters,
          TLabel *                    labels,
          const ExecutionContext &    context,
          RunInfo *                   info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return WatershedCUDA(image, grid, parameters, labels, context, info); },
    [&] { return WatershedCPU(image, grid, parameters, labels); });
}
#define CHS_INSTANTIATE_ENTRY_WATERSHED(T, TLabel)                                                                     \
  template CudaHierarchicalSegmentation_EXPORT WatershedResult Watershed<T, TLabel>(                                   \
    const T *, const Grid &, const WatershedParameters &, TLabel *, const ExecutionContext &, RunInfo *)

template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershedCPU(const T *                         image,
                   const TLabel *                    markers,
                   const uint8_t *                   mask,
                   const Grid &                      grid,
                   const MarkerWatershedParameters & parameters,
                   TLabel *                          labels);

template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershedCUDA(const T *                         image,
                    const TLabel *                    markers,
                    const uint8_t *                   mask,
                    const Grid &                      grid,
                    const MarkerWatershedParameters & parameters,
                    TLabel *                          labels,
                    const ExecutionContext &          context,
                    RunInfo *                         info = nullptr);

/** The one entry (include/chs/Watershed.h): the backend that `context` names. */
template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershed(const T *                         image,
                const TLabel *                    markers,
                const uint8_t *                   mask,
                const Grid &                      grid,
                const MarkerWatershedParameters & parameters,
                TLabel *                          labels,
                const ExecutionContext &          context,
                RunInfo *                         info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return MarkerWatershedCUDA(image, markers, mask, grid, parameters, labels, context, info); },
    [&] { return MarkerWatershedCPU(image, markers, mask, grid, parameters, labels); });
}
#define CHS_INSTANTIATE_ENTRY_MARKER_WATERSHED(T, TLabel)                                                              \
  template CudaHierarchicalSegmentation_EXPORT MarkerWatershedResult MarkerWatershed<T, TLabel>(                       \
    const T *,                                                                                                         \
    const TLabel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    const Grid &,                                                                                                      \
    const MarkerWatershedParameters &,                                                                                 \
    TLabel *,                                                                                                          \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

template <typename T, typename TLabel>
WaterfallResult
WaterfallCPU(const T *                          image,
             const Grid &                       grid,
             const WaterfallParameters &        parameters,
             const WaterfallLevelSink<TLabel> & sink);

template <typename T, typename TLabel>
WaterfallResult
WaterfallCUDA(const T *                          image,
              const Grid &                       grid,
              const WaterfallParameters &        parameters,
              const WaterfallLevelSink<TLabel> & sink,
              const ExecutionContext &           context,
              RunInfo *                          info = nullptr);

/** The one entry (include/chs/Watershed.h): the backend that `context` names. */
template <typename T, typename TLabel>
WaterfallResult
Waterfall(const T *                          image,
          const Grid &                       grid,
          const WaterfallParameters &        parameters,
          const WaterfallLevelSink<TLabel> & sink,
          const ExecutionContext &           context,
          RunInfo *                          info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return WaterfallCUDA(image, grid, parameters, sink, context, info); },
    [&] { return WaterfallCPU(image, grid, parameters, sink); });
}
#define CHS_INSTANTIATE_ENTRY_WATERFALL(T, TLabel)                                                                     \
  template CudaHierarchicalSegmentation_EXPORT WaterfallResult Waterfall<T, TLabel>(                                   \
    const T *,                                                                                                         \
    const Grid &,                                                                                                      \
    const WaterfallParameters &,                                                                                       \
    const WaterfallLevelSink<TLabel> &,                                                                                \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

} // namespace chs

#endif
