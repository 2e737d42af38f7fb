// The CUDA watershed and waterfall entry points: checks, upload, the NaN check, the order-preserving coding of the
// pixels in place (src/Watershed/chsWatershedRule.h), the device pipeline of the code's width
// (src/Watershed/chsWatershed.cuh), and the download of the labels.
#include "Common/chsDeviceHelpers.cuh"
#include "ForestingTransform/chsForestingTransformDevice.h"
#include "chsConnectedComponents.h"
#include "chsHostCache.h"
#include "chsWatershedDevice.h"
#include "chsWatershedRule.h"

#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <utility>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace chs
{
namespace ws
{
/** Where the waterfall's levels run (testing::SetWaterfallLevelPath). */
std::atomic<LevelPath> g_LevelPath{ LevelPath::Auto };

namespace
{

template <typename T>
__global__ void
EncodeKernel(T * values, uint64_t n)
{
  using C = typename Code<T>::Type;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const C c                        = Encode(values[i]);
    reinterpret_cast<C *>(values)[i] = c;
  }
}

template <typename P, typename TLabel>
__global__ void
NarrowKernel(const P * in, uint64_t count, TLabel * out)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = TLabel(in[i]);
}

/** A run's device state: the codes (uploaded as pixels, checked for NaN, coded in place) and the three arrays of
 * voxel indices P. */
template <typename T, typename P = uint32_t>
class Run
{
public:
  using C = typename Code<T>::Type;

  /** Reserves the run's arrays, the watershed's scratch and `extraBytes` (what the caller adds), then uploads. */
  Run(const T * image, const Grid & grid, const ExecutionContext & context, const char * name, uint64_t extraBytes)
    : m_N(Reserve(tracker, grid, context.device, name, extraBytes))
    , m_Stream(static_cast<cudaStream_t>(context.stream))
    , m_Pixels(m_N, m_Stream, &tracker)
    , m_B0(m_N, m_Stream, &tracker)
    , m_B1(m_N, m_Stream, &tracker)
    , m_B2(m_N + 4, m_Stream, &tracker)
    , timer(m_Stream)
    , m_Device(context.device)
  {
    detail::CopyToDevice(m_Pixels.get(), image, m_N * sizeof(T), m_Stream, context);
    if (context.progress)
      context.progress(0.2f);
    timer.Start();
    if constexpr (std::is_floating_point<T>::value)
    {
      const uint64_t nan = FirstNaN(m_Pixels.get(), m_N, m_Stream, tracker, m_Device);
      if (nan < m_N)
        throw NaNError(grid, nan);
    }
    EncodeKernel<<<detail::GridStrideBlocks(m_N, 256, m_Device), 256, 0, m_Stream>>>(m_Pixels.get(), m_N);
    CHS_CUDA_CHECK_LAUNCH("EncodeKernel");
  }

  /** The device bytes of a run's arrays (the codes' upload, three arrays of P) and of the watershed's scratch. */
  static uint64_t
  Bytes(uint64_t n)
  {
    return n * (sizeof(T) + 3 * sizeof(P)) + 4 * sizeof(P) + detail::ScanScratchBytes(n) + 256;
  }

  const C *
  Codes() const
  {
    return reinterpret_cast<const C *>(m_Pixels.get());
  }
  ArraysT<P>
  Buffers() const
  {
    return ArraysT<P>{ m_B0.get(), m_B1.get(), m_B2.get() };
  }

  /** Copies n labels (at most `largest`) from the device array `from` (words S: P, or 32-bit for the waterfall's
   * levels) to the host, as TLabel; `spare` (another array) takes the labels narrowed to TLabel, or to 32 bits when
   * 64-bit labels are all below 2^32 (the host widens them: half the bytes cross the link). */
  template <typename TLabel, typename S>
  void
  Download(TLabel *                 labels,
           const S *                from,
           S *                      spare,
           const ExecutionContext & context,
           uint64_t                 largest = ~uint64_t(0))
  {
    if constexpr (sizeof(S) == 8 && sizeof(TLabel) >= 4)
      if (largest <= 0xffffffffull)
        return DownloadNarrowed<uint32_t>(labels, from, spare, context);
    if constexpr (sizeof(TLabel) >= sizeof(S))
      detail::CopyToHostWidened(labels, sizeof(TLabel), from, sizeof(S), m_N, m_Stream, context);
    else
      DownloadNarrowed<TLabel>(labels, from, spare, context);
  }

  detail::MemoryTracker tracker;

private:
  /** The labels narrowed to N on the device (into `spare`), then copied to the host and widened there to TLabel. */
  template <typename N, typename TLabel, typename S>
  void
  DownloadNarrowed(TLabel * labels, const S * from, S * spare, const ExecutionContext & context)
  {
    auto * narrow = reinterpret_cast<N *>(spare);
    NarrowKernel<<<detail::GridStrideBlocks(m_N, 256, m_Device), 256, 0, m_Stream>>>(from, m_N, narrow);
    CHS_CUDA_CHECK_LAUNCH("NarrowKernel");
    detail::CopyToHostWidened(labels, sizeof(TLabel), narrow, sizeof(N), m_N, m_Stream, context);
  }

  static uint64_t
  Reserve(detail::MemoryTracker & t, const Grid & grid, int device, const char * name, uint64_t extraBytes)
  {
    t.what = detail::DescribeRun(name, grid);
    detail::ReserveDeviceMemory(t, Bytes(grid.NumberOfVoxels()) + extraBytes, device);
    return grid.NumberOfVoxels();
  }

  uint64_t                m_N;
  cudaStream_t            m_Stream;
  detail::DeviceBuffer<T> m_Pixels;
  detail::DeviceBuffer<P> m_B0, m_B1, m_B2;

public:
  detail::EventTimer timer;

private:
  int m_Device;
};

/** The handicaps of the h-minima transform: the codes of min(I + level, top), as 32-bit codes. */
template <typename T>
__global__ void
ShiftKernel(const typename Code<T>::Type * codes, double level, uint32_t * handicap, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    handicap[i] = Encode(Shifted(Decode<T>(codes[i]), level));
}

/** lowest[b]: the smallest code of basin b (basin numbers of type B, the run's voxel index type). */
template <typename U, typename B>
__global__ void
LowestKernel(const U * h, const B * basin, uint32_t * lowest, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    atomicMin(lowest + basin[i], uint32_t(h[i]));
}

/** The pixels of the regional minima: in each basin, those of its smallest code. */
template <typename U, typename B>
__global__ void
MinimaKernel(const U * h, const B * basin, const uint32_t * lowest, uint8_t * minimum, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    minimum[i] = uint32_t(h[i]) == lowest[basin[i]];
}

/** The markers of the watershed without a marker image (include/chsWatershed.h): the regional minima of the h-minima
 * transform H of the codes, one marker per connected component inside the mask, into `markers`. Returns their count. */
template <typename T, typename TLabel, typename P>
uint64_t
MinimaMarkers(Run<T, P> &                       run,
              const Grid &                      grid,
              const MarkerWatershedParameters & parameters,
              const uint8_t *                   dMask,
              TLabel *                          markers,
              const ExecutionContext &          quiet)
{
  using C                              = typename Code<T>::Type;
  const uint64_t                n      = grid.NumberOfVoxels();
  const auto                    stream = static_cast<cudaStream_t>(quiet.stream);
  const unsigned                blocks = detail::GridStrideBlocks(n, 256, quiet.device);
  const ArraysT<P>              a      = run.Buffers();
  detail::DeviceBuffer<uint8_t> minimum(n, stream, &run.tracker);
  const auto                    minima = [&](const auto * h)
  {
    WatershedParameters descent;
    descent.fullyConnected = parameters.fullyConnected;
    uint64_t       rounds  = 0;
    const uint64_t basins  = WatershedOnDevice(h, grid, descent, a, quiet.device, stream, run.tracker, rounds);
    detail::ReserveDeviceMemory(run.tracker, (basins + 1) * sizeof(uint32_t), quiet.device);
    detail::DeviceBuffer<uint32_t> lowest(basins + 1, stream, &run.tracker);
    CHS_CUDA_CHECK(cudaMemsetAsync(lowest.get(), 0xff, (basins + 1) * sizeof(uint32_t), stream));
    LowestKernel<<<blocks, 256, 0, stream>>>(h, a.b1, lowest.get(), n);
    CHS_CUDA_CHECK_LAUNCH("LowestKernel");
    MinimaKernel<<<blocks, 256, 0, stream>>>(h, a.b1, lowest.get(), minimum.get(), n);
    CHS_CUDA_CHECK_LAUNCH("MinimaKernel");
  };
  if (parameters.level > 0)
  {
    // H by the Image Foresting Transform: every pixel a seed whose trivial path costs its handicap, arc weights I(q).
    detail::DeviceBuffer<uint32_t> handicap(n, stream, &run.tracker);
    detail::DeviceBuffer<uint32_t> h(n, stream, &run.tracker);
    {
      detail::DeviceBuffer<uint8_t> all(n, stream, &run.tracker), unused(n, stream, &run.tracker);
      ShiftKernel<T><<<blocks, 256, 0, stream>>>(run.Codes(), parameters.level, handicap.get(), n);
      CHS_CUDA_CHECK_LAUNCH("ShiftKernel");
      CHS_CUDA_CHECK(cudaMemsetAsync(all.get(), 1, n, stream));
      ForestingTransformParameters reconstruction;
      reconstruction.fullyConnected = parameters.fullyConnected;
      reconstruction.arcWeight      = ArcWeightFunction::Target;
      reconstruction.forceWideIndex = parameters.forceWideIndex;
      ift::TransformOptions options;
      options.handicap = handicap.get();
      ift::TransformOnDevice<C, uint8_t>(run.Codes(),
                                         all.get(),
                                         grid,
                                         reconstruction,
                                         unused.get(),
                                         h.get(),
                                         nullptr,
                                         quiet,
                                         run.tracker,
                                         run.timer,
                                         options);
    }
    minima(static_cast<const uint32_t *>(h.get()));
  }
  else
    minima(run.Codes());
  ConnectedComponentParameters cc;
  cc.fullyConnected = parameters.fullyConnected;
  cc.maximumLabel   = uint64_t(TLabel(~TLabel(0)));
  RunInfo info;
  try
  {
    const uint64_t count = LabelConnectedComponentsCUDA(minimum.get(), dMask, markers, grid, cc, nullptr, quiet, &info);
    run.tracker.peak     = std::max(run.tracker.peak, run.tracker.current + info.peakDeviceBytes);
    run.tracker.reserved = std::max(run.tracker.reserved, run.tracker.current + info.reservedDeviceBytes);
    return count;
  }
  catch (const LabelOverflowError & e)
  {
    throw TooManyMarkers(e.objectCount, cc.maximumLabel);
  }
}

template <typename P, typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershedOnDevice(const T *                         image,
                        const TLabel *                    markers,
                        const uint8_t *                   mask,
                        const Grid &                      grid,
                        const MarkerWatershedParameters & parameters,
                        TLabel *                          labels,
                        const ExecutionContext &          context,
                        RunInfo *                         info)
{
  using C               = typename Code<T>::Type;
  const uint64_t      n = grid.NumberOfVoxels();
  const uint64_t      index = sizeof(P); // the transform's voxel indices: the run's (both follow WideIndex)
  detail::DeviceScope scope(context.device);
  const auto          stream = static_cast<cudaStream_t>(context.stream);
  // The mask, the markers, the flood's arrays, and without markers the minima's: one byte a voxel, and with a level
  // the h-minima transform's (handicaps, H, two byte maps and the reconstruction's arrays).
  const uint64_t minimaBytes =
    markers ? 0
            : n + (parameters.level > 0
                     ? n * (2 * sizeof(uint32_t) + 2) +
                         ift::TransformBytes(grid, 1, sizeof(typename ForestingCost<C>::Type), false, index)
                     : 0);
  Run<T, P> run(image,
                grid,
                context,
                "watershed from markers",
                (mask ? n : 0) + n * sizeof(TLabel) + minimaBytes +
                  ift::TransformBytes(grid, sizeof(TLabel), 0, false, index));
  // The steps before the flood report no progress of their own (the flood reports 0.8 and 1).
  ExecutionContext quiet = context;
  quiet.progress         = nullptr;
  std::unique_ptr<detail::DeviceBuffer<uint8_t>> dMask;
  if (mask)
  {
    dMask = std::make_unique<detail::DeviceBuffer<uint8_t>>(n, stream, &run.tracker);
    detail::CopyToDevice(dMask->get(), mask, n, stream, context);
  }
  detail::DeviceBuffer<TLabel> dMarkers(n, stream, &run.tracker);
  MarkerWatershedResult        result;
  if (markers)
    detail::CopyToDevice(dMarkers.get(), markers, n * sizeof(TLabel), stream, context);
  else
    result.markerCount =
      MinimaMarkers<T, TLabel, P>(run, grid, parameters, dMask ? dMask->get() : nullptr, dMarkers.get(), quiet);
  if (context.progress)
    context.progress(0.5f);
  ForestingTransformParameters flood;
  flood.fullyConnected = parameters.fullyConnected;
  flood.arcWeight      = ArcWeightFunction::Maximum;
  flood.forceWideIndex = parameters.forceWideIndex;
  ift::TransformOptions options;
  options.mask              = dMask ? dMask->get() : nullptr;
  options.emptyWithoutSeeds = true;
  options.seedCostIsWeight  = true;
  result.seedCount =
    ift::TransformOnDevice<C, TLabel>(
      run.Codes(), dMarkers.get(), grid, flood, labels, nullptr, nullptr, context, run.tracker, run.timer, options)
      .seedCount;
  if (info)
  {
    info->kernelMilliseconds = run.timer.Milliseconds();
    info->peakDeviceBytes     = run.tracker.peak;
    info->reservedDeviceBytes = run.tracker.reserved;
  }
  return result;
}

} // namespace
} // namespace ws

