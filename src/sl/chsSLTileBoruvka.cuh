// Boruvka's first rounds for image graphs, tile by tile in shared memory (the rounds after them:
// src/sl/chsSLBoruvka.cuh).
//
// Each block takes one tile (2048 pixels: 64 x 32 in 2D, 16 x 16 x 8 in 3D; 1024 pixels, 16 x 8 x 8, for
// 26-connected volumes) and runs Boruvka's rounds on its pixels with every edge that touches the tile in view: the
// edges inside the tile and, for each pixel, the lightest of its edges to other tiles. Each round every component
// of the tile finds its lightest outgoing edge (atomicMin in shared memory on the same 64-bit keys as the global
// rounds, (weight code << 32 | edge index), so the order is the global one); a component whose lightest edge stays
// inside the tile hooks across it, and that edge is a tree edge of the image's unique minimum spanning tree (the
// lightest edge leaving a set of pixels); a component whose lightest edge leaves the tile waits (others may still
// hook onto it, after which its lightest edge may be inside the tile again). Rounds end when no component hooks.
// Hooks form trees whose only cycles are pairs of components that chose the same edge (keys are unique): the smaller
// stays a root and the edge is recorded once. Every pixel then follows the hooks to its new root (the hook array is
// only read while they do), and the new roots go to a second component array.
//
// The block then writes what the global rounds start from: each pixel's component (a pixel of the tile, the
// component's root), the list of roots, and the live edges: edges inside the tile between two components, and every
// edge that leaves the tile, written once by the pixel that owns it (the edge's slot is that pixel's), with the far
// pixel in place of its component; RenameFarEndsKernel replaces it once every tile is done.
//
// Shared memory: 38 bytes a pixel plus 4 per pixel and slot (92 KB in 2D 4-connected, two blocks an SM).
#ifndef chsSLTileBoruvka_cuh
#define chsSLTileBoruvka_cuh

#include "chsDeviceHelpers.cuh"
#include "chsSingleLinkageRule.h"
#include "sl/chsSLBoruvka.cuh"

#include <cuda_runtime.h>

namespace chs
{
namespace sl
{

constexpr unsigned kBoruvkaTileThreads = 512;
constexpr unsigned kBoruvkaTilePerLane = 4; // pixels a thread

/** The tiling of an image for the tile rounds. */
struct BoruvkaTiles : TileLayout
{
  uint32_t pixels = 2048, threads = 512;
  size_t   shared = 0;

