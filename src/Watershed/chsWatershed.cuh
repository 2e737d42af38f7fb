// CUDA watershed (PRUF, APRUF, PRW with synchronous, balanced or block-asynchronous plateau resolution) and one
// waterfall level, on pixel codes already on the device: the host-side drivers of the stages in the other files of
// src/Watershed/.
//   chsWatershedInit.cuh      step I (states, lowest neighbours) and the plateau pointers after step II
//   chsWatershedPlateau.cuh   step II (plateau distances)
//   chsWatershedReduce.cuh    steps III and IV (path reduction, merging the labels of minimal plateaux)
//   chsWatershedNumbering.cuh labels by first pixel, watershed lines
//   chsWaterfall.cuh lowest passes and joins of the waterfall
// Instantiated once per code width (8, 16, 32, 64 bits) in the generated chsWatershed_<code>.cu files (build tree); the
// public entry points (src/Watershed/chsWatershed.cu) code the pixels and call these.
//
// Device memory: the codes (n x the pixel width) and three arrays of n 32-bit words: the pointers L, the plateau
// distances D (the paper's states S) and a scratch array (the paper's S'; 16 bytes more), which the numbering, the
// asynchronous resolution's second buffer and the waterfall reuse; plus CUB's scan storage and a few counters.
#ifndef chsWatershed_cuh
#define chsWatershed_cuh

#include "Common/chsCudaCommon.cuh"
#include "chs/Watershed.h"
#include "chsWatershedDevice.h"
#include "chsWatershedInit.cuh"
#include "chsWatershedNumbering.cuh"
#include "chsWatershedPlateau.cuh"
#include "chsWatershedReduce.cuh"
#include "chsWaterfall.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace chs
{
namespace ws
{

/** Launches of a convergence loop between two reads of their change counts. */
constexpr int kBatch = 4;

/** Calls f(integral_constant<bool, Full>, integral_constant<int, ZR>). */
template <class F>
void
WithConnectivity(bool full, bool threeD, F && f)
{
  if (threeD)
  {
    if (full)
      f(std::true_type{}, std::integral_constant<int, 1>{});
    else
      f(std::false_type{}, std::integral_constant<int, 1>{});
  }
  else if (full)
    f(std::true_type{}, std::integral_constant<int, 0>{});
  else
    f(std::false_type{}, std::integral_constant<int, 0>{});
}

/** Runs launch(round, counter) in batches until a launch counts no change; returns the launches, the last
 * (unchanged) one included. The batches grow 1, 1, 2, then kBatch: a loop that converges at once (the common case
 * on images of real values) then runs one or two launches, not kBatch; a long one pays two more reads. */
template <class Launch>
uint64_t
UntilStable(Launch && launch, uint64_t limit, const char * what, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  detail::DeviceBuffer<unsigned> counts(kBatch, stream, &tracker);
  unsigned                       host[kBatch];
  uint64_t                       rounds = 0;
  for (unsigned k = 0;; ++k)
  {
    if (rounds > limit)
      throw std::runtime_error(std::string("chs: the watershed's ") + what + " did not converge within " +
                               std::to_string(rounds) + " launches");
    const int size = k < 2 ? 1 : k == 2 ? 2 : kBatch;
    CHS_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, size * sizeof(unsigned), stream));
    for (int b = 0; b < size; ++b)
      launch(rounds + b, counts.get() + b);
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, counts.get(), size * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int b = 0; b < size; ++b)
      if (host[b] == 0)
        return rounds + b + 1;
    rounds += size;
  }
}

/** The launch of the tile kernels of step II (balanced and asynchronous): checked before step I, so that an image
 * the blocks cannot cover is refused whether or not it has plateaux. */
struct TileLaunch
{
  TileShape t;
  dim3      grid;
  size_t    shared;
  unsigned  threads;
};

