// CUDA alpha-tree: the image entry (one translation unit per pixel type, src/AlphaTree/chsAlphaTreeInstantiate.cu.in).
// The paper's construction: src/AlphaTree/chsAlphaTreeTile.cuh (partial trees per tile in shared memory),
// src/AlphaTree/chsAlphaTreeBorder.cuh (merges across the tile borders); or the spanning-tree construction: the
// single-linkage backend's Boruvka minimum spanning tree and PANDORA dendrogram (src/Engines/SingleLinkage/), whose
// binary tree is already sorted by (level, id). Then the canonicalisation shared by all pixel types
// (src/AlphaTree/chsAlphaTreeCanonical.cu).
#ifndef chsAlphaTree_cuh
#define chsAlphaTree_cuh

#include "chsAlphaTreeBorder.cuh"
#include "chsAlphaTreeLevelTail.cuh"
#include "chsAlphaTreeLevels.cuh"
#include "chsAlphaTreeTileLevels.cuh"
#include "chsAlphaTreeTile.cuh"
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "chsAlphaTreeDevice.h"
#include "chsAlphaTreeRule.h"
#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "Engines/SingleLinkage/chsSingleLinkage.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

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
  detail::AllowDynamicShared(kernel, shared, device);
  kernel<<<unsigned(tiles), s.Pixels(), shared, stream>>>(
    dPixels, g, components, distance, s, dParent, dLevel, dInserted);
  CHS_CUDA_CHECK_LAUNCH("TileTreeKernel");
  BorderMergeKernel<kInsertAll><<<detail::GridStrideBlocks(g.Pixels(), 256, device), 256, 0, stream>>>(
    g, s, GlobalTree{ dParent, dLevel, uint32_t(g.Pixels()) }, dInserted);
  CHS_CUDA_CHECK_LAUNCH("BorderMergeKernel");
}

/** The image's minimum spanning tree by ranks: ends and level codes, and (edgeAt, rankAt, if given: 32-bit keys
 * only) each rank's edge index and the rank itself, for PANDORA's first level. */
static __global__ void
SpanningTreeEdgesKernel(uint64_t                   edges,
                        const unsigned long long * sorted,
                        sl::ImageGraph             g,
                        sl::EdgeKeys               keys,
                        uint32_t *                 U,
                        uint32_t *                 V,
                        uint32_t *                 level,
                        uint32_t *                 edgeAt,
                        uint32_t *                 rankAt)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    const unsigned long long key = sorted[r];
    g.Ends(keys.Index(key), U[r], V[r]);
    level[r] = keys.Code(key);
    if (edgeAt)
    {
      edgeAt[r] = uint32_t(key);
      rankAt[r] = uint32_t(r);
    }
  }
}

/** slotRank[edge[j]] = rank[j]: the ranks of the tree edges at their indices (edges grouped by index: nearby
 * writes). */
static __global__ void
SlotRankKernel(uint64_t edges, const uint32_t * edge, const uint32_t * rank, uint32_t * slotRank)
{
  for (uint64_t j = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; j < edges; j += uint64_t(gridDim.x) * blockDim.x)
    slotRank[edge[j]] = rank[j];
}

/** The binary partition tree by the spanning-tree construction: dParent (2n - 1 nodes, leaves first, the tree edge
 * of rank r as node n + r) and dLevel (the n - 1 internal nodes' level codes, non-decreasing). Edges of equal level
 * are ranked in the order Boruvka found them: the binary tree then differs from run to run, its canonical form, the
 * alpha-tree, does not. PANDORA's first level takes every pixel's lightest tree edge from the ranks of its edge
 * slots: the ranks reach the slots through a radix sort of the tree edges by the top bits of their index (writing
 * them from the rank order straight to the slots, one random 4-byte store each, cost 4 ms on a 8192^2 image),
 * which needs 4 bytes a slot while it runs: up to 4 slots a pixel (2D, and 6-connected volumes) with 32-bit edge
 * keys (BySlots); 26-connected volumes, and wide keys, keep PANDORA's atomics. */
inline bool
BySlots(const sl::ImageGraph & g, const sl::EdgeKeys & keys)
{
  return g.slots <= 4 && !keys.Wide();
}

