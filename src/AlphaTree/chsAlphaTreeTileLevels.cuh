// Alpha-tree, level-synchronous construction of 8-bit images: the tile stage, which builds in shared memory every
// node of the tree that lies inside one tile, and hands the level loop (src/AlphaTree/chsAlphaTreeLevels.cuh) a short
// list of entries per level for the components that reach other tiles.
//
// Each block runs Kruskal one level at a time on the edges inside its tile (2048 pixels: 64 x 32 in 2D, 16 x 16 x 8
// in 3D): the tile's edges are sorted in shared memory by (whether the edge leaves the tile, level) with a counting
// sort of 512 keys; per level, the ends of every inner edge of the level are united (shared-memory
// union-find whose root is the tile's smallest pixel of the set), and the roots linked under others are the level's
// losers; each loser then finds the root R of its set at the end of the level. A component is "interior" when none of
// its pixels has a neighbour in another tile: then no edge leaves it, and the tile's component is the image's. At
// each level, R's component is
//  - interior: the tile makes its node (level, R), whose children are R's previous node and each loser's;
//  - not interior: the global loop makes the node. It gets a pair (R, a) for each loser a whose component is not
//    interior (pixel a stands for it in the global union-find, and the pair unites it with R's), one force entry
//    {R} when some loser's component is interior (an interior component's first merge anywhere is this one: its
//    node's parent is the global node of this level containing R, whose id the loop leaves in the force entry), and
//    every edge of the level that leaves the tile, as a pair of its ends. The first time R's component is not
//    interior, R's latest tile node becomes R's current node in the loop ("exported").
// The loop thus makes the same components as with every edge of the image at every level above the tile's, and the
// same canonical tree. Per level two block barriers: phase A makes the previous level's tile nodes and force entries
// (one elected loser per root does it) and runs this level's unions; phase B gives the previous level's interior
// losers their parent, finds this level's roots, elects a maker per root, and appends the pairs and the edges that
// leave the tile. A tile's entries are appended in level order to its own part of a buffer, counted per level; a scan
// over (level, tile) counts gives each entry's place in the global list grouped by level (TileScatterKernel), which the
// level loop then runs. At the end each tile reserves its node ids with one atomic on the tree's node counter and
// writes its nodes (parent, level, smallest pixel) and its pixels' parents; a parent that is the node of a force entry
// is written as kTileRefBit | the entry's tile-buffer index, and after the loop replaced by the loop's node
// (TileParentsKernel). From 2^30 pixels on (node ids reach bit 31), or tile buffers of 2^31 entries, the reference
// is the bare index and the child's bit is set in a bit set over the node ids (forceRefs) instead. Node ids, pixels
// and entry places are 32-bit: up to MaximumDendrogramVertices pixels, tile buffers below 2^32 - 1 entries
// (ChooseTileGrid).
// Shared memory per block: 24 bytes per tile pixel, 2 per edge slot and 4 KB (60 KB in 2D 4-connected, 108 KB for
// 26-connected volumes). Device memory: 8 bytes per entry slot of the tile buffer (about one per pixel), kept until
// the parents that refer to force entries are resolved, then 12 per entry for the loop; from 2^30 pixels on a bit
// per node id.
#ifndef chsATTileLevels_cuh
#define chsATTileLevels_cuh

#include "chsAlphaTreeLevels.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

#include <algorithm>
#include <cstdint>

namespace chs
{
namespace at
{

constexpr unsigned kTilePixels      = 4096;      // local pixel index: 12 bits; with a 4-bit slot, one 16-bit edge code
constexpr unsigned kTileThreads     = 512;       // at most, a thread per four pixels or more
constexpr unsigned kTileBlocksPerSm = 3;         // the register budget: 2048-pixel tiles of 60 KB in 2D
constexpr unsigned kTileCodes       = 256;       // 8-bit level codes
constexpr unsigned kTileKeys   = 2 * kTileCodes; // sort keys: the code, plus kTileCodes if the edge leaves the tile
constexpr uint32_t kTileRefBit = 0x80000000u;    // a node parent that refers to a force entry (below 2^30 pixels)

/** The tiling of an image for the tile stage. */
struct TileGrid : sl::TileLayout
{
  uint32_t cap    = 0; // entries one tile may append: losers plus edges that cross the tile's sides
  size_t   shared = 0;

