// CUDA connected-components labeling (Chen et al., "An Optimized Union-Find Algorithm for Connected Components
// Labeling Using GPUs"), extended to 8-connectivity in 2D, 6- and 26-connectivity in 3D, to flat zones and to
// volumes of more than 2^32 voxels, followed by a relabeling to ITK's numbering.
//
// Union-find invariant used by every kernel: parent[i] <= i and a root is the smallest raster index of its set.
// Unions link the larger root under the smaller one with atomicMin, so the final root of every component is its
// first voxel in raster order whatever order the threads run in: the result is deterministic by construction.
//
// Kernels:
//  1. LocalMergeKernel: one 32 x TY x TZ tile per block in shared memory. Coarse labeling with the warp: each
//     tile row is one warp, and a ballot finds the start of every run of connected voxels (the paper's row scan);
//     then a shared-memory union-find over the remaining backward neighbours inside the tile (the column scan and
//     local union-find). Writes the global index of each voxel's local root and counts the local roots per chunk
//     of 4096 voxels in raster order.
//  2. BoundaryMergeKernel (one launch for all axes): threads only for voxels on the low faces of tiles; each unites
//     with its neighbours in the tile behind that face. Every successful link removes one root from the counts.
//  3. An exclusive scan of the chunk counts (CUB) gives the total, read back and checked against the label type
//     before anything reaches the caller's memory; RootLabelKernel gives each root its rank, and the final link
//     (the paper's) gives every voxel its root's label: FinalizeKernel with per-label statistics, otherwise
//     FinalizeNarrowKernel, which writes the labels in the narrowest unsigned type that holds them (1, 2 or 4
//     bytes) for the download; the host widens them back (detail::CopyToHostWidened).
//  4. NarrowLabelsKernel: the same narrowing after FinalizeKernel (statistics) or FinalizeVectorKernel (more than
//     2^31 voxels with 32-bit indices), written over the parents.
// Binary images with rows of 32 voxels or more (RunNodes) take the same steps on the runs of the tile rows instead
// of the voxels (see kNodesPerRow): BinaryLocalMergeKernel, BinaryBoundaryKernel, NodeRootLabelKernel and
// NodeFinalizeKernel.
//
// Files: one a stage, in src/ConnectedComponents/: chsConnectedComponentsCommon.cuh (what the stages share),
// chsConnectedComponentsLocalMerge.cuh (1), chsConnectedComponentsBoundaryMerge.cuh (2),
// chsConnectedComponentsRootNumbering.cuh (3), chsConnectedComponentsFinalLink.cuh (4, with the narrow, range and
// in-place label writers), chsConnectedComponentsRuns.cuh (the runs path's four kernels). The union-find and the warp
// queue that other algorithms share are in src/Common/chsDeviceHelpers.cuh. This file holds the merges' launchers and
// the host-side drivers (RunNodes, Run, LabelConnectedComponentsCUDA), compiled for each unsigned integer and
// floating-point pixel type (signed integers are labelled through the unsigned type of their width); what follows
// the merges reads no pixel and is compiled once, in chsConnectedComponentsStages.cu
// (chsConnectedComponentsStages.cuh).
#ifndef chsConnectedComponents_cuh
#define chsConnectedComponents_cuh

#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "Common/chsCudaCommon.cuh"
#include "chsConnectedComponentsBoundaryMerge.cuh"
#include "chsConnectedComponentsCommon.cuh"
#include "chsConnectedComponentsFinalLink.cuh"
#include "chsConnectedComponentsGeneral.cuh"
#include "chsConnectedComponentsLocalMerge.cuh"
#include "chsConnectedComponentsRootNumbering.cuh"
#include "chsConnectedComponentsRuns.cuh"
#include "chsConnectedComponentsStages.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace chs
{
namespace cc
{

template <int Axis, class TileT, typename I>
dim3
FaceGrid(const Extent<I> & e)
{
  const auto cap = [](uint64_t v)
  { return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(v, 65535))); };
  const uint64_t threads = kBoundaryThreads;
  if (Axis == 0)
    return dim3(static_cast<unsigned>(std::min<uint64_t>((uint64_t(e.ny) * e.nz + threads - 1) / threads, 1u << 20)),
                cap((e.nx - 1) / kTileX),
                1);
  if (Axis == 1)
    return dim3(static_cast<unsigned>((e.nx + threads - 1) / threads), cap((e.ny - 1) / TileT::Y), cap(e.nz));
  return dim3(static_cast<unsigned>((e.nx + threads - 1) / threads), cap(e.ny), cap((e.nz - 1) / TileT::Z));
}

