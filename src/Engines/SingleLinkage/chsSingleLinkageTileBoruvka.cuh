// Boruvka's first rounds for image graphs, tile by tile in shared memory (the rounds after them:
// src/Engines/SingleLinkage/chsSingleLinkageBoruvka.cuh).
//
// Each block takes one tile (2048 pixels: 64 x 32 in 2D, 16 x 16 x 8 in 3D; 1024 pixels, 16 x 8 x 8, for
// 26-connected volumes) and runs Boruvka's rounds on its pixels with every edge that touches the tile in view: the
// edges inside the tile and, for each pixel, the lightest of its edges to other tiles. Each round every component
// of the tile finds its lightest outgoing edge (atomicMin in shared memory on the same 64-bit keys as the global
// rounds, (weight code << shift | edge index), so the order is the global one); a component whose lightest edge stays
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
// pixel in place of its component; RenameFarEndsKernel replaces it once every tile is done. In 2D and 6-connected
// volumes, of the parallel edges that the tile sees between one pair (two of its components, or one of them and a
// pixel across the border) only the lightest is written: the others are no tree edges.
//
// Shared memory: 38 bytes a pixel plus 4 per pixel and slot (92 KB in 2D 4-connected, two blocks an SM).
#ifndef chsSLTileBoruvka_cuh
#define chsSLTileBoruvka_cuh

