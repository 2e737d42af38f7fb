// CUDA alpha-tree: the image entry (one translation unit per pixel type, src/chsAlphaTreeInstantiate.cu.in). The
// paper's construction: src/at/chsATTile.cuh (partial trees per tile in shared memory), src/at/chsATBorder.cuh
// (merges across the tile borders); or the spanning-tree construction: the single-linkage backend's Boruvka minimum
// spanning tree and PANDORA dendrogram (src/sl/), whose binary tree is already sorted by (level, id). Then the
// canonicalisation shared by all pixel types (src/chsAlphaTreeCanonical.cu).
#ifndef chsAlphaTree_cuh
#define chsAlphaTree_cuh

#include "at/chsATBorder.cuh"
#include "at/chsATTile.cuh"
#include "chsAlphaTree.h"
#include "chsAlphaTreeDevice.h"
#include "chsAlphaTreeRule.h"
#include "chsCudaCommon.cuh"
#include "chsDeviceHelpers.cuh"
#include "chsSingleLinkage.cuh"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace chs
{
namespace at
{

/** The tile shape a run uses: the parameters' or the default, checked against the kernel's limits. */
inline TileShape
ResolveTile(const Grid & grid, const AlphaTreeParameters & p, unsigned slots, int device)
{
  TileShape s{ p.tileX, p.tileY, p.tileZ };
  if (s.x == 0 && s.y == 0 && s.z == 0)
  {
    if (grid.dimension == 3)
      s = slots > 3 ? TileShape{ 8, 8, 4 } : TileShape{ 8, 8, 8 };
    else
      s = TileShape{ 32, 32, 1 };
  }
  if (s.x == 0 || s.y == 0 || s.z == 0 || (grid.dimension != 3 && s.z != 1) || s.Pixels() > 1024)
    throw std::invalid_argument("tile " + std::to_string(s.x) + " x " + std::to_string(s.y) + " x " +
                                std::to_string(s.z) + " is not supported: at most 1024 pixels, z = 1 in 2D");
  int optin = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (TileSharedBytes(s.Pixels(), slots) > size_t(optin))
    throw std::invalid_argument("tile " + std::to_string(s.x) + " x " + std::to_string(s.y) + " x " +
                                std::to_string(s.z) + " needs " + std::to_string(TileSharedBytes(s.Pixels(), slots)) +
                                " bytes of shared memory with this connectivity; the device has " +
                                std::to_string(optin));
  return s;
}

template <typename TPixel, bool kInsertAll>
void
LaunchConstruction(const TPixel *       dPixels,
                   const sl::ImageGraph g,
                   unsigned             components,
                   VectorDistance       distance,
                   TileShape            s,
                   uint32_t *           dParent,
                   uint32_t *           dLevel,
                   unsigned long long * dInserted,
                   cudaStream_t         stream,
                   int                  device)
{
  const uint64_t tiles =
    uint64_t((g.nx + s.x - 1) / s.x) * uint64_t((g.ny + s.y - 1) / s.y) * uint64_t((g.nz + s.z - 1) / s.z);
  const size_t shared = TileSharedBytes(s.Pixels(), g.slots);
  auto         kernel = TileTreeKernel<TPixel, kInsertAll>;
  CHS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  kernel<<<unsigned(tiles), s.Pixels(), shared, stream>>>(
    dPixels, g, components, distance, s, dParent, dLevel, dInserted);
  CHS_CUDA_CHECK_LAUNCH("TileTreeKernel");
  BorderMergeKernel<kInsertAll><<<detail::GridStrideBlocks(g.Pixels(), 256, device), 256, 0, stream>>>(
    g, s, GlobalTree{ dParent, dLevel, uint32_t(g.Pixels()) }, dInserted);
  CHS_CUDA_CHECK_LAUNCH("BorderMergeKernel");
}

/** The image's minimum spanning tree by ranks: ends and level codes. */
static __global__ void
SpanningTreeEdgesKernel(uint64_t                   edges,
                        const unsigned long long * sorted,
                        sl::ImageGraph             g,
                        uint32_t *                 U,
                        uint32_t *                 V,
                        uint32_t *                 level)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const unsigned long long key = sorted[r];
    g.Ends(key & 0xffffffffull, U[r], V[r]);
    level[r] = uint32_t(key >> 32);
  }
}

/** The binary partition tree by the spanning-tree construction: dParent (2n - 1 nodes, leaves first, the tree edge
 * of rank r as node n + r) and dLevel (the n - 1 internal nodes' level codes, non-decreasing). */