template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershedCUDA(const T *                         image,
                    const TLabel *                    markers,
                    const uint8_t *                   mask,
                    const Grid &                      grid,
                    const MarkerWatershedParameters & parameters,
                    TLabel *                          labels,
                    const ExecutionContext &          context,
                    RunInfo *                         info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  ws::CheckMarkerParameters<T>(grid, parameters, markers != nullptr);
  if constexpr (sizeof(T) <= 4)
  {
    if (ws::WideIndex(grid, parameters))
      return ws::MarkerWatershedOnDevice<unsigned long long>(
        image, markers, mask, grid, parameters, labels, context, info);
    return ws::MarkerWatershedOnDevice<uint32_t>(image, markers, mask, grid, parameters, labels, context, info);
  }
  else
    return MarkerWatershedResult{};
}

namespace ws
{
namespace
{
/** WatershedCUDA with voxel indices P. */
template <typename P, typename T, typename TLabel>
WatershedResult
WatershedRun(const T *                   image,
             const Grid &                grid,
             const WatershedParameters & parameters,
             TLabel *                    labels,
             const ExecutionContext &    context,
             RunInfo *                   info)
{
  const auto       stream = static_cast<cudaStream_t>(context.stream);
  Run<T, P>        run(image, grid, context, "watershed", 0);
  const ArraysT<P> a = run.Buffers();
  WatershedResult  result;
  result.basinCount =
    WatershedOnDevice(run.Codes(), grid, parameters, a, context.device, stream, run.tracker, result.plateauRounds);
  CheckLabelCapacity<TLabel>(result.basinCount);
  const P * out = a.b1;
  if (parameters.markLines)
  {
    LinesOnDevice(run.Codes(), grid, parameters.fullyConnected, a, context.device, stream);
    out = a.b2;
  }
  run.timer.Stop();
  if (context.progress)
    context.progress(0.8f);
  run.Download(labels, out, a.b0, context, result.basinCount);
  if (context.progress)
    context.progress(1.0f);
  if (info)
  {
    info->kernelMilliseconds  = run.timer.Milliseconds();
    info->peakDeviceBytes     = run.tracker.peak;
    info->reservedDeviceBytes = run.tracker.reserved;
  }
  return result;
}
} // namespace
} // namespace ws

