// The sequential reference of the label maps (include/chs/ConnectedComponents.h: MapLabels, KeepLabels): one pass
// that checks every label against the table, then one that writes, so that nothing is written on bad input.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "ConnectedComponents/chsLabelMapsInstantiate.h"

namespace chs
{
namespace
{

template <typename TLabel>
void
CheckLabels(const TLabel * labels, uint64_t n, uint64_t tableSize)
{
  for (uint64_t i = 0; i < n; ++i)
    if (static_cast<uint64_t>(labels[i]) >= tableSize)
      throw LabelBeyondTable(static_cast<uint64_t>(labels[i]), tableSize);
}

} // namespace

template <typename TLabel, typename TOut>
void
MapLabelsCPU(const TLabel * labels, const Grid & grid, const TOut * table, uint64_t tableSize, TOut * out)
{
  const uint64_t n = grid.NumberOfVoxels();
  CheckLabels(labels, n, tableSize);
  for (uint64_t i = 0; i < n; ++i)
    out[i] = table[static_cast<uint64_t>(labels[i])];
}

template <typename TPixel, typename TLabel>
void
KeepLabelsCPU(const TPixel *  image,
              const TLabel *  labels,
              const Grid &    grid,
              const uint8_t * keep,
              uint64_t        tableSize,
              TPixel *        out)
{
  const uint64_t n = grid.NumberOfVoxels();
  CheckLabels(labels, n, tableSize);
  for (uint64_t i = 0; i < n; ++i)
    out[i] = keep[static_cast<uint64_t>(labels[i])] ? image[i] : TPixel(0);
}

#define CHS_MAP_LABELS_CPU(TLabel, TOut)                                                                               \
  template CudaHierarchicalSegmentation_EXPORT void MapLabelsCPU<TLabel, TOut>(                                        \
    const TLabel *, const Grid &, const TOut *, uint64_t, TOut *);                                                     \
  template CudaHierarchicalSegmentation_EXPORT void MapLabels<TLabel, TOut>(                                           \
    const TLabel *, const Grid &, const TOut *, uint64_t, TOut *, const ExecutionContext &, RunInfo *)
#define CHS_KEEP_LABELS_CPU(TPixel, TLabel)                                                                            \
  template CudaHierarchicalSegmentation_EXPORT void KeepLabelsCPU<TPixel, TLabel>(                                     \
    const TPixel *, const TLabel *, const Grid &, const uint8_t *, uint64_t, TPixel *);                                \
  template CudaHierarchicalSegmentation_EXPORT void KeepLabels<TPixel, TLabel>(const TPixel *,                         \
                                                                               const TLabel *,                         \
                                                                               const Grid &,                           \
                                                                               const uint8_t *,                        \
                                                                               uint64_t,                               \
                                                                               TPixel *,                               \
                                                                               const ExecutionContext &,               \
                                                                               RunInfo *)
CHS_FOR_LABEL_MAPS(CHS_MAP_LABELS_CPU, CHS_KEEP_LABELS_CPU);

} // namespace chs