template <typename TPixel, typename TNode>
void
SpanningTreeConstruction(const TPixel *          dPixels,
                         const sl::ImageGraph &  g,
                         unsigned                components,
                         VectorDistance          distance,
                         sl::EdgeKeys            keys,
                         TNode *                 dParent,
                         uint32_t *              dLevel,
                         int                     levelBits,
                         cudaStream_t            stream,
                         detail::MemoryTracker & tracker,
                         int                     device)
{
  const uint64_t                 n = g.Pixels(), edges = n - 1, slots = n * g.slots;
  const bool                     bySlots = BySlots(g, keys);
  const unsigned                 eb      = detail::GridStrideBlocks(edges, sl::kThreads, device);
  detail::DeviceBuffer<uint32_t> dU(edges, stream, &tracker), dV(edges, stream, &tracker),
    firstMinimum(bySlots ? n : 1, stream, &tracker), firstFar(bySlots ? n : 1, stream, &tracker);
  {
    detail::DeviceBuffer<unsigned long long> tree(edges, stream, &tracker), spare(edges, stream, &tracker);
    const unsigned long long *               sorted = sl::ImageSpanningTree(
      dPixels, g, components, distance, keys, tree.get(), spare.get(), stream, tracker, device, nullptr, levelBits);
    // The tree keys' other buffer holds the (edge index, rank) pairs, the sorted keys' buffer their sort's output.
    uint32_t * const edgeAt  = reinterpret_cast<uint32_t *>(sorted == tree.get() ? spare.get() : tree.get());
    uint32_t * const edgeAlt = reinterpret_cast<uint32_t *>(const_cast<unsigned long long *>(sorted));
    SpanningTreeEdgesKernel<<<eb, sl::kThreads, 0, stream>>>(
      edges, sorted, g, keys, dU.get(), dV.get(), dLevel, bySlots ? edgeAt : nullptr, edgeAt + edges);
    CHS_CUDA_CHECK_LAUNCH("SpanningTreeEdgesKernel");
    if (bySlots)
    {
      // Sorted on the top 24 bits of the edge index (three radix passes): the stores then land in runs of at most
      // 2^(bits - 24) slots, 16 (64 bytes) on a 8192^2 8-connected image. On the top 16 bits only (two passes),
      // the stores into windows of 4096 slots cost more than the pass saved (8192^2: 0.6 -> 1.9 ms, 4 -> 3 ms for
      // 4- and 8-connected images).
      const int                   bits = IndexBits(slots), low = std::max(bits - 24, 0);
      cub::DoubleBuffer<uint32_t> k(edgeAt, edgeAlt), v(edgeAt + edges, edgeAlt + edges);
      size_t                      bytes = 0;
      CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, edges, low, bits, stream));
      {
        detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
        CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, k, v, edges, low, bits, stream));
      }
      detail::DeviceBuffer<uint32_t> slotRank(slots, stream, &tracker);
      CHS_CUDA_CHECK(cudaMemsetAsync(slotRank.get(), 0xff, slots * sizeof(uint32_t), stream));
      SlotRankKernel<<<eb, sl::kThreads, 0, stream>>>(edges, k.Current(), v.Current(), slotRank.get());
      CHS_CUDA_CHECK_LAUNCH("SlotRankKernel");
      sl::ImageMinimumIncidentKernel<<<detail::GridStrideBlocks(n, sl::kThreads, device), sl::kThreads, 0, stream>>>(
        g, slotRank.get(), firstMinimum.get(), firstFar.get());
      CHS_CUDA_CHECK_LAUNCH("ImageMinimumIncidentKernel");
    }
  }
  sl::FirstLevel first;
  if (bySlots)
    first = sl::FirstLevel{ firstMinimum.get(), firstFar.get() };
  sl::PandoraOnDevice(dU.get(), dV.get(), n, dParent, stream, tracker, device, first);
}

/** SpanningTreeConstruction's device bytes (node ids of `idBytes`): the tree's ends and PANDORA's first level, with
 * Boruvka, the sorts and the slots' ranks, then PANDORA. */
inline uint64_t
SpanningTreeConstructionBytes(const sl::ImageGraph & g, const sl::EdgeKeys & keys, unsigned idBytes = 4)
{
  const uint64_t n = g.Pixels(), edges = n - 1, slots = n * g.slots;
  const bool     bySlots = BySlots(g, keys);
  return edges * 2 * sizeof(uint32_t) + (bySlots ? n : 1) * 2 * sizeof(uint32_t) +
         std::max(edges * 2 * sizeof(unsigned long long) + std::max({ sl::ImageSpanningTreeBytes(g),
                                                                      bySlots ? sl::SortPairsScratch(edges, 4) : 0,
                                                                      bySlots ? slots * sizeof(uint32_t) : 0 }),
                  sl::PandoraBytes(n, idBytes));
}

/** Whether the level-synchronous construction applies: integer scalar pixels, whose level codes are below 2^16. */
template <typename TPixel>
constexpr bool
LevelSynchronousPixel()
{
  return std::is_integral<TPixel>::value && sizeof(TPixel) <= 2;
}

/** Levels with at most this many edges run on one block (see src/AlphaTree/chsAlphaTreeLevels.cuh); 1024 to 8192
 * measured alike on the H200. */
constexpr uint32_t kSmallLevelEdges = 2048;

/** A tail of at least this many small levels runs in shared memory (src/AlphaTree/chsAlphaTreeLevelTail.cuh). */
constexpr uint32_t kTailMinLevels = 8;

