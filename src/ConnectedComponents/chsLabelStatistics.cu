// Per-label statistics of a label image (include/chs/ConnectedComponents.h, ComputeLabelStatistics), the CUDA
// backend: one pass over the voxels in raster order that adds each to its label's count, bounding box and coordinate
// sums with the labelling's accumulation (AccumulateStatistics: one atomic a warp's group of equal labels). The
// counts and sums are integers and the extremes order-free, so the result is the CPU reference's exactly.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "chsConnectedComponentsStages.cuh"

namespace chs
{
namespace cc
{
namespace
{

template <typename TLabel>
__global__ void
__launch_bounds__(kFinalizeThreads) LabelStatisticsKernel(const TLabel *       labels,
                                                          uint64_t             n,
                                                          unsigned long long   nx,
                                                          unsigned long long   ny,
                                                          unsigned long long   maximumLabel,
                                                          StatisticsPointers   stats,
                                                          unsigned long long * tooLarge)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  // The loop bound is uniform per block, so whole warps take part in AccumulateStatistics' warp primitives.
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x; base < n; base += stride)
  {
    const uint64_t i     = base + threadIdx.x;
    const bool     valid = i < n;
    const TLabel   label = valid ? labels[i] : TLabel(0);
    const bool     fits  = static_cast<unsigned long long>(label) <= maximumLabel;
    if (valid && !fits)
      atomicMax(tooLarge, static_cast<unsigned long long>(label));
    AccumulateStatistics<unsigned long long, TLabel>(label, valid && fits, i, nx, ny, -1, stats);
  }
}

} // namespace
} // namespace cc

template <typename TLabel>
void
ComputeLabelStatisticsCUDA(const TLabel *                 labels,
                           const Grid &                   grid,
                           uint64_t                       maximumLabel,
                           ConnectedComponentStatistics & statistics,
                           const ExecutionContext &       context,
                           RunInfo *                      info)
{
  using detail::DeviceBuffer;
  CheckLabelStatisticsArguments(grid, maximumLabel);
  const uint64_t        n      = grid.NumberOfVoxels();
  const uint64_t        count  = maximumLabel + 1;
  const cudaStream_t    stream = static_cast<cudaStream_t>(context.stream);
  detail::DeviceScope   scope(context.device);
  detail::MemoryTracker tracker;
  tracker.what = detail::DescribeRun("label statistics", grid);
  detail::ReserveDeviceMemory(
    tracker, n * sizeof(TLabel) + cc::StatisticsBuffers::Bytes(count) + sizeof(unsigned long long), context.device);
  DeviceBuffer<TLabel>             dLabels(n, stream, &tracker);
  DeviceBuffer<unsigned long long> dTooLarge(1, stream, &tracker);
  cc::StatisticsBuffers            stats(count, stream, tracker);
  detail::CopyToDevice(dLabels.get(), labels, n * sizeof(TLabel), stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dTooLarge.get(), 0, sizeof(unsigned long long), stream));
  detail::EventTimer timer(stream);
  timer.Start();
  const unsigned blocks = detail::GridStrideBlocks(n, cc::kFinalizeThreads, context.device);
  cc::LabelStatisticsKernel<TLabel><<<blocks, cc::kFinalizeThreads, 0, stream>>>(
    dLabels.get(), n, grid.size[0], grid.size[1], maximumLabel, stats.Pointers(), dTooLarge.get());
  CHS_CUDA_CHECK_LAUNCH("LabelStatisticsKernel");
  timer.Stop();
  unsigned long long tooLarge = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&tooLarge, dTooLarge.get(), sizeof(tooLarge), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (tooLarge != 0)
    throw std::invalid_argument("chs: label " + std::to_string(tooLarge) + " exceeds the maximum label " +
                                std::to_string(maximumLabel));
  ConnectedComponentStatistics s;
  stats.Download(s, count, stream);
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  statistics = std::move(s);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
}

#define CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(TLabel)                                                                  \
  template CudaHierarchicalSegmentation_EXPORT void ComputeLabelStatisticsCUDA<TLabel>(                                \
    const TLabel *, const Grid &, uint64_t, ConnectedComponentStatistics &, const ExecutionContext &, RunInfo *)
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint8_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint16_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint32_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint64_t);

} // namespace chs