template <int ZR, typename C, typename P>
TileLaunch
MakeTileLaunch(const ShapeT<P> & s, const unsigned (&block)[3])
{
  TileLaunch l;
  l.t    = TileShape{ block[0], block[1], block[2] };
  l.grid = dim3((s.nx + l.t.bx - 1) / l.t.bx, (s.ny + l.t.by - 1) / l.t.by, (s.nz + l.t.bz - 1) / l.t.bz);
  if (l.grid.y > 65535 || l.grid.z > 65535)
    throw std::invalid_argument("chs: the image is too large across y or z for the watershed's blocks");
  const size_t cells = size_t(l.t.bx + 2) * (l.t.by + 2) * (l.t.bz + 2 * ZR);
  l.shared           = cells * (sizeof(uint32_t) + sizeof(C));
  if (l.shared > 48 * 1024)
    throw std::invalid_argument("chs: the watershed's block " + std::to_string(l.t.bx) + " x " +
                                std::to_string(l.t.by) + " x " + std::to_string(l.t.bz) + " needs " +
                                std::to_string(l.shared) + " bytes of shared memory, more than 48 KiB");
  l.threads = l.t.bx * l.t.by * l.t.bz;
  return l;
}

/** Step II: the plateau distances in D (the asynchronous resolution alternates D and `spare`, which both hold the
 * result at the end); returns the global rounds. */
template <bool Full, int ZR, typename C, typename P>
uint64_t
ResolvePlateaus(const C *                   I,
                const ShapeT<P> &           s,
                const WatershedParameters & parameters,
                const TileLaunch &          tiles,
                uint32_t *                  D,
                uint32_t *                  spare,
                int                         device,
                cudaStream_t                stream,
                detail::MemoryTracker &     tracker)
{
  const uint64_t limit = uint64_t(s.n) + 2 * kBatch;
  if (parameters.plateaus == PlateauResolution::Synchronous)
  {
    const unsigned blocks = detail::GridStrideBlocks(s.n, 256, device);
    return UntilStable(
      [&](uint64_t, unsigned * count)
      {
        SyncStepKernel<Full, ZR, C, P><<<blocks, 256, 0, stream>>>(I, s, D, count);
        CHS_CUDA_CHECK_LAUNCH("SyncStepKernel");
      },
      limit,
      "plateau resolution",
      stream,
      tracker);
  }
  if (parameters.plateaus == PlateauResolution::Balanced)
    return UntilStable(
      [&](uint64_t, unsigned * count)
      {
        TileKernel<Full, ZR, false, C, P>
          <<<tiles.grid, tiles.threads, tiles.shared, stream>>>(I, s, tiles.t, D, D, count);
        CHS_CUDA_CHECK_LAUNCH("TileKernel");
      },
      limit,
      "plateau resolution",
      stream,
      tracker);
  CHS_CUDA_CHECK(cudaMemcpyAsync(spare, D, uint64_t(s.n) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, stream));
  return UntilStable(
    [&](uint64_t round, unsigned * count)
    {
      uint32_t * in  = round & 1 ? spare : D;
      uint32_t * out = round & 1 ? D : spare;
      TileKernel<Full, ZR, true, C, P>
        <<<tiles.grid, tiles.threads, tiles.shared, stream>>>(I, s, tiles.t, in, out, count);
      CHS_CUDA_CHECK_LAUNCH("TileKernel");
    },
    limit,
    "plateau resolution",
    stream,
    tracker);
}

