// CUDA single-linkage dendrograms: PANDORA's host-side driver (kernels in
// src/Engines/SingleLinkage/chsSingleLinkagePandora.cuh), the sorts, the download, and the graph entry (edge arrays:
// validation, the sort by (weight, index), the tree check or Boruvka's minimum spanning tree, then PANDORA).
#include "Common/chsDeviceHelpers.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "chsSingleLinkage.cuh"
#include "chsSingleLinkagePandora.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <future>
#include <memory>
#include <type_traits>

namespace chs
{
namespace sl
{
namespace
{

unsigned
Blocks(uint64_t items, int device)
{
  return detail::GridStrideBlocks(items ? items : 1, kThreads, device);
}

/** Exclusive sum of flags[0 .. count) into sums[0 .. count] (the total last); flags[count] must be 0. */
void
ExclusiveSum(const uint32_t *        flags,
             uint32_t *              sums,
             uint64_t                count,
             cudaStream_t            stream,
             detail::MemoryTracker & tracker)
{
  size_t bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, flags, sums, count + 1, stream));
  detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, flags, sums, count + 1, stream));
}

int
BitWidth(uint64_t v)
{
  int bits = 0;
  while (v)
  {
    ++bits;
    v >>= 1;
  }
  return std::max(bits, 1);
}

__global__ void
MaxKernel(const unsigned long long * keys, uint64_t count, unsigned long long * result)
{
  unsigned long long m = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    m = keys[i] > m ? keys[i] : m;
  for (int o = 16; o > 0; o /= 2)
  {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, m, o);
    m                              = other > m ? other : m;
  }
  if ((threadIdx.x & 31) == 0 && m != 0)
    atomicMax(result, m);
}

template <typename TNode>
__global__ void
SingleVertexKernel(TNode * parent)
{
  parent[0] = 0;
}

} // namespace

uint64_t
SortKeysScratch(uint64_t count)
{
  size_t                                bytes = 0;
  cub::DoubleBuffer<unsigned long long> keys(nullptr, nullptr);
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, count, 0, 64));
  return bytes;
}

namespace
{
template <typename K, typename V>
uint64_t
PairsScratch(uint64_t count)
{
  size_t               bytes = 0;
  cub::DoubleBuffer<K> keys(nullptr, nullptr);
  cub::DoubleBuffer<V> values(nullptr, nullptr);
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, count, 0, int(8 * sizeof(K))));
  return bytes;
}

template <typename K>
uint64_t
PairsScratch(uint64_t count, unsigned valueBytes)
{
  return valueBytes == 8 ? PairsScratch<K, unsigned long long>(count) : PairsScratch<K, uint32_t>(count);
}
} // namespace

uint64_t
SortPairsScratch(uint64_t count, unsigned keyBytes, unsigned valueBytes)
{
  switch (keyBytes)
  {
    case 1:
      return PairsScratch<uint8_t>(count, valueBytes);
    case 2:
      return PairsScratch<uint16_t>(count, valueBytes);
    case 4:
      return PairsScratch<uint32_t>(count, valueBytes);
    default:
      return PairsScratch<unsigned long long>(count, valueBytes);
  }
}

uint64_t
PandoraBytes(uint64_t n, unsigned nodeBytes)
{
  if (n < 2)
    return 0;
  const uint64_t edges = n - 1, allVertices = 2 * n + kMaximumLevels, half = edges / 2 + 1;
  // The levels' arrays live to the end; the scans' scratch while the levels contract, the chains, ranks and their
  // sort's scratch during the expansion.
  const uint64_t levels = allVertices * 2 * sizeof(uint32_t) + edges * (sizeof(uint8_t) + sizeof(uint32_t)) +
                          n * 2 * sizeof(uint32_t) + n * sizeof(uint2) + (n + 1) * 2 * sizeof(uint32_t) +
                          (edges + 1) * 2 * sizeof(uint32_t) + half * 6 * sizeof(uint32_t) +
                          (kMaximumLevels + 1) * sizeof(LevelSize) + 3 * sizeof(uint32_t);
  return levels + std::max(detail::ScanScratchBytes(std::max(n, edges) + 1),
                           edges * 2 * (nodeBytes + sizeof(uint32_t)) + SortPairsScratch(edges, nodeBytes));
}

uint64_t
FinishBytes(uint64_t n, unsigned nodeBytes)
{
  const uint64_t edges = n - 1;
  return (2 * n - 1) * nodeBytes + std::max(PandoraBytes(n, nodeBytes), (edges ? edges : 1) * sizeof(uint32_t) + 4);
}

