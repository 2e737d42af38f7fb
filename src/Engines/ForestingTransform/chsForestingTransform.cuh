// CUDA Image Foresting Transform by seed competition (Goncalves et al., "cudaIFT: 180x Faster Image Foresting
// Transform for Waterpixel Estimation using CUDA"), in 2D and 3D, with the exact tie rule of
// include/chs/ForestingTransform.h: the host-side driver. Stages:
// src/Engines/ForestingTransform/chsForestingTransformRelax.cuh (initialisation and the relaxation rounds of the keys),
// src/Engines/ForestingTransform/chsForestingTransformForest.cuh (predecessors, costs and labels from the keys).
//
// Where this departs from the paper: the paper's tiles let active pixels conquer their neighbours under locks and
// run a fixed number of rounds, and its labels in tie zones depend on the thread timing. Here every pixel pulls the
// smallest offer of its neighbours (no locks), the rounds go on until no tile changes, and the keys carry the hop
// count that makes the forest unique.
#ifndef chsForestingTransform_cuh
#define chsForestingTransform_cuh

#include "Common/chsCudaCommon.cuh"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "chsForestingTransformDevice.h"
#include "chsForestingTransformForest.cuh"
#include "chsForestingTransformRelax.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

namespace chs
{
namespace ift
{

/** Rounds are launched in batches of this many before the host reads their counts: a round after the fixed point
 * runs no tile and costs a few microseconds, less than a host round trip. */
constexpr int kRoundBatch = 4;

template <ArcWeightFunction F, bool Full, class TileT, typename TW>
uint64_t
RelaxRounds(const TW *              B,
            const uint8_t *         mask,
            uint64_t *              K,
            const Extent &          e,
            uint64_t                maximumRounds,
            cudaStream_t            stream,
            detail::MemoryTracker & tracker)
{
  const dim3 grid((e.nx + TileT::X - 1) / TileT::X, (e.ny + TileT::Y - 1) / TileT::Y, (e.nz + TileT::Z - 1) / TileT::Z);
  if (grid.y > 65535 || grid.z > 65535)
    throw std::invalid_argument("chs: the image is too large across y or z for the Image Foresting Transform's tiles");
  const uint64_t                 tiles = uint64_t(grid.x) * grid.y * grid.z;
  detail::DeviceBuffer<uint8_t>  flags(2 * tiles, stream, &tracker);
  detail::DeviceBuffer<unsigned> counts(kRoundBatch, stream, &tracker);
  unsigned                       host[kRoundBatch];
  uint64_t                       rounds = 0;
  for (;;)
  {
    // The last batch stops at the limit: a run never launches more rounds than maximumRounds.
    const int batch = int(std::min<uint64_t>(kRoundBatch, maximumRounds - rounds));
    CHS_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, sizeof(host), stream));
    for (int b = 0; b < batch; ++b)
    {
      const uint64_t r      = rounds + b;
      uint8_t *      before = flags.get() + (r & 1) * tiles;
      uint8_t *      now    = flags.get() + ((r + 1) & 1) * tiles;
      RelaxKernel<F, Full, TileT, TW>
        <<<grid, TileT::Threads, 0, stream>>>(B, mask, K, e, before, now, counts.get() + b, r == 0);
      CHS_CUDA_CHECK_LAUNCH("RelaxKernel");
    }
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, counts.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int b = 0; b < batch; ++b)
      if (host[b] == 0)
        return rounds + b + 1;
    rounds += batch;
    if (rounds >= maximumRounds)
      throw std::runtime_error("chs: the Image Foresting Transform did not converge within " + std::to_string(rounds) +
                               " rounds (the limit is " + std::to_string(maximumRounds) + ")");
  }
}

template <ArcWeightFunction F, bool Full, typename TW, typename TCost, typename P>
uint64_t
Keys(const TW *              B,
     const uint8_t *         mask,
     uint64_t *              K,
     P *                     parent,
     TCost *                 cost,
     int64_t *               predecessor,
     const Extent &          e,
     bool                    threeD,
     uint64_t                maximumRounds,
     int                     device,
     cudaStream_t            stream,
     detail::MemoryTracker & tracker)
{
  const uint64_t n      = uint64_t(e.nx) * e.ny * e.nz;
  const unsigned blocks = detail::GridStrideBlocks(n, 256, device);
  uint64_t       rounds;
  if (threeD)
  {
    rounds = RelaxRounds<F, Full, Tile3D>(B, mask, K, e, maximumRounds, stream, tracker);
    ForestKernel<F, Full, 1, TW, TCost, P><<<blocks, 256, 0, stream>>>(B, K, e, parent, cost, predecessor);
  }
  else
  {
    rounds = RelaxRounds<F, Full, Tile2D>(B, mask, K, e, maximumRounds, stream, tracker);
    ForestKernel<F, Full, 0, TW, TCost, P><<<blocks, 256, 0, stream>>>(B, K, e, parent, cost, predecessor);
  }
  CHS_CUDA_CHECK_LAUNCH("ForestKernel");
  return rounds;
}