template <typename C, typename P>
void
InitLayers(const C *          I,
           const Grid &       grid,
           bool               full,
           const ArraysT<P> & a,
           unsigned *         flat,
           uint64_t           from,
           uint64_t           to,
           int                device,
           cudaStream_t       stream)
{
  const ShapeT<P> s     = ShapeOf<P>(grid);
  const uint64_t  layer = grid.dimension == 3 ? uint64_t(s.nx) * s.ny : uint64_t(s.nx);
  const ShapeT<P> r     = InRange(s, from * layer, std::min<uint64_t>(s.n, to * layer));
  if (r.end <= r.begin)
    return;
  const unsigned blocks = detail::GridStrideBlocks(uint64_t(r.end - r.begin), 256, device);
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     InitKernel<decltype(f)::value, decltype(zr)::value, C, P>
                       <<<blocks, 256, 0, stream>>>(I, r, a.b1, reinterpret_cast<uint32_t *>(a.b0), flat);
                     CHS_CUDA_CHECK_LAUNCH("InitKernel");
                   });
}

template <typename C, typename P>
uint64_t
WatershedOnDevice(const C *                   I,
                  const Grid &                grid,
                  const WatershedParameters & parameters,
                  const ArraysT<P> &          a,
                  int                         device,
                  cudaStream_t                stream,
                  detail::MemoryTracker &     tracker,
                  uint64_t &                  plateauRounds,
                  const unsigned *            earlyFlatBlocks,
                  bool                        number)
{
  unsigned block[3];
  CheckedBlock(grid, parameters, block);
  const ShapeT<P> s      = ShapeOf<P>(grid);
  const unsigned  blocks = detail::GridStrideBlocks(s.n, 256, device);
  const uint64_t  limit  = uint64_t(s.n) + 2 * kBatch;
  P *             L      = a.b1; // the labels end where the pointers were
  uint32_t *      D      = reinterpret_cast<uint32_t *>(a.b0);
  WithConnectivity(parameters.fullyConnected,
                   grid.dimension == 3,
                   [&](auto full, auto zr)
                   {
                     constexpr bool   Full       = decltype(full)::value;
                     constexpr int    ZR         = decltype(zr)::value;
                     const TileLaunch tiles      = parameters.plateaus == PlateauResolution::Synchronous
                                                     ? TileLaunch{}
                                                     : MakeTileLaunch<ZR, C, P>(s, block);
                     unsigned         flatBlocks = earlyFlatBlocks ? *earlyFlatBlocks : 0;
                     // Step I, unless it ran as the codes arrived and found no flat pixel.
                     if (!earlyFlatBlocks || flatBlocks != 0)
                     {
                       detail::DeviceBuffer<unsigned> flat(1, stream, &tracker);
                       CHS_CUDA_CHECK(cudaMemsetAsync(flat.get(), 0, sizeof(unsigned), stream));
                       InitKernel<Full, ZR, C, P><<<blocks, 256, 0, stream>>>(I, s, L, D, flat.get());
                       CHS_CUDA_CHECK_LAUNCH("InitKernel");
                       ReadBack(flatBlocks, flat.get(), stream);
                     }
                     // Without a pixel that does not descend and has an equal neighbour, step II would change nothing
                     // (0 rounds), and every distance is 0 or none, for which PointerKernel keeps step I's pointers:
                     // images of real values often have none.
                     plateauRounds = 0;
                     if (flatBlocks != 0)
                     {
                       plateauRounds = ResolvePlateaus<Full, ZR, C, P>(
                         I, s, parameters, tiles, D, reinterpret_cast<uint32_t *>(a.b2), device, stream, tracker);
                       PointerKernel<Full, ZR, C, P><<<blocks, 256, 0, stream>>>(I, s, D, L);
                       CHS_CUDA_CHECK_LAUNCH("PointerKernel");
                     }
                     // Step III, after every pointer is taken to the last pixel of its path inside its tile (in shared
                     // memory), so that the reductions below hop a tile at a time; every pointer still points to an
                     // ancestor on its path.
                     if (!earlyFlatBlocks || flatBlocks != 0)
                       ShortcutPaths(L, L, s.nx, s.ny, ZR ? s.nz : 1u, stream);
                     if (parameters.algorithm == WatershedAlgorithm::APRUF)
                     {
                       FollowKernel<<<blocks, 256, 0, stream>>>(L, s);
                       CHS_CUDA_CHECK_LAUNCH("FollowKernel");
                     }
                     else
                       UntilStable(
                         [&](uint64_t, unsigned * count)
                         {
                           ReduceKernel<<<blocks, 256, 0, stream>>>(L, s, parameters.reductionRate, count);
                           CHS_CUDA_CHECK_LAUNCH("ReduceKernel");
                         },
                         limit,
                         "path reduction",
                         stream,
                         tracker);
                     // Without flat pixels every regional minimum is a pixel of its own and no two minimal-plateau
                     // pixels are neighbours (each would be lower than the other): step IV has nothing to merge, and
                     // step III left every pointer at its root.
                     if (flatBlocks == 0)
                       return;
                     // Step IV.
                     if (parameters.algorithm == WatershedAlgorithm::PRW)
                       UntilStable(
                         [&](uint64_t, unsigned * count)
                         {
                           MinMergeKernel<Full, ZR><<<blocks, 256, 0, stream>>>(D, s, L, count);
                           CHS_CUDA_CHECK_LAUNCH("MinMergeKernel");
                         },
                         limit,
                         "minimal plateau merging",
                         stream,
                         tracker);
                     else
                     {
                       UnionKernel<Full, ZR><<<blocks, 256, 0, stream>>>(D, s, L);
                       CHS_CUDA_CHECK_LAUNCH("UnionKernel");
                     }
                     FollowKernel<<<blocks, 256, 0, stream>>>(L, s);
                     CHS_CUDA_CHECK_LAUNCH("FollowKernel");
                   });
  if (!number)
    return 0;
  // Labels by first pixel: F in b0 (the distances are no longer needed), flags and their ranks in b2 (scanned in
  // place), labels in b1 (over the roots, each pixel its own).
  CHS_CUDA_CHECK(cudaMemsetAsync(a.b0, 0xff, uint64_t(s.n) * sizeof(P), stream));
  NumberVoxels(a, grid, 0, s.n, device, stream, tracker);
  P count = 0;
  ReadBack(count, a.b2 + (s.n - 1), stream);
  return count;
}