template <typename TNode>
unsigned
PandoraOnDevice(const uint32_t *        dU,
                const uint32_t *        dV,
                uint64_t                n,
                TNode *                 dParent,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                int                     device,
                const FirstLevel &      first)
{
  const uint64_t edges = n - 1;
  if (edges == 0)
  {
    SingleVertexKernel<<<1, 1, 0, stream>>>(dParent);
    CHS_CUDA_CHECK_LAUNCH("SingleVertexKernel");
    return 0;
  }
  // Vertices of all levels together: n + at most n / 2 + n / 4 + ... (each level has at most half the edges).
  const uint64_t                 allVertices = 2 * n + kMaximumLevels;
  const uint64_t                 half        = edges / 2 + 1;
  detail::DeviceBuffer<uint32_t> minRank(allVertices, stream, &tracker), up(allVertices, stream, &tracker);
  detail::DeviceBuffer<uint8_t>  edgeLevel(edges, stream, &tracker);
  detail::DeviceBuffer<uint32_t> edgeVertex(edges, stream, &tracker);
  detail::DeviceBuffer<uint32_t> minPos(n, stream, &tracker), root(n, stream, &tracker);
  // A level's vertices' (lightest edge, next level's vertex), written once the pointers `ptr` are no longer needed:
  // they share the buffer.
  detail::DeviceBuffer<uint2>    vertex(n, stream, &tracker);
  uint32_t * const               ptr = reinterpret_cast<uint32_t *>(vertex.get());
  detail::DeviceBuffer<uint32_t> vertexFlag(n + 1, stream, &tracker), vertexSum(n + 1, stream, &tracker);
  detail::DeviceBuffer<uint32_t> edgeFlag(edges + 1, stream, &tracker), edgeSum(edges + 1, stream, &tracker);
  detail::DeviceBuffer<uint32_t> levelR0(half, stream, &tracker), levelU0(half, stream, &tracker),
    levelV0(half, stream, &tracker), levelR1(half, stream, &tracker), levelU1(half, stream, &tracker),
    levelV1(half, stream, &tracker);
  // Sizes of the levels, and a violation found on the device (level + 1, vertices, edges).
  detail::DeviceBuffer<LevelSize> sizes(kMaximumLevels + 1, stream, &tracker);
  detail::DeviceBuffer<uint32_t>  broken(3, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(broken.get(), 0, 3 * sizeof(uint32_t), stream));
  FirstLevelKernel<<<1, 1, 0, stream>>>(sizes.get(), uint32_t(n), uint32_t(edges));
  CHS_CUDA_CHECK_LAUNCH("FirstLevelKernel");
  uint32_t * const nextR[2] = { levelR0.get(), levelR1.get() };
  uint32_t * const nextU[2] = { levelU0.get(), levelU1.get() };
  uint32_t * const nextV[2] = { levelV0.get(), levelV1.get() };

  // Levels are queued with bounds on their sizes (mb vertices, kb edges; exact after a read-back) and their sizes
  // are read back after a large level or after four: 5 read-backs instead of 13 on a 4096^2 image's tree.
  constexpr uint64_t  kLargeLevel = uint64_t(1) << 22;
  constexpr int       kQueued     = 4;
  LevelOffsets<TNode> levels{};
  uint64_t            offset = 0, mb = n, kb = edges;
  const uint32_t *    R     = nullptr; // level 0: positions are ranks
  const uint32_t *    U     = dU;
  const uint32_t *    V     = dV;
  int                 level = 0, last = -1, queued = 0;
  for (; last < 0; ++level)
  {
    if (level >= kMaximumLevels)
      throw std::logic_error("PANDORA: more contraction levels than a tree of this size can have");
    levels.offset[level]   = TNode(offset);
    const LevelSize * size = sizes.get() + level;
    const unsigned    vb = Blocks(mb, device), eb = Blocks(kb, device);
    const bool        given  = level == 0 && first.minimum;
    const uint32_t *  lowest = given ? first.minimum : minPos.get();
    if (!given)
    {
      CHS_CUDA_CHECK(cudaMemsetAsync(minPos.get(), 0xff, mb * sizeof(uint32_t), stream));
      if (kb > 0)
      {
        MinimumIncidentKernel<<<eb, kThreads, 0, stream>>>(size, U, V, minPos.get());
        CHS_CUDA_CHECK_LAUNCH("MinimumIncidentKernel");
      }
    }
    PointAcrossKernel<<<vb, kThreads, 0, stream>>>(
      size, lowest, R, U, V, given ? first.far : nullptr, minRank.get() + offset, ptr);
    CHS_CUDA_CHECK_LAUNCH("PointAcrossKernel");
    FindRootsKernel<<<vb, kThreads, 0, stream>>>(size, mb, ptr, root.get(), vertexFlag.get());
    CHS_CUDA_CHECK_LAUNCH("FindRootsKernel");
    CHS_CUDA_CHECK(cudaMemsetAsync(vertexFlag.get() + mb, 0, sizeof(uint32_t), stream));
    ExclusiveSum(vertexFlag.get(), vertexSum.get(), mb, stream, tracker);
    NameSupervertexKernel<<<vb, kThreads, 0, stream>>>(
      size, root.get(), vertexSum.get(), lowest, up.get() + offset, vertex.get());
    CHS_CUDA_CHECK_LAUNCH("NameSupervertexKernel");
    const int next = level & 1;
    if (kb > 0)
    {
      ClassifyEdgesKernel<<<eb, kThreads, 0, stream>>>(
        size, kb, R, U, V, vertex.get(), uint32_t(level + 1), edgeFlag.get(), edgeLevel.get(), edgeVertex.get());
      CHS_CUDA_CHECK_LAUNCH("ClassifyEdgesKernel");
    }
    CHS_CUDA_CHECK(cudaMemsetAsync(edgeFlag.get() + kb, 0, sizeof(uint32_t), stream));
    ExclusiveSum(edgeFlag.get(), edgeSum.get(), kb, stream, tracker);
    if (kb > 0)
    {
      GatherAlphaKernel<<<eb, kThreads, 0, stream>>>(
        size, R, U, V, edgeFlag.get(), edgeSum.get(), vertex.get(), nextR[next], nextU[next], nextV[next]);
      CHS_CUDA_CHECK_LAUNCH("GatherAlphaKernel");
    }
    NextLevelKernel<<<1, 1, 0, stream>>>(
      size, vertexSum.get() + mb, edgeSum.get() + kb, uint32_t(level), sizes.get() + level + 1, broken.get());
    CHS_CUDA_CHECK_LAUNCH("NextLevelKernel");
    offset += mb;
    R = nextR[next];
    U = nextU[next];
    V = nextV[next];
    ++queued;
    if (kb > kLargeLevel || kb == 0 || queued == kQueued)
    {
      // Read the sizes back: the first level without an edge is the last.
      LevelSize host[kMaximumLevels + 1];
      uint32_t  bad[3];
      detail::ReadBackBytes(host, sizes.get(), (level + 2) * sizeof(LevelSize), stream);
      detail::ReadBackBytes(bad, broken.get(), sizeof(bad), stream);
      if (bad[0])
        throw std::logic_error("PANDORA: level " + std::to_string(bad[0] - 1) + " contracted into " +
                               std::to_string(bad[1]) + " vertices and " + std::to_string(bad[2]) +
                               " edges, which is not a tree");
      for (int l = level - queued + 1; l <= level && last < 0; ++l)
        if (host[l].k == 0)
          last = l;
      queued = 0;
      mb     = host[level + 1].m;
      kb     = host[level + 1].k;
      // A last level found here ends the loop; one that is the next level is queued like any other.
    }
    else
    {
      kb = (kb - 1) / 2;
      mb = kb + 1;
    }
  }
  level                 = last;
  offset                = levels.offset[last];
  const TNode rootChain = TNode(offset + 1);

  // Expansion and the final sort by (chain, rank): a stable radix sort of the chains, with the ranks as values.
  detail::DeviceBuffer<TNode>    chainA(edges, stream, &tracker), chainB(edges, stream, &tracker);
  detail::DeviceBuffer<uint32_t> rankA(edges, stream, &tracker), rankB(edges, stream, &tracker);
  const unsigned                 eb = Blocks(edges, device);
  FindChainKernel<<<eb, kThreads, 0, stream>>>(
    edges, edgeLevel.get(), edgeVertex.get(), minRank.get(), up.get(), levels, rootChain, chainA.get());
  CHS_CUDA_CHECK_LAUNCH("FindChainKernel");
  IotaKernel<<<eb, kThreads, 0, stream>>>(rankA.get(), edges);
  CHS_CUDA_CHECK_LAUNCH("IotaKernel");
  cub::DoubleBuffer<TNode>    keys(chainA.get(), chainB.get());
  cub::DoubleBuffer<uint32_t> values(rankA.get(), rankB.get());
  size_t                      bytes  = 0;
  const int                   endBit = BitWidth(rootChain);
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, edges, 0, endBit, stream));
  {
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys, values, edges, 0, endBit, stream));
  }
  StitchKernel<<<Blocks(n + edges, device), kThreads, 0, stream>>>(
    n, keys.Current(), values.Current(), minRank.get(), rootChain, dParent);
  CHS_CUDA_CHECK_LAUNCH("StitchKernel");
  return unsigned(level);
}
template unsigned
PandoraOnDevice<uint32_t>(const uint32_t *,
                          const uint32_t *,
                          uint64_t,
                          uint32_t *,
                          cudaStream_t,
                          detail::MemoryTracker &,
                          int,
                          const FirstLevel &);
