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

template <typename T>
void
ReadBack(T & host, const T * device, cudaStream_t stream)
{
  CHS_CUDA_CHECK(cudaMemcpyAsync(&host, device, sizeof(T), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/** Boruvka's rounds on n vertices. The first round is the caller's: firstOffer(best) fills every vertex's lightest
 * incident key, firstKeep(out, count) appends the crossing edges; later rounds run on the compacted keys. Writes the
 * n - 1 tree keys to `tree` (in no particular order) and returns the number of rounds; throws when the graph is not
 * connected (`tree` then names a promised tree in the message). */
template <class E, class FOffer, class FKeep>
unsigned
BoruvkaOnDevice(uint64_t n, E edges, uint64_t liveCapacity, FOffer && firstOffer, FKeep && firstKeep,
                unsigned long long * tree, cudaStream_t stream, detail::MemoryTracker & tracker, int device)
{
  const unsigned                                blocks = detail::GridStrideBlocks(n, kThreads, device);
  detail::DeviceBuffer<uint32_t>                label(n, stream, &tracker), link(n, stream, &tracker),
    root(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long>      best(n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long>      counters(2, stream, &tracker); // tree edges, live edges
  detail::DeviceBuffer<unsigned long long>      liveA(liveCapacity ? liveCapacity : 1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 2 * sizeof(unsigned long long), stream));
  IotaKernel<<<blocks, kThreads, 0, stream>>>(label.get(), n);
  CHS_CUDA_CHECK_LAUNCH("IotaKernel");

  auto merge = [&] {
    HookKernel<<<blocks, kThreads, 0, stream>>>(n, edges, label.get(), best.get(), link.get(), tree, counters.get());
    CHS_CUDA_CHECK_LAUNCH("HookKernel");
    CompressHooksKernel<<<blocks, kThreads, 0, stream>>>(n, label.get(), link.get(), root.get());
    CHS_CUDA_CHECK_LAUNCH("CompressHooksKernel");
    RelabelKernel<<<blocks, kThreads, 0, stream>>>(n, label.get(), root.get());
    CHS_CUDA_CHECK_LAUNCH("RelabelKernel");
  };

  firstOffer(best.get(), label.get());
  merge();
  firstKeep(liveA.get(), counters.get() + 1, label.get());
  unsigned long long live = 0;
  ReadBack(live, counters.get() + 1, stream);
  unsigned rounds = 1;
  if (live > 0)
  {
    detail::DeviceBuffer<unsigned long long> liveB(live, stream, &tracker);
    unsigned long long *                     in = liveA.get(), *out = liveB.get();
    while (live > 0)
    {
      const unsigned edgeBlocks = detail::GridStrideBlocks(live, kThreads, device);
      CHS_CUDA_CHECK(cudaMemsetAsync(best.get(), 0xff, n * sizeof(unsigned long long), stream));
      OfferKernel<<<edgeBlocks, kThreads, 0, stream>>>(in, live, edges, label.get(), best.get());
      CHS_CUDA_CHECK_LAUNCH("OfferKernel");
      merge();
      CHS_CUDA_CHECK(cudaMemsetAsync(counters.get() + 1, 0, sizeof(unsigned long long), stream));
      KeepCrossingKernel<<<edgeBlocks, kThreads, 0, stream>>>(in, live, edges, label.get(), out, counters.get() + 1);
      CHS_CUDA_CHECK_LAUNCH("KeepCrossingKernel");
      ReadBack(live, counters.get() + 1, stream);
      std::swap(in, out);
      ++rounds;
    }
  }
  unsigned long long found = 0;
  ReadBack(found, counters.get(), stream);
  if (found + 1 != n)
    throw std::invalid_argument(NotConnectedMessage(n - found, false));
  return rounds;
}

/** The tree's ends, edge indices and weights by rank, from the image's tree keys sorted by (code, index). */
static __global__ void
ImageTreeKernel(uint64_t edges, const unsigned long long * sorted, ImageGraph g, bool isFloat, uint32_t * U,
                uint32_t * V, uint64_t * edge, double * weight)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const unsigned long long key = sorted[r];
    uint32_t                 a, b;
    g.Ends(key & 0xffffffffull, a, b);
    U[r] = a;
    V[r] = b;
    edge[r] = key & 0xffffffffull;
    weight[r] = WeightOf(uint32_t(key >> 32), isFloat);
  }
}

template <typename T>
static __global__ void
FindNaNKernel(const T * p, uint64_t count, unsigned long long * first)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    if (p[i] != p[i])
      atomicMin(first, (unsigned long long)i);
}

/** The first NaN among `count` values, or count. */
template <typename T>
uint64_t
FirstNaN(const T * d, uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker, int device)
{
  detail::DeviceBuffer<unsigned long long> first(1, stream, &tracker);
  const unsigned long long                 none = count;
  CHS_CUDA_CHECK(cudaMemcpyAsync(first.get(), &none, sizeof(none), cudaMemcpyHostToDevice, stream));
  FindNaNKernel<<<detail::GridStrideBlocks(count, kThreads, device), kThreads, 0, stream>>>(d, count, first.get());
  CHS_CUDA_CHECK_LAUNCH("FindNaNKernel");
  unsigned long long host = 0;
  ReadBack(host, first.get(), stream);
  return host;
}

} // namespace sl