template <typename T, typename TLabel>
WatershedResult
WatershedCUDA(const T *                   image,
              const Grid &                grid,
              const WatershedParameters & parameters,
              TLabel *                    labels,
              const ExecutionContext &    context,
              RunInfo *                   info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  ws::CheckedVoxelCount(grid);
  ws::CheckParameters(grid, parameters);
  detail::DeviceScope scope(context.device);
  if (ws::WideIndex(grid, parameters))
    return ws::WatershedRun<unsigned long long>(image, grid, parameters, labels, context, info);
  return ws::WatershedRun<uint32_t>(image, grid, parameters, labels, context, info);
}

namespace ws
{
namespace
{
/** The waterfall with the watershed's voxel indices P. The levels' region labels are 32-bit: with 64-bit indices,
 * level 0's labels are narrowed into b0 and the levels take the three arrays as arrays of 32-bit words (b0: the
 * labels, b1 and b2: the regions' arrays), which is more room than the 32-bit path has. */
template <typename P, typename T, typename TLabel>
WaterfallResult
WaterfallRun(const T *                          image,
             const Grid &                       grid,
             const WaterfallParameters &        parameters,
             const WaterfallLevelSink<TLabel> & sink,
             const ExecutionContext &           context,
             RunInfo *                          info)
{
  const auto       stream = static_cast<cudaStream_t>(context.stream);
  Run<T, P>        run(image, grid, context, "waterfall", 0);
  const ArraysT<P> wide = run.Buffers();
  WaterfallResult  result;
  uint64_t         rounds = 0;
  uint64_t         regions =
    WatershedOnDevice(run.Codes(), grid, parameters.watershed, wide, context.device, stream, run.tracker, rounds);
  CheckWaterfallRegions(regions);
  CheckLabelCapacity<TLabel>(regions);
  Arrays a{ reinterpret_cast<uint32_t *>(wide.b0),
            reinterpret_cast<uint32_t *>(wide.b1),
            reinterpret_cast<uint32_t *>(wide.b2) };
  if constexpr (sizeof(P) == 8)
  {
    const uint64_t n = grid.NumberOfVoxels();
    NarrowKernel<<<detail::GridStrideBlocks(n, 256, context.device), 256, 0, stream>>>(wide.b1, n, a.b0);
    CHS_CUDA_CHECK_LAUNCH("NarrowKernel");
    std::swap(a.b0, a.b1);
  }
  run.timer.Stop();
  result.watershedMilliseconds = run.timer.Milliseconds();
  const bool full              = parameters.watershed.fullyConnected;
  // Each level's parent labels are gathered on the device and copied to the host once, at the end: a copy of a few
  // megabytes per level through the direct pageable path cost more than the level's kernels (0.7 ms for level 0's
  // million regions on the H200). Every level at most halves the regions (every region joins one at least), so
  // twice level 0's regions hold them all.
  const uint64_t                   capacity = 2 * regions + 2;
  detail::ReserveDeviceMemory(run.tracker, capacity * sizeof(uint32_t), context.device);
  detail::DeviceBuffer<uint32_t>   allParents(capacity, stream, &run.tracker);
  uint64_t                         gathered = 0;
  std::unique_ptr<LevelEngine>     levels;
  const bool                       more = regions > 1 && parameters.numberOfLevels != 1;
  if (more)
  {
    run.timer.Start();
    levels = MakeLevelEngine<typename Run<T, P>::C, P>(
      run.Codes(), grid, full, uint32_t(regions), a, context.device, stream, run.tracker, g_LevelPath.load());
    run.timer.Stop();
    result.levelsMilliseconds += run.timer.Milliseconds();
    result.levelsOnRegionGraph = levels->OnRegionGraph();
  }
  for (unsigned level = 0;; ++level)
  {
    result.regionCounts.push_back(regions);
    if (TLabel * out = sink(level, regions))
    {
      if (levels)
        run.Download(out, levels->Labels(), levels->Spare(), context);
      else
        run.Download(out, a.b1, a.b0, context);
    }
    if (regions == 1 || (parameters.numberOfLevels != 0 && level + 1 >= parameters.numberOfLevels))
      break;
    if (gathered + regions > capacity)
      throw std::logic_error("the waterfall's levels did not halve the regions (internal error: please report it)");
    run.timer.Start();
    const uint32_t next = levels->Next(uint32_t(regions), allParents.get() + gathered);
    run.timer.Stop();
    gathered += regions;
    result.levelsMilliseconds += run.timer.Milliseconds();
    regions = next;
    if (context.progress)
      context.progress(0.2f + 0.8f * float(level + 1) / float(level + 2));
  }
  // Into a page-locked array of the host cache (no value-initialisation, no page mapping, a direct copy), which
  // goes back to the cache however this ends.
  using Staged = std::vector<uint32_t, DefaultInitAllocator<uint32_t>>;
  Staged parents;
  struct GiveBack
  {
    Staged & v;
    ~GiveBack() { ReleaseHostVector(v); }
  } giveBack{ parents };
  AcquireHostVector(parents, gathered, true);
  if (gathered)
    detail::CopyToHost(parents.data(), allParents.get(), gathered * sizeof(uint32_t), stream, context);
  for (size_t k = 0, offset = 0; k + 1 < result.regionCounts.size(); ++k)
  {
    const uint64_t count = result.regionCounts[k];
    result.parents.emplace_back(parents.begin() + offset, parents.begin() + offset + count);
    offset += count;
  }
  if (context.progress)
    context.progress(1.0f);
  if (info)
  {
    info->kernelMilliseconds = result.watershedMilliseconds + result.levelsMilliseconds;
    info->peakDeviceBytes     = run.tracker.peak;
    info->reservedDeviceBytes = run.tracker.reserved;
  }
  return result;
}
} // namespace
} // namespace ws

