// Alpha-tree, level-synchronous construction of 8-bit images: the tile stage, which does in shared memory most of
// the unions that the level loop (src/at/chsATLevels.cuh) would otherwise do in global memory, and hands it a short
// list of entries per level instead of every edge of the image.
//
// Each block runs Kruskal one level at a time on the edges inside its tile (2048 pixels, 64 x 32, in 2D; 4096 voxels,
// 16^3, in 3D): the tile's edges are sorted by level in shared memory (a counting sort of the 256 codes), then, per
// level, phase A unites the ends of every edge of the level (shared-memory union-find whose root is the tile's smallest
// pixel of the set) and lists the roots it links under others (the level's losers); phase B finds each loser's
// root R at the end of the level. A loser stands for one component of the tile below the level; the components
// that join R's at this level are the children of the tile's node (level, R). The global loop needs, per level:
//  - a pair (R, a) for each loser a whose component has more than one pixel or touches another tile (a border
//    pixel): pixel a stands for that component in the global union-find, and the pair unites it with R's;
//  - a force entry (R) when at least one loser is a single interior pixel: such a pixel has no edge outside its
//    tile, so its first merge anywhere is this one, and the global tree has a node at this level containing R. The
//    pixel takes no part in the global loop: the loop leaves that node's id in the force entry, and the pixel's
//    parent is read from there at the end (TileParentsKernel);
//  - each edge that crosses to the next tile, as a pair of its ends.
// Pairs are unions of distinct components in the tile, so the global loop makes the same alpha-connected
// components at every level as with every edge of the image: the same canonical tree. A tile's entries are appended
// in level order to its own part of a buffer, counted per level; a scan over (level, tile) counts gives each
// entry's place in the global list grouped by level (TileScatterKernel), which the level loop then runs.
// On the benchmark's natural 8-bit 4096^2 image the loop gets 0.77 entries per pixel instead of 2 edges.
// Shared memory per block: 17 bytes per tile pixel, 2 per edge slot and 3 KB (46 KB in 2D 4-connected, 179 KB for
// 26-connected volumes). Device memory: 4 bytes per pixel (ref) and 8 per entry slot of the tile buffer (about one
// per pixel), then 12 per entry for the loop.
#ifndef chsATTileLevels_cuh
#define chsATTileLevels_cuh

#include "chsDeviceHelpers.cuh"
#include "chsSingleLinkageRule.h"

#include <cstdint>

namespace chs
{
namespace at
{

constexpr unsigned kTilePixels  = 4096; // local pixel index: 12 bits; with a 4-bit slot, one 16-bit edge code
constexpr unsigned kTileThreads = 1024;
constexpr unsigned kTileCodes   = 256;         // 8-bit level codes
constexpr uint32_t kForceEntry  = 0xffffffffu; // entry.y of a force entry
constexpr uint32_t kNoTileRef   = 0xffffffffu;

/** The tiling of an image for the tile stage. */
struct TileGrid
{
  int32_t  tx = 64, ty = 64, tz = 1; // tile extents, powers of two (tx * ty * tz = kTilePixels, or tz = 1 in 2D)
  uint32_t sx = 6, sy = 6;           // log2 of tx and ty
  uint32_t cx = 1, cy = 1, cz = 1;   // tiles along each axis
  uint32_t tiles  = 1;
  uint32_t cap    = 0; // entries one tile may append: losers plus edges that cross the tile's sides
  size_t   shared = 0;

  uint32_t pixels = kTilePixels, threads = kTileThreads;

