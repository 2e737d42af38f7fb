// Sequential reference for connected-components labeling: the definition the CUDA backend must reproduce.
// A raster-order union-find whose root is always the smallest index of its set, so that numbering the roots in
// raster order numbers the objects by their first voxel, as ITK's ConnectedComponentImageFilter does.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "Common/chsProgress.h"
#include "chsConnectedComponentsRules.h"

#include <string>
#include <type_traits>

namespace chs
{

LabelOverflowError::LabelOverflowError(uint64_t count, uint64_t maximum)
  : std::runtime_error("the image has " + std::to_string(count) +
                       " objects, more than the largest value of the output label type (" + std::to_string(maximum) +
                       "); choose a wider label type")
  , objectCount(count)
{
}

namespace
{

template <typename I>
I
Find(std::vector<I> & parent, I a)
{
  while (parent[a] != a)
  {
    parent[a] = parent[parent[a]]; // path halving
    a         = parent[a];
  }
  return a;
}

template <typename TPixel, typename TLabel, typename I>
uint64_t
Label(const TPixel *                       input,
      const uint8_t *                      mask,
      TLabel *                             labels,
      const Grid &                         grid,
      const ConnectedComponentParameters & parameters,
      ConnectedComponentStatistics *       statistics)
{
  const uint64_t nx = grid.size[0], ny = grid.size[1], nz = grid.size[2];
  const uint64_t n       = grid.NumberOfVoxels();
  const bool     binary  = parameters.mode == ConnectedComponentMode::Binary;
  const bool     graph   = parameters.mode == ConnectedComponentMode::Graph;
  const bool     nonZero = !graph && parameters.mode != ConnectedComponentMode::FlatZones;
  const bool     exact   = parameters.delta == 0;
  const auto     delta   = cc::DeltaOf<TPixel>(parameters.delta);
  const I        none    = ~I(0);
  auto           active  = [&](uint64_t i)
  {
    const bool inside = mask == nullptr || mask[i] != 0;
    return nonZero ? inside && input[i] != TPixel(0) : inside;
  };
  // Active voxels i and j (j the o-th backward neighbour of i) are connected when both are foreground (binary), when
  // their values are equal (within delta), or (graph) when bit o of i's permissions is set.
  auto connected = [&](uint64_t i, uint64_t j, int o)
  {
    if (graph)
      return cc::GraphJoins(input[i], o);
    return binary || (exact ? input[i] == input[j] : cc::WithinDelta(input[i], input[j], delta));
  };
  const cc::Neighbourhood h = cc::BackwardNeighbourhood(grid, parameters);

  // Every parent is set first: with periodic boundaries a backward offset can wrap to a later voxel.
  std::vector<I>    parent(n);
  detail::CpuPhases progress(3);
  progress.Start(0, n);
  for (uint64_t i = 0; i < n; ++i)
  {
    progress.At(i);
    parent[i] = active(i) ? static_cast<I>(i) : none;
  }
  uint64_t i = 0;
  progress.Start(1, n);
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < ny; ++y)
      for (uint64_t x = 0; x < nx; ++x, ++i)
      {
        progress.At(i);
        if (parent[i] == none)
          continue;
        for (int o = 0; o < h.count; ++o)
        {
          const int64_t qx = cc::NeighbourCoordinate(int64_t(x), h.dx[o], int64_t(nx), parameters.periodic);
          const int64_t qy = cc::NeighbourCoordinate(int64_t(y), h.dy[o], int64_t(ny), parameters.periodic);
          const int64_t qz = cc::NeighbourCoordinate(int64_t(z), h.dz[o], int64_t(nz), parameters.periodic);
          if (qx < 0 || qy < 0 || qz < 0)
            continue;
          const uint64_t j = (uint64_t(qz) * ny + uint64_t(qy)) * nx + uint64_t(qx);
          if (j == i || parent[j] == none || !connected(i, j, o))
            continue;
          I a = Find<I>(parent, static_cast<I>(i));
          I b = Find<I>(parent, static_cast<I>(j));
          if (a != b)
            parent[std::max(a, b)] = std::min(a, b);
        }
      }