/** RunLevelLoop's tail: the levels before `tail` in the loop, the small levels from there in shared memory
 * (src/AlphaTree/chsAlphaTreeLevelTail.cuh), and the loop again for them when they meet more sets than the shared
 * hash table holds. 32-bit node ids. */
template <typename TSource, typename TLoop>
void
RunLevelTail(const TSource &               src,
             uint32_t *                    lost,
             const uint32_t *              levelList,
             const uint64_t *              beginList,
             const uint32_t *              countPtr,
             uint32_t                      count,
             uint32_t                      tail,
             const std::vector<uint64_t> & hostBegins,
             LevelState &                  st,
             TLoop &&                      loop,
             cudaStream_t                  stream,
             detail::MemoryTracker &       tracker)
{
  const size_t tailBytes = TailSharedBytes(kSmallLevelEdges);
  if (tail > 0)
    loop(0, tail, nullptr);
  const uint32_t                 tailItems = uint32_t(hostBegins[count] - hostBegins[tail]); // at most kTailItems
  detail::DeviceBuffer<unsigned> overflow(1, stream, &tracker);
  detail::DeviceBuffer<uint32_t> roots(2 * uint64_t(tailItems ? tailItems : 1), stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(overflow.get(), 0, sizeof(unsigned), stream));
  TailRootsKernel<TSource>
    <<<(tailItems + 255) / 256 + 1, 256, 0, stream>>>(src, beginList, countPtr, tail, st, roots.get());
  CHS_CUDA_CHECK_LAUNCH("TailRootsKernel");
  int device = 0;
  CHS_CUDA_CHECK(cudaGetDevice(&device));
  detail::AllowDynamicShared(LevelTailKernel<TSource>, tailBytes, device);
  LevelTailKernel<TSource><<<1, kTailThreads, tailBytes, stream>>>(
    src, lost, levelList, beginList, countPtr, tail, kSmallLevelEdges, roots.get(), st, overflow.get());
  CHS_CUDA_CHECK_LAUNCH("LevelTailKernel");
  // With more sets than the shared hash table holds, the loop runs the tail: queued without reading the flag back,
  // it returns at once when the tail kernel did the work.
  loop(tail, count, overflow.get());
}

/** Runs the level loop (src/AlphaTree/chsAlphaTreeLevels.cuh) on items grouped by level: `start[code]` = the first item
 * of each level, or kNoLevelStart for absent levels; `*items` (on the device) = their number; `lost` has room for every
 * item. The small levels after the last large one run in shared memory (src/AlphaTree/chsAlphaTreeLevelTail.cuh) when
 * they are many and meet few enough sets, else in the loop. One synchronisation, to read the level list. */
template <typename TSource, typename TNode>
void
RunLevelLoop(const TSource &         src,
             TNode *                 lost,
             const uint64_t *        start,
             uint32_t                codes,
             const uint64_t *        items,
             LevelStateT<TNode> &    st,
             cudaStream_t            stream,
             detail::MemoryTracker & tracker,
             int                     device)
{
  int perSm = 0, sms = 0, cooperative = 0, optin = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CHS_CUDA_CHECK(
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, LevelLoopKernel<TSource, TNode>, kLevelThreads, 0));
  if (!cooperative || perSm < 1)
    throw std::runtime_error("the level-synchronous alpha-tree construction needs a device with cooperative launch");
  detail::DeviceBuffer<uint32_t> levels(codes, stream, &tracker), levelCount(1, stream, &tracker);
  detail::DeviceBuffer<uint64_t> begins(codes + 1, stream, &tracker);
  LevelListKernel<<<1, 1024, 0, stream>>>(start, codes, items, levels.get(), begins.get(), levelCount.get());
  CHS_CUDA_CHECK_LAUNCH("LevelListKernel");
  // The level count and the levels' starts with one synchronisation (all codes + 1 starts: at most 512 KB).
  uint32_t              count = 0;
  std::vector<uint64_t> hostBegins(codes + 1);
  CHS_CUDA_CHECK(cudaMemcpyAsync(&count, levelCount.get(), sizeof(uint32_t), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(
    cudaMemcpyAsync(hostBegins.data(), begins.get(), (codes + 1) * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count == 0)
    return;
  uint32_t tail = count; // the first level of the tail: every level from there on is small
  while (tail > 0 && hostBegins[tail] - hostBegins[tail - 1] <= kSmallLevelEdges && count - tail < kTailLevels &&
         hostBegins[count] - hostBegins[tail - 1] <= kTailItems)
    --tail;
  // The shared-memory tail keeps 32-bit node ids: trees of 64-bit ids run every level in the loop.
  const size_t tailBytes = TailSharedBytes(kSmallLevelEdges);
  const bool   useTail   = sizeof(TNode) == 4 && count - tail >= kTailMinLevels && tailBytes <= size_t(optin);

  const uint32_t * levelList = levels.get(), *countPtr = levelCount.get();
  const uint64_t * beginList = begins.get();
  uint32_t         small     = kSmallLevelEdges;
  TSource          source    = src;
  auto             loop      = [&](uint32_t first, uint32_t end, const unsigned * onlyIf)
  {
    void * args[] = { &source, &lost, &levelList, &beginList, &countPtr, &first, &end, &st, &small, &onlyIf };
    CHS_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void *>(LevelLoopKernel<TSource, TNode>),
                                               dim3(unsigned(sms)),
                                               dim3(kLevelThreads),
                                               args,
                                               0,
                                               stream));
    CHS_CUDA_CHECK_LAUNCH("LevelLoopKernel");
  };
  if (!useTail)
    return loop(0, count, nullptr);
  if constexpr (sizeof(TNode) == 4)
    RunLevelTail(src, lost, levelList, beginList, countPtr, count, tail, hostBegins, st, loop, stream, tracker);
}

