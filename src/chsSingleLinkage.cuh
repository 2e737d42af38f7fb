// CUDA single-linkage dendrograms: the host-side driver of the minimum spanning tree (src/sl/chsSLBoruvka.cuh) and
// the image entry. The graph entry and PANDORA (src/sl/chsSLPandora.cuh) are in src/chsSingleLinkageGraph.cu.
#ifndef chsSingleLinkage_cuh
#define chsSingleLinkage_cuh

#include "chsCudaCommon.cuh"
#include "chsSingleLinkage.h"
#include "chsSingleLinkageDevice.h"
#include "sl/chsSLBoruvka.cuh"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace chs
{
namespace sl
{

constexpr unsigned kThreads = 256;

/** Boruvka's rounds on n vertices. The first round is the caller's: firstOffer(best) fills every vertex's lightest
 * incident key, firstKeep(root, out, count) appends the crossing edges with their components; later rounds run on
 * the contracted graph. Writes the n - 1 tree keys to `tree` (in no particular order) and returns the number of
 * rounds; throws when the graph is not connected. */
template <class E, class FOffer, class FKeep>
unsigned
BoruvkaOnDevice(uint64_t                n,
                E                       edges,
                uint64_t                liveCapacity,
                FOffer &&               firstOffer,
                FKeep &&                firstKeep,
                unsigned long long *    tree,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                int                     device)
{
  const unsigned                           blocks = detail::GridStrideBlocks(n, kThreads, device);
  detail::DeviceBuffer<uint32_t>           link(n, stream, &tracker), root(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> best(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> counters(3, stream, &tracker); // tree edges, live edges, roots
  detail::DeviceBuffer<LiveEdge>           liveA(liveCapacity ? liveCapacity : 1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 3 * sizeof(unsigned long long), stream));

  // First round, on the vertices.
  firstOffer(best.get());
  HookKernel<<<blocks, kThreads, 0, stream>>>(n, edges, best.get(), link.get(), tree, counters.get());
  CHS_CUDA_CHECK_LAUNCH("HookKernel");
  CompressHooksKernel<<<blocks, kThreads, 0, stream>>>(n, link.get(), root.get(), best.get());
  CHS_CUDA_CHECK_LAUNCH("CompressHooksKernel");
  firstKeep(root.get(), liveA.get(), counters.get() + 1);
  detail::DeviceBuffer<uint32_t> rootsA(n, stream, &tracker);
  ListRootsKernel<<<blocks, kThreads, 0, stream>>>(n, root.get(), rootsA.get(), counters.get() + 2);
  CHS_CUDA_CHECK_LAUNCH("ListRootsKernel");
  unsigned long long host[3];
  auto               readCounters = [&]
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, counters.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  readCounters();
  uint64_t live = host[1], components = host[2];
  unsigned rounds = 1;

  // Later rounds, on the contracted graph.
  if (live > 0)
  {
    detail::DeviceBuffer<uint32_t> other(n, stream, &tracker);
    detail::DeviceBuffer<LiveEdge> liveB(live, stream, &tracker);
    detail::DeviceBuffer<uint32_t> rootsB(components, stream, &tracker);
    LiveEdge *                     liveIn = liveA.get(), *liveOut = liveB.get();
    uint32_t *                     rootsIn = rootsA.get(), *rootsOut = rootsB.get();
    while (live > 0)
    {
      const unsigned eb = detail::GridStrideBlocks(live, kThreads, device);
      const unsigned rb = detail::GridStrideBlocks(components, kThreads, device);
      OfferLiveKernel<<<eb, kThreads, 0, stream>>>(liveIn, live, best.get());
      CHS_CUDA_CHECK_LAUNCH("OfferLiveKernel");
      OtherSideKernel<<<eb, kThreads, 0, stream>>>(liveIn, live, best.get(), other.get());
      CHS_CUDA_CHECK_LAUNCH("OtherSideKernel");
      HookRootsKernel<<<rb, kThreads, 0, stream>>>(
        rootsIn, components, best.get(), other.get(), link.get(), tree, counters.get());
      CHS_CUDA_CHECK_LAUNCH("HookRootsKernel");
      CompressRootsKernel<<<rb, kThreads, 0, stream>>>(rootsIn, components, link.get(), root.get(), best.get());
      CHS_CUDA_CHECK_LAUNCH("CompressRootsKernel");
      CHS_CUDA_CHECK(cudaMemsetAsync(counters.get() + 1, 0, 2 * sizeof(unsigned long long), stream));
      KeepLiveKernel<<<eb, kThreads, 0, stream>>>(liveIn, live, root.get(), liveOut, counters.get() + 1);
      CHS_CUDA_CHECK_LAUNCH("KeepLiveKernel");
      KeepRootsKernel<<<rb, kThreads, 0, stream>>>(rootsIn, components, root.get(), rootsOut, counters.get() + 2);
      CHS_CUDA_CHECK_LAUNCH("KeepRootsKernel");
      readCounters();
      live       = host[1];
      components = host[2];
      std::swap(liveIn, liveOut);
      std::swap(rootsIn, rootsOut);
      ++rounds;
    }
  }
  if (host[0] + 1 != n)
    throw std::invalid_argument(NotConnectedMessage(n - host[0], false));
  return rounds;
}

/** The minimum spanning tree of an image's pixel graph (n > 1 pixels on the device): Boruvka's rounds, then the
 * n - 1 tree keys (weight code << 32 | edge index) sorted, in `tree` or `spare` (both n - 1 keys), whichever is
 * returned. Shared by the single-linkage and the alpha-tree entries. */
template <typename TPixel>
const unsigned long long *
ImageSpanningTree(const TPixel *          dPixels,
                  const ImageGraph &      graph,
                  unsigned                components,
                  VectorDistance          distance,
                  unsigned long long *    tree,
                  unsigned long long *    spare,
                  cudaStream_t            stream,
                  detail::MemoryTracker & tracker,
                  int                     device,
                  unsigned *              rounds = nullptr)
{
  const uint64_t n = graph.Pixels(), edges = n - 1;
  const unsigned blocks = detail::GridStrideBlocks(n, kThreads, device);
  const unsigned r      = BoruvkaOnDevice(
    n,
    ImageEdges{ graph },
    n * graph.slots,
    [&](unsigned long long * best)
    {
      ImageOfferKernel<<<blocks, kThreads, 0, stream>>>(dPixels, graph, components, distance, best);
      CHS_CUDA_CHECK_LAUNCH("ImageOfferKernel");
    },
    [&](const uint32_t * root, LiveEdge * live, unsigned long long * count)
    {
      ImageFirstKeepKernel<<<blocks, kThreads, 0, stream>>>(dPixels, graph, components, distance, root, live, count);
      CHS_CUDA_CHECK_LAUNCH("ImageFirstKeepKernel");
    },
    tree,
    stream,
    tracker,
    device);
  if (rounds)
    *rounds = r;
  return SortKeys(tree, spare, edges, SignificantBits(tree, edges, stream, tracker), stream, tracker);
}

/** The tree's ends, edge indices and weights by rank, from the image's tree keys sorted by (code, index). */
static __global__ void
ImageTreeKernel(uint64_t                   edges,
                const unsigned long long * sorted,
                ImageGraph                 g,
                bool                       isFloat,
                uint32_t *                 U,
                uint32_t *                 V,
                uint64_t *                 edge,
                double *                   weight)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const unsigned long long key = sorted[r];
    uint32_t                 a, b;
    g.Ends(key & 0xffffffffull, a, b);
    U[r]      = a;
    V[r]      = b;
    edge[r]   = key & 0xffffffffull;
    weight[r] = WeightOf(uint32_t(key >> 32), isFloat);
  }
}

} // namespace sl