template <typename C, typename P>
void
LinesOnDevice(const C * I, const Grid & grid, bool full, const ArraysT<P> & a, int device, cudaStream_t stream)
{
  const ShapeT<P> s      = ShapeOf<P>(grid);
  const unsigned  blocks = detail::GridStrideBlocks(s.n, 256, device);
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     LinesKernel<decltype(f)::value, decltype(zr)::value, C, P>
                       <<<blocks, 256, 0, stream>>>(I, s, a.b1, a.b2);
                     CHS_CUDA_CHECK_LAUNCH("LinesKernel");
                   });
}

template <typename C, typename P>
uint32_t
WaterfallLevelOnDevice(const C *               I,
                       const Grid &            grid,
                       bool                    full,
                       uint32_t                count,
                       const Arrays &          a,
                       int                     device,
                       cudaStream_t            stream,
                       detail::MemoryTracker & tracker)
{
  using W                      = std::conditional_t<sizeof(C) <= 4, uint32_t, unsigned long long>;
  const ShapeT<P> s            = ShapeOf<P>(grid);
  const unsigned  blocks       = detail::GridStrideBlocks(s.n, 256, device);
  const uint32_t  regions      = count + 1; // region 0 is unused
  const unsigned  regionBlocks = detail::GridStrideBlocks(regions, 256, device);
  W *             pass         = reinterpret_cast<W *>(a.b2);
  uint32_t *      parent       = a.b0;
  CHS_CUDA_CHECK(cudaMemsetAsync(pass, 0xff, uint64_t(regions) * sizeof(W), stream));
  IdentityKernel<<<regionBlocks, 256, 0, stream>>>(parent, regions);
  CHS_CUDA_CHECK_LAUNCH("IdentityKernel");
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     constexpr bool Full = decltype(f)::value;
                     constexpr int  ZR   = decltype(zr)::value;
                     LowestPassKernel<Full, ZR, C, W, P><<<blocks, 256, 0, stream>>>(I, s, a.b1, pass);
                     CHS_CUDA_CHECK_LAUNCH("LowestPassKernel");
                     JoinKernel<Full, ZR, C, W, P><<<blocks, 256, 0, stream>>>(I, s, a.b1, pass, parent);
                     CHS_CUDA_CHECK_LAUNCH("JoinKernel");
                   });
  RegionRootKernel<<<regionBlocks, 256, 0, stream>>>(parent, regions);
  CHS_CUDA_CHECK_LAUNCH("RegionRootKernel");
  uint32_t * flag = a.b2;
  uint32_t * rank = a.b2 + regions;
  RootFlagKernel<<<regionBlocks, 256, 0, stream>>>(parent, regions, flag);
  CHS_CUDA_CHECK_LAUNCH("RootFlagKernel");
  InclusiveSum(flag, rank, regions, stream, tracker);
  uint32_t next = 0;
  ReadBack(next, rank + count, stream);
  MapKernel<<<regionBlocks, 256, 0, stream>>>(parent, rank, regions);
  CHS_CUDA_CHECK_LAUNCH("MapKernel");
  RelabelKernel<<<blocks, 256, 0, stream>>>(a.b1, parent, s);
  CHS_CUDA_CHECK_LAUNCH("RelabelKernel");
  return next;
}

