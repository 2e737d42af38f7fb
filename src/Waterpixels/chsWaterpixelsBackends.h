// The two implementations of include/chs/Waterpixels.h's operations, the CUDA backend and the sequential CPU reference
// (one definition, the same results), and the one entry that runs either as its execution context says. Internal: the
// entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsWaterpixelsBackends_h
#define chsWaterpixelsBackends_h

#include "chs/Waterpixels.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TPixel, typename TLabel>
WaterpixelResult
WaterpixelsCPU(const TPixel *               image,
               const Grid &                 grid,
               const WaterpixelParameters & parameters,
               TLabel *                     labels,
               float *                      border);

template <typename TPixel, typename TLabel>
WaterpixelResult
WaterpixelsCUDA(const TPixel *               image,
                const Grid &                 grid,
                const WaterpixelParameters & parameters,
                TLabel *                     labels,
                float *                      border,
                const ExecutionContext &     context,
                RunInfo *                    info = nullptr);

/** The one entry (include/chs/Waterpixels.h): the backend that `context` names. */
template <typename TPixel, typename TLabel>
WaterpixelResult
Waterpixels(const TPixel *               image,
            const Grid &                 grid,
            const WaterpixelParameters & parameters,
            TLabel *                     labels,
            float *                      border,
            const ExecutionContext &     context,
            RunInfo *                    info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return WaterpixelsCUDA(image, grid, parameters, labels, border, context, info); },
    [&] { return WaterpixelsCPU(image, grid, parameters, labels, border); });
}
#define CHS_INSTANTIATE_ENTRY_WATERPIXELS(TPixel, TLabel)                                                              \
  template CudaHierarchicalSegmentation_EXPORT WaterpixelResult Waterpixels<TPixel, TLabel>(                           \
    const TPixel *,                                                                                                    \
    const Grid &,                                                                                                      \
    const WaterpixelParameters &,                                                                                      \
    TLabel *,                                                                                                          \
    float *,                                                                                                           \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

} // namespace chs

#endif