  explicit BoruvkaTiles(const ImageGraph & g)
    : TileLayout(g, g.nz > 1 ? 16 : 64, g.nz > 1 ? (g.slots > 4 ? 8 : 16) : 32, g.nz > 1 ? 8 : 1)
  {
    pixels  = uint32_t(tx * ty * tz);
    threads = pixels / kBoruvkaTilePerLane;
    shared  = size_t(pixels) * (3 * 8 + 3 * 4 + 2 + 4 * g.slots);
  }
};

/** The tile rounds (see the file's comment): one block per tile, BoruvkaTiles::threads threads and ::shared bytes of
 * dynamic shared memory. Appends tree keys to `tree` (count in counters[0]), live edges to `live` (counters[1]) and
 * roots to `roots` (counters[2]); writes root[] and clears best[] for every pixel. Per-pixel state lives in shared
 * memory, not in per-thread arrays (which the compiler put on the stack, at 94 registers a thread). */
template <typename TPixel>
static __global__ void
__launch_bounds__(kBoruvkaTileThreads, 2) TileBoruvkaKernel(const TPixel *       pixels,
                                                            ImageGraph           g,
                                                            unsigned             components,
                                                            VectorDistance       distance,
                                                            BoruvkaTiles         tg,
                                                            uint32_t *           root,
                                                            unsigned long long * best,
                                                            unsigned long long * tree,
                                                            LiveEdge *           live,
                                                            uint32_t *           roots,
                                                            unsigned long long * counters)
{
  extern __shared__ unsigned long long tileShared[];
  const uint32_t                       P = tg.pixels, K = g.slots;
  unsigned long long *                 sBest  = tileShared; // P: each root's lightest outgoing edge
  unsigned long long *                 sCross = sBest + P;  // P: each pixel's lightest edge to another tile
  unsigned long long *                 sTree  = sCross + P; // P: the tree edges found, written out at the end
  uint32_t *                           cur    = reinterpret_cast<uint32_t *>(sTree + P); // P: each pixel's root
  uint32_t *                           nxt    = cur + P;                                 // P: the next round's
  uint32_t *                           hook   = nxt + P;                                 // P: a root's hook target
  uint32_t *                           code   = hook + P;                                // K P: inner edges' codes
  uint16_t *         inner   = reinterpret_cast<uint16_t *>(code + K * P); // P: slots of inner edges, kInside
  constexpr uint16_t kInside = 0x8000u;                                    // the pixel lies in the image
  __shared__ int32_t offset[13];                                           // local index offsets of the slots
  // Appends go through shared counters: one global atomic per block and list, not one per warp (a counter that
  // every warp of the grid hits serialises them).
  __shared__ uint32_t           treeCount, liveCount, rootCount;
  __shared__ unsigned long long treeBase, liveBase, rootBase;

  const uint32_t tile = blockIdx.x;
  int64_t        x0, y0, z0;
  int32_t        ex, ey, ez;
  tg.Box(tile, g, x0, y0, z0, ex, ey, ez);
  const unsigned tid = threadIdx.x, T = blockDim.x;

  auto X      = [&](uint32_t l) { return int32_t(l & uint32_t(tg.tx - 1)); };
  auto Y      = [&](uint32_t l) { return int32_t((l >> tg.sx) & uint32_t(tg.ty - 1)); };
  auto Z      = [&](uint32_t l) { return int32_t(l >> (tg.sx + tg.sy)); };
  auto Inside = [&](int32_t lx, int32_t ly, int32_t lz)
  { return lx >= 0 && lx < ex && ly >= 0 && ly < ey && lz >= 0 && lz < ez; };
  auto Local = [&](int32_t lx, int32_t ly, int32_t lz)
  { return uint32_t((lz << (tg.sx + tg.sy)) | (ly << tg.sx) | lx); };
  auto Global = [&](int32_t lx, int32_t ly, int32_t lz)
  { return uint64_t(((z0 + lz) * g.ny + (y0 + ly)) * g.nx + (x0 + lx)); };
  auto GlobalOf = [&](uint32_t l) { return Global(X(l), Y(l), Z(l)); };
  auto InImage  = [&](int32_t lx, int32_t ly, int32_t lz)
  { return x0 + lx >= 0 && x0 + lx < g.nx && y0 + ly >= 0 && y0 + ly < g.ny && z0 + lz >= 0 && z0 + lz < g.nz; };
  auto Code = [&](uint64_t p, uint64_t q)
  { return EdgeCode(pixels + p * components, pixels + q * components, components, distance); };
  auto Key = [&](uint32_t c, uint64_t p, unsigned s) { return (uint64_t(c) << 32) | (p * K + s); };

  if (tid < K)
    offset[tid] = (int32_t(g.dz[tid]) << (tg.sx + tg.sy)) + (int32_t(g.dy[tid]) << tg.sx) + int32_t(g.dx[tid]);
  if (tid == 0)
    treeCount = liveCount = rootCount = 0;
  // The codes of the inner edges, which slots of each pixel are inner edges, and each pixel's lightest edge to
  // another tile.
  for (uint32_t l = tid; l < P; l += T)
  {
    const int32_t      lx = X(l), ly = Y(l), lz = Z(l);
    unsigned long long c  = kNoEdge;
    uint16_t           in = 0;
    if (Inside(lx, ly, lz))
    {
      const uint64_t p = Global(lx, ly, lz);
      in               = kInside;
      for (unsigned s = 0; s < K; ++s)
      {
        const int32_t qx = lx + g.dx[s], qy = ly + g.dy[s], qz = lz + g.dz[s];
        if (InImage(qx, qy, qz))
        {
          const uint32_t w = Code(p, Global(qx, qy, qz));
          if (Inside(qx, qy, qz))
          {
            code[s * P + l] = w;
            in |= uint16_t(1u << s);
          }
          else
            c = Key(w, p, s) < c ? Key(w, p, s) : c;
        }
        const int32_t rx = lx - g.dx[s], ry = ly - g.dy[s], rz = lz - g.dz[s];
        if (InImage(rx, ry, rz) && !Inside(rx, ry, rz))
        {
          const uint64_t r = Global(rx, ry, rz);
          const uint64_t e = Key(Code(r, p), r, s);
          c                = e < c ? e : c;
        }
      }
    }
    cur[l]    = l;
    sCross[l] = c;
    inner[l]  = in;
  }
  __syncthreads();

  // First offers: every pixel is its own component, so its lightest edge is found without atomics (the inner edge
  // of slot s of pixel r reaches r + offset[s]).
  for (uint32_t l = tid; l < P; l += T)
  {
    unsigned long long m = sCross[l];
    if (inner[l] & kInside)
    {
      const int32_t lx = X(l), ly = Y(l), lz = Z(l);
      for (unsigned s = 0; s < K; ++s)
      {
        if (inner[l] >> s & 1u)
        {
          const unsigned long long e = Key(code[s * P + l], GlobalOf(l), s);
          m                          = e < m ? e : m;
        }
        const int32_t rx = lx - g.dx[s], ry = ly - g.dy[s], rz = lz - g.dz[s];
        if (Inside(rx, ry, rz))
        {
          const uint32_t           r = Local(rx, ry, rz);
          const unsigned long long e = Key(code[s * P + r], Global(rx, ry, rz), s);
          m                          = e < m ? e : m;
        }
      }
    }
    sBest[l] = m;
  }
  __syncthreads();

  for (bool firstRound = true;; firstRound = false)
  {
    // Every component's lightest outgoing edge (the first round's are in sBest already).
    if (!firstRound)
    {
      for (uint32_t l = tid; l < P; l += T)
      {
        const uint32_t slots = inner[l];
        if (!(slots & kInside))
          continue;
        const uint32_t     cl = cur[l];
        const uint64_t     pk = GlobalOf(l) * K;
        unsigned long long m  = sCross[l];
        for (uint32_t left = slots & ~uint32_t(kInside); left; left &= left - 1)
        {
          const unsigned s  = unsigned(__ffs(left)) - 1u;
          const uint32_t cq = cur[l + offset[s]];
          if (cq == cl)
            continue;
          const unsigned long long e = (uint64_t(code[s * P + l]) << 32) | (pk + s);
          m                          = e < m ? e : m;
          if (e < static_cast<volatile unsigned long long *>(sBest)[cq])
            atomicMin(sBest + cq, e);
        }
        if (m < static_cast<volatile unsigned long long *>(sBest)[cl])
          atomicMin(sBest + cl, m);
      }
      __syncthreads();
    }

    // Every component whose lightest edge stays in the tile hooks across it.
    bool hooked = false;
    for (uint32_t l = tid; l < P; l += T)
    {
      uint32_t           target = l;
      bool               record = false;
      unsigned long long e      = kNoEdge;
      if ((inner[l] & kInside) && cur[l] == l && sBest[l] != kNoEdge)
      {
        e                = sBest[l];
        const uint32_t i = uint32_t(e), p = i / K, s = i - p * K;
        const uint32_t gx = uint32_t(p % uint32_t(g.nx)), rest = uint32_t(p / uint32_t(g.nx));
        const int32_t  ax = int32_t(gx - x0), ay = int32_t(rest % uint32_t(g.ny) - y0),
                      az = int32_t(rest / uint32_t(g.ny) - z0);
        const int32_t bx = ax + g.dx[s], by = ay + g.dy[s], bz = az + g.dz[s];
        if (Inside(ax, ay, az) && Inside(bx, by, bz))
        {
          const uint32_t ca = cur[Local(ax, ay, az)], cb = cur[Local(bx, by, bz)];
          const uint32_t other  = ca == l ? cb : ca;
          const bool     mutual = sBest[other] == e;
          record                = !mutual || l < other;
          target                = mutual && l < other ? l : other;
          hooked                = true;
        }
      }
      hook[l]             = target;
      const uint32_t slot = WarpSlot(record, &treeCount);
      if (record)
        sTree[slot] = e;
    }
    if (!__syncthreads_or(hooked))
      break;

    // Every pixel follows the hooks from its root to the new root; roots clear their offers.
    for (uint32_t l = tid; l < P; l += T)
    {
      // The hook array is only read here (no halving stores, which racecheck reports against the reads); chains
      // are short (4.3 steps a pixel over all rounds of a tile of the 16-bit benchmark image, CPU simulation).
      uint32_t r = cur[l];
      while (hook[r] != r)
        r = hook[r];
      nxt[l] = r;
      if (cur[l] == l)
        sBest[l] = kNoEdge;
    }
    __syncthreads();
    uint32_t * t = cur;
    cur          = nxt;
    nxt          = t;
  }

  // What the global rounds start from: each pixel's root, the tile's tree edges, roots and live edges. The live
  // edges and roots are counted first, then written where one atomic per list reserved their room.
  auto LiveOf = [&](uint32_t l, unsigned s, LiveEdge & e)
  {
    const int32_t lx = X(l), ly = Y(l), lz = Z(l);
    const int32_t qx = lx + g.dx[s], qy = ly + g.dy[s], qz = lz + g.dz[s];
    if (!(inner[l] & kInside) || !InImage(qx, qy, qz))
      return false;
    const uint64_t p = Global(lx, ly, lz);
    e.a              = uint32_t(GlobalOf(cur[l]));
    if (inner[l] >> s & 1u)
    {
      const uint32_t cq = cur[l + offset[s]];
      e.key             = Key(code[s * P + l], p, s);
      e.b               = uint32_t(GlobalOf(cq));
      return cq != cur[l];
    }
    const uint64_t q = Global(qx, qy, qz);
    e.key            = Key(Code(p, q), p, s);
    e.b              = uint32_t(q); // RenameFarEndsKernel
    return true;
  };
  for (uint32_t l = tid; l < P; l += T)
  {
    const bool inside = (inner[l] & kInside) != 0;
    WarpSlot(inside && cur[l] == l, &rootCount);
    for (unsigned s = 0; s < K; ++s)
    {
      LiveEdge e{ 0, 0, 0 };
      WarpSlot(LiveOf(l, s, e), &liveCount);
    }
  }
  __syncthreads();
  if (tid == 0)
  {
    treeBase  = atomicAdd(counters, (unsigned long long)treeCount);
    liveBase  = atomicAdd(counters + 1, (unsigned long long)liveCount);
    rootBase  = atomicAdd(counters + 2, (unsigned long long)rootCount);
    liveCount = rootCount = 0;
  }
  __syncthreads();
  for (uint32_t i = tid; i < treeCount; i += T)
    tree[treeBase + i] = sTree[i];
  for (uint32_t l = tid; l < P; l += T)
  {
    const bool     inside = (inner[l] & kInside) != 0;
    const uint32_t cl     = cur[l];
    if (inside)
    {
      const uint64_t p = GlobalOf(l);
      root[p]          = uint32_t(GlobalOf(cl));
      best[p]          = kNoEdge;
    }
    const bool     isRoot = inside && cl == l;
    const uint32_t r      = WarpSlot(isRoot, &rootCount);
    if (isRoot)
      roots[rootBase + r] = uint32_t(GlobalOf(l));
    for (unsigned s = 0; s < K; ++s)
    {
      LiveEdge       e{ 0, 0, 0 };
      const bool     keep = LiveOf(l, s, e);
      const uint32_t slot = WarpSlot(keep, &liveCount);
      if (keep)
        live[liveBase + slot] = e;
    }
  }
}

/** After the tile rounds: the far end of every live edge becomes its component's root (a no-op for edges inside a
 * tile, whose ends are roots already). */
static __global__ void
RenameFarEndsKernel(LiveEdge * live, const unsigned long long * count, const uint32_t * root)
{
  const uint64_t n = *count;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    live[i].b = root[live[i].b];
}

} // namespace sl
} // namespace chs

#endif
