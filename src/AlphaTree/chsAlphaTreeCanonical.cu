// CUDA alpha-tree: the canonicalisation and renumbering driver (kernels in
// src/AlphaTree/chsAlphaTreeCanonicalKernels.cuh), shared by every pixel type.
#include "chsAlphaTreeCanonicalKernels.cuh"
#include "chsAlphaTreeDevice.h"
#include "chsAlphaTreeRule.h"
#include "Engines/SingleLinkage/chsSingleLinkageDevice.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <stdexcept>

namespace chs
{
namespace at
{
namespace
{

constexpr unsigned kThreads = 256;

__global__ void
NarrowKernel(const uint64_t * in, uint64_t n, uint32_t * out)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = uint32_t(in[i]);
}

/** The last stage of both paths: sorts the internal nodes' keys (level code << shift | smallest pixel; `ids`: their
 * construction ids, which index treeParent, of TNode: 32 or 64 bits), writes the renumbered parents and levels,
 * checks them on the device, stops `timer`, allocates through `allocate` and downloads. `newId` has room for every
 * construction id. */
template <typename TNode>
uint64_t
SortAndWrite(const TNode *                              treeParent,
             uint64_t                                   pixels,
             uint64_t                                   internal,
             detail::DeviceBuffer<unsigned long long> & keys,
             detail::DeviceBuffer<TNode> &              ids,
             TNode *                                    newId,
             int                                        shift,
             int                                        levelBits,
             bool                                       isFloat,
             const AlphaTreeAllocator &                 allocate,
             detail::EventTimer &                       timer,
             cudaStream_t                               stream,
             detail::MemoryTracker &                    tracker,
             const ExecutionContext &                   context)
{
  const int                                device = context.device;
  const uint64_t                           room   = internal ? internal : 1;
  detail::DeviceBuffer<unsigned long long> keysAlt(room, stream, &tracker);
  detail::DeviceBuffer<TNode>              idsAlt(room, stream, &tracker);
  cub::DoubleBuffer<unsigned long long>    k(keys.get(), keysAlt.get());
  cub::DoubleBuffer<TNode>                 v(ids.get(), idsAlt.get());
  // Keys are (level code, smallest pixel): sort on the pixel bits and the level code's significant bits.
  const int endBit = shift + levelBits;
  size_t    bytes  = 0;
  CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, internal, 0, endBit, stream));
  {
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, k, v, internal, 0, endBit, stream));
  }
  IdKernel<<<detail::GridStrideBlocks(room, kThreads, device), kThreads, 0, stream>>>(
    internal, pixels, v.Current(), newId);
  CHS_CUDA_CHECK_LAUNCH("IdKernel");
  const uint64_t               total = pixels + internal;
  detail::DeviceBuffer<TNode>  outParent(total, stream, &tracker);
  detail::DeviceBuffer<double> outLevel(room, stream, &tracker);
  detail::DeviceBuffer<uint2>  record(room, stream, &tracker); // (level code, children) for the check
  OutputKernel<<<detail::GridStrideBlocks(total, kThreads, device), kThreads, 0, stream>>>(treeParent,
                                                                                           pixels,
                                                                                           internal,
                                                                                           v.Current(),
                                                                                           k.Current(),
                                                                                           newId,
                                                                                           shift,
                                                                                           isFloat,
                                                                                           outParent.get(),
                                                                                           outLevel.get(),
                                                                                           record.get());
  CHS_CUDA_CHECK_LAUNCH("OutputKernel");

  // The check of the definition's structure, on the device.
  detail::DeviceBuffer<unsigned> broken(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(broken.get(), 0, sizeof(unsigned), stream));
  CheckParentsKernel<<<detail::GridStrideBlocks(total, kThreads, device), kThreads, 0, stream>>>(
    pixels, total, outParent.get(), record.get(), broken.get());
  CHS_CUDA_CHECK_LAUNCH("CheckParentsKernel");
  CheckChildrenKernel<<<detail::GridStrideBlocks(room, kThreads, device), kThreads, 0, stream>>>(
    internal, record.get(), broken.get());
  CHS_CUDA_CHECK_LAUNCH("CheckChildrenKernel");
  unsigned bad = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&bad, broken.get(), sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (bad)
    throw std::logic_error("the CUDA alpha-tree is not a canonical tree (internal error: please report it)");
  timer.Stop();

  const AlphaTreeArrays out = Allocated(allocate, total);
  if constexpr (sizeof(TNode) == 4)
  {
    if (out.parent)
      detail::CopyToHost(out.parent, outParent.get(), total * sizeof(uint32_t), stream, context);
    else // 64-bit parents for a tree of 32-bit ids: the same ids, zero-extended on the way
      detail::CopyToHostWidened(
        out.parent64, sizeof(uint64_t), outParent.get(), sizeof(uint32_t), total, stream, context);
  }
  else if (out.parent64)
    detail::CopyToHost(out.parent64, outParent.get(), total * sizeof(uint64_t), stream, context);
  else
  {
    // 32-bit parents for a tree built with 64-bit ids (forced on a small image: Allocated refuses them for trees of
    // more than 2^32 - 1 nodes), narrowed on the device.
    detail::DeviceBuffer<uint32_t> narrow(total, stream, &tracker);
    NarrowKernel<<<detail::GridStrideBlocks(total, kThreads, device), kThreads, 0, stream>>>(
      outParent.get(), total, narrow.get());
    CHS_CUDA_CHECK_LAUNCH("NarrowKernel");
    detail::CopyToHost(out.parent, narrow.get(), total * sizeof(uint32_t), stream, context);
  }
  if (out.level)
  {
    if (!out.leafLevelsZero)
      detail::ZeroHost(out.level, pixels * sizeof(double), context);
    if (internal)
      detail::CopyToHost(out.level + pixels, outLevel.get(), internal * sizeof(double), stream, context);
  }
  return total;
}

} // namespace

