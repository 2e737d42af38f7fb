// Per-label statistics of a label image (include/chs/ConnectedComponents.h, ComputeLabelStatistics), the CUDA
// backend: one pass over the voxels in raster order that adds each to its label's count, bounding box and coordinate
// sums: a warp's steps of one label gathered into one update, other steps with the labelling's accumulation
// (AccumulateStatistics: one atomic a warp's group of equal labels). The counts and sums are integers and the
// extremes order-free, so the result is the CPU reference's exactly.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "chsConnectedComponentsStages.cuh"

#include <cub/device/device_reduce.cuh>

namespace chs
{
namespace cc
{
namespace
{

/** Voxels a warp visits in one segment (kSegmentSteps steps of 32 consecutive voxels). */
constexpr unsigned kSegmentSteps = 64;

__device__ __forceinline__ unsigned
WarpMin(unsigned v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xffffffffu, v);
#else
  for (int o = 16; o > 0; o /= 2)
    v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
#endif
}
__device__ __forceinline__ unsigned
WarpMax(unsigned v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(0xffffffffu, v);
#else
  for (int o = 16; o > 0; o /= 2)
    v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
#endif
}

/** The statistics of one label over consecutive steps in which all 32 voxels of a warp hold it: the sums are the
 * warp's (equal in every lane), the extremes each lane's own until Flush reduces them. */
struct UniformRun
{
  unsigned long long key   = ~0ull;
  unsigned long long count = 0, sx = 0, sy = 0, sz = 0;
  unsigned           lo[3] = { ~0u, ~0u, ~0u }, hi[3] = { 0, 0, 0 };

  __device__ __forceinline__ void
  Add(unsigned x, unsigned y, unsigned z)
  {
    count += 32;
    sx += PeerSum(0xffffffffu, x);
    sy += PeerSum(0xffffffffu, y);
    sz += PeerSum(0xffffffffu, z);
    lo[0] = min(lo[0], x), lo[1] = min(lo[1], y), lo[2] = min(lo[2], z);
    hi[0] = max(hi[0], x), hi[1] = max(hi[1], y), hi[2] = max(hi[2], z);
  }
  /** Every lane calls it (warp reductions); lane 0 adds the run to the label's entries. */
  __device__ __forceinline__ void
  Flush(const StatisticsPointers & stats)
  {
    if (count == 0) // uniform across the warp
      return;
    unsigned mn[3], mx[3];
    for (int d = 0; d < 3; ++d)
      mn[d] = WarpMin(lo[d]), mx[d] = WarpMax(hi[d]);
    if ((threadIdx.x & 31) == 0)
    {
      atomicAdd(stats.count + key, count);
      atomicAdd(stats.sum + 3 * key + 0, sx);
      atomicAdd(stats.sum + 3 * key + 1, sy);
      atomicAdd(stats.sum + 3 * key + 2, sz);
      for (int d = 0; d < 3; ++d)
      {
        AtomicMinIfSmaller(stats.minimum + 3 * key + d, mn[d]);
        AtomicMaxIfLarger(stats.maximum + 3 * key + d, mx[d]);
      }
    }
    *this = UniformRun();
  }
};

/** One warp a segment of kSegmentSteps * 32 consecutive voxels. A step whose 32 voxels hold one label joins the
 * warp's run of that label, added to the label's entries once when the run ends (half of a label image is often
 * one label, the background, whose entries every step would otherwise update: a few atomics on one address for
 * each of millions of warps); other steps are accumulated as the labelling's statistics are (AccumulateStatistics).
 * Integer sums and order-free extremes: the result does not depend on the grouping. */
template <typename TLabel>
__global__ void
__launch_bounds__(kFinalizeThreads) LabelStatisticsKernel(const TLabel *     labels,
                                                          uint64_t           n,
                                                          unsigned long long nx,
                                                          unsigned long long ny,
                                                          StatisticsPointers stats)
{
  constexpr uint64_t segment  = uint64_t(kSegmentSteps) * 32;
  const uint64_t     warps    = uint64_t(gridDim.x) * (blockDim.x / 32);
  const unsigned     lane     = threadIdx.x & 31;
  const uint64_t     segments = (n + segment - 1) / segment;
  // Every bound below is uniform per warp, so whole warps take part in the warp primitives.
  for (uint64_t s = uint64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; s < segments; s += warps)
  {
    UniformRun     run;
    const uint64_t end = min(n, (s + 1) * segment);
    for (uint64_t base = s * segment; base < end; base += 32)
    {
      const uint64_t i     = base + lane;
      const bool     valid = i < end;
      const TLabel   label = valid ? labels[i] : TLabel(0);
      const auto     key   = static_cast<unsigned long long>(label);
      if (__all_sync(0xffffffffu, valid) && __match_any_sync(0xffffffffu, key) == 0xffffffffu)
      {
        if (key != run.key)
        {
          run.Flush(stats);
          run.key = key;
        }
        const unsigned long long row = i / nx;
        run.Add(static_cast<unsigned>(i - row * nx), static_cast<unsigned>(row % ny), static_cast<unsigned>(row / ny));
      }
      else
      {
        run.Flush(stats);
        AccumulateStatistics<unsigned long long, TLabel>(label, valid, i, nx, ny, -1, stats);
      }
    }
    run.Flush(stats);
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
  const uint64_t        warps  = (n + 32 * cc::kSegmentSteps - 1) / (32 * cc::kSegmentSteps);
  const unsigned        blocks = detail::GridStrideBlocks(warps * 32, cc::kFinalizeThreads, context.device);
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