template <typename TPixel>
void
SpanningTreeConstruction(const TPixel *          dPixels,
                         const sl::ImageGraph &  g,
                         unsigned                components,
                         VectorDistance          distance,
                         uint32_t *              dParent,
                         uint32_t *              dLevel,
                         cudaStream_t            stream,
                         detail::MemoryTracker & tracker,
                         int                     device)
{
  const uint64_t                           n = g.Pixels(), edges = n - 1;
  detail::DeviceBuffer<unsigned long long> tree(edges, stream, &tracker), spare(edges, stream, &tracker);
  const unsigned long long *               sorted =
    sl::ImageSpanningTree(dPixels, g, components, distance, tree.get(), spare.get(), stream, tracker, device);
  detail::DeviceBuffer<uint32_t> dU(edges, stream, &tracker), dV(edges, stream, &tracker);
  SpanningTreeEdgesKernel<<<detail::GridStrideBlocks(edges, sl::kThreads, device), sl::kThreads, 0, stream>>>(
    edges, sorted, g, dU.get(), dV.get(), dLevel);
  CHS_CUDA_CHECK_LAUNCH("SpanningTreeEdgesKernel");
  sl::PandoraOnDevice(dU.get(), dV.get(), n, dParent, stream, tracker, device);
}

} // namespace at

template <typename TPixel>
AlphaTreeResult
ImageAlphaTreeCUDA(const TPixel *              pixels,
                   const Grid &                grid,
                   const AlphaTreeParameters & parameters,
                   const AlphaTreeAllocator &  allocate,
                   const ExecutionContext &    context,
                   RunInfo *                   info)
{
  const sl::ImageGraph g = at::CheckedGraph(grid, parameters);
  if (!allocate)
    throw std::invalid_argument("no allocator for the tree");
  const uint64_t        n = g.Pixels();
  const unsigned        c = parameters.graph.components, K = g.slots;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  const at::TileShape   tile   = at::ResolveTile(grid, parameters, K, context.device);
  detail::MemoryTracker tracker;
  AlphaTreeResult       result;

  detail::DeviceBuffer<TPixel> dPixels(n * c, stream, &tracker);
  detail::CopyToDevice(dPixels.get(), pixels, n * c * sizeof(TPixel), stream, context);
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    const uint64_t nan = FirstNaN(dPixels.get(), n * c, stream, tracker, context.device);
    if (nan < n * c)
      throw std::invalid_argument("pixel " + std::to_string(nan / c) + " is NaN");
  }
  if (context.progress)
    context.progress(0.1f);
  if (n == 1)
    return at::SinglePixelTree(allocate);

  detail::EventTimer build(stream), canonical(stream);
  build.Start();
  const AlphaTreeAlgorithm algorithm =
    parameters.algorithm == AlphaTreeAlgorithm::Auto ? AlphaTreeAlgorithm::SpanningTree : parameters.algorithm;
  const bool                               spanning = algorithm == AlphaTreeAlgorithm::SpanningTree;
  const uint64_t                           nodes    = spanning ? 2 * n - 1 : n * (K + 1);
  detail::DeviceBuffer<uint32_t>           dParent(nodes, stream, &tracker), dLevel(nodes - n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> dInserted(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(dInserted.get(), 0, sizeof(unsigned long long), stream));
  if (spanning)
    at::SpanningTreeConstruction(
      dPixels.get(), g, c, parameters.graph.distance, dParent.get(), dLevel.get(), stream, tracker, context.device);
  else
    (algorithm == AlphaTreeAlgorithm::InsertAllEdges ? at::LaunchConstruction<TPixel, true>
                                                     : at::LaunchConstruction<TPixel, false>)(
      dPixels.get(), g, c, parameters.graph.distance, tile, dParent.get(), dLevel.get(), dInserted.get(), stream,
      context.device);
  build.Stop();
  canonical.Start();
  const bool isFloat   = sl::FloatWeights<TPixel>(c);
  const int  levelBits = isFloat ? 32 : int(8 * sizeof(TPixel));
  result.nodes         = at::CanonicaliseOnDevice(
    n, nodes, dParent.get(), dLevel.get(), isFloat, levelBits, allocate, canonical, stream, tracker, context);
  unsigned long long inserted = 0;
  ReadBack(inserted, dInserted.get(), stream);
  result.insertedEdges            = spanning ? n - 1 : inserted;
  result.buildMilliseconds        = build.Milliseconds();
  result.canonicaliseMilliseconds = canonical.Milliseconds();
  if (info)
  {
    info->kernelMilliseconds = result.buildMilliseconds + result.canonicaliseMilliseconds;
    info->peakDeviceBytes    = tracker.peak;
  }
  if (context.progress)
    context.progress(1.0f);
  return result;
}

} // namespace chs

#define CHS_INSTANTIATE_ALPHA_TREE_CUDA(TPixel)                                                                        \
  template CudaHierarchicalSegmentation_EXPORT chs::AlphaTreeResult chs::ImageAlphaTreeCUDA<TPixel>(                   \
    const TPixel *,                                                                                                    \
    const chs::Grid &,                                                                                                 \
    const chs::AlphaTreeParameters &,                                                                                  \
    const chs::AlphaTreeAllocator &,                                                                                   \
    const chs::ExecutionContext &,                                                                                     \
    chs::RunInfo *)

#endif