namespace
{
/** SortAndWrite's bytes for `room` internal nodes with ids of `id` bytes (4 or 8): the alternate keys and ids, then
 * the sort's scratch or the outputs and the check's records (with 64-bit ids, a 32-bit copy of the parents for an
 * allocator that gives 32-bit ones). */
uint64_t
SortAndWriteBytes(uint64_t pixels, uint64_t room, unsigned id)
{
  return room * (sizeof(unsigned long long) + id) +
         std::max(sl::SortPairsScratch(room, sizeof(unsigned long long), id),
                  (pixels + room) * (id == 8 ? 12 : 4) + room * (sizeof(double) + sizeof(uint2)) + sizeof(unsigned));
}
} // namespace

uint64_t
RenumberBytes(uint64_t pixels, unsigned id)
{
  const uint64_t room = pixels > 1 ? pixels - 1 : 1;
  return room * (sizeof(unsigned long long) + id) + (pixels + room) * id + SortAndWriteBytes(pixels, room, id);
}

uint64_t
CanonicaliseBytes(uint64_t pixels, uint64_t nodes, bool binary, unsigned idBytes)
{
  const uint64_t room = pixels > 1 ? pixels - 1 : 1;
  return nodes * idBytes + (binary ? 4 + (nodes - pixels) * 2 * idBytes + 1 : nodes * 5 + sizeof(uint2)) +
         3 * sizeof(unsigned long long) + 4 * sizeof(unsigned) + room * (sizeof(unsigned long long) + idBytes) +
         SortAndWriteBytes(pixels, room, idBytes);
}