#include "Common/chsDeviceHelpers.cuh"
#include "chsSingleLinkageRule.h"
#include "chsSingleLinkageBoruvka.cuh"

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
 * dynamic shared memory. kWide: keys of keys.shift bits of edge index (EdgeKeys::Wide), else of 32 bits, assembled
 * without a shift at run time (which cost 4% of the minimum spanning tree's time on 512^3 and 4096^2 images). Appends
 * tree keys to `tree` (count in counters[0]), live edges to `live` (counters[1]) and roots to `roots` (counters[2]);
 * writes root[] and clears best[] for every pixel. Per-pixel state lives in shared memory, not in per-thread arrays
 * (which the compiler put on the stack, at 94 registers a thread). */
template <typename TPixel, bool kWide>
static __global__ void
__launch_bounds__(kBoruvkaTileThreads, 2) TileBoruvkaKernel(const TPixel *       pixels,
                                                            ImageGraph           g,
                                                            unsigned             components,
                                                            VectorDistance       distance,
                                                            BoruvkaTiles         tg,
                                                            EdgeKeys             keys,
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
  uint32_t *                           code   = hook + P;                                // K P: slot edges' codes
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
  auto EdgeKey = [&](uint32_t c, uint64_t index)
  {
    if constexpr (kWide)
      return keys.Key(c, index);
    else
      return (uint64_t(c) << 32) | index;
  };
  auto Key = [&](uint32_t c, uint64_t p, unsigned s) { return EdgeKey(c, p * K + s); };

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
          code[s * P + l]  = w;
          if (Inside(qx, qy, qz))
            in |= uint16_t(1u << s);
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
          const unsigned long long e = EdgeKey(code[s * P + l], pk + s);
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
        e = sBest[l];
        uint32_t p, s; // the edge's pixel (below 2^31) and slot; 64-bit division only for wide keys
        if constexpr (kWide)
        {
          const uint64_t i = keys.Index(e), q = i / K;
          p = uint32_t(q);
          s = uint32_t(i - q * K);
        }
        else
        {
          const uint32_t i = uint32_t(e);
          p                = i / K;
          s                = i - p * K;
        }
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
  //
  // Of the parallel edges between two components only the lightest can be a tree edge: the tile's components are
  // contracted by tree edges, and the others close a cycle of two edges in the contracted graph. So in 2D and in
  // 6-connected volumes a live edge is written only when it is the lightest of the edges the tile sees between its
  // pair: two components of the tile, or a component and a pixel across the tile's border. A hash table of the
  // pairs in the arrays that the rounds no longer use (tags in hook[], each pair's lightest key in sBest[]) finds
  // them. The lightest edge between any two components is written whatever the table holds (an edge whose pair
  // found no free slot is written too), so the global rounds find the same tree. On the 16-bit 4096^2 image this
  // takes the live edges from 6.3 to 1.9 million 4-connected, from 20.2 to 3.7 million 8-connected (three pixels of
  // one component often touch one pixel of another). 26-connected tiles have about 9000 live edges each, far more
  // than the table's 1024 slots: there probing cost more than it saved, and every live edge is written.
  const bool         pairTable = K <= 4;
  constexpr uint32_t kEmpty    = ~0u;
  const unsigned     tableBits = unsigned(__ffs(int(P))) - 1u;
  auto               LiveOf    = [&](uint32_t l, unsigned s, LiveEdge & e)
  {
    const int32_t lx = X(l), ly = Y(l), lz = Z(l);
    const int32_t qx = lx + g.dx[s], qy = ly + g.dy[s], qz = lz + g.dz[s];
    if (!(inner[l] & kInside) || !InImage(qx, qy, qz))
      return false;
    const uint64_t p = Global(lx, ly, lz);
    e.a              = uint32_t(GlobalOf(cur[l]));
    e.key            = Key(code[s * P + l], p, s);
    if (inner[l] >> s & 1u)
    {
      const uint32_t cq = cur[l + offset[s]];
      e.b               = uint32_t(GlobalOf(cq));
      return cq != cur[l];
    }
    e.b = uint32_t(Global(qx, qy, qz)); // RenameFarEndsKernel
    return true;
  };
  // A pair's tag: components are below 2^11, pixels around the tile below 2^13 (66 x 34 x 3 or 18 x 18 x 10).
  auto PairTag = [&](uint32_t l, unsigned s)
  {
    const uint32_t c = cur[l];
    if (inner[l] >> s & 1u)
    {
      const uint32_t d = cur[l + offset[s]];
      return c < d ? (c << 12 | d) : (d << 12 | c);
    }
    const int32_t hx = X(l) + g.dx[s] + 1, hy = Y(l) + g.dy[s] + 1, hz = Z(l) + g.dz[s] + 1;
    return 0x80000000u | c << 13 | uint32_t((hz * (tg.ty + 2) + hy) * (tg.tx + 2) + hx);
  };
  // A pair's slot (inserted when `insert`), or kEmpty: linear probing, at most 16 slots.
  auto Probe = [&](uint32_t tag, bool insert)
  {
    uint32_t h = (tag * 0x9E3779B1u) >> (32u - tableBits);
    for (unsigned i = 0; i < 16; ++i, h = (h + 1u) & (P - 1u))
    {
      const uint32_t old = insert ? atomicCAS(hook + h, kEmpty, tag) : hook[h];
      if (old == tag || (insert && old == kEmpty))
        return h;
      if (old == kEmpty)
        return kEmpty;
    }
    return kEmpty;
  };
  if (pairTable)
  {
    for (uint32_t l = tid; l < P; l += T)
    {
      hook[l]  = kEmpty;
      sBest[l] = kNoEdge;
    }
    __syncthreads();
  }
  // Each pixel's live slots (in nxt[], free now), their keys offered to their pairs.
  for (uint32_t l = tid; l < P; l += T)
  {
    uint32_t live = 0;
    for (unsigned s = 0; s < K; ++s)
    {
      LiveEdge e{ 0, 0, 0 };
      if (!LiveOf(l, s, e))
        continue;
      live |= 1u << s;
      if (!pairTable)
        continue;
      const uint32_t h = Probe(PairTag(l, s), true);
      if (h != kEmpty && e.key < static_cast<volatile unsigned long long *>(sBest)[h])
        atomicMin(sBest + h, e.key);
    }
    nxt[l] = live;
  }
  __syncthreads();
  // The live slots whose edge is written (the lightest of their pair's), and the counts.
  for (uint32_t l = tid; l < P; l += T)
  {
    const bool inside = (inner[l] & kInside) != 0;
    WarpSlot(inside && cur[l] == l, &rootCount);
    uint32_t written = nxt[l];
    if (pairTable)
    {
      const uint64_t p = GlobalOf(l);
      for (uint32_t left = written; left; left &= left - 1)
      {
        const unsigned s = unsigned(__ffs(int(left))) - 1u;
        const uint32_t h = Probe(PairTag(l, s), false);
        if (h != kEmpty && sBest[h] != Key(code[s * P + l], p, s))
          written &= ~(1u << s);
      }
      nxt[l] = written;
    }
    const unsigned count = WarpSum(unsigned(__popc(int(written))));
    if ((tid & 31u) == 0 && count)
      atomicAdd(&liveCount, count);
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
      const bool     keep = (nxt[l] >> s & 1u) && LiveOf(l, s, e);
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