/** The words of the tile stage's bit set over node ids (pixels and internal nodes: at most 2n - 1), or 0 where bit 31
 * of a node parent marks the references to force entries instead: below 2^30 pixels (node ids below 2^31) with
 * tile-buffer indices below 2^31, unless `force` (AlphaTreeParameters::forceWideIds). */
inline uint64_t
ForceRefWords(uint64_t n, const TileGrid & tg, bool force)
{
  const bool flag = !force && n < (uint64_t(1) << 30) && uint64_t(tg.tiles) * tg.cap < uint64_t(kTileRefBit);
  return flag ? 0 : (2 * n + 31) / 32;
}

/** The tile stage for an 8-bit image (src/AlphaTree/chsAlphaTreeTileLevels.cuh), then the level loop on its entries and
 * the parents that refer to force entries. */
template <typename TPixel>
void
TileStageAndLoop(const TPixel *          dPixels,
                 const sl::ImageGraph &  g,
                 const TileGrid &        tg,
                 LevelState &            st,
                 bool                    forceWideIds,
                 cudaStream_t            stream,
                 detail::MemoryTracker & tracker,
                 int                     device)
{
  const uint64_t                           n = g.Pixels(), cells = uint64_t(kTileCodes) * tg.tiles;
  detail::DeviceBuffer<uint64_t>           start(kTileCodes, stream, &tracker), total(1, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> tileNodes(1, stream, &tracker);
  // The tile buffer lives until the end: the parents that refer to force entries find the entries' places there.
  detail::DeviceBuffer<uint2>                   tileEntries(uint64_t(tg.tiles) * tg.cap, stream, &tracker);
  const uint64_t                                refWords = ForceRefWords(n, tg, forceWideIds);
  std::optional<detail::DeviceBuffer<uint32_t>> refBits;
  uint32_t *                                    forceRefs = nullptr;
  if (refWords)
  {
    refBits.emplace(refWords, stream, &tracker);
    forceRefs = refBits->get();
    CHS_CUDA_CHECK(cudaMemsetAsync(forceRefs, 0, refWords * sizeof(uint32_t), stream));
  }
  // The entries for the loop and their losers are allocated for as many as the tile buffer holds, so that their
  // number is not read back: the level list reads it from `total`.
  const uint64_t                 room = uint64_t(tg.tiles) * tg.cap;
  detail::DeviceBuffer<uint2>    entries(room, stream, &tracker);
  detail::DeviceBuffer<uint32_t> lost(room, stream, &tracker);
  {
    detail::DeviceBuffer<uint32_t> counts(cells, stream, &tracker), offsets(cells, stream, &tracker),
      crossCounts(cells, stream, &tracker);
    static_assert(sizeof(TPixel) == 1, "the tile stage sorts 8-bit level codes");
    detail::AllowDynamicShared(TileLevelKernel<TPixel>, tg.shared, device);
    const TileOutput out{ tileEntries.get(), counts.get(), crossCounts.get(), st.nodeParent, st.nodeLevel, st.nodeMin,
                          st.current,        st.uf,        st.stamp,          st.nodes,      forceRefs,    st.n };
    TileLevelKernel<TPixel><<<tg.tiles, tg.threads, tg.shared, stream>>>(dPixels, g, tg, out);
    CHS_CUDA_CHECK_LAUNCH("TileLevelKernel");
    CHS_CUDA_CHECK(
      cudaMemcpyAsync(tileNodes.get(), st.nodes, sizeof(unsigned long long), cudaMemcpyDeviceToDevice, stream));
    size_t bytes = 0;
    CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts.get(), offsets.get(), cells, stream));
    {
      detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
      CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, counts.get(), offsets.get(), cells, stream));
    }
    TileLevelStartsKernel<<<1, kTileCodes, 0, stream>>>(
      offsets.get(), counts.get(), tg.tiles, start.get(), total.get());
    CHS_CUDA_CHECK_LAUNCH("TileLevelStartsKernel");
    TileScatterKernel<<<tg.tiles, kTileCodes, 0, stream>>>(
      tileEntries.get(), tg.cap, counts.get(), crossCounts.get(), offsets.get(), tg.tiles, entries.get());
    CHS_CUDA_CHECK_LAUNCH("TileScatterKernel");
  }
  // With one tile there are no entries: the level list is empty and the loop does nothing.
  RunLevelLoop(
    EntrySource{ entries.get() }, lost.get(), start.get(), kTileCodes, total.get(), st, stream, tracker, device);
  TileParentsKernel<<<detail::GridStrideBlocks(n, 256, device), 256, 0, stream>>>(
    st.nodeParent, tileNodes.get(), st.n, forceRefs, tileEntries.get(), lost.get());
  CHS_CUDA_CHECK_LAUNCH("TileParentsKernel");
}