template <typename TPixel>
SingleLinkageResult
ImageSingleLinkageCUDA(const TPixel *               pixels,
                       const Grid &                 grid,
                       const ImageGraphParameters & parameters,
                       const DendrogramArrays &     out,
                       const ExecutionContext &     context,
                       RunInfo *                    info)
{
  const sl::ImageGraph graph(grid, parameters.fullyConnected);
  sl::CheckImageGraph(grid, parameters, graph);
  const uint64_t        n = graph.Pixels(), edges = n - 1;
  const unsigned        c        = parameters.components;
  const VectorDistance  distance = parameters.distance;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;

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

  detail::EventTimer mstTimer(stream);
  mstTimer.Start();
  detail::DeviceBuffer<unsigned long long> tree(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> spare(edges ? edges : 1, stream, &tracker);
  const unsigned long long *               sorted =
    edges ? sl::ImageSpanningTree(dPixels.get(), graph, c, distance, tree.get(), spare.get(), stream, tracker,
                                  context.device, &result.boruvkaRounds)
          : tree.get();
  detail::DeviceBuffer<uint32_t> dU(edges ? edges : 1, stream, &tracker), dV(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<uint64_t> dEdge(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<double>   dWeight(edges ? edges : 1, stream, &tracker);
  if (edges > 0)
  {
    sl::ImageTreeKernel<<<detail::GridStrideBlocks(edges, sl::kThreads, context.device), sl::kThreads, 0, stream>>>(
      edges, sorted, graph, sl::FloatWeights<TPixel>(c), dU.get(), dV.get(), dEdge.get(), dWeight.get());
    CHS_CUDA_CHECK_LAUNCH("ImageTreeKernel");
  }
  mstTimer.Stop();
  sl::FinishOnDevice(n, dU.get(), dV.get(), dEdge.get(), dWeight.get(), out, mstTimer, result, info, tracker, context);
  return result;
}

} // namespace chs

#define CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA(TPixel)                                                              \
  template CudaHierarchicalSegmentation_EXPORT chs::SingleLinkageResult chs::ImageSingleLinkageCUDA<TPixel>(           \
    const TPixel *,                                                                                                    \
    const chs::Grid &,                                                                                                 \
    const chs::ImageGraphParameters &,                                                                                 \
    const chs::DendrogramArrays &,                                                                                     \
    const chs::ExecutionContext &,                                                                                     \
    chs::RunInfo *)

#endif