/** The levels on the pixels: WaterfallLevelOnDevice relabels a.b1 at each level (voxel indices P). */
template <typename C, typename P>
class PixelLevels final : public LevelEngine
{
public:
  PixelLevels(const C *               I,
              const Grid &            grid,
              bool                    full,
              const Arrays &          a,
              int                     device,
              cudaStream_t            stream,
              detail::MemoryTracker & tracker)
    : m_I(I)
    , m_Grid(grid)
    , m_Full(full)
    , m_A(a)
    , m_Device(device)
    , m_Stream(stream)
    , m_Tracker(tracker)
  {
  }

  uint32_t
  Next(uint32_t count, uint32_t * parents) override
  {
    const uint32_t next = WaterfallLevelOnDevice<C, P>(m_I, m_Grid, m_Full, count, m_A, m_Device, m_Stream, m_Tracker);
    CHS_CUDA_CHECK(
      cudaMemcpyAsync(parents, m_A.b0 + 1, uint64_t(count) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, m_Stream));
    return next;
  }
  const uint32_t *
  Labels() override
  {
    return m_A.b1;
  }
  uint32_t *
  Spare() const override
  {
    return m_A.b0;
  }
  bool
  OnRegionGraph() const override
  {
    return false;
  }

private:
  const C *               m_I;
  Grid                    m_Grid;
  bool                    m_Full;
  Arrays                  m_A;
  int                     m_Device;
  cudaStream_t            m_Stream;
  detail::MemoryTracker & m_Tracker;
};

/** The levels on the region graph of level 0 (chsWaterfall.cuh): the edges, the regions' arrays (lowest passes,
 * union-find and new labels, root flags and ranks) and each level-0 region's current label M; a.b1 keeps level 0's
 * labels, a level's labels are made from them in a.b0 when asked for. */