template <typename TPixel>
SingleLinkageResult
ImageSingleLinkageCUDA(const TPixel * pixels, const Grid & grid, const ImageGraphParameters & parameters,
                       const DendrogramArrays & out, const ExecutionContext & context, RunInfo * info)
{
  const sl::ImageGraph graph(grid, parameters.fullyConnected);
  sl::CheckImageGraph(grid, parameters, graph);
  const uint64_t       n = graph.Pixels(), edges = n - 1;
  const unsigned       c = parameters.components;
  const VectorDistance distance = parameters.distance;
  detail::DeviceScope  scope(context.device);
  const auto           stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;

  detail::DeviceBuffer<TPixel> dPixels(n * c, stream, &tracker);
  detail::CopyToDevice(dPixels.get(), pixels, n * c * sizeof(TPixel), stream, context);
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    const uint64_t nan = sl::FirstNaN(dPixels.get(), n * c, stream, tracker, context.device);
    if (nan < n * c)
      throw std::invalid_argument("pixel " + std::to_string(nan / c) + " is NaN");
  }
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer mstTimer(stream), dendrogramTimer(stream);
  mstTimer.Start();
  const unsigned                           blocks = detail::GridStrideBlocks(n, sl::kThreads, context.device);
  detail::DeviceBuffer<unsigned long long> tree(edges ? edges : 1, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> spare(edges ? edges : 1, stream, &tracker);
  const TPixel *                           px = dPixels.get();
  if (edges > 0)
  {
    result.boruvkaRounds = sl::BoruvkaOnDevice(
      n,
      sl::ImageEdges{ graph },
      n * graph.slots,
      [&](unsigned long long * best, const uint32_t *) {
        sl::ImageOfferKernel<<<blocks, sl::kThreads, 0, stream>>>(px, graph, c, distance, best);
        CHS_CUDA_CHECK_LAUNCH("ImageOfferKernel");
      },
      [&](unsigned long long * live, unsigned long long * count, const uint32_t * label) {
        sl::ImageKeepCrossingKernel<<<blocks, sl::kThreads, 0, stream>>>(px, graph, c, distance, label, live, count);
        CHS_CUDA_CHECK_LAUNCH("ImageKeepCrossingKernel");
      },
      tree.get(),
      stream,
      tracker,
      context.device);
  }
  const int bits = edges ? sl::SignificantBits(tree.get(), edges, stream, tracker) : 0;
  const unsigned long long * sorted = edges ? sl::SortKeys(tree.get(), spare.get(), edges, bits, stream, tracker) : tree.get();
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
  if (context.progress)
    context.progress(0.5f);

  detail::DeviceBuffer<uint32_t> dParent(2 * n - 1, stream, &tracker);
  dendrogramTimer.Start();
  result.contractionLevels = sl::PandoraOnDevice(dU.get(), dV.get(), n, dParent.get(), stream, tracker, context.device);
  dendrogramTimer.Stop();
  if (context.progress)
    context.progress(0.8f);
  sl::DownloadDendrogram(out, n, dParent.get(), dWeight.get(), dEdge.get(), dU.get(), dV.get(), stream, context);
  result.mstMilliseconds = mstTimer.Milliseconds();
  result.dendrogramMilliseconds = dendrogramTimer.Milliseconds();
  if (info)
  {
    info->kernelMilliseconds = result.mstMilliseconds + result.dendrogramMilliseconds;
    info->peakDeviceBytes = tracker.peak;
  }
  return result;
}

} // namespace chs

#define CHS_INSTANTIATE_SINGLE_LINKAGE_IMAGE_CUDA(TPixel)                                                          \
  template CudaHierarchicalSegmentation_EXPORT chs::SingleLinkageResult chs::ImageSingleLinkageCUDA<TPixel>(       \
    const TPixel *, const chs::Grid &, const chs::ImageGraphParameters &, const chs::DendrogramArrays &,            \
    const chs::ExecutionContext &, chs::RunInfo *)

#endif
