// The alpha-tree's attribute filter in one call (include/chs/AttributeHierarchy.h, AlphaTreeFilterRegions): the
// image graph's edges, the tree's saliency on them, the single-linkage dendrogram of that graph and its filter. The
// CUDA backend writes the image graph on the device and passes device arrays from step to step (the entries take host
// or device pointers), so that only the tree goes up and only the result comes down; the CPU reference
// (chsAttributeHierarchyCPU.cxx) runs the same entries on host arrays.
#include "AttributeHierarchy/chsAttributeHierarchyBackends.h"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"
#include "chs/AlphaTree.h"
#include "Common/chsCudaCommon.cuh"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace chs
{
namespace atf
{

/** The edges of pixel row r (y, z) in edge-index order, from `offset[r]` (ImageGraphEdges' order, include/chs/
 * SingleLinkage.h): one thread per pixel, which finds its first edge's place from the row's slot ranges. */
template <typename TNode>
__global__ void
ImageEdgesKernel(sl::ImageGraph   graph,
                 const uint64_t * offset,
                 uint32_t *       u,
                 uint32_t *       v,
                 TNode *          wu,
                 TNode *          wv,
                 uint64_t *       edge)
{
  const uint64_t pixels = graph.Pixels();
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < pixels; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const int64_t x = int64_t(p % uint64_t(graph.nx)), r = int64_t(p / uint64_t(graph.nx));
    const int64_t y = r % graph.ny, z = r / graph.ny;
    uint64_t      at = offset[r];
    int64_t       lo[13], hi[13];
    for (unsigned s = 0; s < graph.slots; ++s)
    {
      graph.SlotRange(y, z, s, lo[s], hi[s]);
      at += uint64_t(max(int64_t(0), min(x, hi[s]) - lo[s])); // the edges of the pixels before x in this row, slot s
    }
    for (unsigned s = 0; s < graph.slots; ++s)
      if (x >= lo[s] && x < hi[s])
      {
        const int64_t q = int64_t(p) + (int64_t(graph.dz[s]) * graph.ny + graph.dy[s]) * graph.nx + graph.dx[s];
        u[at]           = uint32_t(p);
        v[at]           = uint32_t(q);
        if (wu)
        {
          wu[at] = TNode(p);
          wv[at] = TNode(q);
        }
        edge[at] = p * graph.slots + s;
        ++at;
      }
  }
}

/** The image edge index of each tree edge: edge[r] is the edge's place in the edge list. */
__global__ void
EdgeIdsKernel(uint64_t * edge, const uint64_t * ids, uint64_t count)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < count; r += uint64_t(gridDim.x) * blockDim.x)
    edge[r] = ids[edge[r]];
}

} // namespace atf