  uint32_t pixels = kTilePixels, threads = kTileThreads;

  /** Tiles of `tilePixels` pixels (4096, 2048 or 1024), a thread per four pixels, at most kTileThreads. */
  TileGrid(const sl::ImageGraph & g, uint32_t tilePixels)
    : pixels(tilePixels)
    , threads(std::min(tilePixels / 4, kTileThreads))
  {
    // Tile extents, powers of two (tz = 1 in 2D).
    const bool volume = g.nz > 1;
    int32_t    x = 32, y = 32, z = 1;
    if (tilePixels == 4096)
      volume ? (x = y = z = 16) : (x = y = 64);
    else if (tilePixels == 2048)
      volume ? (x = y = 16, z = 8) : (x = 64, y = 32);
    else
      volume ? (x = 16, y = z = 8) : (x = y = 32);
    static_cast<sl::TileLayout &>(*this) = sl::TileLayout(g, x, y, z);
    const int32_t t                      = tx * ty * tz;
    cap                                  = uint32_t(t);
    for (unsigned s = 0; s < g.slots; ++s) // pixels of a tile whose slot s leaves the tile
      cap += uint32_t(t - (tx - std::abs(int(g.dx[s]))) * (ty - std::abs(int(g.dy[s]))) * (tz - int(g.dz[s])));
    shared = size_t(pixels) * (3 * 4 + 6 * 2) + 4 * (2 * kTileKeys + 1) + size_t(pixels) * g.slots * 2;
  }
};

/** Find with path halving in shared memory. A parent is always smaller than its child (a root is linked under a
 * smaller one), so halving is an atomicMin: every write to the union-find is atomic, concurrent finds only read. */
__device__ __forceinline__ uint32_t
TileFind(volatile uint32_t * uf, uint32_t a)
{
  for (;;)
  {
    const uint32_t p = uf[a];
    if (p == a)
      return a;
    const uint32_t gp = uf[p];
    if (gp != p)
      atomicMin(const_cast<uint32_t *>(uf) + a, gp);
    a = gp;
  }
}

/** Flags of a pixel in the tile stage's shared memory (word[]); meaningful for roots. */
constexpr uint32_t kTileBorder       = 1u;       // the pixel's component has a pixel with a neighbour in another tile
constexpr uint32_t kTileInteriorLost = 2u;       // an interior component joined the root's at this level
constexpr uint32_t kTileElected      = 4u;       // kTileElected << parity: a maker of the root's node was elected
constexpr uint32_t kTileExported  = 0x80000000u; // nodeInfo: the node became the current node of its root in the loop
constexpr uint16_t kTileNoCurrent = 0xffffu;     // cur[] of a root whose component is not interior
/** A parent in the tile stage (res[], parentRef[]): a tile node (below 0x8000), kTileForce | the tile-buffer index of
 * a force entry, or none. */
constexpr uint16_t kTileForce    = 0x8000u;
constexpr uint16_t kTileNoParent = 0xffffu;

/** Where the tile stage writes: its entries and their counts per level, and the tree's arrays
 * (src/AlphaTree/chsAlphaTreeLevels.cuh) for the nodes it makes. */
struct TileOutput
{
  uint2 *              entries;     // tile * cap + index: the edges that leave the tile, then the other entries
  uint32_t *           levelCounts; // code * tiles + tile: all entries of the level
  uint32_t *           crossCounts; // code * tiles + tile: the level's edges that leave the tile
  uint32_t *           nodeParent;
  uint32_t *           nodeLevel;
  uint32_t *           nodeMin;
  uint32_t *           current;
  uint32_t *           uf;
  uint32_t *           stamp;
  unsigned long long * nodes;
  uint32_t *           forceRefs; // a bit per node id: its parent refers to a force entry; null: kTileRefBit
  uint32_t             n;
};

/** The tile stage (see the file's comment). One block per tile, TileGrid::threads threads, TileGrid::shared bytes of
 * dynamic shared memory; 8-bit pixels (the library instantiates uint8_t). Loops that append run the same number of
 * rounds on all threads of a warp, so that appends take one atomic per warp. */
template <typename TPixel>
static __global__ void
__launch_bounds__(kTileThreads, kTileBlocksPerSm)
  TileLevelKernel(const TPixel * pixels, sl::ImageGraph g, TileGrid tg, TileOutput out)
{
  extern __shared__ uint32_t smem[];
  const uint32_t             T        = tg.pixels;
  uint32_t *                 uf       = smem;             // T
  uint32_t *                 word     = uf + T;           // T: flags (kTileBorder, ...)
  uint32_t *                 nodeInfo = word + T;         // T: level << 16 | smallest pixel, kTileExported
  uint32_t *                 hist     = nodeInfo + T;     // kTileKeys: edges per key, then entries per level code
  uint32_t *                 start    = hist + kTileKeys; // kTileKeys + 1
  uint16_t *                 res = reinterpret_cast<uint16_t *>(start + kTileKeys + 1); // T: parent of a root's losers
  uint16_t *                 parentRef = res + T;           // 2 T: parent of child c (a pixel, or T + a tile node)
  uint16_t *                 cur       = parentRef + 2 * T; // T: a root's latest child index
  uint16_t *                 lostA     = cur + T;           // T: the losers, level after level
  uint16_t *                 lostR     = lostA + T; // T: their roots at the end of their level, 0x8000: the maker
  uint16_t *                 edges     = lostR + T; // edge codes (local pixel << 4 | slot) by key
  TPixel *                   px        = reinterpret_cast<TPixel *>(parentRef); // during the sort
  uint32_t *                 cursor    = reinterpret_cast<uint32_t *>(lostA);   // kTileKeys, during the sort
  __shared__ uint32_t        lostTotal, entryCount[2], entryStart[2], nodeCount, active, levels;
  __shared__ uint8_t         levelList[kTileCodes];
  __shared__ unsigned long long nodeBase;

  const uint32_t tile = blockIdx.x;
  int64_t        x0, y0, z0;
  int32_t        ex, ey, ez;
  tg.Box(tile, g, x0, y0, z0, ex, ey, ez);
  const unsigned tid = threadIdx.x, lane = tid & 31u;
  const uint64_t base  = uint64_t(tile) * tg.cap;
  const int64_t  first = (z0 * g.ny + y0) * g.nx + x0; // the tile's first pixel

  auto X      = [&](uint32_t l) { return int32_t(l & uint32_t(tg.tx - 1)); };
  auto Y      = [&](uint32_t l) { return int32_t((l >> tg.sx) & uint32_t(tg.ty - 1)); };
  auto Z      = [&](uint32_t l) { return int32_t(l >> (tg.sx + tg.sy)); };
  auto Global = [&](uint32_t l) { return uint32_t(first + (int64_t(Z(l)) * g.ny + Y(l)) * g.nx + X(l)); };
  auto Active = [&](uint32_t l) { return X(l) < ex && Y(l) < ey && Z(l) < ez; };
  // Whether pixel l has a neighbour in another tile.
  auto Border = [&](uint32_t l)
  {
    const int32_t lx = X(l), ly = Y(l), lz = Z(l);
    return (lx == 0 && x0 > 0) || (lx == ex - 1 && x0 + ex < g.nx) || (ly == 0 && y0 > 0) ||
           (ly == ey - 1 && y0 + ey < g.ny) || (lz == 0 && z0 > 0) || (lz == ez - 1 && z0 + ez < g.nz);
  };
  // The far end of an inner edge, as a local index.
  auto Far = [&](uint32_t l, unsigned s)
  { return uint32_t(((Z(l) + g.dz[s]) << (tg.sx + tg.sy)) | ((Y(l) + g.dy[s]) << tg.sx) | (X(l) + g.dx[s])); };
  // Slot s of local pixel l: false when its far end lies outside the image; else its sort key: the level code, plus
  // kTileCodes when the far end lies in another tile.
  auto Edge = [&](uint32_t l, unsigned s, uint32_t & key)
  {
    const int32_t qx = X(l) + g.dx[s], qy = Y(l) + g.dy[s], qz = Z(l) + g.dz[s];
    if (x0 + qx < 0 || x0 + qx >= g.nx || y0 + qy < 0 || y0 + qy >= g.ny || z0 + qz >= g.nz)
      return false;
    const bool cross = !(qx >= 0 && qx < ex && qy >= 0 && qy < ey && qz < ez);
    key =
      sl::ScalarDifferenceCode(px[l], cross ? pixels[first + (int64_t(qz) * g.ny + qy) * g.nx + qx] : px[Far(l, s)]);
    key += cross ? kTileCodes : 0u;
    return true;
  };

  for (uint32_t l = tid; l < T; l += blockDim.x)
  {
    const bool a = Active(l);
    uf[l]        = l;
    word[l]      = a && Border(l) ? kTileBorder : 0u;
    cur[l]       = uint16_t(l);
    px[l]        = a ? pixels[Global(l)] : TPixel(0);
  }
  for (uint32_t c = tid; c < kTileKeys; c += blockDim.x)
    hist[c] = 0;
  if (tid == 0)
  {
    lostTotal = nodeCount = 0;
    entryCount[0] = entryCount[1] = entryStart[0] = 0;
    active                                        = uint32_t(ex * ey * ez);
  }
  __syncthreads();

  // The tile's edges sorted by key: count, scan, place (lanes with the same key share one atomic).
  for (int pass = 0; pass < 2; ++pass)
  {
    for (uint32_t l = tid; l < T; l += blockDim.x)
    {
      const bool a = Active(l);
      for (unsigned s = 0; s < g.slots; ++s)
      {
        uint32_t       key    = 0;
        const bool     edge   = a && Edge(l, s, key);
        const unsigned peers  = __match_any_sync(0xffffffffu, edge ? key : 0xffffffffu);
        const unsigned leader = unsigned(__ffs(peers)) - 1u;
        uint32_t       slot   = 0;
        if (edge && lane == leader)
          slot = atomicAdd((pass == 0 ? hist : cursor) + key, uint32_t(__popc(peers)));
        slot = __shfl_sync(0xffffffffu, slot, int(leader));
        if (edge && pass == 1)
          edges[slot + __popc(peers & ((1u << lane) - 1u))] = uint16_t(l << 4 | s);
      }
    }
    __syncthreads();
    if (pass == 0 && tid < 32)
    {
      // Exclusive scan of the counts by one warp, 16 per lane.
      constexpr unsigned kPerLane = kTileKeys / 32;
      uint32_t           local[kPerLane], sum = 0;
      for (unsigned k = 0; k < kPerLane; ++k)
      {
        local[k] = hist[tid * kPerLane + k];
        sum += local[k];
      }
      uint32_t inclusive = sum;
      for (unsigned d = 1; d < 32; d <<= 1)
      {
        const uint32_t o = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (tid >= d)
          inclusive += o;
      }
      uint32_t run = inclusive - sum;
      for (unsigned k = 0; k < kPerLane; ++k)
      {
        const unsigned c = tid * kPerLane + k;
        start[c] = cursor[c] = run;
        hist[c]              = 0; // from here on: entries per level code
        run += local[k];
      }
      if (tid == 31)
        start[kTileKeys] = run;
      // The codes with inner edges (lanes 0 to 15 hold them), in ascending order.
      uint32_t present = 0;
      for (unsigned k = 0; k < kPerLane; ++k)
        present |= (tid < kTileCodes / kPerLane && local[k] > 0 ? 1u : 0u) << k;
      uint32_t listed = __popc(present);
      for (unsigned d = 1; d < 32; d <<= 1)
      {
        const uint32_t o = __shfl_up_sync(0xffffffffu, listed, d);
        if (tid >= d)
          listed += o;
      }
      uint32_t at = listed - __popc(present);
      for (unsigned k = 0; k < kPerLane; ++k)
        if (present >> k & 1u)
          levelList[at++] = uint8_t(tid * kPerLane + k);
      if (tid == 31)
        levels = listed;
    }
    __syncthreads();
  }

  // The edges that leave the tile, by level, at the start of the tile's buffer; their count per level.
  const uint32_t crossBegin = start[kTileCodes], crossEnd = start[kTileKeys];
  for (uint32_t i = crossBegin + tid; i < crossEnd; i += blockDim.x)
  {
    const uint32_t l = edges[i] >> 4, s = edges[i] & 15u, gp = Global(l);
    out.entries[base + i - crossBegin] =
      make_uint2(gp, uint32_t(int64_t(gp) + (int64_t(g.dz[s]) * g.ny + g.dy[s]) * g.nx + g.dx[s]));
  }
  for (uint32_t c = tid; c < kTileCodes; c += blockDim.x)
    out.crossCounts[uint64_t(c) * tg.tiles + tile] = start[kTileCodes + c + 1] - start[kTileCodes + c];
  for (uint32_t c = tid; c < 2 * T; c += blockDim.x)
    parentRef[c] = kTileNoParent;
  if (tid == 0)
    entryStart[1] = crossEnd - crossBegin; // the other entries follow
  __syncthreads();

  // The levels with inner edges in ascending order (levelList[j]) until the tile is one component; a last round
  // (j == levels) finishes the last level. The level of a step's losers: lostA/lostR [lb, le); its entries are
  // counted in entryCount[step & 1] from entryStart[step & 1].
  uint32_t prevCode = 0, pb = 0, pe = 0, lb = 0; // previous level's losers [pb, pe); this level's from lb
  for (uint32_t j = 0, step = 0; j <= levels; ++j, ++step)
  {
    const bool     last = j == levels;
    const uint32_t code = last ? kTileCodes : levelList[j], ib = last ? 0 : start[code],
                   ie = last ? 0 : start[code + 1];
    const unsigned p = step & 1u, q = p ^ 1u;
    // Phase A: the previous level's makers make the tile nodes of interior components and the force entries.
    for (uint32_t i0 = pb; i0 < pe; i0 += blockDim.x)
    {
      const uint32_t i    = i0 + tid;
      uint32_t       R    = 0;
      bool           make = false, force = false;
      if (i < pe && (lostR[i] & 0x8000u))
      {
        R                = lostR[i] & 0x7fffu;
        const uint32_t w = word[R];
        make             = !(w & kTileBorder);
        force            = !make && (w & kTileInteriorLost);
        if (!make && cur[R] != kTileNoCurrent)
        {
          if (cur[R] >= T)
            nodeInfo[cur[R] - T] |= kTileExported;
          cur[R] = kTileNoCurrent;
        }
        atomicAnd(word + R, ~((kTileElected << q) | kTileInteriorLost));
      }
      const uint32_t k = WarpSlot(make, &nodeCount);
      if (make)
      {
        nodeInfo[k]       = prevCode << 16 | R;
        parentRef[cur[R]] = uint16_t(k);
        cur[R]            = uint16_t(T + k);
        res[R]            = uint16_t(k);
      }
      const uint32_t f = entryStart[q] + WarpSlot(force, entryCount + q);
      if (force)
      {
        out.entries[base + f] = make_uint2(Global(R), kForceEntry);
        res[R]                = uint16_t(kTileForce | f);
      }
    }
    if (tid == 0)
      entryCount[p] = 0;
    // Phase A: this level's unions.
    for (uint32_t i0 = ib; i0 < ie; i0 += blockDim.x)
    {
      const uint32_t i     = i0 + tid;
      uint32_t       loser = kTilePixels;
      if (i < ie)
      {
        const uint32_t u = edges[i] >> 4;
        loser            = UniteByCas(
          uf,
          u,
          Far(u, edges[i] & 15u),
          kTilePixels,
          [&](uint32_t a) { return TileFind(uf, a); },
          [](uint32_t a, uint32_t b) { return a < b; });
      }
      const uint32_t k = WarpSlot(loser != kTilePixels, &lostTotal);
      if (loser != kTilePixels)
        lostA[k] = uint16_t(loser);
    }
    __syncthreads();

    // Phase B: the previous level's losers of interior components get their parent.
    const uint32_t at = entryStart[q] + entryCount[q], le = lostTotal; // this level's first entry, losers' end
    if (tid == 0)
    {
      entryStart[p] = at;
      if (j > 0)
        hist[prevCode] = entryCount[q];
    }
    for (uint32_t i = pb + tid; i < pe; i += blockDim.x)
    {
      const uint32_t a = lostA[i];
      if (!(word[a] & kTileBorder))
        parentRef[cur[a]] = res[lostR[i] & 0x7fffu];
    }
    // Each loser's root; one maker per root; pairs for the losers of components that are not interior.
    for (uint32_t i0 = lb; i0 < le; i0 += blockDim.x)
    {
      const uint32_t i = i0 + tid;
      uint32_t       a = 0, R = 0;
      bool           pair = false;
      if (i < le)
      {
        a                = lostA[i];
        R                = TileFind(uf, a);
        pair             = word[a] & kTileBorder;
        const uint32_t o = atomicOr(word + R, (kTileElected << p) | (pair ? kTileBorder : kTileInteriorLost));
        lostR[i]         = uint16_t(R | ((o & (kTileElected << p)) ? 0u : 0x8000u));
      }
      const uint32_t k = at + WarpSlot(pair, entryCount + p);
      if (pair)
        out.entries[base + k] = make_uint2(Global(R), Global(a));
    }
    prevCode = code;
    pb       = lb;
    pe = lb = le;
    if (!last && le + 1 == active) // one component: no later level unites anything
      j = levels - 1;
    __syncthreads();
  }

  // The tile's nodes get their ids; nodes and pixels their parents.
  if (tid == 0)
    nodeBase = atomicAdd(out.nodes, (unsigned long long)nodeCount);
  __syncthreads();
  const uint32_t ids       = out.n + uint32_t(nodeBase); // the id of tile node 0
  auto           SetParent = [&](uint32_t child, uint32_t r)
  {
    if (r & kTileForce)
    {
      const uint32_t index  = uint32_t(base + (r & ~uint32_t(kTileForce)));
      out.nodeParent[child] = out.forceRefs ? index : kTileRefBit | index;
      if (out.forceRefs)
        atomicOr(out.forceRefs + (child >> 5), 1u << (child & 31u));
    }
    else
      out.nodeParent[child] = ids + r;
  };
  // The pixels' state for the level loop is initialised here (LevelInitKernel's work, done while other tiles
  // compute): union-find root and current node the pixel itself, no stamp.
  for (uint32_t l = tid; l < T; l += blockDim.x)
  {
    if (!Active(l))
      continue;
    const uint32_t r = parentRef[l], gl = Global(l);
    if (r != kTileNoParent)
      SetParent(gl, r);
    else
      out.nodeParent[gl] = gl;
    out.uf[gl]      = gl;
    out.current[gl] = gl;
    out.stamp[gl]   = 0xffffffffu;
  }
  __syncthreads(); // the exported nodes' current[] below comes after
  for (uint32_t k = tid; k < nodeCount; k += blockDim.x)
  {
    const uint32_t info = nodeInfo[k], r = parentRef[T + k], id = ids + k, R = Global(info & 0xffffu);
    if (r == kTileNoParent)
      out.nodeParent[id] = id;
    else
      SetParent(id, r);
    out.nodeLevel[id - out.n] = (info >> 16) & 0xffu;
    out.nodeMin[id - out.n]   = R;
    if (info & kTileExported)
      out.current[R] = id;
  }
  for (uint32_t c = tid; c < kTileCodes; c += blockDim.x)
    out.levelCounts[uint64_t(c) * tg.tiles + tile] = hist[c] + start[kTileCodes + c + 1] - start[kTileCodes + c];
}

/** start[code] = the first entry of the level in the global list, or kNoLevelStart when it has none; *total = the
 * number of entries. One block of kTileCodes threads. */
static __global__ void
TileLevelStartsKernel(const uint32_t * offsets,
                      const uint32_t * levelCounts,
                      uint32_t         tiles,
                      uint64_t *       start,
                      uint64_t *       total)
{
  const uint32_t c    = threadIdx.x;
  const uint64_t last = uint64_t(kTileCodes) * tiles - 1;
  const uint32_t all  = offsets[last] + levelCounts[last];
  const uint32_t b = offsets[uint64_t(c) * tiles], e = c + 1 < kTileCodes ? offsets[uint64_t(c + 1) * tiles] : all;
  start[c] = e > b ? uint64_t(b) : kNoLevelStart;
  if (c == 0)
    *total = all;
}

/** Exclusive scan of one value per thread of a block of kTileCodes threads into out[0 .. kTileCodes]. */
__device__ __forceinline__ void
TileCodeScan(uint32_t value, uint32_t * out, uint32_t * warpSums)
{
  const uint32_t c = threadIdx.x, lane = c & 31u, warp = c >> 5;
  uint32_t       inclusive = value;
  for (unsigned d = 1; d < 32; d <<= 1)
  {
    const uint32_t o = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d)
      inclusive += o;
  }
  if (lane == 31)
    warpSums[warp] = inclusive;
  __syncthreads();
  uint32_t before = 0;
  for (uint32_t w = 0; w < warp; ++w)
    before += warpSums[w];
  out[c] = before + inclusive - value;
  if (c == kTileCodes - 1)
    out[kTileCodes] = before + inclusive;
}

/** Copies each tile's entries to their place in the global list (grouped by level, tiles in order within a level,
 * within a tile's level the edges that leave it first); a force entry's slot in the tile buffer gets its global place
 * in .y. One block of kTileCodes threads per tile. */
static __global__ void
TileScatterKernel(uint2 *          tileEntries,
                  uint32_t         cap,
                  const uint32_t * levelCounts,
                  const uint32_t * crossCounts,
                  const uint32_t * offsets,
                  uint32_t         tiles,
                  uint2 *          out)
{
  __shared__ uint32_t crossStart[kTileCodes + 1], otherStart[kTileCodes + 1];
  __shared__ uint32_t warpSums[2][kTileCodes / 32];
  const uint32_t      tile = blockIdx.x, c = threadIdx.x;
  const uint32_t      cross = crossCounts[uint64_t(c) * tiles + tile];
  TileCodeScan(cross, crossStart, warpSums[0]);
  TileCodeScan(levelCounts[uint64_t(c) * tiles + tile] - cross, otherStart, warpSums[1]);
  __syncthreads();
  const uint32_t crossTotal = crossStart[kTileCodes], total = crossTotal + otherStart[kTileCodes];
  const uint64_t base = uint64_t(tile) * cap;
  for (uint32_t k = c; k < total; k += blockDim.x)
  {
    const bool       isCross = k < crossTotal;
    const uint32_t   m       = isCross ? k : k - crossTotal;
    const uint32_t * starts  = isCross ? crossStart : otherStart;
    uint32_t         lo = 0, hi = kTileCodes; // the level: the last code whose start is at most m
    while (hi - lo > 1)
    {
      const uint32_t mid = (lo + hi) / 2;
      if (starts[mid] <= m)
        lo = mid;
      else
        hi = mid;
    }
    const uint32_t dst =
      offsets[uint64_t(lo) * tiles + tile] + (isCross ? 0u : crossStart[lo + 1] - crossStart[lo]) + (m - starts[lo]);
    const uint2 e = tileEntries[base + k];
    out[dst]      = e;
    if (e.y == kForceEntry)
      tileEntries[base + k].y = dst;
  }
}

/** Node parents that refer to a force entry (kTileRefBit | tile-buffer index, or the index with the child's bit set in
 * forceRefs; among the tree's first n + *tileNodes nodes): the node the level loop left in it, lost[its place in the
 * global list] (TileScatterKernel left the place in the tile buffer). */
static __global__ void
TileParentsKernel(uint32_t *                 nodeParent,
                  const unsigned long long * tileNodes,
                  uint32_t                   n,
                  const uint32_t *           forceRefs,
                  const uint2 *              tileEntries,
                  const uint32_t *           forced)
{
  const uint64_t count = n + *tileNodes;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    if (forceRefs)
    {
      if (forceRefs[i >> 5] & (1u << (i & 31u)))
        nodeParent[i] = forced[tileEntries[nodeParent[i]].y];
      continue;
    }
    const uint32_t r = nodeParent[i];
    if (r & kTileRefBit)
      nodeParent[i] = forced[tileEntries[r & ~kTileRefBit].y];
  }
}

} // namespace at
} // namespace chs

#endif