template <int Axis, class TileT, typename I>
bool
HasFaces(const Extent<I> & e)
{
  return Axis == 0 ? e.nx > kTileX : Axis == 1 ? e.ny > I(TileT::Y) : e.nz > I(TileT::Z);
}

/** The tile grid of an extent; throws past CUDA's grid limits. */
template <class TileT, typename I>
dim3
TileGrid(const Extent<I> & e)
{
  const uint64_t tilesX = (uint64_t(e.nx) + kTileX - 1) / kTileX;
  const uint64_t tilesY = (uint64_t(e.ny) + TileT::Y - 1) / TileT::Y;
  const uint64_t tilesZ = (uint64_t(e.nz) + TileT::Z - 1) / TileT::Z;
  if (tilesX > 0x7fffffffull || tilesY > 65535 || tilesZ > 65535)
    throw std::invalid_argument("chs: image extent beyond the CUDA grid limits (rows > 2097120 in 2D, or more than "
                                "524280 rows or slices in 3D)");
  return dim3{ unsigned(tilesX), unsigned(tilesY), unsigned(tilesZ) };
}

template <class Op, bool Full, typename I, class TileT>
void
LaunchMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, cudaStream_t stream)
{
  LocalMergeKernel<Op, Full, I, TileT><<<TileGrid<TileT>(e), kLocalThreads, 0, stream>>>(op, parent, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("LocalMergeKernel");
  FaceLaunch launch{};
  const dim3 grids[3] = { FaceGrid<0, TileT>(e), FaceGrid<1, TileT>(e), FaceGrid<2, TileT>(e) };
  const bool faces[3] = { HasFaces<0, TileT>(e), HasFaces<1, TileT>(e), HasFaces<2, TileT>(e) };
  uint64_t   total    = 0;
  for (int a = 0; a < 3; ++a)
  {
    launch.grid[a]  = grids[a];
    launch.first[a] = static_cast<unsigned>(total);
    if (faces[a])
      total += uint64_t(grids[a].x) * grids[a].y * grids[a].z;
  }
  if (total == 0)
    return;
  if (total > 0x7fffffffull)
    throw std::invalid_argument("chs: too many tile faces for one boundary launch");
  launch.first[3] = static_cast<unsigned>(total);
  BoundaryMergeKernel<Op, Full, I, TileT>
    <<<static_cast<unsigned>(total), kBoundaryThreads, 0, stream>>>(op, parent, e, chunkRoots, launch);
  CHS_CUDA_CHECK_LAUNCH("BoundaryMergeKernel");
}

template <class Op, bool Full, typename I>
void
LaunchMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, cudaStream_t stream)
{
  if (e.nz == 1)
    LaunchMerge<Op, Full, I, Tile2D>(op, parent, e, chunkRoots, stream);
  else
    LaunchMerge<Op, Full, I, Tile3D>(op, parent, e, chunkRoots, stream);
}

