// The CUDA watershed and waterfall entry points: checks, upload, the NaN check, the order-preserving coding of the
// pixels in place (src/Watershed/chsWatershedRule.h), the device pipeline of the code's width
// (src/Watershed/chsWatershed.cuh), and the download of the labels.
#include "Common/chsDeviceHelpers.cuh"
#include "Watershed/chsWatershedBackends.h"
#include "Engines/ForestingTransform/chsForestingTransformDevice.h"
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "chs/HostCache.h"
#include "chsWatershedDevice.h"
#include "chsWatershedNumbering.cuh"
#include "chsWatershedRule.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>

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

/** Codes the pixels [begin, end) in place; the smallest index of a NaN among them lowers *firstNaN. */
template <typename T>
__global__ void
EncodeKernel(T * values, uint64_t begin, uint64_t end, unsigned long long * firstNaN)
{
  using C = typename Code<T>::Type;
  for (uint64_t i = begin + blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < end;
       i += uint64_t(gridDim.x) * blockDim.x)
  {
    const T v = values[i];
    if constexpr (std::is_floating_point<T>::value)
      if (v != v)
        atomicMin(firstNaN, (unsigned long long)i);
    const C c                        = Encode(v);
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

/** x[i] += *carry for i in [0, count): a range's ranks after those of the ranges before it (carry, the last rank
 * before the range, is outside it). */
template <typename P>
__global__ void
AddCarryKernel(P * x, uint64_t count, const P * carry)
{
  const P c = *carry;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    x[i] += c;
}

} // namespace

template <typename P>
void
NumberVoxels(const ArraysT<P> &      a,
             const Grid &            grid,
             uint64_t                begin,
             uint64_t                end,
             int                     device,
             cudaStream_t            stream,
             detail::MemoryTracker & tracker)
{
  const ShapeT<P> s = InRange(ShapeOf<P>(grid), begin, end);
  if (end <= begin)
    return;
  if ((begin != 0 || end != uint64_t(s.n)) && s.order.cx != 0)
    throw std::logic_error("chs: the watershed numbers a part of the image only in raster order");
  const uint64_t count  = end - begin;
  const unsigned blocks = detail::GridStrideBlocks(count, 256, device);
  FirstPixelKernel<<<blocks, 256, 0, stream>>>(a.b1, s, a.b0);
  CHS_CUDA_CHECK_LAUNCH("FirstPixelKernel");
  FirstFlagKernel<<<blocks, 256, 0, stream>>>(a.b1, a.b0, s, a.b2);
  CHS_CUDA_CHECK_LAUNCH("FirstFlagKernel");
  InclusiveSum(a.b2 + begin, a.b2 + begin, count, stream, tracker);
  if (begin > 0)
  {
    AddCarryKernel<<<blocks, 256, 0, stream>>>(a.b2 + begin, count, a.b2 + begin - 1);
    CHS_CUDA_CHECK_LAUNCH("AddCarryKernel");
  }
  LabelKernel<<<blocks, 256, 0, stream>>>(a.b1, a.b0, a.b2, s);
  CHS_CUDA_CHECK_LAUNCH("LabelKernel");
}

template void
NumberVoxels<uint32_t>(const ArraysT<uint32_t> &,
                       const Grid &,
                       uint64_t,
                       uint64_t,
                       int,
                       cudaStream_t,
                       detail::MemoryTracker &);
template void
NumberVoxels<unsigned long long>(const ArraysT<unsigned long long> &,
                                 const Grid &,
                                 uint64_t,
                                 uint64_t,
                                 int,
                                 cudaStream_t,
                                 detail::MemoryTracker &);

namespace
{

/** A run's device state: the codes (uploaded as pixels, checked for NaN, coded in place) and the three arrays of
 * voxel indices P. */
template <typename T, typename P = uint32_t>
class Run
{
public:
  using C = typename Code<T>::Type;

  /** Called as the codes arrive with the number of voxels coded so far (on the device in stream order). */
  using Arrival = std::function<void(const Run &, uint64_t)>;

  /** Reserves the run's arrays, the watershed's scratch and `extraBytes` (what the caller adds), then uploads and
   * codes the pixels. With `early`, the upload is staged (detail::CopyToDeviceInStages): each prefix that arrives
   * is coded and handed to `early`, whose work runs while the rest is copied; FlatBlocks() is then the count of the
   * counter that `early` gets from FlatCounter(). */
  Run(const T *                image,
      const Grid &             grid,
      const ExecutionContext & context,
      const char *             name,
      uint64_t                 extraBytes,
      const Arrival *          early = nullptr)
    : m_N(Reserve(tracker, grid, context, name, extraBytes))
    , m_Stream(static_cast<cudaStream_t>(context.stream))
    , m_Pixels(m_N, m_Stream, &tracker)
    , m_B0(m_N, m_Stream, &tracker)
    , m_B1(m_N, m_Stream, &tracker)
    , m_B2(m_N + 4, m_Stream, &tracker)
    , m_Words(2, m_Stream, &tracker)
    , timer(m_Stream)
    , m_Device(context.device)
  {
    // Word 0: the first NaN (all ones: none); word 1: the blocks that saw a flat pixel in step I (`early`).
    const unsigned long long init[2] = { ~0ull, 0ull };
    CHS_CUDA_CHECK(cudaMemcpyAsync(m_Words.get(), init, sizeof(init), cudaMemcpyHostToDevice, m_Stream));
    if (early)
    {
      uint64_t done = 0;
      detail::CopyToDeviceInStages(m_Pixels.get(),
                                   image,
                                   m_N * sizeof(T),
                                   m_Stream,
                                   context,
                                   [&](uint64_t bytes)
                                   {
                                     const uint64_t arrived = bytes / sizeof(T);
                                     Encode(done, arrived);
                                     done = arrived;
                                     (*early)(*this, arrived);
                                   });
    }
    else
      detail::CopyToDevice(m_Pixels.get(), image, m_N * sizeof(T), m_Stream, context);
    if (context.progress)
      context.progress(0.2f);
    timer.Start();
    if (!early)
      Encode(0, m_N);
    unsigned long long words[2] = {};
    CHS_CUDA_CHECK(cudaMemcpyAsync(words, m_Words.get(), sizeof(words), cudaMemcpyDeviceToHost, m_Stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
    if (words[0] < m_N)
      throw NaNError(grid, words[0]);
    m_FlatBlocks = unsigned(words[1]);
  }

  /** The device bytes of a run's arrays (the codes' upload, three arrays of P) and of the watershed's scratch. */
  static uint64_t
  Bytes(uint64_t n)
  {
    return n * (sizeof(T) + 3 * sizeof(P)) + 4 * sizeof(P) + detail::ScanScratchBytes(n) + 256 + 16;
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

  /** Writes the run's kernel time and device memory into `info` (when given). */
  void
  Report(RunInfo * info)
  {
    if (!info)
      return;
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }

  /** The counter of blocks with flat pixels for step I as the codes arrive (InitLayers), and its count once they
   * have all arrived. */
  unsigned *
  FlatCounter() const
  {
    return reinterpret_cast<unsigned *>(m_Words.get() + 1);
  }
  const unsigned *
  FlatBlocks() const
  {
    return &m_FlatBlocks;
  }

  detail::MemoryTracker tracker;

private:
  void
  Encode(uint64_t begin, uint64_t end)
  {
    if (end <= begin)
      return;
    EncodeKernel<<<detail::GridStrideBlocks(end - begin, 256, m_Device), 256, 0, m_Stream>>>(
      m_Pixels.get(), begin, end, m_Words.get());
    CHS_CUDA_CHECK_LAUNCH("EncodeKernel");
  }

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
  Reserve(detail::MemoryTracker &  t,
          const Grid &             grid,
          const ExecutionContext & context,
          const char *             name,
          uint64_t                 extraBytes)
  {
    // The staging's host threads start while the device memory is reserved and allocated.
    detail::PrewakeHostThreads(grid.NumberOfVoxels() * sizeof(T), context);
    t.what = detail::DescribeRun(name, grid);
    detail::ReserveDeviceMemory(t, Bytes(grid.NumberOfVoxels()) + extraBytes, context.device);
    return grid.NumberOfVoxels();
  }

  uint64_t                                 m_N;
  cudaStream_t                             m_Stream;
  detail::DeviceBuffer<T>                  m_Pixels;
  detail::DeviceBuffer<P>                  m_B0, m_B1, m_B2;
  detail::DeviceBuffer<unsigned long long> m_Words;
  unsigned                                 m_FlatBlocks = 0;

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

/** The markers of the watershed without a marker image (include/chs/Watershed.h): the regional minima of the h-minima
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
  using C                   = typename Code<T>::Type;
  const uint64_t      n     = grid.NumberOfVoxels();
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
  run.Report(info);
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
  const auto      stream = static_cast<cudaStream_t>(context.stream);
  WatershedResult result;
  // The transfers overlap the kernels where the labels go out in voxel indices' width or wider, without lines, in
  // raster order (the numbering by ranges needs it): step I and the tile shortcuts run on the layers that have
  // arrived while the rest is uploaded, and the numbering of each range of voxels while the one before is copied.
  if constexpr (sizeof(P) == 4 && sizeof(TLabel) >= sizeof(P))
    if (detail::TransferOverlap() && !parameters.markLines &&
        detail::ChooseVoxelOrder(grid.size[0], grid.size[1], grid.size[2]).cx == 0)
    {
      const bool                        threeD      = grid.dimension == 3;
      const uint64_t                    layers      = threeD ? grid.size[2] : grid.size[1];
      const uint64_t                    layer       = threeD ? grid.size[0] * grid.size[1] : grid.size[0];
      const uint32_t                    tile        = ShortcutTileLayers(threeD ? 2u : 1u);
      uint64_t                          initialized = 0, shortened = 0; // layers, layers of tiles
      const typename Run<T, P>::Arrival early = [&](const Run<T, P> & r, uint64_t voxels)
      {
        const ArraysT<P> a = r.Buffers();
        // Step I of a layer reads the layers next to it; the shortcuts of a layer of tiles, step I's pointers there.
        const uint64_t coded = voxels / layer;
        const uint64_t ready = coded == layers ? layers : (coded > 0 ? coded - 1 : 0);
        if (ready > initialized)
          InitLayers(
            r.Codes(), grid, parameters.fullyConnected, a, r.FlatCounter(), initialized, ready, context.device, stream);
        initialized         = std::max(initialized, ready);
        const uint64_t done = initialized == layers ? (layers + tile - 1) / tile : initialized / tile;
        if (done > shortened)
          ShortcutPaths(a.b1,
                        a.b1,
                        uint32_t(grid.size[0]),
                        uint32_t(grid.size[1]),
                        threeD ? uint32_t(grid.size[2]) : 1u,
                        stream,
                        uint32_t(shortened),
                        uint32_t(done - shortened));
        shortened = std::max(shortened, done);
      };
      Run<T, P>        run(image, grid, context, "watershed", 0, &early);
      const ArraysT<P> a = run.Buffers();
      WatershedOnDevice(run.Codes(),
                        grid,
                        parameters,
                        a,
                        context.device,
                        stream,
                        run.tracker,
                        result.plateauRounds,
                        run.FlatBlocks(),
                        false);
      run.timer.Stop();
      if (context.progress)
        context.progress(0.8f);
      const uint64_t n = grid.NumberOfVoxels();
      CHS_CUDA_CHECK(cudaMemsetAsync(a.b0, 0xff, n * sizeof(P), stream));
      detail::CopyToHostInStages(labels,
                                 sizeof(TLabel),
                                 a.b1,
                                 sizeof(P),
                                 n,
                                 stream,
                                 context,
                                 [&](uint64_t begin, uint64_t end)
                                 { NumberVoxels(a, grid, begin, end, context.device, stream, run.tracker); });
      P count = 0;
      ReadBack(count, a.b2 + (n - 1), stream);
      result.basinCount = count;
      if (context.progress)
        context.progress(1.0f);
      run.Report(info);
      return result;
    }
  Run<T, P>        run(image, grid, context, "watershed", 0);
  const ArraysT<P> a = run.Buffers();
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
  run.Report(info);
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
  const uint64_t capacity = 2 * regions + 2;
  detail::ReserveDeviceMemory(run.tracker, capacity * sizeof(uint32_t), context.device);
  detail::DeviceBuffer<uint32_t> allParents(capacity, stream, &run.tracker);
  uint64_t                       gathered = 0;
  std::unique_ptr<LevelEngine>   levels;
  const bool                     more = regions > 1 && parameters.numberOfLevels != 1;
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
    info->kernelMilliseconds  = result.watershedMilliseconds + result.levelsMilliseconds;
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