template <typename TNode>
uint64_t
RenumberOnDevice(uint64_t                   pixels,
                 uint64_t                   internal,
                 TNode *                    dNodeParent,
                 const uint32_t *           dNodeLevel,
                 const TNode *              dNodeMin,
                 int                        levelBits,
                 bool                       isFloat,
                 const AlphaTreeAllocator & allocate,
                 detail::EventTimer &       timer,
                 cudaStream_t               stream,
                 detail::MemoryTracker &    tracker,
                 const ExecutionContext &   context)
{
  const uint64_t                           room  = internal ? internal : 1;
  const int                                shift = IndexBits(pixels);
  detail::DeviceBuffer<unsigned long long> keys(room, stream, &tracker);
  detail::DeviceBuffer<TNode>              ids(room, stream, &tracker), newId(pixels + room, stream, &tracker);
  LevelNodeKeysKernel<<<detail::GridStrideBlocks(room, kThreads, context.device), kThreads, 0, stream>>>(
    internal, pixels, dNodeLevel, dNodeMin, shift, keys.get(), ids.get());
  CHS_CUDA_CHECK_LAUNCH("LevelNodeKeysKernel");
  return SortAndWrite(dNodeParent,
                      pixels,
                      internal,
                      keys,
                      ids,
                      newId.get(),
                      shift,
                      levelBits,
                      isFloat,
                      allocate,
                      timer,
                      stream,
                      tracker,
                      context);
}

#define CHS_INSTANTIATE_RENUMBER(TNode)                                                                                \
  template uint64_t RenumberOnDevice<TNode>(uint64_t,                                                                  \
                                            uint64_t,                                                                  \
                                            TNode *,                                                                   \
                                            const uint32_t *,                                                          \
                                            const TNode *,                                                             \
                                            int,                                                                       \
                                            bool,                                                                      \
                                            const AlphaTreeAllocator &,                                                \
                                            detail::EventTimer &,                                                      \
                                            cudaStream_t,                                                              \
                                            detail::MemoryTracker &,                                                   \
                                            const ExecutionContext &);
CHS_INSTANTIATE_RENUMBER(uint32_t)
CHS_INSTANTIATE_RENUMBER(uint64_t)
#undef CHS_INSTANTIATE_RENUMBER