template <typename W, typename P>
class GraphLevels final : public LevelEngine
{
public:
  GraphLevels(uint64_t                edges,
              uint32_t                count,
              const ShapeT<P> &       s,
              const Arrays &          a,
              int                     device,
              cudaStream_t            stream,
              detail::MemoryTracker & tracker)
    : m_Edges(edges, stream, &tracker)
    , m_EdgeCount(edges)
    , m_Level0(count)
    , m_Pass(uint64_t(count) + 1, stream, &tracker)
    , m_P(uint64_t(count) + 1, stream, &tracker)
    , m_Flag(uint64_t(count) + 1, stream, &tracker)
    , m_Rank(uint64_t(count) + 1, stream, &tracker)
    , m_M(uint64_t(count) + 1, stream, &tracker)
    , m_Counts(2, stream, &tracker)
    , m_S(s)
    , m_A(a)
    , m_Device(device)
    , m_Stream(stream)
    , m_Tracker(tracker)
  {
    IdentityKernel<<<detail::GridStrideBlocks(uint64_t(count) + 1, 256, device), 256, 0, stream>>>(m_M.get(),
                                                                                                   count + 1);
    CHS_CUDA_CHECK_LAUNCH("IdentityKernel");
  }

  RegionEdge<W> *
  EdgeArray() const
  {
    return m_Edges.get();
  }