template unsigned
PandoraOnDevice<uint64_t>(const uint32_t *,
                          const uint32_t *,
                          uint64_t,
                          uint64_t *,
                          cudaStream_t,
                          detail::MemoryTracker &,
                          int,
                          const FirstLevel &);

namespace
{

/** Counts every internal node's children; flags a parent that is not an internal node after its child, and a root
 * that is not its own parent. */
template <typename TNode>
__global__ void
CountChildrenKernel(uint64_t n, const TNode * parent, uint32_t * children, uint32_t * broken)
{
  const uint64_t root = 2 * n - 2;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x <= root; x += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t p = parent[x];
    if (x == root)
    {
      if (p != root)
        atomicOr(broken, 1u);
    }
    else if (p <= x || p < n || p > root)
      atomicOr(broken, 1u);
    else
      atomicAdd(children + (p - n), 1u);
  }
}

/** Flags an internal node without two children, a NaN or decreasing weight, an end vertex out of range. */
__global__ void
CheckNodesKernel(uint64_t         n,
                 const uint32_t * children,
                 const double *   weight,
                 const uint32_t * U,
                 const uint32_t * V,
                 uint32_t *       broken)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r + 1 < n; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const double w = weight[r];
    if (children[r] != 2)
      atomicOr(broken, 2u);
    if (w != w || (r > 0 && w < weight[r - 1]))
      atomicOr(broken, 4u);
    if (U[r] >= n || V[r] >= n)
      atomicOr(broken, 8u);
  }
}

} // namespace

