// Per-label statistics of a label image (include/chs/ConnectedComponents.h, ComputeLabelStatistics), the CUDA
// backend: one pass over the voxels in raster order that adds each to its label's count, bounding box and coordinate
// sums: the few labels a warp carries in registers over consecutive steps, the others with the labelling's accumulation
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
constexpr unsigned kSegmentSteps = 256;

/** The smallest (Largest false) or largest value of v over the warp's 32 lanes. */
template <bool Largest>
__device__ __forceinline__ unsigned
WarpExtreme(unsigned v)
{
#if __CUDA_ARCH__ >= 800
  return Largest ? __reduce_max_sync(0xffffffffu, v) : __reduce_min_sync(0xffffffffu, v);
#else
  for (int o = 16; o > 0; o /= 2)
  {
    const unsigned w = __shfl_xor_sync(0xffffffffu, v, o);
    v                = Largest ? max(v, w) : min(v, w);
  }
  return v;
#endif
}

__device__ __forceinline__ unsigned long long
WarpSum(unsigned long long v)
{
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/** A label a warp carries: the voxels of it that its lanes met over consecutive steps, each lane keeping its own
 * count, coordinate sums and extremes, added to the label's entries once when the carry ends. */
struct CarriedLabel
{
  unsigned long long key    = ~0ull; // uniform across the warp; ~0 none
  unsigned           count  = 0;
  unsigned long long sum[3] = { 0, 0, 0 };
  unsigned           lo[3] = { ~0u, ~0u, ~0u }, hi[3] = { 0, 0, 0 };

  __device__ __forceinline__ void
  Add(const unsigned c[3])
  {
    ++count;
    for (int d = 0; d < 3; ++d)
    {
      sum[d] += c[d];
      lo[d] = min(lo[d], c[d]);
      hi[d] = max(hi[d], c[d]);
    }
  }
  /** Every lane calls it (warp reductions); lane 0 adds the carry to the label's entries, then the slot carries
   * `next`. */
  __device__ __forceinline__ void
  Flush(const StatisticsPointers & stats, unsigned long long next)
  {
    if (key != ~0ull)
    {
      const unsigned long long n = WarpSum(count);
      if (n)
      {
        unsigned long long s[3];
        unsigned           mn[3], mx[3];
        for (int d = 0; d < 3; ++d)
          s[d] = WarpSum(sum[d]), mn[d] = WarpExtreme<false>(lo[d]), mx[d] = WarpExtreme<true>(hi[d]);
        if ((threadIdx.x & 31) == 0)
        {
          atomicAdd(stats.count + key, n);
          for (int d = 0; d < 3; ++d)
          {
            atomicAdd(stats.sum + 3 * key + d, s[d]);
            AtomicMinIfSmaller(stats.minimum + 3 * key + d, mn[d]);
            AtomicMaxIfLarger(stats.maximum + 3 * key + d, mx[d]);
          }
        }
      }
    }
    *this = CarriedLabel();
    key   = next;
  }
};

/** Labels a warp carries at once. */
constexpr int kCarried = 4;

/** One warp a segment of kSegmentSteps * 32 consecutive voxels. The warp carries up to kCarried labels: their
 * voxels are added to the lanes' own registers, and to the labels' entries once when the segment ends or the label
 * is displaced. The other voxels of a step are added as the labelling adds its statistics (AccumulateStatistics: one
 * atomic per group of equal labels, the bounding box read before it is updated), and the label of the step's last
 * voxel, when it is one of them, then displaces the carried label least recently met. Without the carry the
 * labels that fill most of an image (the background, large objects) had their entries read and updated by almost
 * every step of every warp: atomics and reads on a few addresses that took most of the pass. Integer sums and
 * order-free extremes: the result does not depend on the grouping. */
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
    CarriedLabel   carry[kCarried];
    unsigned       used[kCarried] = {}; // the step that last met each carried label, uniform across the warp
    const uint64_t end            = min(n, (s + 1) * segment);
    unsigned       step           = 0;
    for (uint64_t base = s * segment; base < end; base += 32, ++step)
    {
      const uint64_t           i       = base + lane;
      const bool               valid   = i < end;
      const TLabel             label   = valid ? labels[i] : TLabel(0);
      const unsigned long long key     = static_cast<unsigned long long>(label);
      const unsigned long long row     = i / nx;
      const unsigned           c[3]    = { static_cast<unsigned>(i - row * nx),
                                           static_cast<unsigned>(row % ny),
                                           static_cast<unsigned>(row / ny) };
      bool                     carried = false;
#pragma unroll
      for (int k = 0; k < kCarried; ++k)
      {
        const bool mine = valid && key == carry[k].key;
        if (mine)
          carry[k].Add(c);
        if (__any_sync(0xffffffffu, mine))
          used[k] = step + 1;
        carried = carried || mine;
      }
      if (__all_sync(0xffffffffu, carried))
        continue;
      AccumulateStatistics<unsigned long long, TLabel>(label, valid && !carried, i, nx, ny, -1, stats);
      // The step's last voxel's label, when not carried, displaces the least recently met one.
      if (__shfl_sync(0xffffffffu, static_cast<int>(valid && !carried), 31))
      {
        const unsigned long long next   = __shfl_sync(0xffffffffu, key, 31);
        int                      oldest = 0;
#pragma unroll
        for (int k = 1; k < kCarried; ++k)
          oldest = used[k] < used[oldest] ? k : oldest;
#pragma unroll
        for (int k = 0; k < kCarried; ++k) // static indices keep the slots in registers
          if (k == oldest)
          {
            carry[k].Flush(stats, next);
            used[k] = step + 1;
          }
      }
    }
#pragma unroll
    for (int k = 0; k < kCarried; ++k)
      carry[k].Flush(stats, ~0ull);
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