  uint32_t
  Next(uint32_t count, uint32_t * parents) override
  {
    const uint32_t regions      = count + 1; // region 0 is unused
    const unsigned regionBlocks = detail::GridStrideBlocks(regions, 256, m_Device);
    uint32_t *     parent       = m_P.get();
    CHS_CUDA_CHECK(cudaMemsetAsync(m_Pass.get(), 0xff, uint64_t(regions) * sizeof(W), m_Stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(m_Counts.get(), 0, 2 * sizeof(unsigned long long), m_Stream));
    IdentityKernel<<<regionBlocks, 256, 0, m_Stream>>>(parent, regions);
    CHS_CUDA_CHECK_LAUNCH("IdentityKernel");
    if (m_EdgeCount)
    {
      const unsigned edgeBlocks = detail::GridStrideBlocks(m_EdgeCount, 256, m_Device);
      EdgePassKernel<<<edgeBlocks, 256, 0, m_Stream>>>(m_Edges.get(), m_EdgeCount, m_Pass.get());
      CHS_CUDA_CHECK_LAUNCH("EdgePassKernel");
      EdgeJoinKernel<<<edgeBlocks, 256, 0, m_Stream>>>(m_Edges.get(), m_EdgeCount, m_Pass.get(), parent);
      CHS_CUDA_CHECK_LAUNCH("EdgeJoinKernel");
    }
    RegionRootKernel<<<regionBlocks, 256, 0, m_Stream>>>(parent, regions);
    CHS_CUDA_CHECK_LAUNCH("RegionRootKernel");
    RootFlagKernel<<<regionBlocks, 256, 0, m_Stream>>>(parent, regions, m_Flag.get());
    CHS_CUDA_CHECK_LAUNCH("RootFlagKernel");
    InclusiveSum(m_Flag.get(), m_Rank.get(), regions, m_Stream, m_Tracker);
    MapKernel<<<regionBlocks, 256, 0, m_Stream>>>(parent, m_Rank.get(), regions);
    CHS_CUDA_CHECK_LAUNCH("MapKernel");
    CHS_CUDA_CHECK(
      cudaMemcpyAsync(parents, parent + 1, uint64_t(count) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, m_Stream));
    ComposeKernel<<<detail::GridStrideBlocks(uint64_t(m_Level0) + 1, 256, m_Device), 256, 0, m_Stream>>>(
      m_M.get(), parent, m_Level0 + 1);
    CHS_CUDA_CHECK_LAUNCH("ComposeKernel");
    if (m_EdgeCount)
    {
      EdgeMapKernel<<<detail::GridStrideBlocks(m_EdgeCount, 256, m_Device), 256, 0, m_Stream>>>(
        m_Edges.get(), m_EdgeCount, parent);
      CHS_CUDA_CHECK_LAUNCH("EdgeMapKernel");
      size_t bytes = 0;
      CHS_CUDA_CHECK(
        cub::DeviceSelect::If(nullptr, bytes, m_Edges.get(), m_Counts.get(), m_EdgeCount, BetweenRegions{}, m_Stream));
      detail::DeviceBuffer<uint8_t> temp(bytes, m_Stream, &m_Tracker);
      CHS_CUDA_CHECK(cub::DeviceSelect::If(
        temp.get(), bytes, m_Edges.get(), m_Counts.get(), m_EdgeCount, BetweenRegions{}, m_Stream));
    }
    // One read for both counts: the regions of the next level beside the edges kept.
    CHS_CUDA_CHECK(
      cudaMemcpyAsync(m_Counts.get() + 1, m_Rank.get() + count, sizeof(uint32_t), cudaMemcpyDeviceToDevice, m_Stream));
    Counts counts{};
    ReadBack(counts, reinterpret_cast<const Counts *>(m_Counts.get()), m_Stream);
    if (m_EdgeCount)
      m_EdgeCount = counts.kept;
    ++m_Level;
    return uint32_t(counts.next);
  }

  const uint32_t *
  Labels() override
  {
    if (m_Level == 0)
      return m_A.b1;
    LevelLabelsKernel<<<detail::GridStrideBlocks(m_S.n, 256, m_Device), 256, 0, m_Stream>>>(
      m_A.b1, m_M.get(), m_S, m_A.b0);
    CHS_CUDA_CHECK_LAUNCH("LevelLabelsKernel");
    return m_A.b0;
  }
  uint32_t *
  Spare() const override
  {
    return m_A.b2;
  }
  bool
  OnRegionGraph() const override
  {
    return true;
  }

private:
  detail::DeviceBuffer<RegionEdge<W>> m_Edges;
  uint64_t                            m_EdgeCount;
  uint32_t                            m_Level0;
  detail::DeviceBuffer<W>             m_Pass;
  detail::DeviceBuffer<uint32_t>      m_P, m_Flag, m_Rank, m_M;
  /** The edges kept by the select, and the next level's region count (in the low half, as a little-endian uint32). */
  struct Counts
  {
    unsigned long long kept, next;
  };
  detail::DeviceBuffer<unsigned long long> m_Counts;
  ShapeT<P>                                m_S;
  Arrays                                   m_A;
  int                                      m_Device;
  cudaStream_t                             m_Stream;
  detail::MemoryTracker &                  m_Tracker;
  unsigned                                 m_Level = 0;
};

template <typename C, typename P>
std::unique_ptr<LevelEngine>
MakeLevelEngine(const C *               I,
                const Grid &            grid,
                bool                    full,
                uint32_t                count,
                const Arrays &          a,
                int                     device,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                LevelPath               path)
{
  using W = std::conditional_t<sizeof(C) <= 4, uint32_t, unsigned long long>;
  // Below 2^20 voxels the levels on the voxels took less time (launches, not bytes, bound them; H200, 2D gradients
  // of 256^2 to 4096^2 in bench/results/Watershed), and the edge count is not worth its pass.
  if (path == LevelPath::Pixels || (path == LevelPath::Auto && grid.NumberOfVoxels() < (uint64_t(1) << 20)))
    return std::make_unique<PixelLevels<C, P>>(I, grid, full, a, device, stream, tracker);
  const ShapeT<P> s      = ShapeOf<P>(grid);
  const uint64_t  blocks = (uint64_t(s.n) + 255) / 256;
  detail::ReserveDeviceMemory(tracker, 2 * blocks * sizeof(uint64_t) + detail::ScanScratchBytes(blocks), device);
  detail::DeviceBuffer<uint64_t> counts(blocks, stream, &tracker), ends(blocks, stream, &tracker);
  WithConnectivity(full,
                   grid.dimension == 3,
                   [&](auto f, auto zr)
                   {
                     EdgeCountKernel<decltype(f)::value, decltype(zr)::value, C, W, P>
                       <<<unsigned(blocks), 256, 0, stream>>>(I, s, a.b1, counts.get());
                     CHS_CUDA_CHECK_LAUNCH("EdgeCountKernel");
                   });
  InclusiveSum(counts.get(), ends.get(), blocks, stream, tracker);
  uint64_t edges = 0;
  ReadBack(edges, ends.get() + (blocks - 1), stream);
  const uint64_t pixelBytes = uint64_t(s.n) * (sizeof(C) + 3 * sizeof(P));
  if (path == LevelPath::Auto && edges * sizeof(RegionEdge<W>) > pixelBytes)
    return std::make_unique<PixelLevels<C, P>>(I, grid, full, a, device, stream, tracker);
  // The graph's edges, its regions' arrays and the select's scratch; Auto takes the pixels where they do not fit.
  const uint64_t graphBytes = edges * sizeof(RegionEdge<W>) +
                              (uint64_t(count) + 1) * (sizeof(W) + 4 * sizeof(uint32_t)) +
                              2 * sizeof(unsigned long long) + detail::ScanScratchBytes(edges);
  try
  {
    detail::ReserveDeviceMemory(tracker, graphBytes, device);
  }
  catch (const DeviceMemoryError &)
  {
    if (path != LevelPath::Auto)
      throw;
    return std::make_unique<PixelLevels<C, P>>(I, grid, full, a, device, stream, tracker);
  }
  auto graph = std::make_unique<GraphLevels<W, P>>(edges, count, s, a, device, stream, tracker);
  if (edges)
    WithConnectivity(full,
                     grid.dimension == 3,
                     [&](auto f, auto zr)
                     {
                       EdgeWriteKernel<decltype(f)::value, decltype(zr)::value, C, W, P>
                         <<<unsigned(blocks), 256, 0, stream>>>(I, s, a.b1, ends.get(), graph->EdgeArray());
                       CHS_CUDA_CHECK_LAUNCH("EdgeWriteKernel");
                     });
  return graph;
}

} // namespace ws
} // namespace chs

