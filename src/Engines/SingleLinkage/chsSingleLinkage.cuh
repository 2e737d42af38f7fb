// CUDA single-linkage dendrograms: the host-side driver of the minimum spanning tree
// (src/Engines/SingleLinkage/chsSingleLinkageBoruvka.cuh) and the image entry. The graph entry and PANDORA
// (src/Engines/SingleLinkage/chsSingleLinkagePandora.cuh) are in src/Engines/SingleLinkage/chsSingleLinkageGraph.cu.
#ifndef chsSingleLinkage_cuh
#define chsSingleLinkage_cuh

#include "Common/chsCudaCommon.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "chsSingleLinkageDevice.h"
#include "chsSingleLinkageBoruvka.cuh"
#include "chsSingleLinkageTileBoruvka.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace chs
{
namespace sl
{

constexpr unsigned kThreads = 256;

/** The arrays of Boruvka's rounds on n vertices, as the first round leaves them: every vertex's component
 * (`root`, a vertex of the component), `best` cleared (kNoEdge) for every root, the tree keys found (counters[0]),
 * the live edges between components with their components (`live`, counters[1]) and the components' roots (`roots`,
 * counters[2]). `link` has room for n vertices. */
struct BoruvkaArrays
{
  uint32_t *           link;
  uint32_t *           root;
  unsigned long long * best;
  unsigned long long * tree;
  LiveEdge *           live;
  uint32_t *           roots;
  unsigned long long * counters;
};

/** A first round on the vertices, for any edge source: firstOffer(best) fills every vertex's lightest incident key,
 * firstKeep(root, out, count) appends the crossing edges with their components. */
template <class E, class FOffer, class FKeep>
void
VertexFirstRound(uint64_t              n,
                 E                     edges,
                 FOffer &&             firstOffer,
                 FKeep &&              firstKeep,
                 const BoruvkaArrays & a,
                 cudaStream_t          stream,
                 int                   device)
{
  const unsigned blocks = detail::GridStrideBlocks(n, kThreads, device);
  firstOffer(a.best);
  HookKernel<<<blocks, kThreads, 0, stream>>>(n, edges, a.best, a.link, a.tree, a.counters);
  CHS_CUDA_CHECK_LAUNCH("HookKernel");
  CompressHooksKernel<<<blocks, kThreads, 0, stream>>>(n, a.link, a.root, a.best);
  CHS_CUDA_CHECK_LAUNCH("CompressHooksKernel");
  firstKeep(a.root, a.live, a.counters + 1);
  ListRootsKernel<<<blocks, kThreads, 0, stream>>>(n, a.root, a.roots, a.counters + 2);
  CHS_CUDA_CHECK_LAUNCH("ListRootsKernel");
}

/** The device bytes of Boruvka's first round on n vertices with room for liveCapacity live edges (its later rounds
 * reserve theirs once the live edges are counted). */
inline uint64_t
BoruvkaFirstBytes(uint64_t n, uint64_t liveCapacity)
{
  return n * (3 * sizeof(uint32_t) + sizeof(unsigned long long)) + 3 * sizeof(unsigned long long) +
         (liveCapacity ? liveCapacity : 1) * sizeof(LiveEdge);
}

/** Boruvka's rounds on n vertices. The first round is the caller's: firstRound(BoruvkaArrays) (VertexFirstRound, or
 * the image's tile rounds); later rounds run on the contracted graph. Writes the n - 1 tree keys to `tree` (in no
 * particular order) and returns the number of rounds; throws when the graph is not connected. */
template <class FFirst>
unsigned
BoruvkaOnDevice(uint64_t                n,
                uint64_t                liveCapacity,
                FFirst &&               firstRound,
                unsigned long long *    tree,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                int                     device)
{
  detail::DeviceBuffer<uint32_t>           link(n, stream, &tracker), root(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> best(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> counters(3, stream, &tracker); // tree edges, live edges, roots
  detail::DeviceBuffer<LiveEdge>           liveA(liveCapacity ? liveCapacity : 1, stream, &tracker);
  detail::DeviceBuffer<uint32_t>           rootsA(n, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 3 * sizeof(unsigned long long), stream));
  firstRound(BoruvkaArrays{ link.get(), root.get(), best.get(), tree, liveA.get(), rootsA.get(), counters.get() });
  unsigned long long host[3];
  CHS_CUDA_CHECK(cudaMemcpyAsync(host, counters.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  uint64_t live = host[1], components = host[2];
  unsigned rounds = 1;

  // Later rounds, on the contracted graph. Their kernels read the counts of live edges and roots from the device
  // (pair j of `counts` is round j's input, pair j + 1 its output), so kQueued rounds go without a synchronisation;
  // a round whose input has no live edge does nothing. Grids are sized for the counts last read, which only fall.
  if (live > 0)
  {
    constexpr unsigned kQueued = 4;
    detail::ReserveDeviceMemory(tracker,
                                n * sizeof(uint32_t) + live * sizeof(LiveEdge) + components * sizeof(uint32_t) +
                                  2 * (kQueued + 1) * sizeof(unsigned long long),
                                device);
    detail::DeviceBuffer<uint32_t>           other(n, stream, &tracker);
    detail::DeviceBuffer<LiveEdge>           liveB(live, stream, &tracker);
    detail::DeviceBuffer<uint32_t>           rootsB(components, stream, &tracker);
    detail::DeviceBuffer<unsigned long long> counts(2 * (kQueued + 1), stream, &tracker);
    unsigned long long                       hostCounts[2 * (kQueued + 1)];
    LiveEdge *                               liveIn = liveA.get(), *liveOut = liveB.get();
    uint32_t *                               rootsIn = rootsA.get(), *rootsOut = rootsB.get();
    CHS_CUDA_CHECK(cudaMemcpyAsync(
      counts.get(), counters.get() + 1, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
    while (live > 0)
    {
      const unsigned eb = detail::GridStrideBlocks(live, kThreads, device);
      const unsigned rb = detail::GridStrideBlocks(components, kThreads, device);
      CHS_CUDA_CHECK(cudaMemsetAsync(counts.get() + 2, 0, 2 * kQueued * sizeof(unsigned long long), stream));
      for (unsigned q = 0; q < kQueued; ++q)
      {
        const unsigned long long *liveCount = counts.get() + 2 * q, *rootCount = liveCount + 1;
        unsigned long long *      liveNext = counts.get() + 2 * q + 2, *rootNext = liveNext + 1;
        OfferLiveKernel<<<eb, kThreads, 0, stream>>>(liveIn, liveCount, best.get());
        CHS_CUDA_CHECK_LAUNCH("OfferLiveKernel");
        OtherSideKernel<<<eb, kThreads, 0, stream>>>(liveIn, liveCount, best.get(), other.get());
        CHS_CUDA_CHECK_LAUNCH("OtherSideKernel");
        HookRootsKernel<<<rb, kThreads, 0, stream>>>(
          rootsIn, rootCount, liveCount, best.get(), other.get(), link.get(), tree, counters.get());
        CHS_CUDA_CHECK_LAUNCH("HookRootsKernel");
        CompressRootsKernel<<<rb, kThreads, 0, stream>>>(
          rootsIn, rootCount, liveCount, link.get(), root.get(), best.get());
        CHS_CUDA_CHECK_LAUNCH("CompressRootsKernel");
        KeepLiveKernel<<<eb, kThreads, 0, stream>>>(liveIn, liveCount, root.get(), liveOut, liveNext);
        CHS_CUDA_CHECK_LAUNCH("KeepLiveKernel");
        KeepRootsKernel<<<rb, kThreads, 0, stream>>>(rootsIn, rootCount, liveCount, root.get(), rootsOut, rootNext);
        CHS_CUDA_CHECK_LAUNCH("KeepRootsKernel");
        std::swap(liveIn, liveOut);
        std::swap(rootsIn, rootsOut);
      }
      CHS_CUDA_CHECK(cudaMemcpyAsync(hostCounts, counts.get(), sizeof(hostCounts), cudaMemcpyDeviceToHost, stream));
      CHS_CUDA_CHECK(cudaMemcpyAsync(host, counters.get(), sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
      CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
      for (unsigned q = 0; q < kQueued; ++q)
        rounds += hostCounts[2 * q] > 0 ? 1 : 0;
      live       = hostCounts[2 * kQueued];
      components = hostCounts[2 * kQueued + 1];
      CHS_CUDA_CHECK(cudaMemcpyAsync(
        counts.get(), counts.get() + 2 * kQueued, 2 * sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
    }
  }
  if (host[0] + 1 != n)
    throw std::invalid_argument(NotConnectedMessage(n - host[0], false));
  return rounds;
}

/** The device bytes ImageSpanningTree allocates at most (Boruvka's later rounds reserve theirs): Boruvka's first
 * round, then the sort's scratch and the largest key. */
inline uint64_t
ImageSpanningTreeBytes(const ImageGraph & graph)
{
  const uint64_t n = graph.Pixels();
  return std::max(BoruvkaFirstBytes(n, n * graph.slots), SortKeysScratch(n - 1) + sizeof(unsigned long long));
}

/** The minimum spanning tree of an image's pixel graph (n > 1 pixels on the device): Boruvka's rounds (the first
 * ones tile by tile, src/Engines/SingleLinkage/chsSingleLinkageTileBoruvka.cuh), then the n - 1 tree keys (weight code
 * << keys.shift | edge index) sorted, in `tree` or `spare` (both n - 1 keys), whichever is returned. Shared by the
 * single-linkage and the alpha-tree entries. `codeBits` > 0: the keys are sorted by their weight code alone (of at most
 * codeBits bits), and keys of equal code stay in the order Boruvka found them, which differs from run to run (two radix
 * passes instead of six for 16-bit codes): for the alpha-tree, whose canonical tree does not depend on the order of
 * equal levels; codes of more bits than the key has above its edge index (float levels: 32, with 33-bit indices)
 * are sorted on those it has. */
template <typename TPixel>
const unsigned long long *
ImageSpanningTree(const TPixel *          dPixels,
                  const ImageGraph &      graph,
                  unsigned                components,
                  VectorDistance          distance,
                  EdgeKeys                keys,
                  unsigned long long *    tree,
                  unsigned long long *    spare,
                  cudaStream_t            stream,
                  detail::MemoryTracker & tracker,
                  int                     device,
                  unsigned *              rounds   = nullptr,
                  int                     codeBits = 0)
{
  const uint64_t     n = graph.Pixels(), edges = n - 1;
  const BoruvkaTiles tiles(graph);
  // The key layout's edge indices hold every slot (a wide layout's index bits are more than its slots need).
  if (!keys.Wide() && (n * graph.slots) >> 32)
    throw std::logic_error("32-bit edge keys for an image of 2^32 edge slots or more");
  auto kernel = keys.Wide() ? TileBoruvkaKernel<TPixel, true> : TileBoruvkaKernel<TPixel, false>;
  detail::AllowDynamicShared(kernel, tiles.shared, device);
  const unsigned r = BoruvkaOnDevice(
    n,
    n * graph.slots,
    [&](const BoruvkaArrays & a)
    {
      kernel<<<tiles.tiles, tiles.threads, tiles.shared, stream>>>(
        dPixels, graph, components, distance, tiles, keys, a.root, a.best, a.tree, a.live, a.roots, a.counters);
      CHS_CUDA_CHECK_LAUNCH("TileBoruvkaKernel");
      RenameFarEndsKernel<<<detail::GridStrideBlocks(n, kThreads, device), kThreads, 0, stream>>>(
        a.live, a.counters + 1, a.root);
      CHS_CUDA_CHECK_LAUNCH("RenameFarEndsKernel");
    },
    tree,
    stream,
    tracker,
    device);
  if (rounds)
    *rounds = r;
  if (codeBits > 0)
    return SortKeys(tree, spare, edges, std::min(int(keys.shift) + codeBits, 64), stream, tracker, int(keys.shift));
  return SortKeys(tree, spare, edges, SignificantBits(tree, edges, stream, tracker), stream, tracker);
}

/** PANDORA's first level for an image's minimum spanning tree: every pixel's lightest tree edge (its rank) and that
 * edge's other end, read from the ranks of the edge slots around it (`slotRank`: the rank of each tree edge at its
 * index, 0xffffffff at the others), so that the level needs no atomics on randomly placed vertices. */
static __global__ void
ImageMinimumIncidentKernel(ImageGraph g, const uint32_t * slotRank, uint32_t * minimum, uint32_t * far)
{
  const uint32_t nx = uint32_t(g.nx), ny = uint32_t(g.ny);
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < g.Pixels();
       i += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t x = uint32_t(i) % nx, rest = uint32_t(i) / nx, y = rest % ny, z = rest / ny;
    uint32_t       m = 0xffffffffu, end = uint32_t(i);
    for (unsigned s = 0; s < g.slots; ++s)
    {
      const uint32_t forward = slotRank[i * g.slots + s]; // a slot leaving the image is never a tree edge
      if (forward < m)
      {
        m   = forward;
        end = uint32_t(g.Neighbour(x, y, z, s));
      }
      const int64_t b = g.Backward(x, y, z, s);
      if (b < 0)
        continue;
      const uint32_t backward = slotRank[uint64_t(b) * g.slots + s];
      if (backward < m)
      {
        m   = backward;
        end = uint32_t(b);
      }
    }
    minimum[i] = m;
    far[i]     = end;
  }
}

/** The tree's ends, edge indices and weights by rank, from the image's tree keys sorted by (code, index). */
static __global__ void
ImageTreeKernel(uint64_t                   edges,
                const unsigned long long * sorted,
                ImageGraph                 g,
                EdgeKeys                   keys,
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
    g.Ends(keys.Index(key), a, b);
    U[r]      = a;
    V[r]      = b;
    edge[r]   = keys.Index(key);
    weight[r] = WeightOf(keys.Code(key), isFloat);
  }
}

} // namespace sl

template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkageCUDA(const TPixel *                   pixels,
                       const Grid &                     grid,
                       const ImageGraphParameters &     parameters,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info)
{
  const sl::ImageGraph  graph(grid, parameters.fullyConnected);
  const sl::EdgeKeys    keys = sl::CheckedImageEdgeKeys<TPixel>(grid, parameters, graph, sl::MaximumVertices<TNode>());
  const uint64_t        n = graph.Pixels(), edges = n - 1;
  const unsigned        c        = parameters.components;
  const VectorDistance  distance = parameters.distance;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;
  {
    // The pixels and the tree keys live to the end; Boruvka and the keys' sort, then the tree and the dendrogram.
    const uint64_t ee = edges ? edges : 1;
    tracker.what      = detail::DescribeRun("single-linkage dendrogram", grid);
    detail::ReserveDeviceMemory(
      tracker,
      n * c * sizeof(TPixel) + 2 * ee * sizeof(unsigned long long) +
        std::max(sizeof(unsigned long long) + (edges ? sl::ImageSpanningTreeBytes(graph) : 0),
                 ee * (2 * sizeof(uint32_t) + sizeof(uint64_t) + sizeof(double)) + sl::FinishBytes(n, sizeof(TNode))),
      context.device);
  }

  detail::DeviceBuffer<TPixel> dPixels(n * c, stream, &tracker);
  detail::CopyToDevice(dPixels.get(), pixels, n * c * sizeof(TPixel), stream, context);
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    CheckFinitePixels(dPixels.get(), n, c, stream, tracker, context.device);
  }
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer mstTimer(stream);
  mstTimer.Start();
  detail::DeviceBuffer<unsigned long long> tree(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> spare(edges ? edges : 1, stream, &tracker);
  const unsigned long long *               sorted = edges ? sl::ImageSpanningTree(dPixels.get(),
                                                                    graph,
                                                                    c,
                                                                    distance,
                                                                    keys,
                                                                    tree.get(),
                                                                    spare.get(),
                                                                    stream,
                                                                    tracker,
                                                                    context.device,
                                                                    &result.boruvkaRounds)
                                                          : tree.get();
  detail::DeviceBuffer<uint32_t> dU(edges ? edges : 1, stream, &tracker), dV(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<uint64_t> dEdge(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<double>   dWeight(edges ? edges : 1, stream, &tracker);
  if (edges > 0)
  {
    sl::ImageTreeKernel<<<detail::GridStrideBlocks(edges, sl::kThreads, context.device), sl::kThreads, 0, stream>>>(
      edges, sorted, graph, keys, sl::FloatWeights<TPixel>(c), dU.get(), dV.get(), dEdge.get(), dWeight.get());
    CHS_CUDA_CHECK_LAUNCH("ImageTreeKernel");
  }
  mstTimer.Stop();
  sl::FinishOnDevice(n, dU.get(), dV.get(), dEdge.get(), dWeight.get(), out, mstTimer, result, info, tracker, context);
  return result;
}

} // namespace chs

#define CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA_NODES(TPixel, TNode)                                                 \
  template CudaHierarchicalSegmentation_EXPORT chs::SingleLinkageResult chs::ImageSingleLinkageCUDA<TPixel, TNode>(    \
    const TPixel *,                                                                                                    \
    const chs::Grid &,                                                                                                 \
    const chs::ImageGraphParameters &,                                                                                 \
    const chs::DendrogramArraysT<TNode> &,                                                                             \
    const chs::ExecutionContext &,                                                                                     \
    chs::RunInfo *)
#define CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA(TPixel)                                                              \
  CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA_NODES(TPixel, uint32_t);                                                   \
  CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA_NODES(TPixel, uint64_t)

#endif
