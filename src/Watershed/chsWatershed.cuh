// CUDA watershed (PRUF, APRUF, PRW with synchronous, balanced or block-asynchronous plateau resolution) and one
// waterfall level, on pixel codes already on the device: the host-side drivers of the stages in the other files of
// src/Watershed/.
//   chsWatershedInit.cuh      step I (states, lowest neighbours) and the plateau pointers after step II
//   chsWatershedPlateau.cuh   step II (plateau distances)
//   chsWatershedReduce.cuh    steps III and IV (path reduction, merging the labels of minimal plateaux)
//   chsWatershedNumbering.cuh labels by first pixel, watershed lines
//   chsWaterfall.cuh lowest passes and joins of the waterfall
// Instantiated once per code width (8, 16, 32, 64 bits) in the generated chsWatershed_<code>.cu files (build tree); the
// public entry points (src/Watershed/chsWatershed.cu) code the pixels and call these.
//
// Device memory: the codes (n x the pixel width) and three arrays of n 32-bit words: the pointers L, the plateau
// distances D (the paper's states S) and a scratch array (the paper's S'; 16 bytes more), which the numbering, the
// asynchronous resolution's second buffer and the waterfall reuse; plus CUB's scan storage and a few counters.
#ifndef chsWatershed_cuh
#define chsWatershed_cuh

#include "Common/chsCudaCommon.cuh"
#include "chsWatershed.h"
#include "chsWatershedDevice.h"
#include "chsWatershedInit.cuh"
#include "chsWatershedNumbering.cuh"
#include "chsWatershedPlateau.cuh"
#include "chsWatershedReduce.cuh"
#include "chsWaterfall.cuh"

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace chs
{
namespace ws
{

/** Launches of a convergence loop between two reads of their change counts. */
constexpr int kBatch = 4;

inline Shape
ShapeOf(const Grid & grid)
{
  return Shape{
    uint32_t(grid.size[0]), uint32_t(grid.size[1]), uint32_t(grid.size[2]), uint32_t(grid.NumberOfVoxels())
  };
}

/** Calls f(integral_constant<bool, Full>, integral_constant<int, ZR>). */
template <class F>
void
WithConnectivity(bool full, bool threeD, F && f)
{
  if (threeD)
  {
    if (full)
      f(std::true_type{}, std::integral_constant<int, 1>{});
    else
      f(std::false_type{}, std::integral_constant<int, 1>{});
  }
  else if (full)
    f(std::true_type{}, std::integral_constant<int, 0>{});
  else
    f(std::false_type{}, std::integral_constant<int, 0>{});
}

/** Runs launch(round, counter) in batches until a launch counts no change; returns the launches, the last
 * (unchanged) one included. */
template <class Launch>
uint64_t
UntilStable(Launch && launch, uint64_t limit, const char * what, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  detail::DeviceBuffer<unsigned> counts(kBatch, stream, &tracker);
  unsigned                       host[kBatch];
  for (uint64_t rounds = 0;; rounds += kBatch)
  {
    if (rounds > limit)
      throw std::runtime_error(std::string("chs: the watershed's ") + what + " did not converge within " +
                               std::to_string(rounds) + " launches");
    CHS_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, sizeof(host), stream));
    for (int b = 0; b < kBatch; ++b)
      launch(rounds + b, counts.get() + b);
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, counts.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int b = 0; b < kBatch; ++b)
      if (host[b] == 0)
        return rounds + b + 1;
  }
}

/** Inclusive sum of in[0 .. count) into out. */
inline void
InclusiveSum(const uint32_t * in, uint32_t * out, uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  size_t bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, count, stream));
  detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), bytes, in, out, count, stream));
}