// clang-format off
#define CHS_INSTANTIATE_WATERSHED_CODE(C)                                                                           \
  template uint64_t chs::ws::WatershedOnDevice<C, uint32_t>(const C *, const chs::Grid &,                         \
    const chs::WatershedParameters &, const chs::ws::Arrays &, int, cudaStream_t, chs::detail::MemoryTracker &,      \
    uint64_t &, const unsigned *, bool);                                                                             \
  template uint64_t chs::ws::WatershedOnDevice<C, unsigned long long>(const C *, const chs::Grid &,               \
    const chs::WatershedParameters &, const chs::ws::ArraysT<unsigned long long> &, int, cudaStream_t,              \
    chs::detail::MemoryTracker &, uint64_t &, const unsigned *, bool);                                               \
  template void chs::ws::InitLayers<C, uint32_t>(const C *, const chs::Grid &, bool, const chs::ws::Arrays &,        \
    unsigned *, uint64_t, uint64_t, int, cudaStream_t);                                                              \
  template void chs::ws::LinesOnDevice<C, uint32_t>(const C *, const chs::Grid &, bool, const chs::ws::Arrays &,     \
    int, cudaStream_t);                                                                                              \
  template void chs::ws::LinesOnDevice<C, unsigned long long>(const C *, const chs::Grid &, bool,                  \
    const chs::ws::ArraysT<unsigned long long> &, int, cudaStream_t);                                                \
  template std::unique_ptr<chs::ws::LevelEngine> chs::ws::MakeLevelEngine<C, uint32_t>(const C *, const chs::Grid &, \
    bool, uint32_t, const chs::ws::Arrays &, int, cudaStream_t, chs::detail::MemoryTracker &, chs::ws::LevelPath);     \
  template std::unique_ptr<chs::ws::LevelEngine> chs::ws::MakeLevelEngine<C, unsigned long long>(const C *,          \
    const chs::Grid &, bool, uint32_t, const chs::ws::Arrays &, int, cudaStream_t, chs::detail::MemoryTracker &,      \
    chs::ws::LevelPath)
// clang-format on

#endif
