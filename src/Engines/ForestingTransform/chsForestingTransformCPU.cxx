// The sequential reference of the Image Foresting Transform (include/chs/ForestingTransform.h): Dijkstra's
// algorithm on the keys (V, D) with a binary heap. Every offer is larger than the key that makes it, so a pixel's
// key is final when it leaves the heap, and so are the keys of all its candidate predecessors (they are smaller):
// the predecessor and the label are chosen right then.
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Common/chsProgress.h"
#include "chsForestingTransformRule.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <queue>
#include <utility>
#include <vector>

namespace chs
{
namespace
{

/** Offsets of the neighbours of the connectivity, as (dx, dy, dz). */
std::vector<int>
NeighbourOffsets(const Grid & grid, bool full)
{
  std::vector<int> offsets;
  const int        zr = grid.dimension == 3 ? 1 : 0;
  for (int dz = -zr; dz <= zr; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int m = (dx != 0) + (dy != 0) + (dz != 0);
        if (m == 0 || (!full && m > 1))
          continue;
        offsets.insert(offsets.end(), { dx, dy, dz });
      }
  return offsets;
}

/** The transform with voxel indices I in the heap and the parents (uint32_t below 2^32 - 1 voxels, else 64-bit). */
template <ArcWeightFunction F, typename I, typename TWeight, typename TLabel>
void
Transform(const TWeight *                         weights,
          const TLabel *                          seeds,
          const uint8_t *                         mask,
          bool                                    weightCost,
          const Grid &                            grid,
          const ForestingTransformParameters &    parameters,
          TLabel *                                labels,
          typename ForestingCost<TWeight>::Type * cost,
          int64_t *                               predecessor)
{
  const uint64_t         n  = grid.NumberOfVoxels();
  const int64_t          nx = grid.size[0], ny = grid.size[1], nz = grid.size[2];
  const std::vector<int> offsets = NeighbourOffsets(grid, parameters.fullyConnected);

  std::vector<uint64_t> key(n, ift::kUnreached);
  std::vector<I>        parent(n);
  std::vector<uint8_t>  done(n, 0);
  using Entry = std::pair<uint64_t, I>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  // Progress: the seeds, the voxels taken from the heap (each once), the outputs.
  detail::CpuPhases progress(3);
  progress.Start(0, n);
  const auto in = [&](uint64_t i) { return !mask || mask[i] != 0; };
  for (uint64_t i = 0; i < n; ++i, progress.At(i))
    if (seeds[i] != 0 && in(i))
    {
      key[i] = weightCost ? uint64_t(EncodeOrdered(weights[i])) << 32 : 0;
      heap.emplace(key[i], static_cast<I>(i));
    }

  progress.Start(1, n);
  uint64_t taken = 0;
  while (!heap.empty())
  {
    const auto [k, q] = heap.top();
    heap.pop();
    if (done[q] || k != key[q])
      continue; // a stale entry: q was offered a smaller key after this one was queued
    if (ift::HopCountFull(k))
      throw ift::HopCountError();
    done[q] = 1;
    progress.At(++taken);
    const int64_t x = q % nx, y = (q / nx) % ny, z = q / (nx * ny);
    // The predecessor: the neighbour whose offer equals q's key, with the smallest (key, index).
    uint64_t   bestKey = ift::kUnreached;
    I          best    = q;
    const bool seed    = seeds[q] != 0;
    for (size_t o = 0; o < offsets.size(); o += 3)
    {
      const int64_t px = x + offsets[o], py = y + offsets[o + 1], pz = z + offsets[o + 2];
      if (px < 0 || py < 0 || pz < 0 || px >= nx || py >= ny || pz >= nz)
        continue;
      const I p = static_cast<I>((pz * ny + py) * nx + px);
      if (!seed && done[p] && ift::Offer(key[p], ift::ArcWeight<F>(weights[p], weights[q])) == k &&
          (key[p] < bestKey || (key[p] == bestKey && p < best)))
      {
        bestKey = key[p];
        best    = p;
      }
      if (!done[p] && in(p))
      {
        const uint64_t offer = ift::Offer(k, ift::ArcWeight<F>(weights[q], weights[p]));
        if (offer < key[p])
        {
          key[p] = offer;
          heap.emplace(offer, p);
        }
      }
    }
    parent[q] = best;
    labels[q] = seed ? seeds[q] : labels[best];
  }

  using Cost = typename ForestingCost<TWeight>::Type;
  progress.Start(2, n);
  for (uint64_t i = 0; i < n; ++i)
  {
    progress.At(i);
    if (cost)
      cost[i] = DecodeOrdered<Cost>(static_cast<uint32_t>(key[i] >> 32));
    if (predecessor)
      predecessor[i] = seeds[i] != 0 ? -1 : static_cast<int64_t>(parent[i]);
  }
  progress.Done();
}

} // namespace

template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransformCPU(const TWeight *                         weights,
                           const TLabel *                          seeds,
                           const Grid &                            grid,
                           const ForestingTransformParameters &    parameters,
                           TLabel *                                labels,
                           typename ForestingCost<TWeight>::Type * cost,
                           int64_t *                               predecessor)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  const uint64_t           n = ift::CheckedVoxelCount(grid);
  ForestingTransformResult result;
  for (uint64_t i = 0; i < n; ++i)
  {
    if (!ift::ValidWeight(weights[i]))
      throw ift::InvalidWeightError(grid, i);
    result.seedCount += seeds[i] != 0;
  }
  if (result.seedCount == 0)
    throw ift::NoSeedError();
  const auto run = [&](auto index)
  {
    using I = decltype(index);
    switch (parameters.arcWeight)
    {
      case ArcWeightFunction::Target:
        Transform<ArcWeightFunction::Target, I>(
          weights, seeds, nullptr, false, grid, parameters, labels, cost, predecessor);
        break;
      case ArcWeightFunction::Maximum:
        Transform<ArcWeightFunction::Maximum, I>(
          weights, seeds, nullptr, false, grid, parameters, labels, cost, predecessor);
        break;
      case ArcWeightFunction::AbsoluteDifference:
        Transform<ArcWeightFunction::AbsoluteDifference, I>(
          weights, seeds, nullptr, false, grid, parameters, labels, cost, predecessor);
        break;
    }
  };
  if (ift::WideIndex(grid, parameters))
    run(uint64_t(0));
  else
    run(uint32_t(0));
  return result;
}