template <typename TNode>
void
CheckDendrogramOnDevice(uint64_t                n,
                        const TNode *           dParent,
                        const double *          dWeight,
                        const uint32_t *        dU,
                        const uint32_t *        dV,
                        cudaStream_t            stream,
                        detail::MemoryTracker & tracker,
                        int                     device)
{
  const uint64_t                 edges = n - 1;
  detail::DeviceBuffer<uint32_t> children(edges ? edges : 1, stream, &tracker), broken(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(broken.get(), 0, sizeof(uint32_t), stream));
  if (edges)
    CHS_CUDA_CHECK(cudaMemsetAsync(children.get(), 0, edges * sizeof(uint32_t), stream));
  CountChildrenKernel<<<Blocks(n + edges, device), kThreads, 0, stream>>>(n, dParent, children.get(), broken.get());
  CHS_CUDA_CHECK_LAUNCH("CountChildrenKernel");
  if (edges)
  {
    CheckNodesKernel<<<Blocks(edges, device), kThreads, 0, stream>>>(n, children.get(), dWeight, dU, dV, broken.get());
    CHS_CUDA_CHECK_LAUNCH("CheckNodesKernel");
  }
  uint32_t host = 0;
  ReadBack(host, broken.get(), stream);
  if (host != 0)
    throw std::logic_error("the CUDA dendrogram breaks its invariants (code " + std::to_string(host) +
                           ": 1 parents, 2 children, 4 weights, 8 end vertices)");
}
template void
CheckDendrogramOnDevice<uint32_t>(uint64_t,
                                  const uint32_t *,
                                  const double *,
                                  const uint32_t *,
                                  const uint32_t *,
                                  cudaStream_t,
                                  detail::MemoryTracker &,
                                  int);