/** The tiling of the tile stage, or none where it does not apply: 8-bit pixels only, at most
 * MaximumDendrogramVertices pixels (node ids in 32 bits), tile-buffer indices and entry places below 2^32 - 1
 * (kForceEntry is kept free), and a block's shared memory within the device's limit (1024-pixel tiles are tried
 * before giving up). Tiles of 2048 pixels: on the H200 4.3 ms on the
 * natural 4096^2 image (4096: 5.5, 1024: 6.1 before the last changes) and 7.6 ms on the 256^3 volume, 6-connected
 * (4096: 8.1), three blocks of 60 to 70 KB per SM (docs/design/alpha-tree.md, "Tile nodes and the shared-memory tail").
 */
template <typename TPixel>
std::optional<TileGrid>
ChooseTileGrid(const sl::ImageGraph & g, int device)
{
  if (sizeof(TPixel) != 1 || g.Pixels() < 2 || g.Pixels() > MaximumDendrogramVertices)
    return std::nullopt;
  int optin = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  for (uint32_t pixels = 2048u; pixels >= 1024u; pixels /= 2)
  {
    const TileGrid tg(g, pixels);
    if (tg.shared <= size_t(optin) && uint64_t(tg.tiles) * tg.cap < uint64_t(kForceEntry) && tg.cap < kTileForce)
      return tg;
  }
  return std::nullopt;
}

/** RunLevelLoop's device bytes for `codes` level codes: the level list and the tail's roots. */
inline uint64_t
LevelLoopBytes(uint64_t codes)
{
  return codes * sizeof(uint32_t) + (codes + 1) * sizeof(uint64_t) + sizeof(uint32_t) + sizeof(unsigned) +
         2 * uint64_t(kTailItems) * 4;
}

/** Whether the level-synchronous construction numbers its edge slots in 64 bits: from 2^32 - 1 slots on (the 32-bit
 * ids keep all ones for slots outside the image), or when a test forces it (AlphaTreeParameters::forceWideIds). */
inline bool
WideEdgeIds(uint64_t slots, bool forceWideIds)
{
  return forceWideIds || slots >= uint64_t(kNoLevelEdge);
}

/** LevelSynchronousTree's device bytes: the pixels' and nodes' state to the end; the tile stage (8-bit pixels
 * where it applies, 32-bit node ids) or every edge sorted by level, with the level loop; then the renumbering. Node
 * ids of 64 bits (`wideNodes`) take 8 bytes where 32-bit ones take 4, and 64-bit edge ids. */
template <typename TPixel>
uint64_t
LevelSynchronousBytes(const sl::ImageGraph & g, bool forceWideIds, bool wideNodes, int device)
{
  using TKey       = typename std::conditional<sizeof(TPixel) == 1, uint8_t, uint16_t>::type;
  const uint64_t n = g.Pixels(), slots = n * g.slots, codes = uint64_t(1) << (8 * sizeof(TKey));
  const uint64_t node = wideNodes ? sizeof(uint64_t) : sizeof(uint32_t);
  const uint64_t state =
    n * (2 * node + sizeof(uint32_t)) + (2 * n - 1) * node + (n - 1) * (sizeof(uint32_t) + node) + 8;
  uint64_t                      stage = 0;
  const std::optional<TileGrid> tg    = wideNodes ? std::nullopt : ChooseTileGrid<TPixel>(g, device);
  if (tg)
  {
    const uint64_t room = uint64_t(tg->tiles) * tg->cap, cells = uint64_t(kTileCodes) * tg->tiles;
    stage = (kTileCodes + 1) * sizeof(uint64_t) + 8 + room * (2 * sizeof(uint2) + sizeof(uint32_t)) +
            ForceRefWords(n, *tg, forceWideIds) * sizeof(uint32_t) +
            std::max(cells * 3 * sizeof(uint32_t) + detail::ScanScratchBytes(cells), LevelLoopBytes(kTileCodes));
  }
  else
  {
    const uint64_t id = wideNodes || WideEdgeIds(slots, forceWideIds) ? sizeof(uint64_t) : sizeof(uint32_t);
    stage = slots * 2 * (sizeof(TKey) + id) + std::max(sl::SortPairsScratch(slots, sizeof(TKey), unsigned(id)),
                                                       (codes + 1) * sizeof(uint64_t) + LevelLoopBytes(codes));
  }
  return state + std::max(stage, RenumberBytes(n, unsigned(node)));
}