namespace ift
{
template <typename TWeight, typename TLabel>
void
MaskedTransformCPU(const TWeight *                      weights,
                   const TLabel *                       seeds,
                   const uint8_t *                      mask,
                   const Grid &                         grid,
                   const ForestingTransformParameters & parameters,
                   TLabel *                             labels)
{
  static_assert(std::is_unsigned<TWeight>::value, "the masked transform runs on order-preserving codes");
  // Pixels left out of the graph, and pixels that no seed reaches, keep label 0.
  std::fill(labels, labels + grid.NumberOfVoxels(), TLabel(0));
  const auto run = [&](auto index)
  {
    using I = decltype(index);
    if (parameters.arcWeight == ArcWeightFunction::Target)
      Transform<ArcWeightFunction::Target, I>(weights, seeds, mask, true, grid, parameters, labels, nullptr, nullptr);
    else if (parameters.arcWeight == ArcWeightFunction::Maximum)
      Transform<ArcWeightFunction::Maximum, I>(weights, seeds, mask, true, grid, parameters, labels, nullptr, nullptr);
    else
      throw std::logic_error("chs: the masked Image Foresting Transform takes the Target and Maximum arc weights");
  };
  if (WideIndex(grid, parameters))
    run(uint64_t(0));
  else
    run(uint32_t(0));
}
#define CHS_INSTANTIATE_MASKED_IFT_CPU(TWeight)                                                                        \
  template void MaskedTransformCPU(                                                                                    \
    const TWeight *, const uint8_t *, const uint8_t *, const Grid &, const ForestingTransformParameters &, uint8_t *); \
  template void MaskedTransformCPU(const TWeight *,                                                                    \
                                   const uint16_t *,                                                                   \
                                   const uint8_t *,                                                                    \
                                   const Grid &,                                                                       \
                                   const ForestingTransformParameters &,                                               \
                                   uint16_t *);                                                                        \
  template void MaskedTransformCPU(const TWeight *,                                                                    \
                                   const uint32_t *,                                                                   \
                                   const uint8_t *,                                                                    \
                                   const Grid &,                                                                       \
                                   const ForestingTransformParameters &,                                               \
                                   uint32_t *);                                                                        \
  template void MaskedTransformCPU(const TWeight *,                                                                    \
                                   const uint64_t *,                                                                   \
                                   const uint8_t *,                                                                    \
                                   const Grid &,                                                                       \
                                   const ForestingTransformParameters &,                                               \
                                   uint64_t *)
CHS_INSTANTIATE_MASKED_IFT_CPU(uint8_t);
CHS_INSTANTIATE_MASKED_IFT_CPU(uint16_t);
CHS_INSTANTIATE_MASKED_IFT_CPU(uint32_t);
} // namespace ift

#define CHS_INSTANTIATE_IFT_CPU(TWeight, TLabel)                                                                       \
  template CudaHierarchicalSegmentation_EXPORT ForestingTransformResult ImageForestingTransformCPU<TWeight, TLabel>(   \
    const TWeight *,                                                                                                   \
    const TLabel *,                                                                                                    \
    const Grid &,                                                                                                      \
    const ForestingTransformParameters &,                                                                              \
    TLabel *,                                                                                                          \
    typename ForestingCost<TWeight>::Type *,                                                                           \
    int64_t *);                                                                                                        \
  CHS_INSTANTIATE_ENTRY_IMAGE_FORESTING_TRANSFORM(TWeight, TLabel)
#define CHS_INSTANTIATE_IFT_CPU_LABELS(TWeight)                                                                        \
  CHS_INSTANTIATE_IFT_CPU(TWeight, uint8_t);                                                                           \
  CHS_INSTANTIATE_IFT_CPU(TWeight, uint16_t);                                                                          \
  CHS_INSTANTIATE_IFT_CPU(TWeight, uint32_t);                                                                          \
  CHS_INSTANTIATE_IFT_CPU(TWeight, uint64_t)

CHS_INSTANTIATE_IFT_CPU_LABELS(uint8_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(int8_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(uint16_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(int16_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(uint32_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(int32_t);
CHS_INSTANTIATE_IFT_CPU_LABELS(float);

} // namespace chs