namespace
{
/** A non-blocking stream of its own for a transfer that overlaps the run's kernels, ordered after what `after` has
 * queued so far; destroyed (after its work) at scope exit. */
struct OverlapStream
{
  cudaStream_t stream = nullptr;
  OverlapStream(cudaStream_t after, int device)
  {
    detail::DeviceScope scope(device);
    CHS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t written = nullptr;
    CHS_CUDA_CHECK(cudaEventCreateWithFlags(&written, cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(written, after);
    const cudaError_t waited   = recorded == cudaSuccess ? cudaStreamWaitEvent(stream, written, 0) : recorded;
    cudaEventDestroy(written);
    if (waited != cudaSuccess)
    {
      cudaStreamDestroy(stream);
      CHS_CUDA_CHECK(waited);
    }
  }
  ~OverlapStream()
  {
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  OverlapStream(const OverlapStream &) = delete;
  OverlapStream &
  operator=(const OverlapStream &) = delete;
};
} // namespace

template <typename TNode>
void
FinishOnDevice(uint64_t                         n,
               const uint32_t *                 dU,
               const uint32_t *                 dV,
               const uint64_t *                 dEdge,
               const double *                   dWeight,
               const DendrogramArraysT<TNode> & out,
               detail::EventTimer &             mstTimer,
               SingleLinkageResult &            result,
               RunInfo *                        info,
               detail::MemoryTracker &          tracker,
               const ExecutionContext &         context)
{
  const auto stream = static_cast<cudaStream_t>(context.stream);
  if (context.progress)
    context.progress(0.5f);
  detail::EventTimer          dendrogramTimer(stream);
  detail::DeviceBuffer<TNode> dParent(2 * n - 1, stream, &tracker);
  dendrogramTimer.Start();
  {
    // The tree edges' weights, ids and ends are final before PANDORA: another host thread downloads them on a stream
    // of its own (after the event that marks them written) while PANDORA's kernels run; the parents follow. The
    // future joins that thread on every way out of this scope, before the caller frees the arrays.
    OverlapStream     edgeStream(stream, context.device);
    const uint64_t    edges = n - 1;
    std::future<void> edgesDown;
    if (edges)
      edgesDown =
        std::async(std::launch::async,
                   [&]
                   {
                     detail::DeviceScope scope(context.device);
                     DownloadDendrogram(
                       out, n, static_cast<const TNode *>(nullptr), dWeight, dEdge, dU, dV, edgeStream.stream, context);
                   });
    result.contractionLevels = PandoraOnDevice(dU, dV, n, dParent.get(), stream, tracker, context.device);
    dendrogramTimer.Stop();
    CheckDendrogramOnDevice(n, dParent.get(), dWeight, dU, dV, stream, tracker, context.device);
    if (edges)
      edgesDown.get();
  }
  if (context.progress)
    context.progress(0.8f);
  detail::CopyToHost(out.parent, dParent.get(), (2 * n - 1) * sizeof(TNode), stream, context);
  result.mstMilliseconds        = mstTimer.Milliseconds();
  result.dendrogramMilliseconds = dendrogramTimer.Milliseconds();
  if (info)
  {
    info->kernelMilliseconds  = result.mstMilliseconds + result.dendrogramMilliseconds;
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
}

unsigned long long *
SortKeys(unsigned long long *    keys,
         unsigned long long *    spare,
         uint64_t                count,
         int                     endBit,
         cudaStream_t            stream,
         detail::MemoryTracker & tracker,
         int                     beginBit)
{
  if (beginBit >= endBit)
    return keys; // nothing to sort on: every key has the same bits there
  cub::DoubleBuffer<unsigned long long> buffer(keys, spare);
  size_t                                bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes, buffer, count, beginBit, endBit, stream));
  detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp.get(), bytes, buffer, count, beginBit, endBit, stream));
  return buffer.Current();
}

int
SignificantBits(const unsigned long long * keys, uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  detail::DeviceBuffer<unsigned long long> result(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(result.get(), 0, sizeof(unsigned long long), stream));
  int device = 0;
  CHS_CUDA_CHECK(cudaGetDevice(&device));
  MaxKernel<<<Blocks(count, device), kThreads, 0, stream>>>(keys, count, result.get());
  CHS_CUDA_CHECK_LAUNCH("MaxKernel");
  unsigned long long host = 0;
  ReadBack(host, result.get(), stream);
  return BitWidth(host);
}