template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegionsCUDA(const TNode *                    parent,
                           const double *                   level,
                           uint64_t                         nodes,
                           const Grid &                     grid,
                           bool                             fullyConnected,
                           RegionAttribute                  attribute,
                           double                           threshold,
                           const DendrogramArraysT<TNode> & out,
                           const ExecutionContext &         context,
                           RunInfo *                        info)
{
  constexpr unsigned  kThreads = 256;
  detail::DeviceScope scope(context.device);
  const auto          stream = static_cast<cudaStream_t>(context.stream);
  // The edge count (and the checks of the image graph's size) as the host's ImageGraphEdges gives them.
  const uint64_t        m = ImageGraphEdges(grid, fullyConnected, nullptr, nullptr, nullptr);
  const uint64_t        n = grid.NumberOfVoxels();
  const sl::ImageGraph  graph(grid, fullyConnected);
  const int64_t         rows = graph.ny * graph.nz;
  std::vector<uint64_t> offset(size_t(rows) + 1, 0);
  for (int64_t r = 0; r < rows; ++r)
  {
    uint64_t count = 0;
    for (unsigned s = 0; s < graph.slots; ++s)
    {
      int64_t lo, hi;
      graph.SlotRange(r % graph.ny, r / graph.ny, s, lo, hi);
      count += uint64_t(std::max<int64_t>(0, hi - lo));
    }
    offset[size_t(r) + 1] = offset[size_t(r)] + count;
  }
  if (offset.back() != m)
    throw std::logic_error("AlphaTreeFilterRegions: the image graph's rows give " + std::to_string(offset.back()) +
                           " edges, not " + std::to_string(m));
  constexpr bool        wide = sizeof(TNode) == sizeof(uint64_t);
  const uint64_t        mm = m ? m : 1, nn = n > 1 ? n - 1 : 1;
  detail::MemoryTracker tracker;
  tracker.what = "the alpha-tree filter of " + std::to_string(n) + " pixels";
  detail::ReserveDeviceMemory(tracker,
                              (offset.size()) * sizeof(uint64_t) +
                                mm * (2 * sizeof(uint32_t) + 2 * sizeof(uint64_t) + (wide ? 2 * sizeof(TNode) : 0)) +
                                (2 * n - 1) * sizeof(TNode) +
                                nn * (sizeof(double) + sizeof(uint64_t) + 2 * sizeof(TNode)),
                              context.device);
  using detail::DeviceBuffer;
  DeviceBuffer<uint64_t>               dOffset(offset.size(), stream, &tracker);
  auto                                 ids      = std::make_unique<DeviceBuffer<uint64_t>>(mm, stream, &tracker);
  auto                                 u        = std::make_unique<DeviceBuffer<uint32_t>>(mm, stream, &tracker);
  auto                                 v        = std::make_unique<DeviceBuffer<uint32_t>>(mm, stream, &tracker);
  auto                                 saliency = std::make_unique<DeviceBuffer<double>>(mm, stream, &tracker);
  std::unique_ptr<DeviceBuffer<TNode>> wu, wv; // 64-bit ends for the saliency of a tree with 64-bit ids
  if (wide)
  {
    wu = std::make_unique<DeviceBuffer<TNode>>(mm, stream, &tracker);
    wv = std::make_unique<DeviceBuffer<TNode>>(mm, stream, &tracker);
  }
  detail::EventTimer timer(stream);
  timer.Start();
  detail::CopyToDevice(dOffset.get(), offset.data(), offset.size() * sizeof(uint64_t), stream, context);
  atf::ImageEdgesKernel<TNode><<<detail::GridStrideBlocks(n, kThreads, context.device), kThreads, 0, stream>>>(
    graph, dOffset.get(), u->get(), v->get(), wide ? wu->get() : nullptr, wide ? wv->get() : nullptr, ids->get());
  CHS_CUDA_CHECK_LAUNCH("ImageEdgesKernel");
  timer.Stop();
  double kernelMs = timer.Milliseconds();
  // The steps, on device arrays. Their own progress reports are not passed on: the filter's last.
  ExecutionContext quiet = context;
  quiet.progress         = nullptr;
  const TNode * eu       = wide ? wu->get() : reinterpret_cast<const TNode *>(u->get());
  const TNode * ev       = wide ? wv->get() : reinterpret_cast<const TNode *>(v->get());
  RunInfo       step;
  AlphaTreeEdgeSaliency(parent, level, nodes, eu, ev, m, saliency->get(), quiet, &step);
  kernelMs += step.kernelMilliseconds;
  uint64_t peak = step.peakDeviceBytes;
  wu.reset();
  wv.reset();
  DeviceBuffer<TNode>    tParent(2 * n - 1, stream, &tracker), tU(nn, stream, &tracker), tV(nn, stream, &tracker);
  DeviceBuffer<double>   tWeight(nn, stream, &tracker);
  DeviceBuffer<uint64_t> tEdge(nn, stream, &tracker);
  const DendrogramArraysT<TNode> tree{ tParent.get(), tWeight.get(), tEdge.get(), tU.get(), tV.get() };
  const SingleLinkageResult      linkage =
    GraphSingleLinkage(u->get(), v->get(), saliency->get(), m, n, false, tree, quiet, &step);
  kernelMs += step.kernelMilliseconds;
  peak = std::max(peak, step.peakDeviceBytes);
  u.reset();
  v.reset();
  saliency.reset();
  timer.Start();
  if (n > 1)
  {
    atf::EdgeIdsKernel<<<detail::GridStrideBlocks(n - 1, kThreads, context.device), kThreads, 0, stream>>>(
      tEdge.get(), ids->get(), n - 1);
    CHS_CUDA_CHECK_LAUNCH("EdgeIdsKernel");
  }
  timer.Stop();
  kernelMs += timer.Milliseconds();
  ids.reset();
  DendrogramInputT<TNode> in;
  in.vertices                = n;
  in.parent                  = tParent.get();
  in.weight                  = tWeight.get();
  in.edge                    = tEdge.get();
  in.u                       = tU.get();
  in.v                       = tV.get();
  SingleLinkageResult result = FilterRegions(in, attribute, threshold, out, context, &step);
  kernelMs += step.kernelMilliseconds;
  peak                          = std::max(peak, step.peakDeviceBytes);
  result.mstMilliseconds        = linkage.mstMilliseconds;
  result.dendrogramMilliseconds = linkage.dendrogramMilliseconds + result.dendrogramMilliseconds;
  if (info)
  {
    info->kernelMilliseconds  = kernelMs;
    info->peakDeviceBytes     = tracker.peak + peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  return result;
}

template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegions(const TNode *                    parent,
                       const double *                   level,
                       uint64_t                         nodes,
                       const Grid &                     grid,
                       bool                             fullyConnected,
                       RegionAttribute                  attribute,
                       double                           threshold,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info)
{
  return detail::OnBackend(
    context,
    info,
    [&]
    {
      return AlphaTreeFilterRegionsCUDA(
        parent, level, nodes, grid, fullyConnected, attribute, threshold, out, context, info);
    },
    [&] {
      return AlphaTreeFilterRegionsCPU(parent, level, nodes, grid, fullyConnected, attribute, threshold, out, context);
    });
}

#define CHS_INSTANTIATE_ALPHA_TREE_FILTER(TNode)                                                                       \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult AlphaTreeFilterRegions<TNode>(                      \
    const TNode *,                                                                                                     \
    const double *,                                                                                                    \
    uint64_t,                                                                                                          \
    const Grid &,                                                                                                      \
    bool,                                                                                                              \
    RegionAttribute,                                                                                                   \
    double,                                                                                                            \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *)
CHS_INSTANTIATE_ALPHA_TREE_FILTER(uint32_t);
CHS_INSTANTIATE_ALPHA_TREE_FILTER(uint64_t);

} // namespace chs