  /** Tiles of `tilePixels` pixels (4096, 2048 or 1024), a thread per four pixels. */
  TileGrid(const sl::ImageGraph & g, uint32_t tilePixels)
    : pixels(tilePixels)
    , threads(tilePixels / 4)
  {
    const bool volume = g.nz > 1;
    if (tilePixels == 4096)
      volume ? (tx = ty = tz = 16) : (tx = ty = 64);
    else if (tilePixels == 2048)
      volume ? (tx = ty = 16, tz = 8) : (tx = 64, ty = 32);
    else
      volume ? (tx = 16, ty = tz = 8) : (tx = ty = 32);
    tz              = volume ? tz : 1;
    sx              = uint32_t(__builtin_ctz(uint32_t(tx)));
    sy              = uint32_t(__builtin_ctz(uint32_t(ty)));
    cx              = uint32_t((g.nx + tx - 1) / tx);
    cy              = uint32_t((g.ny + ty - 1) / ty);
    cz              = uint32_t((g.nz + tz - 1) / tz);
    tiles           = cx * cy * cz;
    const int32_t t = tx * ty * tz;
    cap             = uint32_t(t);
    for (unsigned s = 0; s < g.slots; ++s) // pixels of a tile whose slot s leaves the tile
      cap += uint32_t(t - (tx - std::abs(int(g.dx[s]))) * (ty - std::abs(int(g.dy[s]))) * (tz - int(g.dz[s])));
    shared = size_t(pixels) * (4 + 4 + 2 + 2 + 2 + 2 + 1) + 4 * (kTileCodes * 3 + 1) + size_t(pixels) * g.slots * 2;
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

/** The tile stage (see the file's comment). One block per tile, TileGrid::threads threads, TileGrid::shared bytes of
 * dynamic shared memory; 8-bit pixels (the library instantiates uint8_t). Writes the tile's entries to
 * entries[tile * cap ...] in level order, their count per level to levelCounts[code * tiles + tile], and for every
 * pixel of the tile ref[pixel] = the tile-buffer index of the force entry whose node is its parent, or kNoTileRef.
 * Every loop runs the same number of rounds on all threads, so that appends take one atomic per warp. */
template <typename TPixel>
static __global__ void
__launch_bounds__(kTileThreads) TileLevelKernel(const TPixel * pixels,
                                                sl::ImageGraph g,
                                                TileGrid       tg,
                                                uint2 *        entries,
                                                uint32_t *     levelCounts,
                                                uint32_t *     ref)
{
  extern __shared__ uint32_t smem[];
  const uint32_t             T          = tg.pixels;
  uint32_t *                 uf         = smem;                   // T
  uint32_t *                 forceLevel = uf + T;                 // T: the level a root's force entry was made at
  uint32_t *                 hist       = forceLevel + T;         // kTileCodes: edges per level, then entries per level
  uint32_t *                 start      = hist + kTileCodes;      // kTileCodes + 1
  uint32_t *                 cursor     = start + kTileCodes + 1; // kTileCodes
  uint16_t *          stamp = reinterpret_cast<uint16_t *>(cursor + kTileCodes); // a root's last node level, or 0xffff
  uint16_t *          forceIdx = stamp + T;    // the index of a root's force entry at this level
  uint16_t *          lostA    = forceIdx + T; // the level's losers
  uint16_t *          lostR    = lostA + T;    // their roots at the end of the level
  uint16_t *          edges    = lostR + T;    // edge codes (local pixel << 4 | slot) by level
  TPixel *            px       = reinterpret_cast<TPixel *>(edges + size_t(T) * g.slots);
  __shared__ uint32_t lostCount[2], entryCount;

  const uint32_t tile = blockIdx.x;
  const int64_t  x0 = int64_t(tile % tg.cx) * tg.tx, y0 = int64_t((tile / tg.cx) % tg.cy) * tg.ty,
                z0   = int64_t(tile / (tg.cx * tg.cy)) * tg.tz;
  const int32_t ex   = int32_t(g.nx - x0 < tg.tx ? g.nx - x0 : tg.tx),
                ey   = int32_t(g.ny - y0 < tg.ty ? g.ny - y0 : tg.ty),
                ez   = int32_t(g.nz - z0 < tg.tz ? g.nz - z0 : tg.tz);
  const unsigned tid = threadIdx.x, lane = tid & 31u;
  const uint64_t base  = uint64_t(tile) * tg.cap;
  const int64_t  first = (z0 * g.ny + y0) * g.nx + x0; // the tile's first pixel

  auto X      = [&](uint32_t l) { return int32_t(l & uint32_t(tg.tx - 1)); };
  auto Y      = [&](uint32_t l) { return int32_t((l >> tg.sx) & uint32_t(tg.ty - 1)); };
  auto Z      = [&](uint32_t l) { return int32_t(l >> (tg.sx + tg.sy)); };
  auto Global = [&](uint32_t l) { return uint32_t(first + (int64_t(Z(l)) * g.ny + Y(l)) * g.nx + X(l)); };
  // Whether pixel l has a neighbour in another tile.
  auto Border = [&](uint32_t l)
  {
    const int32_t lx = X(l), ly = Y(l), lz = Z(l);
    return (lx == 0 && x0 > 0) || (lx == ex - 1 && x0 + ex < g.nx) || (ly == 0 && y0 > 0) ||
           (ly == ey - 1 && y0 + ey < g.ny) || (lz == 0 && z0 > 0) || (lz == ez - 1 && z0 + ez < g.nz);
  };
  // Slot s of local pixel l: false when its far end lies outside the image; else its level code and the far end's
  // local index, or kTilePixels when the far end lies in another tile.
  auto Edge = [&](uint32_t l, unsigned s, uint32_t & code, uint32_t & far)
  {
    const int32_t qx = X(l) + g.dx[s], qy = Y(l) + g.dy[s], qz = Z(l) + g.dz[s];
    if (x0 + qx < 0 || x0 + qx >= g.nx || y0 + qy < 0 || y0 + qy >= g.ny || z0 + qz >= g.nz)
      return false;
    if (qx >= 0 && qx < ex && qy >= 0 && qy < ey && qz < ez)
    {
      far  = uint32_t((qz << (tg.sx + tg.sy)) | (qy << tg.sx) | qx);
      code = sl::ScalarDifferenceCode(px[l], px[far]);
    }
    else
    {
      far  = kTilePixels;
      code = sl::ScalarDifferenceCode(px[l], pixels[first + (int64_t(qz) * g.ny + qy) * g.nx + qx]);
    }
    return true;
  };

  for (uint32_t l = tid; l < T; l += blockDim.x)
  {
    uf[l]             = l;
    forceLevel[l]     = 0xffffffffu;
    stamp[l]          = 0xffffu;
    const bool active = X(l) < ex && Y(l) < ey && Z(l) < ez;
    px[l]             = active ? pixels[Global(l)] : TPixel(0);
    if (active)
      ref[Global(l)] = kNoTileRef;
  }
  for (uint32_t c = tid; c < kTileCodes; c += blockDim.x)
    hist[c] = 0;
  if (tid == 0)
  {
    lostCount[0] = lostCount[1] = 0;
    entryCount                  = 0;
  }
  __syncthreads();

  // The tile's edges sorted by level: count, scan, place (lanes with the same code share one atomic).
  for (int pass = 0; pass < 2; ++pass)
  {
    for (uint32_t l = tid; l < T; l += blockDim.x)
    {
      const bool active = X(l) < ex && Y(l) < ey && Z(l) < ez;
      for (unsigned s = 0; s < g.slots; ++s)
      {
        uint32_t       code   = 0, far;
        const bool     edge   = active && Edge(l, s, code, far);
        const unsigned peers  = __match_any_sync(0xffffffffu, edge ? code : 0xffffffffu);
        const unsigned leader = unsigned(__ffs(peers)) - 1u;
        uint32_t       slot   = 0;
        if (edge && lane == leader)
          slot = atomicAdd((pass == 0 ? hist : cursor) + code, uint32_t(__popc(peers)));
        slot = __shfl_sync(0xffffffffu, slot, int(leader));
        if (edge && pass == 1)
          edges[slot + __popc(peers & ((1u << lane) - 1u))] = uint16_t(l << 4 | s);
      }
    }
    __syncthreads();
    if (pass == 0 && tid < 32)
    {
      // Exclusive scan of the 256 counts by one warp, 8 per lane.
      uint32_t local[kTileCodes / 32], sum = 0;
      for (unsigned k = 0; k < kTileCodes / 32; ++k)
      {
        local[k] = hist[tid * (kTileCodes / 32) + k];
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
      for (unsigned k = 0; k < kTileCodes / 32; ++k)
      {
        const unsigned c = tid * (kTileCodes / 32) + k;
        start[c] = cursor[c] = run;
        hist[c]              = 0; // from here on: entries per level
        run += local[k];
      }
      if (tid == 31)
        start[kTileCodes] = run;
    }
    __syncthreads();
  }

  // The levels in ascending order.
  unsigned parity = 0;
  uint32_t before = 0; // thread 0: entries before this level
  for (uint32_t code = 0; code < kTileCodes; ++code)
  {
    const uint32_t b = start[code], e = start[code + 1];
    if (b == e)
      continue;
    // Phase A: unions; losers listed; edges to other tiles become entries.
    for (uint32_t i0 = b; i0 < e; i0 += blockDim.x)
    {
      const uint32_t i     = i0 + tid;
      uint32_t       loser = kTilePixels, l = 0, s = 0, c, far = 0;
      if (i < e)
      {
        l = edges[i] >> 4;
        s = edges[i] & 15u;
        Edge(l, s, c, far);
        if (far != kTilePixels)
        {
          uint32_t u = l, v = far;
          for (;;)
          {
            uint32_t       x = TileFind(uf, u);
            const uint32_t y = TileFind(uf, v);
            if (x == y)
              break;
            if (x < y)
            {
              u = x;
              x = y;
            }
            else
              u = y;
            if (atomicCAS(uf + x, x, u) == x)
            {
              loser = x;
              break;
            }
            v = x;
          }
        }
      }
      const bool     cross = i < e && far == kTilePixels;
      const uint32_t k     = WarpSlot(cross, &entryCount);
      if (cross)
      {
        const uint32_t p  = Global(l);
        entries[base + k] = make_uint2(p, uint32_t(int64_t(p) + (int64_t(g.dz[s]) * g.ny + g.dy[s]) * g.nx + g.dx[s]));
      }
      const uint32_t j = WarpSlot(loser != kTilePixels, lostCount + parity);
      if (loser != kTilePixels)
        lostA[j] = uint16_t(loser);
    }
    __syncthreads();
    // Phase B: each loser's root; pairs for losers that stand for more than one pixel or for a border pixel, one
    // force entry per root that absorbed single interior pixels.
    const uint32_t lost = lostCount[parity];
    for (uint32_t i0 = 0; i0 < lost; i0 += blockDim.x)
    {
      const uint32_t i = i0 + tid;
      uint32_t       a = 0, R = 0;
      bool           pair = false, force = false;
      if (i < lost)
      {
        a        = lostA[i];
        R        = TileFind(uf, a);
        lostR[i] = uint16_t(R);
        pair     = Border(a) || stamp[a] != 0xffffu;
        force    = !pair && atomicExch(forceLevel + R, code) != code;
      }
      const uint32_t k = WarpSlot(pair || force, &entryCount);
      if (pair || force)
        entries[base + k] = make_uint2(Global(R), pair ? Global(a) : kForceEntry);
      if (force)
        forceIdx[R] = uint16_t(k);
    }
    __syncthreads();
    for (uint32_t i = tid; i < lost; i += blockDim.x)
    {
      const uint32_t a = lostA[i], R = lostR[i];
      if (!Border(a) && stamp[a] == 0xffffu)
        ref[Global(a)] = uint32_t(base + forceIdx[R]);
      stamp[R] = uint16_t(code);
    }
    if (tid == 0)
    {
      hist[code]             = entryCount - before;
      before                 = entryCount;
      lostCount[parity ^ 1u] = 0;
    }
    parity ^= 1u;
    __syncthreads();
  }
  for (uint32_t c = tid; c < kTileCodes; c += blockDim.x)
    levelCounts[uint64_t(c) * tg.tiles + tile] = hist[c];
}

/** start[code] = the first entry of the level in the global list, or kNoLevelEdge when it has none; *total = the
 * number of entries. One block of kTileCodes threads. */
static __global__ void
TileLevelStartsKernel(const uint32_t * offsets,
                      const uint32_t * levelCounts,
                      uint32_t         tiles,
                      uint32_t *       start,
                      uint32_t *       total)
{
  const uint32_t c    = threadIdx.x;
  const uint64_t last = uint64_t(kTileCodes) * tiles - 1;
  const uint32_t all  = offsets[last] + levelCounts[last];
  const uint32_t b = offsets[uint64_t(c) * tiles], e = c + 1 < kTileCodes ? offsets[uint64_t(c + 1) * tiles] : all;
  start[c] = e > b ? b : 0xffffffffu;
  if (c == 0)
    *total = all;
}

/** Copies each tile's entries to their place in the global list (grouped by level, tiles in order within a level);
 * a force entry's slot in the tile buffer gets its global place in .y. One block of kTileCodes threads per tile. */
static __global__ void
TileScatterKernel(uint2 *          tileEntries,
                  uint32_t         cap,
                  const uint32_t * levelCounts,
                  const uint32_t * offsets,
                  uint32_t         tiles,
                  uint2 *          out)
{
  __shared__ uint32_t localStart[kTileCodes + 1];
  __shared__ uint32_t warpSums[kTileCodes / 32];
  const uint32_t      tile = blockIdx.x, c = threadIdx.x, lane = c & 31u, warp = c >> 5;
  const uint32_t      count     = levelCounts[uint64_t(c) * tiles + tile];
  uint32_t            inclusive = count;
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
  localStart[c] = before + inclusive - count;
  if (c == kTileCodes - 1)
    localStart[kTileCodes] = before + inclusive;
  __syncthreads();
  const uint32_t total = localStart[kTileCodes];
  const uint64_t base  = uint64_t(tile) * cap;
  for (uint32_t k = c; k < total; k += blockDim.x)
  {
    uint32_t lo = 0, hi = kTileCodes; // the level: the last code whose start is at most k
    while (hi - lo > 1)
    {
      const uint32_t mid = (lo + hi) / 2;
      if (localStart[mid] <= k)
        lo = mid;
      else
        hi = mid;
    }
    const uint32_t dst = offsets[uint64_t(lo) * tiles + tile] + (k - localStart[lo]);
    const uint2    e   = tileEntries[base + k];
    out[dst]           = e;
    if (e.y == kForceEntry)
      tileEntries[base + k].y = dst;
  }
}

/** ref[p]: from a tile-buffer index to the global place of the force entry. */
static __global__ void
TileRefsKernel(uint32_t * ref, uint64_t n, const uint2 * tileEntries)
{
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < n; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t r = ref[p];
    if (r != kNoTileRef)
      ref[p] = tileEntries[r].y;
  }
}

/** The parents of the pixels that took no part in the level loop: the node the loop left in their force entry. */
static __global__ void
TileParentsKernel(const uint32_t * ref, uint64_t n, const uint32_t * forced, uint32_t * nodeParent)
{
  for (uint64_t p = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; p < n; p += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t r = ref[p];
    if (r != kNoTileRef)
      nodeParent[p] = forced[r];
  }
}

} // namespace at
} // namespace chs

#endif