  uint64_t count = 0;
  for (uint64_t k = 0; k < n; ++k)
    count += parent[k] == k;
  if (count > parameters.maximumLabel)
    throw LabelOverflowError(count, parameters.maximumLabel);

  const bool wantStats = parameters.computeStatistics && statistics != nullptr;
  const bool boxes     = wantStats && !parameters.onlyVoxelCounts;
  if (wantStats)
  {
    const uint64_t perAxis = boxes ? 3 * count : 0;
    statistics->voxelCount.assign(count, 0);
    statistics->minimum.assign(perAxis, ~uint32_t(0));
    statistics->maximum.assign(perAxis, 0);
    statistics->coordinateSum.assign(perAxis, 0);
  }
  // Roots come before the rest of their object in raster order, so their label is known when a member needs it.
  uint64_t rank = 0;
  i             = 0;
  progress.Start(2, n);
  for (uint64_t z = 0; z < nz; ++z)
    for (uint64_t y = 0; y < ny; ++y)
      for (uint64_t x = 0; x < nx; ++x, ++i)
      {
        progress.At(i);
        if (parent[i] == none)
        {
          labels[i] = static_cast<TLabel>(parameters.backgroundLabel);
          continue;
        }
        const I  r = Find<I>(parent, static_cast<I>(i));
        uint64_t k;
        if (r == i)
        {
          k         = rank++;
          labels[i] = static_cast<TLabel>(ObjectLabel(k, parameters.backgroundLabel));
        }
        else
        {
          labels[i]        = labels[r];
          const uint64_t l = static_cast<uint64_t>(labels[r]);
          k                = (parameters.backgroundLabel >= 0 && l > uint64_t(parameters.backgroundLabel)) ? l - 1 : l;
        }
        if (wantStats)
          ++statistics->voxelCount[k];
        if (boxes)
        {
          const uint32_t c[3] = { uint32_t(x), uint32_t(y), uint32_t(z) };
          for (int d = 0; d < 3; ++d)
          {
            statistics->minimum[3 * k + d] = std::min(statistics->minimum[3 * k + d], c[d]);
            statistics->maximum[3 * k + d] = std::max(statistics->maximum[3 * k + d], c[d]);
            statistics->coordinateSum[3 * k + d] += c[d];
          }
        }
      }
  progress.Done();
  return count;
}

} // namespace

template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponentsCPU(const TPixel *                       input,
                            const uint8_t *                      mask,
                            TLabel *                             labels,
                            const Grid &                         grid,
                            const ConnectedComponentParameters & parameters,
                            ConnectedComponentStatistics *       statistics)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the image has no voxels");
  cc::CheckModeAndPixel<TPixel>(parameters);
  if (n < 0xffffffffull && !parameters.forceWideIndex)
    return Label<TPixel, TLabel, uint32_t>(input, mask, labels, grid, parameters, statistics);
  return Label<TPixel, TLabel, uint64_t>(input, mask, labels, grid, parameters, statistics);
}

template <typename TLabel>
uint64_t
ComputeLabelStatisticsCPU(const TLabel * labels, const Grid & grid, ConnectedComponentStatistics & statistics)
{
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the label image has no voxels");
  uint64_t largest = 0;
  for (uint64_t i = 0; i < n; ++i)
    largest = std::max<uint64_t>(largest, static_cast<uint64_t>(labels[i]));
  CheckLargestLabel(grid, largest);
  const uint64_t               count = largest + 1;
  ConnectedComponentStatistics s;
  s.voxelCount.assign(count, 0);
  s.minimum.assign(3 * count, ~uint32_t(0));
  s.maximum.assign(3 * count, 0);
  s.coordinateSum.assign(3 * count, 0);
  uint64_t i = 0;
  for (uint64_t z = 0; z < grid.size[2]; ++z)
    for (uint64_t y = 0; y < grid.size[1]; ++y)
      for (uint64_t x = 0; x < grid.size[0]; ++x, ++i)
      {
        const uint64_t k = static_cast<uint64_t>(labels[i]);
        ++s.voxelCount[k];
        const uint32_t c[3] = { uint32_t(x), uint32_t(y), uint32_t(z) };
        for (int d = 0; d < 3; ++d)
        {
          s.minimum[3 * k + d] = std::min(s.minimum[3 * k + d], c[d]);
          s.maximum[3 * k + d] = std::max(s.maximum[3 * k + d], c[d]);
          s.coordinateSum[3 * k + d] += c[d];
        }
      }
  statistics = std::move(s);
  return largest;
}