template <typename TNode>
uint64_t
CanonicaliseOnDevice(uint64_t                   pixels,
                     uint64_t                   nodes,
                     TNode *                    dParent,
                     const uint32_t *           dLevel,
                     bool                       binary,
                     bool                       isFloat,
                     int                        levelBits,
                     const AlphaTreeAllocator & allocate,
                     detail::EventTimer &       timer,
                     cudaStream_t               stream,
                     detail::MemoryTracker &    tracker,
                     const ExecutionContext &   context)
{
  const int             device = context.device;
  const unsigned        blocks = detail::GridStrideBlocks(nodes, kThreads, device);
  const NodeTree<TNode> tree{ dParent, dLevel, TNode(pixels) };
  // The general path (v1 and v2: nodes that are not binary) numbers its nodes in 32 bits.
  constexpr bool kNarrow = sizeof(TNode) == sizeof(uint32_t);
  if (!binary && !kNarrow)
    throw std::logic_error("64-bit node ids are canonicalised for the spanning-tree construction's binary tree only");

  // The tops' (parent, smallest pixel) pairs for the binary tree; in the general case `smallest` first counts
  // children, then holds the nodes' smallest pixels. Counters: kept internal nodes, gathered nodes, pixels taken by
  // the smallest-pixel climb.
  detail::DeviceBuffer<TNode>              up(nodes, stream, &tracker);
  detail::DeviceBuffer<uint32_t>           smallest(binary ? 1 : nodes, stream, &tracker);
  detail::DeviceBuffer<NodePair<TNode>>    pair(binary ? nodes - pixels : 1, stream, &tracker);
  detail::DeviceBuffer<uint8_t>            kept(binary ? 1 : nodes, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> counters(3, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(counters.get(), 0, 3 * sizeof(unsigned long long), stream));

  RunKernel<<<blocks, kThreads, 0, stream>>>(tree, nodes, up.get());
  CHS_CUDA_CHECK_LAUNCH("RunKernel");
  // Pointer jumping until every internal node points at its run's top.
  JumpUntilStill(pixels, nodes, up.get(), blocks, kThreads, stream, tracker);
  const unsigned         climbBlocks = detail::GridStrideBlocks(pixels, kThreads, device);
  const PairNodes<TNode> pairs{ pair.get(), TNode(pixels) };
  if (binary)
  {
    TopParentKernel<<<blocks, kThreads, 0, stream>>>(tree, nodes, up.get(), pair.get(), counters.get());
    CHS_CUDA_CHECK_LAUNCH("TopParentKernel");
    SmallestPixelKernel<<<climbBlocks, kThreads, 0, stream>>>(pixels, dParent, pairs, counters.get() + 2);
  }
  else if constexpr (kNarrow)
  {
    const SplitNodes split{ dParent, smallest.get() };
    CHS_CUDA_CHECK(cudaMemsetAsync(smallest.get(), 0, nodes * sizeof(uint32_t), stream));
    CanonicalParentKernel<<<blocks, kThreads, 0, stream>>>(tree, nodes, up.get(), smallest.get());
    CHS_CUDA_CHECK_LAUNCH("CanonicalParentKernel");
    KeepKernel<<<blocks, kThreads, 0, stream>>>(tree, nodes, up.get(), smallest.get(), kept.get(), counters.get());
    CHS_CUDA_CHECK_LAUNCH("KeepKernel");
    KeptParentKernel<<<blocks, kThreads, 0, stream>>>(tree, nodes, up.get(), kept.get());
    CHS_CUDA_CHECK_LAUNCH("KeptParentKernel");
    SmallestPixelKernel<<<climbBlocks, kThreads, 0, stream>>>(pixels, dParent, split, counters.get() + 2);
  }
  CHS_CUDA_CHECK_LAUNCH("SmallestPixelKernel");
  unsigned long long internal = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&internal, counters.get(), sizeof(internal), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));

  const uint64_t                           room  = internal ? internal : 1;
  const int                                shift = IndexBits(pixels);
  detail::DeviceBuffer<unsigned long long> keys(room, stream, &tracker);
  detail::DeviceBuffer<TNode>              ids(room, stream, &tracker);
  const unsigned                           gb = detail::GridStrideBlocks(nodes - pixels, kThreads, device);
  if (binary)
    GatherKernel<<<gb, kThreads, 0, stream>>>(
      tree, nodes, nullptr, up.get(), pairs, shift, keys.get(), ids.get(), counters.get() + 1);
  else if constexpr (kNarrow)
    GatherKernel<<<gb, kThreads, 0, stream>>>(tree,
                                              nodes,
                                              kept.get(),
                                              up.get(),
                                              SplitNodes{ dParent, smallest.get() },
                                              shift,
                                              keys.get(),
                                              ids.get(),
                                              counters.get() + 1);
  CHS_CUDA_CHECK_LAUNCH("GatherKernel");
  return SortAndWrite(dParent,
                      pixels,
                      internal,
                      keys,
                      ids,
                      up.get(),
                      shift,
                      levelBits,
                      isFloat,
                      allocate,
                      timer,
                      stream,
                      tracker,
                      context);
}

#define CHS_INSTANTIATE_CANONICALISE(TNode)                                                                            \
  template uint64_t CanonicaliseOnDevice<TNode>(uint64_t,                                                              \
                                                uint64_t,                                                              \
                                                TNode *,                                                               \
                                                const uint32_t *,                                                      \
                                                bool,                                                                  \
                                                bool,                                                                  \
                                                int,                                                                   \
                                                const AlphaTreeAllocator &,                                            \
                                                detail::EventTimer &,                                                  \
                                                cudaStream_t,                                                          \
                                                detail::MemoryTracker &,                                               \
                                                const ExecutionContext &);
CHS_INSTANTIATE_CANONICALISE(uint32_t)
CHS_INSTANTIATE_CANONICALISE(uint64_t)
#undef CHS_INSTANTIATE_CANONICALISE

} // namespace at
} // namespace chs
