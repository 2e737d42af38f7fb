// The two implementations of include/chs/ConnectedComponents.h's operations, the CUDA backend and the sequential CPU
// reference (one definition, the same results), and the one entry that runs either as its execution context says.
// Internal: the entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsConnectedComponentsBackends_h
#define chsConnectedComponentsBackends_h

#include "chs/ConnectedComponents.h"
#include "Common/chsBackend.h"

#include <stdexcept>
#include <string>

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

template <typename TLabel>
uint64_t
ComputeLabelStatisticsCPU(const TLabel * labels, const Grid & grid, ConnectedComponentStatistics & statistics);

template <typename TLabel>
uint64_t
ComputeLabelStatisticsCUDA(const TLabel *                 labels,
                           const Grid &                   grid,
                           ConnectedComponentStatistics & statistics,
                           const ExecutionContext &       context,
                           RunInfo *                      info = nullptr);

/** The one entry of ComputeLabelStatistics. */
template <typename TLabel>
uint64_t
ComputeLabelStatistics(const TLabel *                 labels,
                       const Grid &                   grid,
                       ConnectedComponentStatistics & statistics,
                       const ExecutionContext &       context,
                       RunInfo *                      info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return ComputeLabelStatisticsCUDA(labels, grid, statistics, context, info); },
    [&] { return ComputeLabelStatisticsCPU(labels, grid, statistics); });
}

template <typename TLabel, typename TOut>
void
MapLabelsCPU(const TLabel * labels, const Grid & grid, const TOut * table, uint64_t tableSize, TOut * out);
template <typename TLabel, typename TOut>
void
MapLabelsCUDA(const TLabel *           labels,
              const Grid &             grid,
              const TOut *             table,
              uint64_t                 tableSize,
              TOut *                   out,
              const ExecutionContext & context,
              RunInfo *                info);
template <typename TPixel, typename TLabel>
void
KeepLabelsCPU(const TPixel *  image,
              const TLabel *  labels,
              const Grid &    grid,
              const uint8_t * keep,
              uint64_t        tableSize,
              TPixel *        out);
template <typename TPixel, typename TLabel>
void
KeepLabelsCUDA(const TPixel *           image,
               const TLabel *           labels,
               const Grid &             grid,
               const uint8_t *          keep,
               uint64_t                 tableSize,
               TPixel *                 out,
               const ExecutionContext & context,
               RunInfo *                info);

template <typename TLabel, typename TOut>
void
MapLabels(const TLabel *           labels,
          const Grid &             grid,
          const TOut *             table,
          uint64_t                 tableSize,
          TOut *                   out,
          const ExecutionContext & context,
          RunInfo *                info)
{
  detail::OnBackend(
    context,
    info,
    [&] { MapLabelsCUDA(labels, grid, table, tableSize, out, context, info); },
    [&] { MapLabelsCPU(labels, grid, table, tableSize, out); });
}

template <typename TPixel, typename TLabel>
void
KeepLabels(const TPixel *           image,
           const TLabel *           labels,
           const Grid &             grid,
           const uint8_t *          keep,
           uint64_t                 tableSize,
           TPixel *                 out,
           const ExecutionContext & context,
           RunInfo *                info)
{
  detail::OnBackend(
    context,
    info,
    [&] { KeepLabelsCUDA(image, labels, grid, keep, tableSize, out, context, info); },
    [&] { KeepLabelsCPU(image, labels, grid, keep, tableSize, out); });
}

/** The label beyond a table, as both backends report it. */
inline std::invalid_argument
LabelBeyondTable(uint64_t label, uint64_t tableSize)
{
  return std::invalid_argument("chs: label " + std::to_string(label) + " is beyond the table of " +
                               std::to_string(tableSize) + " entries");
}

/** The check both backends make of the largest label before they allocate its tables. */
inline void
CheckLargestLabel(const Grid & grid, uint64_t largest)
{
  if (largest > grid.NumberOfVoxels())
    throw std::invalid_argument("chs: label statistics need labels no larger than the number of voxels (" +
                                std::to_string(grid.NumberOfVoxels()) + "); the largest is " + std::to_string(largest));
}

} // namespace chs

#endif