/** The merge of the runs' union-find (binary images, ChooseNodePath): local merge and boundary pass. */
template <typename TPixel, bool Full, typename I, typename V, class TileT>
void
LaunchNodeMerge(const BinaryOp<TPixel> & op,
                I *                      slots,
                unsigned *               masks,
                const Extent<I> &        e,
                I *                      chunkRoots,
                unsigned                 words,
                int                      device,
                cudaStream_t             stream)
{
  const I half = I(words) * kHalfRow;
  BinaryLocalMergeKernel<TPixel, Full, I, V, TileT>
    <<<TileGrid<TileT>(e), kLocalThreads, 0, stream>>>(op, slots, half, masks, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("BinaryLocalMergeKernel");
  if (!HasFaces<0, TileT>(e) && !HasFaces<1, TileT>(e) && !HasFaces<2, TileT>(e))
    return;
  LaunchNodeBoundary<Full, I, TileT>(masks, slots, e, chunkRoots, words, device, stream);
}

inline uint64_t
TileRows(const Grid & grid)
{
  return uint64_t(grid.size[1]) * grid.size[2] * ((grid.size[0] + kTileX - 1) / kTileX);
}

/** Whether a binary image is labelled on its runs (RunNodes), with nodes of `nodeBytes`: rows of at least a tile's
 * 32 voxels (narrower ones would give more node slots than voxels), fewer than 2^31 tile rows, and a peak within the
 * input, the labels and one label-sized buffer. The input is freed after the merge and the labels are allocated
 * after it, so the peak is the slots and the masks plus the larger of the input and the labels. */
inline bool
NodePathFits(const Grid & grid, unsigned pixelBytes, unsigned labelBytes, unsigned nodeBytes)
{
  const uint64_t n     = grid.NumberOfVoxels();
  const uint64_t words = TileRows(grid);
  const uint64_t work  = words * (kNodesPerRow * nodeBytes + sizeof(unsigned));
  return grid.size[0] >= kTileX && words < (uint64_t(1) << 31) &&
         work <= n * labelBytes + std::min<uint64_t>(n * labelBytes, n * pixelBytes);
}

/** Binary images (NodePathFits): the union-find on the tile rows' runs (kNodesPerRow), with nodes of type I and voxel
 * indices of type V. A root's slot takes its label plus `base`: values from `base` up are labels, below it
 * parents. base = 2^31 (2^63) with 32-bit (64-bit) nodes below it; with 32-bit nodes from 2^31 on (`offsetLabels`:
 * volumes of 2^32 voxels and more) base is the node count, which leaves 2^32 - 1 - base labels. The labels are
 * written in their transfer width, into a buffer of sizeof(TLabel) a voxel allocated first where the slots and
 * masks take no more (labelsFirst); otherwise into one allocated after the merge in the place of the input and
 * mask, which are freed then: of the transfer width where the count is read before the final link (statistics,
 * offset labels, 64-bit nodes), else of sizeof(TLabel). (Freeing the input in the timed part where nothing takes
 * its place cost the 4.6e9-voxel volume 5 ms: the memory pool gives freed memory back at the next
 * synchronisation.) */
template <typename TPixel, typename TLabel, typename I, typename V>
uint64_t
RunNodes(const TPixel *                       input,
         const uint8_t *                      mask,
         TLabel *                             labels,
         const Grid &                         grid,
         const ConnectedComponentParameters & parameters,
         ConnectedComponentStatistics *       statistics,
         const ExecutionContext &             context,
         RunInfo *                            info,
         bool                                 offsetLabels)
{
  using detail::DeviceBuffer;
  const uint64_t     n        = grid.NumberOfVoxels();
  const cudaStream_t stream   = static_cast<cudaStream_t>(context.stream);
  const int          device   = context.device;
  const auto         progress = [&](float f)
  {
    if (context.progress)
      context.progress(f);
  };
  detail::MemoryTracker tracker;
  const unsigned        words      = static_cast<unsigned>(TileRows(grid));
  const uint64_t        chunks     = (uint64_t(words) + kNodeChunkRows - 1) / kNodeChunkRows;
  const I               base       = offsetLabels ? I(uint64_t(words) * kNodesPerRow) : TagBit<I>();
  const bool            wantStats  = parameters.computeStatistics && statistics != nullptr;
  const bool            countFirst = wantStats || offsetLabels || sizeof(I) == 8;
  // The labels' buffer comes first, outside the timed kernels, where the slots and masks fit in a label-sized buffer.
  const bool labelsFirst = uint64_t(words) * (kNodesPerRow * sizeof(I) + sizeof(unsigned)) <= n * sizeof(TLabel);

  {
    // The input and mask are freed for the labels where those come after the merge.
    const uint64_t source = n * (sizeof(TPixel) + (mask ? 1 : 0));
    tracker.what          = detail::DescribeRun("connected-components labeling", grid);
    detail::ReserveDeviceMemory(tracker,
                                uint64_t(words) * (kNodesPerRow * sizeof(I) + sizeof(unsigned)) +
                                  2 * chunks * sizeof(I) + detail::ScanScratchBytes(chunks) +
                                  (labelsFirst ? source + n * sizeof(TLabel) : std::max(source, n * sizeof(TLabel))),
                                device);
  }
  detail::PrewakeHostThreads(n * sizeof(TPixel), context); // they start while the device memory is allocated
  auto                   dInput = std::make_unique<DeviceBuffer<TPixel>>(n, stream, &tracker);
  auto                   dMask  = std::make_unique<DeviceBuffer<uint8_t>>(mask ? n : 0, stream, &tracker);
  DeviceBuffer<I>        dSlots(uint64_t(words) * kNodesPerRow, stream, &tracker);
  DeviceBuffer<unsigned> dMasks(words, stream, &tracker);
  DeviceBuffer<I>        dChunkCount(chunks, stream, &tracker);
  DeviceBuffer<I>        dChunkOffset(chunks, stream, &tracker);
  std::unique_ptr<detail::RawDeviceBuffer> dLabels;
  if (labelsFirst)
    dLabels = std::make_unique<detail::RawDeviceBuffer>(n * sizeof(TLabel), stream, &tracker);
  detail::CopyToDevice(dInput->get(), input, n * sizeof(TPixel), stream, context);
  if (mask)
    detail::CopyToDevice(dMask->get(), mask, n, stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dChunkCount.get(), 0, chunks * sizeof(I), stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.25f);

  detail::EventTimer timer(stream);
  timer.Start();
  const Extent<I>        e{ static_cast<I>(grid.size[0]), static_cast<I>(grid.size[1]), static_cast<I>(grid.size[2]) };
  const BinaryOp<TPixel> op{ dInput->get(), mask ? dMask->get() : nullptr };
  const bool             full  = FullNeighbourhood(grid, parameters);
  const auto             merge = [&](auto fullTag, auto tile)
  {
    LaunchNodeMerge<TPixel, decltype(fullTag)::value, I, V, decltype(tile)>(
      op, dSlots.get(), dMasks.get(), e, dChunkCount.get(), words, device, stream);
  };
  if (e.nz == 1)
    full ? merge(std::true_type{}, BinaryTile2D{}) : merge(std::false_type{}, BinaryTile2D{});
  else
    full ? merge(std::true_type{}, BinaryTile3D{}) : merge(std::false_type{}, BinaryTile3D{});
  if (!labelsFirst)
  {
    dInput.reset(); // stream-ordered: the memory is free for the labels once the merge is done
    dMask.reset();
  }
  const MergedRun<I> run{ grid, e,       chunks, dChunkCount.get(), dChunkOffset.get(), parameters, statistics, context,
                          info, tracker, timer };
  return LabelNodes<TLabel, I>(run, dSlots.get(), dMasks.get(), words, base, countFirst, dLabels, labels);
}

template <typename TPixel, typename TLabel, typename I>
uint64_t
Run(const TPixel *                       input,
    const uint8_t *                      mask,
    TLabel *                             labels,
    const Grid &                         grid,
    const ConnectedComponentParameters & parameters,
    ConnectedComponentStatistics *       statistics,
    const ExecutionContext &             context,
    RunInfo *                            info)
{
  using detail::DeviceBuffer;
  const uint64_t        n      = grid.NumberOfVoxels();
  const cudaStream_t    stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  detail::MemoryTracker tracker;
  auto                  progress = [&](float f)
  {
    if (context.progress)
      context.progress(f);
  };

  const bool     inPlace = LabelsInPlace<TLabel, I>(n); // no labels' buffer: they are written over the parents
  const uint64_t chunks  = (n + kChunk - 1) >> kChunkShift;
  tracker.what           = detail::DescribeRun("connected-components labeling", grid);
  detail::ReserveDeviceMemory(tracker,
                              n * (sizeof(TPixel) + (mask ? 1 : 0) + sizeof(I) + (inPlace ? 0 : sizeof(TLabel))) +
                                2 * chunks * sizeof(I) + detail::ScanScratchBytes(chunks),
                              device);
  detail::PrewakeHostThreads(n * sizeof(TPixel), context); // they start while the device memory is allocated
  DeviceBuffer<TPixel>  dInput(n, stream, &tracker);
  DeviceBuffer<uint8_t> dMask(mask ? n : 0, stream, &tracker);
  DeviceBuffer<I>       dParent(n, stream, &tracker);
  DeviceBuffer<TLabel>  dLabels(inPlace ? 0 : n, stream, &tracker);
  DeviceBuffer<I>       dChunkCount(chunks, stream, &tracker);
  DeviceBuffer<I>       dChunkOffset(chunks, stream, &tracker);
  detail::CopyToDevice(dInput.get(), input, n * sizeof(TPixel), stream, context);
  if (mask)
    detail::CopyToDevice(dMask.get(), mask, n, stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dChunkCount.get(), 0, chunks * sizeof(I), stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.25f);

  detail::EventTimer timer(stream);
  timer.Start();
  const Extent<I> e{ static_cast<I>(grid.size[0]), static_cast<I>(grid.size[1]), static_cast<I>(grid.size[2]) };
  const uint8_t * dm   = mask ? dMask.get() : nullptr;
  const bool      full = FullNeighbourhood(grid, parameters);
  if (NeedsGeneralPath(grid, parameters))
  {
    GeneralOp<TPixel> op{};
    op.input   = dInput.get();
    op.mask    = dm;
    op.graph   = parameters.mode == ConnectedComponentMode::Graph;
    op.nonZero = !op.graph && parameters.mode != ConnectedComponentMode::FlatZones;
    op.binary  = parameters.mode == ConnectedComponentMode::Binary;
    op.exact   = parameters.delta == 0;
    op.delta   = DeltaOf<TPixel>(parameters.delta);
    if constexpr (std::is_integral<TPixel>::value)
      op.bias = parameters.signedBits ? static_cast<TPixel>(TPixel(1) << (8 * sizeof(TPixel) - 1)) : TPixel(0);
    LaunchGeneralMerge<TPixel, I>(op, dParent.get(), e, grid, parameters, dChunkCount.get(), device, stream);
  }
  else if (parameters.mode == ConnectedComponentMode::NonZeroZones)
  {
    const NonZeroFlatOp<TPixel> op{ { dInput.get(), dm } };
    if (full)
      LaunchMerge<NonZeroFlatOp<TPixel>, true, I>(op, dParent.get(), e, dChunkCount.get(), stream);
    else
      LaunchMerge<NonZeroFlatOp<TPixel>, false, I>(op, dParent.get(), e, dChunkCount.get(), stream);
  }
  else if (parameters.mode == ConnectedComponentMode::Binary)
  {
    const BinaryOp<TPixel> op{ dInput.get(), dm };
    if (full)
      LaunchMerge<BinaryOp<TPixel>, true, I>(op, dParent.get(), e, dChunkCount.get(), stream);
    else
      LaunchMerge<BinaryOp<TPixel>, false, I>(op, dParent.get(), e, dChunkCount.get(), stream);
  }
  else
  {
    const FlatOp<TPixel> op{ dInput.get(), dm };
    if (full)
      LaunchMerge<FlatOp<TPixel>, true, I>(op, dParent.get(), e, dChunkCount.get(), stream);
    else
      LaunchMerge<FlatOp<TPixel>, false, I>(op, dParent.get(), e, dChunkCount.get(), stream);
  }
  const MergedRun<I> run{ grid, e,       chunks, dChunkCount.get(), dChunkOffset.get(), parameters, statistics, context,
                          info, tracker, timer };
  return LabelVoxels<TLabel, I>(
    run, dParent.get(), inPlace ? nullptr : dLabels.get(), dInput.get(), n * sizeof(TPixel), labels);
}

/** LabelConnectedComponentsCUDA for the pixel types whose kernels are compiled (unsigned integers, floats). */
template <typename TPixel, typename TLabel>
uint64_t
Label(const TPixel *                       input,
      const uint8_t *                      mask,
      TLabel *                             labels,
      const Grid &                         grid,
      const ConnectedComponentParameters & parameters,
      ConnectedComponentStatistics *       statistics,
      const ExecutionContext &             context,
      RunInfo *                            info)
{
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the image has no voxels");
  if (grid.size[0] > 0xffffffffull || grid.size[1] > 0xffffffffull || grid.size[2] > 0xffffffffull)
    throw std::invalid_argument("chs: an image dimension exceeds 2^32 - 1 voxels");
  CheckModeAndPixel<TPixel>(parameters);
  detail::DeviceScope scope(context.device);
  if (parameters.mode == ConnectedComponentMode::Binary && !NeedsGeneralPath(grid, parameters))
  {
    // Nodes: 32-bit below 2^31 (labels above the tag bit), 32-bit with offset labels below 2^32 (the voxel indices
    // are 64-bit there), else 64-bit; forceWideIndex and forceOffsetLabels take the wider ones on small images.
    const uint64_t nodes  = cc::TileRows(grid) * cc::kNodesPerRow;
    const bool     wide   = nodes > 0xffffffffull - 64 || parameters.forceWideIndex;
    const bool     offset = !wide && (nodes > (uint64_t(1) << 31) - 64 || parameters.forceOffsetLabels);
    const auto     run    = [&](auto node, auto voxel, bool offsetLabels)
    {
      return cc::RunNodes<TPixel, TLabel, decltype(node), decltype(voxel)>(
        input, mask, labels, grid, parameters, statistics, context, info, offsetLabels);
    };
    if (!wide && cc::NodePathFits(grid, sizeof(TPixel), sizeof(TLabel), 4))
    {
      if (!offset)
        return run(uint32_t{}, uint32_t{}, false);
      try
      {
        return run(uint32_t{}, uint64_t{}, true);
      }
      catch (const cc::NodeLabelsDoNotFit &)
      {
      } // too many objects for offset labels: 64-bit nodes
    }
    if (cc::NodePathFits(grid, sizeof(TPixel), sizeof(TLabel), 8))
      return run((unsigned long long){}, uint64_t{}, false);
  }
  if (n < 0xffffffffull && !parameters.forceWideIndex)
    return cc::Run<TPixel, TLabel, uint32_t>(input, mask, labels, grid, parameters, statistics, context, info);
  return Run<TPixel, TLabel, unsigned long long>(input, mask, labels, grid, parameters, statistics, context, info);
}

} // namespace cc

