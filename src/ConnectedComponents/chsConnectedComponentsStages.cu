// Connected-components labeling: the stages that do not read the pixels (chsConnectedComponentsStages.cuh), compiled
// once for every label type and both index widths. chsConnectedComponents.cuh holds the merges and the drivers.
#include "chsConnectedComponentsStages.cuh"
#include "chsConnectedComponentsRuns.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <vector>

namespace chs
{
namespace cc
{
namespace
{

/** Exclusive scan of the chunks' root counts (CUB), with its temporary storage. */
template <typename I>
void
ScanChunkCounts(const I * counts, I * offsets, uint64_t chunks, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  size_t tempBytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, counts, offsets, chunks, stream));
  detail::DeviceBuffer<uint8_t> temp(tempBytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), tempBytes, counts, offsets, chunks, stream));
}

/** The number of objects, the last offset plus the last count, read back and checked against the label type
 * before anything reaches the caller's memory. (A copy into pageable memory returns only when it is done.) */
template <typename I>
unsigned long long
ReadObjectCount(const I * offsets, const I * counts, uint64_t chunks, uint64_t maximumLabel, cudaStream_t stream)
{
  I last[2] = { 0, 0 };
  CHS_CUDA_CHECK(cudaMemcpyAsync(last, offsets + chunks - 1, sizeof(I), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaMemcpyAsync(last + 1, counts + chunks - 1, sizeof(I), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned long long count = static_cast<unsigned long long>(last[0]) + last[1];
  if (count > maximumLabel)
    throw LabelOverflowError(count, maximumLabel);
  return count;
}

/** The end of a run: progress at 1, the run's figures into RunInfo; returns the object count. */
template <typename I>
uint64_t
Finished(const MergedRun<I> & run, uint64_t count)
{
  if (run.context.progress)
    run.context.progress(1.0f);
  if (run.info)
  {
    run.info->kernelMilliseconds  = run.timer.Milliseconds();
    run.info->peakDeviceBytes     = run.tracker.peak;
    run.info->reservedDeviceBytes = run.tracker.reserved;
  }
  return count;
}

} // namespace

template <bool Full, typename I, class TileT>
void
LaunchNodeBoundary(const unsigned *  masks,
                   I *               slots,
                   const Extent<I> & e,
                   I *               chunkRoots,
                   unsigned          words,
                   int               device,
                   cudaStream_t      stream)
{
  const I half = I(words) * kHalfRow;
  BinaryBoundaryKernel<Full, I, TileT>
    <<<detail::GridStrideBlocks(words, kBoundaryThreads, device), kBoundaryThreads, 0, stream>>>(
      masks, slots, half, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("BinaryBoundaryKernel");
}

template <typename TLabel, typename I>
uint64_t
LabelNodes(const MergedRun<I> &                       run,
           I *                                        slots,
           const unsigned *                           masks,
           unsigned                                   words,
           I                                          base,
           bool                                       countFirst,
           std::unique_ptr<detail::RawDeviceBuffer> & dLabels,
           TLabel *                                   labels)
{
  const Grid &                         grid       = run.grid;
  const ConnectedComponentParameters & parameters = run.parameters;
  const ExecutionContext &             context    = run.context;
  detail::MemoryTracker &              tracker    = run.tracker;
  const uint64_t                       n          = grid.NumberOfVoxels();
  const uint64_t                       chunks     = run.chunks;
  const cudaStream_t                   stream     = static_cast<cudaStream_t>(context.stream);
  const int                            device     = context.device;
  const I                              half       = I(words) * kHalfRow;
  const bool                           wantStats  = parameters.computeStatistics && run.statistics != nullptr;
  ScanChunkCounts(run.chunkCount, run.chunkOffset, chunks, stream, tracker);
  unsigned long long count = 0;
  if (countFirst)
  {
    count = ReadObjectCount(run.chunkOffset, run.chunkCount, chunks, parameters.maximumLabel, stream);
    if (count + 2 > static_cast<unsigned long long>(Sentinel<I>() - base)) // labels up to count + 1 below the sentinel
      throw NodeLabelsDoNotFit{};
  }
  if (!dLabels)
    dLabels = std::make_unique<detail::RawDeviceBuffer>(
      n * (countFirst ? TransferWidth<TLabel>(count, parameters.backgroundLabel) : sizeof(TLabel)), stream, &tracker);
  NodeRootLabelKernel<I><<<static_cast<unsigned>(chunks), kNodeRootLabelThreads, 0, stream>>>(
    slots, half, base, run.chunkOffset, words, parameters.backgroundLabel);
  CHS_CUDA_CHECK_LAUNCH("NodeRootLabelKernel");
  if (wantStats)
    detail::ReserveDeviceMemory(tracker, StatisticsBuffers::Bytes(count, parameters.onlyVoxelCounts), device);
  StatisticsBuffers stats(wantStats ? count : 0, stream, tracker, parameters.onlyVoxelCounts);
  const uint64_t segments = uint64_t(grid.size[1]) * grid.size[2] * ((grid.size[0] + 32 * kTileX - 1) / (32 * kTileX));
  const unsigned blocks   = detail::GridStrideBlocks(segments * 32, kFinalizeThreads, device); // a warp a segment
  const I *      lastOffset = run.chunkOffset + chunks - 1;
  const I *      lastCount  = run.chunkCount + chunks - 1;
  if (wantStats)
    NodeFinalizeKernel<I, TLabel, true><<<blocks, kFinalizeThreads, 0, stream>>>(slots,
                                                                                 half,
                                                                                 base,
                                                                                 masks,
                                                                                 dLabels->get(),
                                                                                 run.extent,
                                                                                 lastOffset,
                                                                                 lastCount,
                                                                                 parameters.backgroundLabel,
                                                                                 stats.Pointers());
  else
    NodeFinalizeKernel<I, TLabel, false><<<blocks, kFinalizeThreads, 0, stream>>>(slots,
                                                                                  half,
                                                                                  base,
                                                                                  masks,
                                                                                  dLabels->get(),
                                                                                  run.extent,
                                                                                  lastOffset,
                                                                                  lastCount,
                                                                                  parameters.backgroundLabel,
                                                                                  StatisticsPointers{});
  CHS_CUDA_CHECK_LAUNCH("NodeFinalizeKernel");
  run.timer.Stop();
  detail::PrewakeHostThreads(n * sizeof(TLabel), context); // for the download, while the kernels run
  if (!countFirst)
    count = ReadObjectCount(run.chunkOffset, run.chunkCount, chunks, parameters.maximumLabel, stream);
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (context.progress)
    context.progress(0.75f);

  if (wantStats)
    stats.Download(*run.statistics, count, stream);
  const unsigned width = TransferWidth<TLabel>(count, parameters.backgroundLabel);
  if (width < sizeof(TLabel))
    detail::CopyToHostWidened(labels, sizeof(TLabel), dLabels->get(), width, n, stream, context);
  else
    detail::CopyToHost(labels, dLabels->get(), n * sizeof(TLabel), stream, context);
  return Finished(run, count);
}

template <typename TLabel, typename I>
uint64_t
LabelVoxels(const MergedRun<I> & run, I * dParent, TLabel * dLabels, void * free, uint64_t freeBytes, TLabel * labels)
{
  const Grid &                         grid         = run.grid;
  const ConnectedComponentParameters & parameters   = run.parameters;
  const ExecutionContext &             context      = run.context;
  detail::MemoryTracker &              tracker      = run.tracker;
  const uint64_t                       n            = grid.NumberOfVoxels();
  const uint64_t                       chunks       = run.chunks;
  const Extent<I> &                    e            = run.extent;
  const cudaStream_t                   stream       = static_cast<cudaStream_t>(context.stream);
  const int                            device       = context.device;
  constexpr bool                       narrowLabels = sizeof(TLabel) < sizeof(I);
  const bool                           inPlace      = LabelsInPlace<TLabel, I>(n);
  ScanChunkCounts(run.chunkCount, run.chunkOffset, chunks, stream, tracker);
  if (chunks > 0x7fffffffull)
    throw std::invalid_argument("chs: image too large for the root numbering grid");
  // Statistics need the count to size their arrays, so it is read back at once; without them the labels are
  // computed in the device buffers first and the count is read with them, which saves the GPU a wait for a host
  // round trip.
  unsigned long long count     = 0;
  const auto         readCount = [&]
  { count = ReadObjectCount(run.chunkOffset, run.chunkCount, chunks, parameters.maximumLabel, stream); };
  const bool wantStats = parameters.computeStatistics && run.statistics != nullptr;
  if (wantStats || inPlace)
    readCount();
  // In place without statistics, the final link writes the labels in their transfer width into ranges of free
  // memory (PlanLabelRanges); with statistics, or on a tiny image, it resolves over the parents and packs.
  unsigned                width = TransferWidth<TLabel>(count, parameters.backgroundLabel); // once count is read
  std::vector<LabelRange> ranges;
  if (inPlace && !wantStats)
    ranges = PlanLabelRanges<I>(dParent, free, freeBytes, n, width);
  // Roots take tagged labels over their parents (the top bit of an index must be free) in place and without
  // statistics; then the final link writes the labels in their transfer width (FinalizeNarrowKernel).
  const bool tagged = inPlace || (!wantStats && (sizeof(I) == 8 || n <= (uint64_t(1) << 31)));
  if (tagged)
    RootLabelKernel<I, TLabel, true><<<static_cast<unsigned>(chunks), kRootLabelThreads, 0, stream>>>(
      dParent, run.chunkOffset, nullptr, n, parameters.backgroundLabel);
  else
    RootLabelKernel<I, TLabel, false><<<static_cast<unsigned>(chunks), kRootLabelThreads, 0, stream>>>(
      dParent, run.chunkOffset, dLabels, n, parameters.backgroundLabel);
  CHS_CUDA_CHECK_LAUNCH("RootLabelKernel");

  if (wantStats)
    detail::ReserveDeviceMemory(tracker, StatisticsBuffers::Bytes(count, parameters.onlyVoxelCounts), device);
  StatisticsBuffers        statsBuffers(wantStats ? count : 0, stream, tracker, parameters.onlyVoxelCounts);
  const StatisticsPointers sp       = wantStats ? statsBuffers.Pointers() : StatisticsPointers{};
  const unsigned           blocks   = detail::GridStrideBlocks(n, kFinalizeThreads, device);
  const auto               finalize = [&](auto stats)
  {
    constexpr bool S = decltype(stats)::value;
    if constexpr (narrowLabels)
      if (inPlace)
      {
        if (!ranges.empty())
          LaunchLabelRanges<I, TLabel>(ranges, dParent, width, parameters.backgroundLabel, blocks, stream);
        else
          ResolveInPlaceKernel<I, TLabel, S>
            <<<blocks, kFinalizeThreads, 0, stream>>>(dParent, n, e.nx, e.ny, parameters.backgroundLabel, sp);
        return;
      }
    if constexpr (S)
      FinalizeKernel<I, TLabel, S>
        <<<blocks, kFinalizeThreads, 0, stream>>>(dParent, dLabels, n, e.nx, e.ny, parameters.backgroundLabel, sp);
    else if (tagged)
      FinalizeNarrowKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(
        dParent, dLabels, n, run.chunkOffset + chunks - 1, run.chunkCount + chunks - 1, parameters.backgroundLabel);
    else
      FinalizeVectorKernel<I, TLabel>
        <<<blocks, kFinalizeThreads, 0, stream>>>(dParent, dLabels, n, parameters.backgroundLabel);
  };
  if (wantStats)
    finalize(std::true_type{});
  else
    finalize(std::false_type{});
  CHS_CUDA_CHECK_LAUNCH("FinalizeKernel");
  TLabel * dOut = dLabels;
  if constexpr (narrowLabels)
    if (inPlace && ranges.empty())
    {
      PackLabelsInPlace<I, TLabel>(dParent, n, static_cast<TLabel>(parameters.backgroundLabel), device, stream);
      dOut = reinterpret_cast<TLabel *>(dParent);
    }
  run.timer.Stop();
  detail::PrewakeHostThreads(n * sizeof(TLabel), context); // for the download, while the kernels run
  if (!tagged)
  {
    NarrowLabelsKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(
      dLabels, dParent, n, run.chunkOffset + chunks - 1, run.chunkCount + chunks - 1, parameters.backgroundLabel);
    CHS_CUDA_CHECK_LAUNCH("NarrowLabelsKernel");
  }
  if (!wantStats && !inPlace)
  {
    readCount();
    width = TransferWidth<TLabel>(count, parameters.backgroundLabel);
  }
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (context.progress)
    context.progress(0.75f);

  if (wantStats)
    statsBuffers.Download(*run.statistics, count, stream);
  // Narrow labels are in ranges (in place), in the labels buffer (FinalizeNarrowKernel) or over the parents
  // (NarrowLabelsKernel); packed ones (in place, with statistics) have the labels' own width.
  const void * narrow = tagged ? static_cast<const void *>(dLabels) : static_cast<const void *>(dParent);
  if (!ranges.empty())
  {
    for (const LabelRange & r : ranges)
      if (width < sizeof(TLabel))
        detail::CopyToHostWidened(labels + r.begin, sizeof(TLabel), r.device, width, r.end - r.begin, stream, context);
      else
        detail::CopyToHost(labels + r.begin, r.device, (r.end - r.begin) * sizeof(TLabel), stream, context);
  }
  else if (width < sizeof(TLabel) && !inPlace)
    detail::CopyToHostWidened(labels, sizeof(TLabel), narrow, width, n, stream, context);
  else
    detail::CopyToHost(labels, dOut, n * sizeof(TLabel), stream, context);
  return Finished(run, count);
}

#define CHS_CC_INSTANTIATE_STAGES(TLabel, I)                                                                           \
  template uint64_t LabelVoxels<TLabel, I>(const MergedRun<I> &, I *, TLabel *, void *, uint64_t, TLabel *);           \
  template uint64_t LabelNodes<TLabel, I>(const MergedRun<I> &,                                                        \
                                          I *,                                                                         \
                                          const unsigned *,                                                            \
                                          unsigned,                                                                    \
                                          I,                                                                           \
                                          bool,                                                                        \
                                          std::unique_ptr<detail::RawDeviceBuffer> &,                                  \
                                          TLabel *)
#define CHS_CC_INSTANTIATE_LABELS(I)                                                                                   \
  CHS_CC_INSTANTIATE_STAGES(uint8_t, I);                                                                               \
  CHS_CC_INSTANTIATE_STAGES(uint16_t, I);                                                                              \
  CHS_CC_INSTANTIATE_STAGES(uint32_t, I);                                                                              \
  CHS_CC_INSTANTIATE_STAGES(uint64_t, I);                                                                              \
  template void LaunchNodeBoundary<false, I, BinaryTile2D>(                                                            \
    const unsigned *, I *, const Extent<I> &, I *, unsigned, int, cudaStream_t);                                       \
  template void LaunchNodeBoundary<true, I, BinaryTile2D>(                                                             \
    const unsigned *, I *, const Extent<I> &, I *, unsigned, int, cudaStream_t);                                       \
  template void LaunchNodeBoundary<false, I, BinaryTile3D>(                                                            \
    const unsigned *, I *, const Extent<I> &, I *, unsigned, int, cudaStream_t);                                       \
  template void LaunchNodeBoundary<true, I, BinaryTile3D>(                                                             \
    const unsigned *, I *, const Extent<I> &, I *, unsigned, int, cudaStream_t)
CHS_CC_INSTANTIATE_LABELS(uint32_t);
CHS_CC_INSTANTIATE_LABELS(unsigned long long);

} // namespace cc
} // namespace chs