/** The level-synchronous construction (src/AlphaTree/chsAlphaTreeLevels.cuh; for 8-bit images with 32-bit node ids
 * the tile stage of src/AlphaTree/chsAlphaTreeTileLevels.cuh), then the renumbering; returns the number of nodes.
 * Node and pixel ids of TNode: uint32_t up to MaximumDendrogramVertices pixels, uint64_t beyond (every edge sorted by
 * level, 64-bit edge ids, the level loop without its shared-memory tail). */
template <typename TPixel, typename TNode>
uint64_t
LevelSynchronousTree(const TPixel *             dPixels,
                     const sl::ImageGraph &     g,
                     const AlphaTreeAllocator & allocate,
                     detail::EventTimer &       build,
                     detail::EventTimer &       canonical,
                     bool                       forceWideIds,
                     cudaStream_t               stream,
                     detail::MemoryTracker &    tracker,
                     const ExecutionContext &   context)
{
  static_assert(LevelSynchronousPixel<TPixel>(), "integer scalar pixels of 8 or 16 bits");
  using TKey               = typename std::conditional<sizeof(TPixel) == 1, uint8_t, uint16_t>::type;
  constexpr bool wideNodes = sizeof(TNode) == 8;
  const int      device    = context.device;
  const uint64_t n = g.Pixels(), slots = n * g.slots;
  const uint32_t codes  = uint32_t(1) << (8 * sizeof(TKey));
  const unsigned blocks = detail::GridStrideBlocks(n, 256, device);

  detail::DeviceBuffer<TNode>              uf(n, stream, &tracker), current(n, stream, &tracker);
  detail::DeviceBuffer<uint32_t>           stamp(n, stream, &tracker), nodeLevel(n - 1, stream, &tracker);
  detail::DeviceBuffer<TNode>              nodeParent(2 * n - 1, stream, &tracker), nodeMin(n - 1, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> made(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(made.get(), 0, sizeof(unsigned long long), stream));
  LevelStateT<TNode>      st{ uf.get(),        current.get(), stamp.get(), nodeParent.get(),
                         nodeLevel.get(), nodeMin.get(), made.get(),  TNode(n) };
  std::optional<TileGrid> tg;
  if constexpr (sizeof(TPixel) == 1 && !wideNodes)
  {
    tg = ChooseTileGrid<TPixel>(g, device);
    if (tg) // the tile stage initialises the pixels' state
      TileStageAndLoop(dPixels, g, *tg, st, forceWideIds, stream, tracker, device);
  }
  if (!tg)
  {
    LevelInitKernel<<<blocks, 256, 0, stream>>>(st);
    CHS_CUDA_CHECK_LAUNCH("LevelInitKernel");
    const auto edges = [&](auto idType)
    {
      // Every edge, grouped by level; edge ids of TId bits.
      using TId = decltype(idType);
      detail::DeviceBuffer<TKey> keys(slots, stream, &tracker), keysAlt(slots, stream, &tracker);
      detail::DeviceBuffer<TId>  ids(slots, stream, &tracker), idsAlt(slots, stream, &tracker);
      LevelKeysKernel<TKey><<<blocks, 256, 0, stream>>>(dPixels, g, keys.get(), ids.get());
      CHS_CUDA_CHECK_LAUNCH("LevelKeysKernel");
      cub::DoubleBuffer<TKey> k(keys.get(), keysAlt.get());
      cub::DoubleBuffer<TId>  v(ids.get(), idsAlt.get());
      size_t                  bytes = 0;
      CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, k, v, slots, 0, int(8 * sizeof(TKey)), stream));
      {
        detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
        CHS_CUDA_CHECK(
          cub::DeviceRadixSort::SortPairs(temp.get(), bytes, k, v, slots, 0, int(8 * sizeof(TKey)), stream));
      }
      detail::DeviceBuffer<uint64_t> start(codes, stream, &tracker);
      CHS_CUDA_CHECK(cudaMemsetAsync(start.get(), 0xff, codes * sizeof(uint64_t), stream));
      LevelStartsKernel<<<detail::GridStrideBlocks(slots, 256, device), 256, 0, stream>>>(
        k.Current(), slots, start.get());
      CHS_CUDA_CHECK_LAUNCH("LevelStartsKernel");
      // The alternate id buffer is free after the sort: it holds lost[] (node ids, one per item; edge ids are at
      // least as wide).
      static_assert(sizeof(TId) >= sizeof(TNode), "lost[] lives in the edge ids' alternate buffer");
      detail::DeviceBuffer<uint64_t> items(1, stream, &tracker);
      const uint64_t                 itemCount = slots;
      CHS_CUDA_CHECK(cudaMemcpyAsync(items.get(), &itemCount, sizeof(uint64_t), cudaMemcpyHostToDevice, stream));
      RunLevelLoop(EdgeIdSource<TId>{ LevelEdges(g), v.Current() },
                   reinterpret_cast<TNode *>(v.Alternate()),
                   start.get(),
                   codes,
                   items.get(),
                   st,
                   stream,
                   tracker,
                   device);
    };
    if (wideNodes || WideEdgeIds(slots, forceWideIds))
      edges(uint64_t{});
    else if constexpr (!wideNodes)
      edges(uint32_t{});
  }
  unsigned long long internal = 0;
  ReadBack(internal, made.get(), stream);
  build.Stop();
  if (internal + 1 > n)
    throw std::logic_error("the CUDA alpha-tree has too many nodes (internal error: please report it)");
  canonical.Start();
  return RenumberOnDevice(n,
                          internal,
                          nodeParent.get(),
                          nodeLevel.get(),
                          nodeMin.get(),
                          int(8 * sizeof(TKey)),
                          false,
                          allocate,
                          canonical,
                          stream,
                          tracker,
                          context);
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
  // Node ids: 32-bit up to MaximumDendrogramVertices pixels; the level-synchronous and the spanning-tree
  // constructions take 64-bit ones beyond (v1 and v2 number pixels and edge slots in 32 bits, which refuses such
  // sizes below; the spanning tree numbers pixels in 32 bits, up to MaximumWideDendrogramVertices).
  const sl::ImageGraph g = at::CheckedGraph<TPixel>(grid, parameters, ~uint64_t(0));
  if (!allocate)
    throw std::invalid_argument("no allocator for the tree");
  const uint64_t      n = g.Pixels();
  const unsigned      c = parameters.graph.components, K = g.slots;
  detail::DeviceScope scope(context.device);
  const auto          stream      = static_cast<cudaStream_t>(context.stream);
  const at::TileShape tile        = at::ResolveTile(grid, parameters, K, context.device);
  constexpr bool      levelPixels = at::LevelSynchronousPixel<TPixel>();
  // Auto: level-synchronous for 8-bit scalars, and for 16-bit ones whose pixels and slots the others cannot number.
  const AlphaTreeAlgorithm algorithm = parameters.algorithm != AlphaTreeAlgorithm::Auto ? parameters.algorithm
                                       : (levelPixels && c == 1 && (sizeof(TPixel) == 1 || !at::SlotIdsFit(g)))
                                         ? AlphaTreeAlgorithm::LevelSynchronous
                                         : AlphaTreeAlgorithm::SpanningTree;
  if (algorithm == AlphaTreeAlgorithm::LevelSynchronous && !(levelPixels && c == 1))
    throw std::invalid_argument("the level-synchronous construction needs 8-bit or 16-bit integer scalar pixels");
  const bool wideNodes = n > MaximumDendrogramVertices || parameters.forceWideNodeIds;
  // The insert-all-edges and skip-redundant-edges constructions number pixels and edge slots in 32 bits. The
  // spanning tree numbers pixels and tree-edge ranks in 32 bits (up to 2^32 - 1 pixels), nodes in 32 or 64 bits (as
  // the dendrograms' PANDORA does) and edges in the keys of the single-linkage minimum spanning tree (wide from 2^32
  // slots on); the level-synchronous construction numbers pixels and nodes, and edge slots in 64 bits where 32 do
  // not hold them.
  const bool   spanning = algorithm == AlphaTreeAlgorithm::SpanningTree;
  sl::EdgeKeys keys;
  if (spanning)
    keys = sl::CheckedImageEdgeKeys<TPixel>(
      grid, parameters.graph, g, wideNodes ? MaximumWideDendrogramVertices : MaximumDendrogramVertices);
  else if (!at::SlotIdsFit(g) && algorithm != AlphaTreeAlgorithm::LevelSynchronous)
  {
    const char * names[] = { "", "insert-all-edges", "skip-redundant-edges", "spanning-tree", "level-synchronous" };
    throw std::invalid_argument(at::SlotIdsMessage(g) + " for the " + names[int(algorithm)] +
                                " construction (the spanning-tree one goes further, and for 8- and 16-bit images the "
                                "level-synchronous one, which Auto chooses for them)");
  }
  detail::MemoryTracker tracker;
  AlphaTreeResult       result;
  {
    // The pixels (and the NaN check's flag) to the end; the construction's arrays, then the canonicalisation's.
    uint64_t bytes = n * c * sizeof(TPixel) + 8;
    if (n > 1)
    {
      if (algorithm == AlphaTreeAlgorithm::LevelSynchronous)
      {
        if constexpr (levelPixels)
          bytes += at::LevelSynchronousBytes<TPixel>(g, parameters.forceWideIds, wideNodes, context.device);
      }
      else
      {
        // 64-bit node ids for the spanning tree's parents where the size needs them (or forced).
        const uint64_t nodes = spanning ? 2 * n - 1 : n * (K + 1);
        const unsigned id    = spanning && wideNodes ? 8 : 4;
        bytes += nodes * id + (nodes - n) * sizeof(uint32_t) + sizeof(unsigned long long) +
                 std::max(spanning ? at::SpanningTreeConstructionBytes(g, keys, id) : 0,
                          at::CanonicaliseBytes(n, nodes, spanning, id));
      }
    }
    tracker.what = detail::DescribeRun("alpha-tree", grid);
    detail::ReserveDeviceMemory(tracker, bytes, context.device);
  }

  detail::DeviceBuffer<TPixel> dPixels(n * c, stream, &tracker);
  detail::CopyToDevice(dPixels.get(), pixels, n * c * sizeof(TPixel), stream, context);
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    CheckFinitePixels(dPixels.get(), n, c, stream, tracker, context.device);
  }
  if (context.progress)
    context.progress(0.1f);
  if (n == 1)
    return at::SinglePixelTree(allocate);

  detail::EventTimer build(stream), canonical(stream);
  build.Start();
  if (algorithm == AlphaTreeAlgorithm::LevelSynchronous)
  {
    if constexpr (levelPixels)
    {
      {
        result.nodes                    = (wideNodes ? at::LevelSynchronousTree<TPixel, uint64_t>
                                                     : at::LevelSynchronousTree<TPixel, uint32_t>)(dPixels.get(),
                                                                                g,
                                                                                allocate,
                                                                                build,
                                                                                canonical,
                                                                                parameters.forceWideIds,
                                                                                stream,
                                                                                tracker,
                                                                                context);
        result.insertedEdges            = n - 1; // one union per loser
        result.buildMilliseconds        = build.Milliseconds();
        result.canonicaliseMilliseconds = canonical.Milliseconds();
        if (info)
        {
          info->kernelMilliseconds  = result.buildMilliseconds + result.canonicaliseMilliseconds;
          info->peakDeviceBytes     = tracker.peak;
          info->reservedDeviceBytes = tracker.reserved;
        }
        if (context.progress)
          context.progress(1.0f);
        return result;
      }
    }
  }
  const uint64_t                           nodes = spanning ? 2 * n - 1 : n * (K + 1);
  detail::DeviceBuffer<uint32_t>           dLevel(nodes - n, stream, &tracker);
  detail::DeviceBuffer<unsigned long long> dInserted(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(dInserted.get(), 0, sizeof(unsigned long long), stream));
  const bool isFloat   = sl::FloatWeights<TPixel>(c);
  const int  levelBits = isFloat ? 32 : int(8 * sizeof(TPixel));
  if (spanning)
  {
    // The binary tree and its canonicalisation with node ids of the width the size needs.
    const auto run = [&](auto id)
    {
      using TNode = decltype(id);
      detail::DeviceBuffer<TNode> dParent(nodes, stream, &tracker);
      at::SpanningTreeConstruction(dPixels.get(),
                                   g,
                                   c,
                                   parameters.graph.distance,
                                   keys,
                                   dParent.get(),
                                   dLevel.get(),
                                   levelBits,
                                   stream,
                                   tracker,
                                   context.device);
      build.Stop();
      canonical.Start();
      return at::CanonicaliseOnDevice(
        n, nodes, dParent.get(), dLevel.get(), true, isFloat, levelBits, allocate, canonical, stream, tracker, context);
    };
    result.nodes = wideNodes ? run(uint64_t()) : run(uint32_t());
  }
  else
  {
    detail::DeviceBuffer<uint32_t> dParent(nodes, stream, &tracker);
    (algorithm == AlphaTreeAlgorithm::InsertAllEdges ? at::LaunchConstruction<TPixel, true>
                                                     : at::LaunchConstruction<TPixel, false>)(dPixels.get(),
                                                                                              g,
                                                                                              c,
                                                                                              parameters.graph.distance,
                                                                                              tile,
                                                                                              dParent.get(),
                                                                                              dLevel.get(),
                                                                                              dInserted.get(),
                                                                                              stream,
                                                                                              context.device);
    build.Stop();
    canonical.Start();
    result.nodes = at::CanonicaliseOnDevice(
      n, nodes, dParent.get(), dLevel.get(), false, isFloat, levelBits, allocate, canonical, stream, tracker, context);
  }
  unsigned long long inserted = 0;
  ReadBack(inserted, dInserted.get(), stream);
  result.insertedEdges            = spanning ? n - 1 : inserted;
  result.buildMilliseconds        = build.Milliseconds();
  result.canonicaliseMilliseconds = canonical.Milliseconds();
  if (info)
  {
    info->kernelMilliseconds  = result.buildMilliseconds + result.canonicaliseMilliseconds;
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
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