/** Step II: the plateau distances in D (= a.b1); returns the global rounds. */
template <bool Full, int ZR, typename C>
uint64_t
ResolvePlateaus(const C *                   I,
                const Shape &               s,
                const WatershedParameters & parameters,
                const unsigned (&block)[3],
                const Arrays &          a,
                int                     device,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker)
{
  const uint64_t limit = uint64_t(s.n) + 2 * kBatch;
  if (parameters.plateaus == PlateauResolution::Synchronous)
  {
    const unsigned blocks = detail::GridStrideBlocks(s.n, 256, device);
    return UntilStable(
      [&](uint64_t, unsigned * count)
      {
        SyncStepKernel<Full, ZR, C><<<blocks, 256, 0, stream>>>(I, s, a.b1, count);
        CHS_CUDA_CHECK_LAUNCH("SyncStepKernel");
      },
      limit,
      "plateau resolution",
      stream,
      tracker);
  }
  const TileShape t{ block[0], block[1], block[2] };
  const dim3      grid((s.nx + t.bx - 1) / t.bx, (s.ny + t.by - 1) / t.by, (s.nz + t.bz - 1) / t.bz);
  if (grid.y > 65535 || grid.z > 65535)
    throw std::invalid_argument("chs: the image is too large across y or z for the watershed's blocks");
  const size_t cells  = size_t(t.bx + 2) * (t.by + 2) * (t.bz + 2 * ZR);
  const size_t shared = cells * (sizeof(uint32_t) + sizeof(C));
  if (shared > 48 * 1024)
    throw std::invalid_argument("chs: the watershed's block " + std::to_string(t.bx) + " x " + std::to_string(t.by) +
                                " x " + std::to_string(t.bz) + " needs " + std::to_string(shared) +
                                " bytes of shared memory, more than 48 KiB");
  const unsigned threads = t.bx * t.by * t.bz;
  if (parameters.plateaus == PlateauResolution::Balanced)
    return UntilStable(
      [&](uint64_t, unsigned * count)
      {
        TileKernel<Full, ZR, false, C><<<grid, threads, shared, stream>>>(I, s, t, a.b1, a.b1, count);
        CHS_CUDA_CHECK_LAUNCH("TileKernel");
      },
      limit,
      "plateau resolution",
      stream,
      tracker);
  // Asynchronous: b1 and b2 alternate; both hold the result at the end (the last round changes nothing).
  CHS_CUDA_CHECK(cudaMemcpyAsync(a.b2, a.b1, uint64_t(s.n) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, stream));
  return UntilStable(
    [&](uint64_t round, unsigned * count)
    {
      uint32_t * in  = round & 1 ? a.b2 : a.b1;
      uint32_t * out = round & 1 ? a.b1 : a.b2;
      TileKernel<Full, ZR, true, C><<<grid, threads, shared, stream>>>(I, s, t, in, out, count);
      CHS_CUDA_CHECK_LAUNCH("TileKernel");
    },
    limit,
    "plateau resolution",
    stream,
    tracker);
}

template <typename C>
uint64_t
WatershedOnDevice(const C *                   I,
                  const Grid &                grid,
                  const WatershedParameters & parameters,
                  const Arrays &              a,
                  int                         device,
                  cudaStream_t                stream,
                  detail::MemoryTracker &     tracker,
                  uint64_t &                  plateauRounds)
{
  unsigned block[3];
  CheckedBlock(grid, parameters, block);
  const Shape    s      = ShapeOf(grid);
  const unsigned blocks = detail::GridStrideBlocks(s.n, 256, device);
  const uint64_t limit  = uint64_t(s.n) + 2 * kBatch;
  uint32_t *     L      = a.b0;
  uint32_t *     D      = a.b1;
  WithConnectivity(parameters.fullyConnected,
                   grid.dimension == 3,
                   [&](auto full, auto zr)
                   {
                     constexpr bool Full = decltype(full)::value;
                     constexpr int  ZR   = decltype(zr)::value;
                     InitKernel<Full, ZR, C><<<blocks, 256, 0, stream>>>(I, s, L, D);
                     CHS_CUDA_CHECK_LAUNCH("InitKernel");
                     plateauRounds = ResolvePlateaus<Full, ZR, C>(I, s, parameters, block, a, device, stream, tracker);
                     PointerKernel<Full, ZR, C><<<blocks, 256, 0, stream>>>(I, s, D, L);
                     CHS_CUDA_CHECK_LAUNCH("PointerKernel");
                     // Step III.
                     if (parameters.algorithm == WatershedAlgorithm::APRUF)
                     {
                       FollowKernel<<<blocks, 256, 0, stream>>>(L, s);
                       CHS_CUDA_CHECK_LAUNCH("FollowKernel");
                     }
                     else
                       UntilStable(
                         [&](uint64_t, unsigned * count)
                         {
                           ReduceKernel<<<blocks, 256, 0, stream>>>(L, s, parameters.reductionRate, count);
                           CHS_CUDA_CHECK_LAUNCH("ReduceKernel");
                         },
                         limit,
                         "path reduction",
                         stream,
                         tracker);
                     // Step IV.
                     if (parameters.algorithm == WatershedAlgorithm::PRW)
                       UntilStable(
                         [&](uint64_t, unsigned * count)
                         {
                           MinMergeKernel<Full, ZR><<<blocks, 256, 0, stream>>>(D, s, L, count);
                           CHS_CUDA_CHECK_LAUNCH("MinMergeKernel");
                         },
                         limit,
                         "minimal plateau merging",
                         stream,
                         tracker);
                     else
                     {
                       UnionKernel<Full, ZR><<<blocks, 256, 0, stream>>>(D, s, L);
                       CHS_CUDA_CHECK_LAUNCH("UnionKernel");
                     }
                     FollowKernel<<<blocks, 256, 0, stream>>>(L, s);
                     CHS_CUDA_CHECK_LAUNCH("FollowKernel");
                   });
  // Labels by first pixel: F in b1, X in b2, flags in b1, ranks in b0, labels in b1.
  CHS_CUDA_CHECK(cudaMemsetAsync(a.b1, 0xff, uint64_t(s.n) * sizeof(uint32_t), stream));
  FirstPixelKernel<<<blocks, 256, 0, stream>>>(a.b0, s, a.b1);
  CHS_CUDA_CHECK_LAUNCH("FirstPixelKernel");
  FirstOfKernel<<<blocks, 256, 0, stream>>>(a.b0, a.b1, s, a.b2);
  CHS_CUDA_CHECK_LAUNCH("FirstOfKernel");
  FlagKernel<<<blocks, 256, 0, stream>>>(a.b2, s.n, a.b1);
  CHS_CUDA_CHECK_LAUNCH("FlagKernel");
  InclusiveSum(a.b1, a.b0, s.n, stream, tracker);
  uint32_t count = 0;
  ReadBack(count, a.b0 + (s.n - 1), stream);
  RankKernel<<<blocks, 256, 0, stream>>>(a.b2, a.b0, s.n, a.b1);
  CHS_CUDA_CHECK_LAUNCH("RankKernel");
  return count;
}