/** TransformOnDevice with predecessors and roots of type P. */
template <typename P, typename TWeight, typename TLabel>
ForestingTransformResult
TransformRun(const TWeight *                         dWeights,
             const TLabel *                          dSeeds,
             const Grid &                            grid,
             const ForestingTransformParameters &    parameters,
             TLabel *                                labels,
             typename ForestingCost<TWeight>::Type * cost,
             int64_t *                               predecessor,
             const ExecutionContext &                context,
             detail::MemoryTracker &                 tracker,
             detail::EventTimer &                    timer,
             const TransformOptions &                options)
{
  using TCost      = typename ForestingCost<TWeight>::Type;
  const uint64_t n = grid.NumberOfVoxels();
  const Extent   e{ uint32_t(grid.size[0]), uint32_t(grid.size[1]), uint32_t(grid.size[2]) };
  const auto     stream = static_cast<cudaStream_t>(context.stream);

  detail::DeviceBuffer<uint64_t>           dKeys(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> dStatus(2, stream, &tracker);
  const unsigned                           blocks    = detail::GridStrideBlocks(n, 256, context.device);
  unsigned long long                       status[2] = { 0, n };
  CHS_CUDA_CHECK(cudaMemcpyAsync(dStatus.get(), status, sizeof(status), cudaMemcpyHostToDevice, stream));
  InitializeKernel<<<blocks, 256, 0, stream>>>(dWeights,
                                               dSeeds,
                                               options.mask,
                                               options.handicap,
                                               options.seedCostIsWeight,
                                               options.signBitInvalid,
                                               dKeys.get(),
                                               n,
                                               dStatus.get());
  CHS_CUDA_CHECK_LAUNCH("InitializeKernel");
  CHS_CUDA_CHECK(cudaMemcpyAsync(status, dStatus.get(), sizeof(status), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (status[1] < n)
    throw InvalidWeightError(grid, status[1]);
  if (status[0] == 0 && options.emptyWithoutSeeds)
  {
    timer.Stop();
    detail::DeviceBuffer<TLabel> dLabels(n, stream, &tracker);
    CHS_CUDA_CHECK(cudaMemsetAsync(dLabels.get(), 0, n * sizeof(TLabel), stream));
    detail::CopyToHost(labels, dLabels.get(), n * sizeof(TLabel), stream, context);
    return ForestingTransformResult{};
  }
  if (status[0] == 0)
    throw NoSeedError();

  detail::DeviceBuffer<P>                        dParent(n, stream, &tracker);
  std::unique_ptr<detail::DeviceBuffer<TCost>>   dCost;
  std::unique_ptr<detail::DeviceBuffer<int64_t>> dPredecessor;
  if (cost)
    dCost = std::make_unique<detail::DeviceBuffer<TCost>>(n, stream, &tracker);
  if (predecessor)
    dPredecessor = std::make_unique<detail::DeviceBuffer<int64_t>>(n, stream, &tracker);
  const uint64_t maximumRounds      = parameters.maximumRounds ? parameters.maximumRounds : n + 1;
  const bool     threeD             = grid.dimension == 3;
  TCost *        costPointer        = dCost ? dCost->get() : nullptr;
  int64_t *      predecessorPointer = dPredecessor ? dPredecessor->get() : nullptr;
  uint64_t       rounds             = 0;
  const auto     keys               = [&](auto f, auto full)
  {
    rounds = Keys<decltype(f)::value, decltype(full)::value, TWeight, TCost, P>(dWeights,
                                                                                options.mask,
                                                                                dKeys.get(),
                                                                                dParent.get(),
                                                                                costPointer,
                                                                                predecessorPointer,
                                                                                e,
                                                                                threeD,
                                                                                maximumRounds,
                                                                                context.device,
                                                                                stream,
                                                                                tracker);
  };
  const auto withConnectivity = [&](auto f)
  {
    if (parameters.fullyConnected)
      keys(f, std::true_type{});
    else
      keys(f, std::false_type{});
  };
  using Fn = ArcWeightFunction;
  switch (parameters.arcWeight)
  {
    case Fn::Target:
      withConnectivity(std::integral_constant<Fn, Fn::Target>{});
      break;
    case Fn::Maximum:
      withConnectivity(std::integral_constant<Fn, Fn::Maximum>{});
      break;
    case Fn::AbsoluteDifference:
      withConnectivity(std::integral_constant<Fn, Fn::AbsoluteDifference>{});
      break;
  }

  if constexpr (sizeof(P) == 8)
  {
    // Only here can D run out of its 32 bits (below 2^32 - 1 voxels a path has fewer arcs).
    CHS_CUDA_CHECK(cudaMemsetAsync(dStatus.get(), 0, sizeof(unsigned long long), stream));
    HopCountKernel<<<blocks, 256, 0, stream>>>(dKeys.get(), n, dStatus.get());
    CHS_CUDA_CHECK_LAUNCH("HopCountKernel");
    unsigned long long full = 0;
    CHS_CUDA_CHECK(cudaMemcpyAsync(&full, dStatus.get(), sizeof(full), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (full)
      throw HopCountError();
  }
  if (options.seedCostIsWeight)
  {
    // A seed's key is not 0 then, so ForestKernel may have given it a neighbour of equal offer: seeds are roots.
    SeedRootKernel<<<blocks, 256, 0, stream>>>(dSeeds, options.mask, dParent.get(), n);
    CHS_CUDA_CHECK_LAUNCH("SeedRootKernel");
  }
  // The keys are no longer needed: they hold the shortened predecessors that the finds follow (in their first half
  // for 32-bit indices).
  auto * root = reinterpret_cast<P *>(dKeys.get());
  ShortcutPaths(dParent.get(), root, e.nx, e.ny, threeD ? e.nz : 1u, stream);
  detail::DeviceBuffer<TLabel> dLabels(n, stream, &tracker);
  LabelKernel<<<blocks, 256, 0, stream>>>(
    root, dSeeds, options.mask, dLabels.get(), detail::ChooseVoxelOrder(e.nx, e.ny, e.nz));
  CHS_CUDA_CHECK_LAUNCH("LabelKernel");
  timer.Stop();
  if (context.progress)
    context.progress(0.8f);

  detail::CopyToHost(labels, dLabels.get(), n * sizeof(TLabel), stream, context);
  if (cost)
    detail::CopyToHost(cost, costPointer, n * sizeof(TCost), stream, context);
  if (predecessor)
    detail::CopyToHost(predecessor, predecessorPointer, n * sizeof(int64_t), stream, context);
  if (context.progress)
    context.progress(1.0f);
  ForestingTransformResult result;
  result.seedCount = status[0];
  result.rounds    = rounds;
  return result;
}

template <typename TWeight, typename TLabel>
ForestingTransformResult
TransformOnDevice(const TWeight *                         dWeights,
                  const TLabel *                          dSeeds,
                  const Grid &                            grid,
                  const ForestingTransformParameters &    parameters,
                  TLabel *                                labels,
                  typename ForestingCost<TWeight>::Type * cost,
                  int64_t *                               predecessor,
                  const ExecutionContext &                context,
                  detail::MemoryTracker &                 tracker,
                  detail::EventTimer &                    timer,
                  const TransformOptions &                options)
{
  CheckedVoxelCount(grid);
  if (WideIndex(grid, parameters))
    return TransformRun<unsigned long long>(
      dWeights, dSeeds, grid, parameters, labels, cost, predecessor, context, tracker, timer, options);
  return TransformRun<uint32_t>(
    dWeights, dSeeds, grid, parameters, labels, cost, predecessor, context, tracker, timer, options);
}

/** ImageForestingTransformCUDA for the weight types whose kernels are compiled (unsigned integers, float);
 * signBitInvalid as in TransformOptions. */
template <typename TWeight, typename TLabel>
ForestingTransformResult
Transform(const TWeight *                         weights,
          const TLabel *                          seeds,
          const Grid &                            grid,
          const ForestingTransformParameters &    parameters,
          TLabel *                                labels,
          typename ForestingCost<TWeight>::Type * cost,
          int64_t *                               predecessor,
          const ExecutionContext &                context,
          RunInfo *                               info,
          bool                                    signBitInvalid)
{
  const uint64_t        n = ift::CheckedVoxelCount(grid);
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  tracker.what = detail::DescribeRun("Image Foresting Transform", grid);
  detail::ReserveDeviceMemory(tracker,
                              n * (sizeof(TWeight) + sizeof(TLabel)) +
                                ift::TransformBytes(grid,
                                                    sizeof(TLabel),
                                                    cost ? sizeof(typename ForestingCost<TWeight>::Type) : 0,
                                                    predecessor != nullptr,
                                                    ift::WideIndex(grid, parameters) ? 8 : 4),
                              context.device);
  detail::DeviceBuffer<TWeight> dWeights(n, stream, &tracker);
  detail::DeviceBuffer<TLabel>  dSeeds(n, stream, &tracker);
  detail::CopyToDevice(dWeights.get(), weights, n * sizeof(TWeight), stream, context);
  detail::CopyToDevice(dSeeds.get(), seeds, n * sizeof(TLabel), stream, context);
  if (context.progress)
    context.progress(0.2f);
  detail::EventTimer timer(stream);
  timer.Start();
  TransformOptions options;
  options.signBitInvalid                = signBitInvalid;
  const ForestingTransformResult result = ift::TransformOnDevice(
    dWeights.get(), dSeeds.get(), grid, parameters, labels, cost, predecessor, context, tracker, timer, options);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  return result;
}

} // namespace ift

template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransformCUDA(const TWeight *                         weights,
                            const TLabel *                          seeds,
                            const Grid &                            grid,
                            const ForestingTransformParameters &    parameters,
                            TLabel *                                labels,
                            typename ForestingCost<TWeight>::Type * cost,
                            int64_t *                               predecessor,
                            const ExecutionContext &                context,
                            RunInfo *                               info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  if constexpr (std::is_integral<TWeight>::value && std::is_signed<TWeight>::value)
  {
    // Valid weights are not negative, and a non-negative signed integer has the bits of the unsigned integer of its
    // width and value: the same codes (chsOrderedCode.h), arc weights and costs (uint32_t for both). So a signed image
    // runs the unsigned kernels, with a set top bit counted as the negative weight it is; the signed types compile
    // no kernels (chsForestingTransformSigned.cu).
    using U = typename std::make_unsigned<TWeight>::type;
    return ift::Transform<U, TLabel>(
      reinterpret_cast<const U *>(weights), seeds, grid, parameters, labels, cost, predecessor, context, info, true);
  }
  else
    return ift::Transform<TWeight, TLabel>(
      weights, seeds, grid, parameters, labels, cost, predecessor, context, info, false);
}

} // namespace chs

// clang-format off
/** The public entry point alone: what the signed weight types compile (chsForestingTransformSigned.cu). */
#define CHS_INSTANTIATE_IFT_CUDA_ENTRY(TWeight, TLabel)                                                             \
  template CudaHierarchicalSegmentation_EXPORT chs::ForestingTransformResult                                        \
  chs::ImageForestingTransformCUDA<TWeight, TLabel>(                                                                \
    const TWeight *, const TLabel *, const chs::Grid &, const chs::ForestingTransformParameters &, TLabel *,         \
    typename chs::ForestingCost<TWeight>::Type *, int64_t *, const chs::ExecutionContext &, chs::RunInfo *)

/** The run of weights of TWeight bits, declared where another unit compiles it (`extern`) or compiled (nothing). */
#define CHS_IFT_TRANSFORM(EXTERN, TWeight, TLabel)                                                                  \
  EXTERN template chs::ForestingTransformResult chs::ift::Transform<TWeight, TLabel>(                               \
    const TWeight *, const TLabel *, const chs::Grid &, const chs::ForestingTransformParameters &, TLabel *,         \
    typename chs::ForestingCost<TWeight>::Type *, int64_t *, const chs::ExecutionContext &, chs::RunInfo *, bool)

#define CHS_INSTANTIATE_IFT_CUDA(TWeight, TLabel)                                                                   \
  CHS_INSTANTIATE_IFT_CUDA_ENTRY(TWeight, TLabel);                                                                  \
  CHS_IFT_TRANSFORM(, TWeight, TLabel);                                                                             \
  template chs::ForestingTransformResult chs::ift::TransformOnDevice<TWeight, TLabel>(                              \
    const TWeight *, const TLabel *, const chs::Grid &, const chs::ForestingTransformParameters &, TLabel *,         \
    typename chs::ForestingCost<TWeight>::Type *, int64_t *, const chs::ExecutionContext &,                         \
    chs::detail::MemoryTracker &, chs::detail::EventTimer &, const chs::ift::TransformOptions &)
// clang-format on

#endif
