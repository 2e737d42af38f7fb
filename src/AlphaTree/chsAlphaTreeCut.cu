// CUDA alpha-tree queries (include/chs/AlphaTree.h, AlphaTreeCutCUDA and AlphaTreeSaliencyCUDA): the drivers of
// src/AlphaTree/chsAlphaTreeCutKernels.cuh.
#include "chsAlphaTreeCanonicalKernels.cuh"
#include "chsAlphaTreeCutKernels.cuh"
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "chsAlphaTreeRule.h"
#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"

#include <cub/device/device_scan.cuh>

#include <limits>

namespace chs
{

template <typename TNode>
uint64_t
AlphaTreeCutCUDA(const TNode *            parent,
                 const double *           level,
                 const double *           range,
                 uint64_t                 leaves,
                 uint64_t                 nodes,
                 double                   alpha,
                 double                   omega,
                 TNode *                  labels,
                 const ExecutionContext & context,
                 RunInfo *                info)
{
  at::CheckCut(range, alpha, omega);
  if (leaves == 0 || nodes < leaves)
    throw std::invalid_argument("a tree of " + std::to_string(leaves) + " leaves and " + std::to_string(nodes) +
                                " nodes");
  const bool            constrained = omega < std::numeric_limits<double>::infinity();
  constexpr unsigned    kThreads    = 256;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  detail::MemoryTracker tracker;
  tracker.what = "the alpha-tree cut of " + std::to_string(nodes) + " nodes";
  detail::ReserveDeviceMemory(tracker,
                              nodes * (2 * sizeof(TNode) + (constrained ? 2 : 1) * sizeof(double)) + 8 +
                                leaves * 3 * sizeof(TNode) + detail::ScanScratchBytes(leaves) + 1024,
                              device);

  detail::DeviceBuffer<TNode>  dParent(nodes, stream, &tracker), up(nodes, stream, &tracker);
  detail::DeviceBuffer<double> dLevel(nodes, stream, &tracker), dRange(constrained ? nodes : 1, stream, &tracker);
  detail::CopyToDevice(dParent.get(), parent, nodes * sizeof(TNode), stream, context);
  detail::CopyToDevice(dLevel.get(), level, nodes * sizeof(double), stream, context);
  if (constrained)
    detail::CopyToDevice(dRange.get(), range, nodes * sizeof(double), stream, context);
  if (context.progress)
    context.progress(0.3f);

  detail::EventTimer timer(stream);
  timer.Start();
  const unsigned blocks = detail::GridStrideBlocks(nodes, kThreads, device);
  at::CutUpKernel<<<blocks, kThreads, 0, stream>>>(
    dParent.get(), dLevel.get(), constrained ? dRange.get() : nullptr, nodes, alpha, omega, up.get());
  CHS_CUDA_CHECK_LAUNCH("CutUpKernel");
  // Pointer jumping until every node points at its region.
  at::JumpUntilStill(0, nodes, up.get(), blocks, kThreads, stream, tracker);
  // dParent is free now: the regions' first pixels.
  TNode * first = dParent.get();
  CHS_CUDA_CHECK(cudaMemsetAsync(first, 0xff, nodes * sizeof(TNode), stream));
  const unsigned lb = detail::GridStrideBlocks(leaves, kThreads, device);
  at::CutFirstKernel<<<lb, kThreads, 0, stream>>>(up.get(), leaves, first);
  CHS_CUDA_CHECK_LAUNCH("CutFirstKernel");
  detail::DeviceBuffer<TNode> flag(leaves, stream, &tracker), rank(leaves, stream, &tracker),
    dLabels(leaves, stream, &tracker);
  at::CutFlagKernel<<<lb, kThreads, 0, stream>>>(up.get(), first, leaves, flag.get());
  CHS_CUDA_CHECK_LAUNCH("CutFlagKernel");
  size_t bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, flag.get(), rank.get(), leaves, stream));
  {
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, flag.get(), rank.get(), leaves, stream));
  }
  at::CutLabelKernel<<<lb, kThreads, 0, stream>>>(up.get(), first, rank.get(), leaves, dLabels.get());
  CHS_CUDA_CHECK_LAUNCH("CutLabelKernel");
  TNode lastRank = 0, lastFlag = 0;
  ReadBack(lastRank, rank.get() + leaves - 1, stream);
  ReadBack(lastFlag, flag.get() + leaves - 1, stream);
  timer.Stop();
  detail::CopyToHost(labels, dLabels.get(), leaves * sizeof(TNode), stream, context);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  if (context.progress)
    context.progress(1.0f);
  return uint64_t(lastRank) + lastFlag;
}

template <typename TNode>
void
AlphaTreeSaliencyCUDA(const TNode *            parent,
                      const double *           level,
                      uint64_t                 nodes,
                      const Grid &             pixels,
                      float *                  saliency,
                      const ExecutionContext & context,
                      RunInfo *                info)
{
  const at::SaliencyGrid s(pixels);
  if (nodes < pixels.NumberOfVoxels())
    throw std::invalid_argument("a tree of " + std::to_string(nodes) + " nodes for " +
                                std::to_string(pixels.NumberOfVoxels()) + " pixels");
  constexpr unsigned    kThreads = 256;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  tracker.what = "the alpha-tree saliency map of " + std::to_string(nodes) + " nodes";
  detail::ReserveDeviceMemory(
    tracker, nodes * (sizeof(TNode) + sizeof(double)) + s.samples * sizeof(float) + 1024, context.device);

  detail::DeviceBuffer<TNode>  dParent(nodes, stream, &tracker);
  detail::DeviceBuffer<double> dLevel(nodes, stream, &tracker);
  detail::DeviceBuffer<float>  dOut(s.samples, stream, &tracker);
  detail::CopyToDevice(dParent.get(), parent, nodes * sizeof(TNode), stream, context);
  detail::CopyToDevice(dLevel.get(), level, nodes * sizeof(double), stream, context);
  if (context.progress)
    context.progress(0.3f);
  detail::EventTimer timer(stream);
  timer.Start();
  const unsigned blocks = detail::GridStrideBlocks(s.samples, kThreads, context.device);
  for (unsigned k = 0; k <= s.dimension; ++k)
  {
    at::SaliencyKernel<<<blocks, kThreads, 0, stream>>>(s, dParent.get(), dLevel.get(), k, dOut.get());
    CHS_CUDA_CHECK_LAUNCH("SaliencyKernel");
  }
  timer.Stop();
  detail::CopyToHost(saliency, dOut.get(), s.samples * sizeof(float), stream, context);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  if (context.progress)
    context.progress(1.0f);
}