template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponentsCUDA(const TPixel *                       input,
                             const uint8_t *                      mask,
                             TLabel *                             labels,
                             const Grid &                         grid,
                             const ConnectedComponentParameters & parameters,
                             ConnectedComponentStatistics *       statistics,
                             const ExecutionContext &             context,
                             RunInfo *                            info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  if constexpr (std::is_integral<TPixel>::value && std::is_signed<TPixel>::value)
  {
    // The kernels compare pixels only with 0 (binary) and with each other for equality (flat zones): for integers
    // of one width both depend on the bits alone, so a signed image is labelled as the unsigned image of the same
    // bits, and the signed types compile no kernels (chsConnectedComponentsSigned.cu).
    // Differences (delta) are taken as the signed values' (ConnectedComponentParameters::signedBits).
    using U                        = typename std::make_unsigned<TPixel>::type;
    ConnectedComponentParameters p = parameters;
    p.signedBits                   = true;
    return LabelConnectedComponentsCUDA<U, TLabel>(
      reinterpret_cast<const U *>(input), mask, labels, grid, p, statistics, context, info);
  }
  else
    return cc::Label(input, mask, labels, grid, parameters, statistics, context, info);
}

} // namespace chs

#define CHS_INSTANTIATE_CC_CUDA(TPixel, TLabel)                                                                        \
  template CudaHierarchicalSegmentation_EXPORT uint64_t chs::LabelConnectedComponentsCUDA<TPixel, TLabel>(             \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    TLabel *,                                                                                                          \
    const chs::Grid &,                                                                                                 \
    const chs::ConnectedComponentParameters &,                                                                         \
    chs::ConnectedComponentStatistics *,                                                                               \
    const chs::ExecutionContext &,                                                                                     \
    chs::RunInfo *)

/** Declares an instantiation that another translation unit compiles (it is not instantiated where this is seen). */
#define CHS_EXTERN_CC_CUDA(TPixel, TLabel)                                                                             \
  extern template uint64_t chs::LabelConnectedComponentsCUDA<TPixel, TLabel>(                                          \
    const TPixel *,                                                                                                    \
    const uint8_t *,                                                                                                   \
    TLabel *,                                                                                                          \
    const chs::Grid &,                                                                                                 \
    const chs::ConnectedComponentParameters &,                                                                         \
    chs::ConnectedComponentStatistics *,                                                                               \
    const chs::ExecutionContext &,                                                                                     \
    chs::RunInfo *)

#endif