template <typename TNode>
void
DownloadDendrogram(const DendrogramArraysT<TNode> & out,
                   uint64_t                         n,
                   const TNode *                    dParent,
                   const double *                   dWeight,
                   const uint64_t *                 dEdge,
                   const uint32_t *                 dU,
                   const uint32_t *                 dV,
                   cudaStream_t                     stream,
                   const ExecutionContext &         context)
{
  const uint64_t edges = n - 1;
  if (dParent)
    detail::CopyToHost(out.parent, dParent, (2 * n - 1) * sizeof(TNode), stream, context);
  if (edges == 0)
    return;
  if (out.weight)
    detail::CopyToHost(out.weight, dWeight, edges * sizeof(double), stream, context);
  if (out.edge)
    detail::CopyToHost(out.edge, dEdge, edges * sizeof(uint64_t), stream, context);
  // The end vertices stay 32-bit on the device (fewer than 2^32 vertices); 64-bit arrays get them zero-extended.
  for (const auto & [host, device] : { std::make_pair(out.u, dU), std::make_pair(out.v, dV) })
  {
    if (!host)
      continue;
    if constexpr (sizeof(TNode) == sizeof(uint32_t))
      detail::CopyToHost(host, device, edges * sizeof(uint32_t), stream, context);
    else
      detail::CopyToHostWidened(host, sizeof(TNode), device, sizeof(uint32_t), edges, stream, context);
  }
}
#define CHS_INSTANTIATE_FINISH(TNode)                                                                                  \
  template void FinishOnDevice<TNode>(uint64_t,                                                                        \
                                      const uint32_t *,                                                                \
                                      const uint32_t *,                                                                \
                                      const uint64_t *,                                                                \
                                      const double *,                                                                  \
                                      const DendrogramArraysT<TNode> &,                                                \
                                      detail::EventTimer &,                                                            \
                                      SingleLinkageResult &,                                                           \
                                      RunInfo *,                                                                       \
                                      detail::MemoryTracker &,                                                         \
                                      const ExecutionContext &);
CHS_INSTANTIATE_FINISH(uint32_t)
CHS_INSTANTIATE_FINISH(uint64_t)
#undef CHS_INSTANTIATE_FINISH

namespace
{

/** The first edge whose end is out of range (or count). */
__global__ void
FindBadVertexKernel(const uint32_t * u, const uint32_t * v, uint64_t count, uint64_t n, unsigned long long * first)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    if (u[i] >= n || v[i] >= n)
      atomicMin(first, (unsigned long long)i);
}

template <typename T, typename TCode>
__global__ void
WeightCodeKernel(const T * w, uint64_t count, TCode * code)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    code[i] = OrderedCode(w[i]);
}

__global__ void
GatherEndsKernel(const uint32_t * order,
                 uint64_t         count,
                 const uint32_t * u,
                 const uint32_t * v,
                 uint32_t *       su,
                 uint32_t *       sv)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t e = order[i];
    su[i]            = u[e];
    sv[i]            = v[e];
  }
}

/** Unites the ends of every edge; counts the unions that joined two sets. */
__global__ void
UniteEdgesKernel(const uint32_t *     u,
                 const uint32_t *     v,
                 uint64_t             count,
                 uint32_t *           parents,
                 unsigned long long * joined)
{
  unsigned long long mine = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    mine += Unite(parents, u[i], v[i]) ? 1 : 0;
  for (int o = 16; o > 0; o /= 2)
    mine += __shfl_down_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine)
    atomicAdd(joined, mine);
}

/** The tree's ends, input edge indices and weights by rank; `treeRank` null: every sorted edge is a tree edge. */
template <typename T>
__global__ void
GraphTreeKernel(uint64_t                   edges,
                const unsigned long long * treeRank,
                const uint32_t *           order,
                const uint32_t *           su,
                const uint32_t *           sv,
                const T *                  w,
                uint32_t *                 U,
                uint32_t *                 V,
                uint64_t *                 edge,
                double *                   weight)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t s = treeRank ? treeRank[r] : r;
    const uint32_t e = order[s];
    U[r]             = su[s];
    V[r]             = sv[s];
    edge[r]          = e;
    weight[r]        = double(w[e]);
  }
}

} // namespace
} // namespace sl