namespace at
{
template <typename TNode>
static __global__ void
EdgeSaliencyKernel(const TNode *        parent,
                   const double *       level,
                   const TNode *        u,
                   const TNode *        v,
                   uint64_t             count,
                   uint64_t             nodes,
                   double *             saliency,
                   unsigned long long * bad)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const TNode a = u[i], b = v[i];
    if (a >= nodes || b >= nodes)
    {
      atomicMin(bad, (unsigned long long)i);
      continue;
    }
    saliency[i] = level[CommonAncestor(parent, a, b)];
  }
}
} // namespace at

template <typename TNode>
void
AlphaTreeEdgeSaliencyCUDA(const TNode *            parent,
                          const double *           level,
                          uint64_t                 nodes,
                          const TNode *            u,
                          const TNode *            v,
                          uint64_t                 count,
                          double *                 saliency,
                          const ExecutionContext & context,
                          RunInfo *                info)
{
  constexpr unsigned    kThreads = 256;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  const uint64_t        cc = count ? count : 1;
  tracker.what             = "the alpha-tree edge saliency of " + std::to_string(nodes) + " nodes";
  detail::ReserveDeviceMemory(tracker,
                              nodes * (sizeof(TNode) + sizeof(double)) + cc * (2 * sizeof(TNode) + sizeof(double)) +
                                sizeof(unsigned long long),
                              context.device);

  detail::DeviceBuffer<TNode>  dParent(nodes, stream, &tracker), dU(cc, stream, &tracker), dV(cc, stream, &tracker);
  detail::DeviceBuffer<double> dLevel(nodes, stream, &tracker), dOut(cc, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> bad(1, stream, &tracker);
  detail::CopyToDevice(dParent.get(), parent, nodes * sizeof(TNode), stream, context);
  detail::CopyToDevice(dLevel.get(), level, nodes * sizeof(double), stream, context);
  if (count)
  {
    detail::CopyToDevice(dU.get(), u, count * sizeof(TNode), stream, context);
    detail::CopyToDevice(dV.get(), v, count * sizeof(TNode), stream, context);
  }
  CHS_CUDA_CHECK(cudaMemcpyAsync(bad.get(), &count, sizeof(count), cudaMemcpyHostToDevice, stream));
  if (context.progress)
    context.progress(0.3f);
  detail::EventTimer timer(stream);
  timer.Start();
  if (count)
  {
    at::EdgeSaliencyKernel<<<detail::GridStrideBlocks(count, kThreads, context.device), kThreads, 0, stream>>>(
      dParent.get(), dLevel.get(), dU.get(), dV.get(), count, nodes, dOut.get(), bad.get());
    CHS_CUDA_CHECK_LAUNCH("EdgeSaliencyKernel");
  }
  timer.Stop();
  unsigned long long first = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&first, bad.get(), sizeof(first), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (first < count)
  {
    TNode ends[2];
    CHS_CUDA_CHECK(cudaMemcpyAsync(ends, dU.get() + first, sizeof(TNode), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(ends + 1, dV.get() + first, sizeof(TNode), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    throw std::invalid_argument("edge " + std::to_string(first) + " joins nodes " + std::to_string(ends[0]) + " and " +
                                std::to_string(ends[1]) + "; the tree has " + std::to_string(nodes) + " nodes");
  }
  if (count)
    detail::CopyToHost(saliency, dOut.get(), count * sizeof(double), stream, context);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  if (context.progress)
    context.progress(1.0f);
}

#define CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CUDA(TNode)                                                                 \
  template CudaHierarchicalSegmentation_EXPORT uint64_t AlphaTreeCutCUDA<TNode>(const TNode *,                         \
                                                                                const double *,                        \
                                                                                const double *,                        \
                                                                                uint64_t,                              \
                                                                                uint64_t,                              \
                                                                                double,                                \
                                                                                double,                                \
                                                                                TNode *,                               \
                                                                                const ExecutionContext &,              \
                                                                                RunInfo *);                            \
  template CudaHierarchicalSegmentation_EXPORT void     AlphaTreeSaliencyCUDA<TNode>(                                  \
    const TNode *, const double *, uint64_t, const Grid &, float *, const ExecutionContext &, RunInfo *);          \
  template CudaHierarchicalSegmentation_EXPORT void AlphaTreeEdgeSaliencyCUDA<TNode>(const TNode *,                    \
                                                                                     const double *,                   \
                                                                                     uint64_t,                         \
                                                                                     const TNode *,                    \
                                                                                     const TNode *,                    \
                                                                                     uint64_t,                         \
                                                                                     double *,                         \
                                                                                     const ExecutionContext &,         \
                                                                                     RunInfo *);
CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CUDA(uint32_t)
CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CUDA(uint64_t)
#undef CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CUDA

} // namespace chs
