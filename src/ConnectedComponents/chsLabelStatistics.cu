// Per-label statistics of a label image (include/chs/ConnectedComponents.h, ComputeLabelStatistics), the CUDA
// backend: one pass over the voxels in raster order that adds each to its label's count, bounding box and coordinate
// sums with the labelling's accumulation (AccumulateStatistics: one atomic a warp's group of equal labels). The
// counts and sums are integers and the extremes order-free, so the result is the CPU reference's exactly.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "chsConnectedComponentsStages.cuh"

#include <cub/device/device_reduce.cuh>

namespace chs
{
namespace cc
{
namespace
{

template <typename TLabel>
__global__ void
__launch_bounds__(kFinalizeThreads) LabelStatisticsKernel(const TLabel *     labels,
                                                          uint64_t           n,
                                                          unsigned long long nx,
                                                          unsigned long long ny,
                                                          StatisticsPointers stats)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  // The loop bound is uniform per block, so whole warps take part in AccumulateStatistics' warp primitives.
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x; base < n; base += stride)
  {
    const uint64_t i     = base + threadIdx.x;
    const bool     valid = i < n;
    const TLabel   label = valid ? labels[i] : TLabel(0);
    AccumulateStatistics<unsigned long long, TLabel>(label, valid, i, nx, ny, -1, stats);
  }
}

} // namespace
} // namespace cc

template <typename TLabel>
uint64_t
ComputeLabelStatisticsCUDA(const TLabel *                 labels,
                           const Grid &                   grid,
                           ConnectedComponentStatistics & statistics,
                           const ExecutionContext &       context,
                           RunInfo *                      info)
{
  using detail::DeviceBuffer;
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the label image has no voxels");
  const cudaStream_t    stream = static_cast<cudaStream_t>(context.stream);
  detail::DeviceScope   scope(context.device);
  detail::MemoryTracker tracker;
  tracker.what = detail::DescribeRun("label statistics", grid);
  // The labels and the reduction first; the tables, sized by the largest label, after it.
  size_t reduceBytes = 0;
  CHS_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, reduceBytes, labels, static_cast<TLabel *>(nullptr), n, stream));
  detail::ReserveDeviceMemory(tracker, n * sizeof(TLabel) + reduceBytes + sizeof(TLabel), context.device);
  DeviceBuffer<TLabel> dLabels(n, stream, &tracker);
  DeviceBuffer<TLabel> dLargest(1, stream, &tracker);
  detail::CopyToDevice(dLabels.get(), labels, n * sizeof(TLabel), stream, context);
  detail::EventTimer timer(stream);
  timer.Start();
  {
    DeviceBuffer<uint8_t> temp(reduceBytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceReduce::Max(temp.get(), reduceBytes, dLabels.get(), dLargest.get(), n, stream));
  }
  TLabel largestLabel = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&largestLabel, dLargest.get(), sizeof(TLabel), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  const uint64_t largest = static_cast<uint64_t>(largestLabel);
  CheckLargestLabel(grid, largest);
  const uint64_t count = largest + 1;
  detail::ReserveDeviceMemory(tracker, cc::StatisticsBuffers::Bytes(count), context.device);
  cc::StatisticsBuffers stats(count, stream, tracker);
  const unsigned        blocks = detail::GridStrideBlocks(n, cc::kFinalizeThreads, context.device);
  cc::LabelStatisticsKernel<TLabel>
    <<<blocks, cc::kFinalizeThreads, 0, stream>>>(dLabels.get(), n, grid.size[0], grid.size[1], stats.Pointers());
  CHS_CUDA_CHECK_LAUNCH("LabelStatisticsKernel");
  timer.Stop();
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
  return largest;
}

#define CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(TLabel)                                                                  \
  template CudaHierarchicalSegmentation_EXPORT uint64_t ComputeLabelStatisticsCUDA<TLabel>(                            \
    const TLabel *, const Grid &, ConnectedComponentStatistics &, const ExecutionContext &, RunInfo *)
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint8_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint16_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint32_t);
CHS_INSTANTIATE_LABEL_STATISTICS_CUDA(uint64_t);

} // namespace chs
