// The stages of connected-components labeling that do not read the pixels: the runs path's boundary pass, then for
// both paths the root numbering, the final link, the statistics and the download. They are declared here and
// compiled once, in chsConnectedComponentsStages.cu, for every label and index type; the ten pixel types' translation
// units (chsConnectedComponentsInstantiate.cu.in) compile only the merges, which read the pixels, and call these.
// (Each pixel type's unit compiled its own copy of these kernels before: ten identical copies in the library.)
#ifndef chsConnectedComponentsStages_cuh
#define chsConnectedComponentsStages_cuh

#include "chs/ConnectedComponents.h"
#include "Common/chsCudaCommon.cuh"
#include "chsConnectedComponentsCommon.cuh"
#include "chsConnectedComponentsFinalLink.cuh"

#include <memory>

namespace chs
{
namespace cc
{

/** Device arrays of the per-label statistics (empty without them), cleared for the accumulation; with `countsOnly`
 * the voxel counts alone (ConnectedComponentParameters::onlyVoxelCounts). */
struct StatisticsBuffers
{
  bool                                     countsOnly;
  detail::DeviceBuffer<unsigned long long> voxels;
  detail::DeviceBuffer<unsigned>           minimum, maximum;
  detail::DeviceBuffer<unsigned long long> sum; // coordinate sums, 3 a label
  static uint64_t
  Bytes(uint64_t count, bool countsOnly = false)
  {
    return count * (countsOnly ? sizeof(unsigned long long) : 4 * sizeof(unsigned long long) + 6 * sizeof(unsigned));
  }
  StatisticsBuffers(uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker, bool onlyCounts = false)
    : countsOnly(onlyCounts)
    , voxels(count, stream, &tracker)
    , minimum(onlyCounts ? 0 : 3 * count, stream, &tracker)
    , maximum(onlyCounts ? 0 : 3 * count, stream, &tracker)
    , sum(onlyCounts ? 0 : 3 * count, stream, &tracker)
  {
    if (count == 0)
      return;
    CHS_CUDA_CHECK(cudaMemsetAsync(voxels.get(), 0, count * sizeof(unsigned long long), stream));
    if (countsOnly)
      return;
    CHS_CUDA_CHECK(cudaMemsetAsync(minimum.get(), 0xff, 3 * count * sizeof(unsigned), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(maximum.get(), 0, 3 * count * sizeof(unsigned), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(sum.get(), 0, 3 * count * sizeof(unsigned long long), stream));
  }
  StatisticsPointers
  Pointers() const
  {
    if (countsOnly)
      return StatisticsPointers{ voxels.get(), nullptr, nullptr, nullptr };
    return StatisticsPointers{ voxels.get(), minimum.get(), maximum.get(), sum.get() };
  }
  /** Queues the copies into `statistics` (complete after the next synchronisation of the stream). */
  void
  Download(ConnectedComponentStatistics & statistics, uint64_t count, cudaStream_t stream) const
  {
    statistics.voxelCount.resize(count);
    CHS_CUDA_CHECK(cudaMemcpyAsync(
      statistics.voxelCount.data(), voxels.get(), count * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
    if (countsOnly)
    {
      statistics.minimum.clear();
      statistics.maximum.clear();
      statistics.coordinateSum.clear();
      return;
    }
    statistics.minimum.resize(3 * count);
    statistics.maximum.resize(3 * count);
    statistics.coordinateSum.resize(3 * count);
    CHS_CUDA_CHECK(cudaMemcpyAsync(
      statistics.minimum.data(), minimum.get(), 3 * count * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(
      statistics.maximum.data(), maximum.get(), 3 * count * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics.coordinateSum.data(),
                                   sum.get(),
                                   3 * count * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToHost,
                                   stream));
  }
};

/** Thrown by the runs path's labelling when the labels do not fit above the node count (32-bit nodes from 2^31 on,
 * LabelBase); the caller runs again with 64-bit nodes. Only an image of more than about 2^31 objects does that. */
struct NodeLabelsDoNotFit
{
};

/** Labels narrower than the index type are written in place over the parents (one working buffer instead of two);
 * indices must then leave the top bit free for the tag. */
template <typename TLabel, typename I>
constexpr bool
LabelsInPlace(uint64_t n)
{
  return sizeof(TLabel) < sizeof(I) && (sizeof(I) == 8 || n <= (uint64_t(1) << 31));
}

/** What the merge of either path hands to the labelling: the run's size, its device arrays (owned by the caller) and
 * its bookkeeping. The kernel timer was started before the merge; the labelling stops it. */
template <typename I>
struct MergedRun
{
  const Grid &                         grid;
  Extent<I>                            extent;
  uint64_t                             chunks;
  I *                                  chunkCount;
  I *                                  chunkOffset;
  const ConnectedComponentParameters & parameters;
  ConnectedComponentStatistics *       statistics;
  const ExecutionContext &             context;
  RunInfo *                            info;
  detail::MemoryTracker &              tracker;
  detail::EventTimer &                 timer;
};

/** The voxel path (Run) after its merge: parents in `parent`; `labels` is the device buffer of sizeof(TLabel) a
 * voxel, absent (nullptr) when LabelsInPlace; `freeBytes` at `free` (the input's buffer) may take labels. Writes the
 * host labels and returns the object count. */
template <typename TLabel, typename I>
uint64_t
LabelVoxels(const MergedRun<I> & run,
            I *                  parent,
            TLabel *             labels,
            void *               free,
            uint64_t             freeBytes,
            TLabel *             hostLabels);

/** The runs path (RunNodes) after its merge: slots and masks of `words` tile rows; `labels` is the labels' device
 * buffer if it was allocated before the merge, else empty (it is then allocated here, after the input was freed);
 * `base` and `countFirst` as RunNodes sets them. */
template <typename TLabel, typename I>
uint64_t
LabelNodes(const MergedRun<I> &                       run,
           I *                                        slots,
           const unsigned *                           masks,
           unsigned                                   words,
           I                                          base,
           bool                                       countFirst,
           std::unique_ptr<detail::RawDeviceBuffer> & labels,
           TLabel *                                   hostLabels);

/** The runs path's boundary pass (BinaryBoundaryKernel), which reads the masks, not the pixels. */
template <bool Full, typename I, class TileT>
void
LaunchNodeBoundary(const unsigned *  masks,
                   I *               slots,
                   const Extent<I> & e,
                   I *               chunkRoots,
                   unsigned          words,
                   int               device,
                   cudaStream_t      stream);

} // namespace cc
} // namespace chs

#endif