template <typename T, typename TLabel>
WaterfallResult
WaterfallCUDA(const T *                          image,
              const Grid &                       grid,
              const WaterfallParameters &        parameters,
              const WaterfallLevelSink<TLabel> & sink,
              const ExecutionContext &           context,
              RunInfo *                          info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  ws::CheckedVoxelCount(grid);
  ws::CheckWaterfallParameters(grid, parameters);
  detail::DeviceScope scope(context.device);
  if (ws::WideIndex(grid, parameters.watershed))
    return ws::WaterfallRun<unsigned long long>(image, grid, parameters, sink, context, info);
  return ws::WaterfallRun<uint32_t>(image, grid, parameters, sink, context, info);
}

namespace testing
{
void
SetWaterfallLevelPath(int path)
{
  ws::g_LevelPath = path == 1 ? ws::LevelPath::Pixels : path == 2 ? ws::LevelPath::RegionGraph : ws::LevelPath::Auto;
}
} // namespace testing

#define CHS_INSTANTIATE_WATERSHED_CUDA(T, L)                                                                            \
  template CudaHierarchicalSegmentation_EXPORT WatershedResult WatershedCUDA<T, L>(                                     \
    const T *, const Grid &, const WatershedParameters &, L *, const ExecutionContext &, RunInfo *);                    \
  template CudaHierarchicalSegmentation_EXPORT WaterfallResult       WaterfallCUDA<T, L>(const T *,                     \
                                                                                   const Grid &,                  \
                                                                                   const WaterfallParameters &,   \
                                                                                   const WaterfallLevelSink<L> &, \
                                                                                   const ExecutionContext &,      \
                                                                                   RunInfo *);                    \
  template CudaHierarchicalSegmentation_EXPORT MarkerWatershedResult MarkerWatershedCUDA<T, L>(                         \
    const T *,                                                                                                          \
    const L *,                                                                                                          \
    const uint8_t *,                                                                                                    \
    const Grid &,                                                                                                       \
    const MarkerWatershedParameters &,                                                                                  \
    L *,                                                                                                                \
    const ExecutionContext &,                                                                                           \
    RunInfo *)
#define CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(T)                                                                       \
  CHS_INSTANTIATE_WATERSHED_CUDA(T, uint8_t);                                                                          \
  CHS_INSTANTIATE_WATERSHED_CUDA(T, uint16_t);                                                                         \
  CHS_INSTANTIATE_WATERSHED_CUDA(T, uint32_t);                                                                         \
  CHS_INSTANTIATE_WATERSHED_CUDA(T, uint64_t)
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(uint8_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(int8_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(uint16_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(int16_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(uint32_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(int32_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(uint64_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(int64_t);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(float);
CHS_INSTANTIATE_WATERSHED_CUDA_LABELS(double);

} // namespace chs