template <typename C>
void
LinesOnDevice(const C * I, const Grid & grid, bool full, const Arrays & a, int device, cudaStream_t stream)
{
  const Shape    s      = ShapeOf(grid);
  const unsigned blocks = detail::GridStrideBlocks(s.n, 256, device);
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     LinesKernel<decltype(f)::value, decltype(zr)::value, C>
                       <<<blocks, 256, 0, stream>>>(I, s, a.b1, a.b2);
                     CHS_CUDA_CHECK_LAUNCH("LinesKernel");
                   });
}

template <typename C>
uint32_t
WaterfallLevelOnDevice(const C *               I,
                       const Grid &            grid,
                       bool                    full,
                       uint32_t                count,
                       const Arrays &          a,
                       int                     device,
                       cudaStream_t            stream,
                       detail::MemoryTracker & tracker)
{
  using W                     = std::conditional_t<sizeof(C) <= 4, uint32_t, unsigned long long>;
  const Shape    s            = ShapeOf(grid);
  const unsigned blocks       = detail::GridStrideBlocks(s.n, 256, device);
  const uint32_t regions      = count + 1; // region 0 is unused
  const unsigned regionBlocks = detail::GridStrideBlocks(regions, 256, device);
  W *            pass         = reinterpret_cast<W *>(a.b2);
  uint32_t *     P            = a.b0;
  CHS_CUDA_CHECK(cudaMemsetAsync(pass, 0xff, uint64_t(regions) * sizeof(W), stream));
  IdentityKernel<<<regionBlocks, 256, 0, stream>>>(P, regions);
  CHS_CUDA_CHECK_LAUNCH("IdentityKernel");
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     constexpr bool Full = decltype(f)::value;
                     constexpr int  ZR   = decltype(zr)::value;
                     LowestPassKernel<Full, ZR, C, W><<<blocks, 256, 0, stream>>>(I, s, a.b1, pass);
                     CHS_CUDA_CHECK_LAUNCH("LowestPassKernel");
                     JoinKernel<Full, ZR, C, W><<<blocks, 256, 0, stream>>>(I, s, a.b1, pass, P);
                     CHS_CUDA_CHECK_LAUNCH("JoinKernel");
                   });
  RegionRootKernel<<<regionBlocks, 256, 0, stream>>>(P, regions);
  CHS_CUDA_CHECK_LAUNCH("RegionRootKernel");
  uint32_t * flag = a.b2;
  uint32_t * rank = a.b2 + regions;
  RootFlagKernel<<<regionBlocks, 256, 0, stream>>>(P, regions, flag);
  CHS_CUDA_CHECK_LAUNCH("RootFlagKernel");
  InclusiveSum(flag, rank, regions, stream, tracker);
  uint32_t next = 0;
  ReadBack(next, rank + count, stream);
  MapKernel<<<regionBlocks, 256, 0, stream>>>(P, rank, regions);
  CHS_CUDA_CHECK_LAUNCH("MapKernel");
  RelabelKernel<<<blocks, 256, 0, stream>>>(a.b1, P, s);
  CHS_CUDA_CHECK_LAUNCH("RelabelKernel");
  return next;
}

} // namespace ws
} // namespace chs

// clang-format off
#define CHS_INSTANTIATE_WATERSHED_CODE(C)                                                                           \
  template uint64_t chs::ws::WatershedOnDevice<C>(const C *, const chs::Grid &, const chs::WatershedParameters &,    \
    const chs::ws::Arrays &, int, cudaStream_t, chs::detail::MemoryTracker &, uint64_t &);                           \
  template void chs::ws::LinesOnDevice<C>(const C *, const chs::Grid &, bool, const chs::ws::Arrays &, int,          \
    cudaStream_t);                                                                                                   \
  template uint32_t chs::ws::WaterfallLevelOnDevice<C>(const C *, const chs::Grid &, bool, uint32_t,                 \
    const chs::ws::Arrays &, int, cudaStream_t, chs::detail::MemoryTracker &)
// clang-format on

#endif