#define CHS_INSTANTIATE_LABEL_STATISTICS(TLabel)                                                                       \
  template CudaHierarchicalSegmentation_EXPORT uint64_t ComputeLabelStatisticsCPU<TLabel>(                             \
    const TLabel *, const Grid &, ConnectedComponentStatistics &);                                                     \
  template CudaHierarchicalSegmentation_EXPORT uint64_t ComputeLabelStatistics<TLabel>(                                \
    const TLabel *, const Grid &, ConnectedComponentStatistics &, const ExecutionContext &, RunInfo *)
CHS_INSTANTIATE_LABEL_STATISTICS(uint8_t);
CHS_INSTANTIATE_LABEL_STATISTICS(uint16_t);
CHS_INSTANTIATE_LABEL_STATISTICS(uint32_t);
CHS_INSTANTIATE_LABEL_STATISTICS(uint64_t);

#define CHS_INSTANTIATE_CC_CPU(TPixel)                                                                                 \
  template CudaHierarchicalSegmentation_EXPORT uint64_t LabelConnectedComponentsCPU<TPixel, uint8_t>(                  \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    uint8_t *,                                                                                                         \
    const Grid &,                                                                                                      \
    const ConnectedComponentParameters &,                                                                              \
    ConnectedComponentStatistics *);                                                                                   \
  template CudaHierarchicalSegmentation_EXPORT uint64_t LabelConnectedComponentsCPU<TPixel, uint16_t>(                 \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    uint16_t *,                                                                                                        \
    const Grid &,                                                                                                      \
    const ConnectedComponentParameters &,                                                                              \
    ConnectedComponentStatistics *);                                                                                   \
  template CudaHierarchicalSegmentation_EXPORT uint64_t LabelConnectedComponentsCPU<TPixel, uint32_t>(                 \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    uint32_t *,                                                                                                        \
    const Grid &,                                                                                                      \
    const ConnectedComponentParameters &,                                                                              \
    ConnectedComponentStatistics *);                                                                                   \
  template CudaHierarchicalSegmentation_EXPORT uint64_t LabelConnectedComponentsCPU<TPixel, uint64_t>(                 \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    uint64_t *,                                                                                                        \
    const Grid &,                                                                                                      \
    const ConnectedComponentParameters &,                                                                              \
    ConnectedComponentStatistics *);                                                                                   \
  CHS_INSTANTIATE_ENTRY_LABEL_CONNECTED_COMPONENTS(TPixel, uint8_t);                                                   \
  CHS_INSTANTIATE_ENTRY_LABEL_CONNECTED_COMPONENTS(TPixel, uint16_t);                                                  \
  CHS_INSTANTIATE_ENTRY_LABEL_CONNECTED_COMPONENTS(TPixel, uint32_t);                                                  \
  CHS_INSTANTIATE_ENTRY_LABEL_CONNECTED_COMPONENTS(TPixel, uint64_t)

CHS_INSTANTIATE_CC_CPU(uint8_t);
CHS_INSTANTIATE_CC_CPU(int8_t);
CHS_INSTANTIATE_CC_CPU(uint16_t);
CHS_INSTANTIATE_CC_CPU(int16_t);
CHS_INSTANTIATE_CC_CPU(uint32_t);
CHS_INSTANTIATE_CC_CPU(int32_t);
CHS_INSTANTIATE_CC_CPU(uint64_t);
CHS_INSTANTIATE_CC_CPU(int64_t);
CHS_INSTANTIATE_CC_CPU(float);
CHS_INSTANTIATE_CC_CPU(double);

} // namespace chs