template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkageCUDA(const uint32_t *                 u,
                       const uint32_t *                 v,
                       const TWeight *                  w,
                       uint64_t                         edgeCount,
                       uint64_t                         vertexCount,
                       bool                             inputIsTree,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info)
{
  static_assert(std::is_floating_point<TWeight>::value, "graph weights are float or double");
  using Code = typename std::conditional<sizeof(TWeight) == 4, uint32_t, uint64_t>::type;
  sl::CheckGraphSizes(edgeCount, vertexCount, inputIsTree, sl::MaximumVertices<TNode>());
  const uint64_t        n = vertexCount, m = edgeCount, edges = n - 1;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;
  const uint64_t        mm = m ? m : 1;
  {
    // The inputs, the sort's codes and orders and the sorted ends live to the end; then the sort's scratch, the
    // tree's check (or Boruvka's first round and the tree keys' sort), and the tree with the dendrogram's arrays.
    const uint64_t ee     = edges ? edges : 1;
    const uint64_t kept   = mm * (2 * sizeof(uint32_t) + sizeof(TWeight)) + mm * 2 * (sizeof(Code) + sizeof(uint32_t));
    const uint64_t sorted = mm * 2 * sizeof(uint32_t);
    const uint64_t keys   = m == edges ? 0 : 2 * ee * sizeof(unsigned long long);
    const uint64_t tree =
      m == edges ? n * sizeof(uint32_t) + 8 : keys + std::max(sl::BoruvkaFirstBytes(n, m), sl::SortKeysScratch(edges));
    const uint64_t finish =
      keys + ee * (2 * sizeof(uint32_t) + sizeof(uint64_t) + sizeof(double)) + sl::FinishBytes(n, sizeof(TNode));
    tracker.what = "the single-linkage dendrogram of a graph of " + std::to_string(n) + " vertices and " +
                   std::to_string(m) + " edges";
    detail::ReserveDeviceMemory(
      tracker,
      kept + std::max({ uint64_t(16), sl::SortPairsScratch(m, sizeof(Code)), sorted + std::max(tree, finish) }),
      device);
  }

  detail::DeviceBuffer<uint32_t> du(mm, stream, &tracker), dv(mm, stream, &tracker);
  detail::DeviceBuffer<TWeight>  dw(mm, stream, &tracker);
  if (m > 0)
  {
    detail::CopyToDevice(du.get(), u, m * sizeof(uint32_t), stream, context);
    detail::CopyToDevice(dv.get(), v, m * sizeof(uint32_t), stream, context);
    detail::CopyToDevice(dw.get(), w, m * sizeof(TWeight), stream, context);
    detail::DeviceBuffer<unsigned long long> first(1, stream, &tracker);
    CHS_CUDA_CHECK(cudaMemcpyAsync(first.get(), &m, sizeof(m), cudaMemcpyHostToDevice, stream));
    sl::FindBadVertexKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(du.get(), dv.get(), m, n, first.get());
    CHS_CUDA_CHECK_LAUNCH("FindBadVertexKernel");
    unsigned long long bad = 0;
    ReadBack(bad, first.get(), stream);
    const uint64_t nan = FirstNaN(dw.get(), m, stream, tracker, device);
    if (bad < m || nan < m)
    {
      // Name the first bad edge, as the CPU reference does.
      if (bad <= nan)
      {
        uint32_t ends[2];
        CHS_CUDA_CHECK(cudaMemcpyAsync(ends, du.get() + bad, 4, cudaMemcpyDeviceToHost, stream));
        CHS_CUDA_CHECK(cudaMemcpyAsync(ends + 1, dv.get() + bad, 4, cudaMemcpyDeviceToHost, stream));
        CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
        throw std::invalid_argument("edge " + std::to_string(bad) + " joins vertices " + std::to_string(ends[0]) +
                                    " and " + std::to_string(ends[1]) + "; vertex ids are below " + std::to_string(n));
      }
      throw std::invalid_argument("the weight of edge " + std::to_string(nan) + " is NaN");
    }
  }
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer mstTimer(stream);
  mstTimer.Start();
  // Sort by (weight, index): a stable radix sort of the weights' ordered codes, with the indices as values.
  detail::DeviceBuffer<Code>     codeA(mm, stream, &tracker), codeB(mm, stream, &tracker);
  detail::DeviceBuffer<uint32_t> orderA(mm, stream, &tracker), orderB(mm, stream, &tracker);
  const uint32_t *               order = orderA.get();
  if (m > 0)
  {
    sl::WeightCodeKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(dw.get(), m, codeA.get());
    CHS_CUDA_CHECK_LAUNCH("WeightCodeKernel");
    sl::IotaKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(orderA.get(), m);
    CHS_CUDA_CHECK_LAUNCH("IotaKernel");
    cub::DoubleBuffer<Code>     keys(codeA.get(), codeB.get());
    cub::DoubleBuffer<uint32_t> values(orderA.get(), orderB.get());
    size_t                      bytes = 0;
    CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, m, 0, int(8 * sizeof(Code)), stream));
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys, values, m, 0, int(8 * sizeof(Code)), stream));
    order = values.Current();
  }
  detail::DeviceBuffer<uint32_t> su(mm, stream, &tracker), sv(mm, stream, &tracker);
  if (m > 0)
  {
    sl::GatherEndsKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(
      order, m, du.get(), dv.get(), su.get(), sv.get());
    CHS_CUDA_CHECK_LAUNCH("GatherEndsKernel");
  }

  const uint64_t ee = edges ? edges : 1;
  // Boruvka's tree keys and their sort buffer: only when the input is not already a tree.
  std::unique_ptr<detail::DeviceBuffer<unsigned long long>> tree, spare;
  const unsigned long long *                                treeRank = nullptr;
  if (m == edges)
  {
    // A tree, if it is connected: count the unions that join two sets.
    if (m > 0)
    {
      detail::DeviceBuffer<uint32_t>           parents(n, stream, &tracker);
      detail::DeviceBuffer<unsigned long long> joined(1, stream, &tracker);
      CHS_CUDA_CHECK(cudaMemsetAsync(joined.get(), 0, sizeof(unsigned long long), stream));
      sl::IotaKernel<<<sl::Blocks(n, device), sl::kThreads, 0, stream>>>(parents.get(), n);
      CHS_CUDA_CHECK_LAUNCH("IotaKernel");
      sl::UniteEdgesKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(
        du.get(), dv.get(), m, parents.get(), joined.get());
      CHS_CUDA_CHECK_LAUNCH("UniteEdgesKernel");
      unsigned long long host = 0;
      ReadBack(host, joined.get(), stream);
      if (host != edges)
        throw std::invalid_argument(sl::NotConnectedMessage(n - host, true));
    }
  }
  else
  {
    tree  = std::make_unique<detail::DeviceBuffer<unsigned long long>>(ee, stream, &tracker);
    spare = std::make_unique<detail::DeviceBuffer<unsigned long long>>(ee, stream, &tracker);
    const sl::RankedEdges ranked{ su.get(), sv.get() };
    result.boruvkaRounds = sl::BoruvkaOnDevice(
      n,
      m,
      [&](const sl::BoruvkaArrays & a)
      {
        sl::VertexFirstRound(
          n,
          ranked,
          [&](unsigned long long * best)
          {
            CHS_CUDA_CHECK(cudaMemsetAsync(best, 0xff, n * sizeof(unsigned long long), stream));
            sl::OfferKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(m, ranked, best);
            CHS_CUDA_CHECK_LAUNCH("OfferKernel");
          },
          [&](const uint32_t * root, sl::LiveEdge * live, unsigned long long * count)
          {
            sl::FirstKeepKernel<<<sl::Blocks(m, device), sl::kThreads, 0, stream>>>(m, ranked, root, live, count);
            CHS_CUDA_CHECK_LAUNCH("FirstKeepKernel");
          },
          a,
          stream,
          device);
      },
      tree->get(),
      stream,
      tracker,
      device);
    treeRank = sl::SortKeys(tree->get(), spare->get(), edges, sl::BitWidth(m), stream, tracker);
  }
  detail::DeviceBuffer<uint32_t> dU(ee, stream, &tracker), dV(ee, stream, &tracker);
  detail::DeviceBuffer<uint64_t> dEdge(ee, stream, &tracker);
  detail::DeviceBuffer<double>   dWeight(ee, stream, &tracker);
  if (edges > 0)
  {
    sl::GraphTreeKernel<<<sl::Blocks(edges, device), sl::kThreads, 0, stream>>>(
      edges, treeRank, order, su.get(), sv.get(), dw.get(), dU.get(), dV.get(), dEdge.get(), dWeight.get());
    CHS_CUDA_CHECK_LAUNCH("GraphTreeKernel");
  }
  mstTimer.Stop();
  sl::FinishOnDevice(n, dU.get(), dV.get(), dEdge.get(), dWeight.get(), out, mstTimer, result, info, tracker, context);
  return result;
}

#define CHS_INSTANTIATE_GRAPH(T, TNode)                                                                                \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult GraphSingleLinkageCUDA<T, TNode>(                   \
    const uint32_t *,                                                                                                  \
    const uint32_t *,                                                                                                  \
    const T *,                                                                                                         \
    uint64_t,                                                                                                          \
    uint64_t,                                                                                                          \
    bool,                                                                                                              \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *);
CHS_INSTANTIATE_GRAPH(float, uint32_t)
CHS_INSTANTIATE_GRAPH(float, uint64_t)
CHS_INSTANTIATE_GRAPH(double, uint32_t)
CHS_INSTANTIATE_GRAPH(double, uint64_t)
#undef CHS_INSTANTIATE_GRAPH

} // namespace chs
