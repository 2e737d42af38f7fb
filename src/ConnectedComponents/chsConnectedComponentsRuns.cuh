// Connected components on binary images with rows of 32 voxels or more: the same four stages on the runs of the
// tile rows instead of the voxels (the union-find on runs, see kNodesPerRow): BinaryLocalMergeKernel,
// BinaryBoundaryKernel, NodeRootLabelKernel and NodeFinalizeKernel.
#ifndef chsCCRuns_cuh
#define chsCCRuns_cuh

#include "chsConnectedComponentsBoundaryMerge.cuh"
#include "chsConnectedComponentsFinalLink.cuh"

namespace chs
{
namespace cc
{

// ---- Binary images: the union-find on runs -------------------------------------------------------------------
// A binary image is labelled on the runs of its tile rows instead of its voxels. Tile row w (w = r * tilesX + i:
// image row r = z * ny + y, columns 32 i .. 32 i + 31) keeps its foreground as one 32-bit mask, masks[w], and its
// runs are the nodes w * 16 + k, k = 0 .. (number of runs) - 1 in x order (a 32-bit row has at most 16 runs). Node
// order is the raster order of the runs' first voxels, so the union-find invariant (parent <= node, a root is the
// smallest node of its set) again makes the root of a component its first run, and ranking the roots in node order
// numbers the components as ITK does. The parents take 16 slots a tile row (2 bytes a voxel with 32-bit nodes) and
// are read and written once a run, not once a voxel; the 4.6e9-voxel volume's nodes need 64 bits (more than 2^31),
// as its voxels would. The local merge writes a row's parents and then the sentinel, so readers stop there.
// Slots of runs 0-7 of all rows come first, then those of runs 8-15 (SlotMap): most rows have fewer than 8 runs,
// and their parents then fill whole sectors, written and fetched without the other half.
constexpr int kNodesPerRow = 16;
constexpr int kNodeShift   = 4;
constexpr int kHalfRow     = kNodesPerRow / 2;
static_assert(kNodesPerRow == 1 << kNodeShift, "node ids are w * 16 + k");
/** Roots of the runs' union-find are counted per chunk of 2^14 nodes (1024 tile rows): NodeRootLabelKernel takes
 * a chunk a block, four rows a thread. */
constexpr int kNodeChunkShift       = 14;
constexpr int kNodeChunkRows        = (1 << kNodeChunkShift) / kNodesPerRow;
constexpr int kNodeRootLabelThreads = 256;
constexpr int kNodeRounds           = kNodeChunkRows / kNodeRootLabelThreads;

/** The slot of node w * 16 + k: w * 8 + k for k < 8, half + w * 8 + k - 8 for the others (half = 8 tile rows). */
template <typename I>
struct SlotMap
{
  I half;
  __device__ __forceinline__ I
  operator()(I node) const
  {
    return ((node >> 1) & ~I(kHalfRow - 1)) + (node & I(kHalfRow - 1)) + ((node & I(kHalfRow)) ? half : I(0));
  }
};

/** Ordinal of the run that holds bit b among the runs of mask m (bit b foreground). */
__device__ __forceinline__ int
RunOrdinal(unsigned m, int b)
{
  return __popc(m & ~(m << 1) & (0xffffffffu >> (31 - b))) - 1;
}

/** Stores 8 slots (one or two 32-byte sectors) at p, 32-byte aligned, as 16-byte vectors. */
template <typename I>
__device__ __forceinline__ void
StoreHalfRow(I * p, const I (&v)[kHalfRow])
{
  constexpr int kVectors = kHalfRow * sizeof(I) / 16;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
  {
    uint4 q;
    memcpy(&q, reinterpret_cast<const char *>(v) + 16 * k, 16);
    reinterpret_cast<uint4 *>(p)[k] = q;
  }
}

/** The local merge for binary images (ITK's definition, BinaryOp): every tile row is one 32-bit foreground mask,
 * the nodes of the tile's union-find are the runs of those rows (their first voxels, tile index t), and the unions
 * between two rows are found with bit operations, one per pair of adjacent runs (RunPairs).
 * Each warp loads its rows (row = warp + 8 j) one voxel a lane, and a ballot makes each row's mask, which lane j
 * keeps and writes to `masks`. Each lane then finds its row's unions and run starts with bit operations, and the
 * warp runs them from its queue, 32 at a time. Last, each lane writes its row's nodes' parents: the node of the
 * run's local root (the tile component's first run). */
template <typename TPixel, bool Full, typename I, typename V, class TileT>
__global__ void
__launch_bounds__(kLocalThreads)
  BinaryLocalMergeKernel(BinaryOp<TPixel> op, I * slots, I half, unsigned * masks, Extent<I> e, I * chunkRoots)
{
  constexpr int TY           = TileT::Y;
  constexpr int TZ           = TileT::Z;
  constexpr int kRowsPerWarp = TileT::Rows / kLocalWarps;
  static_assert(kRowsPerWarp * kLocalWarps == TileT::Rows && kRowsPerWarp <= 32, "whole rows per warp");
  __shared__ __align__(16) int L[TileT::Voxels]; // initialised with 16-byte stores
  __shared__ unsigned          F[TileT::Rows];
  __shared__ int               Q[kLocalWarps][64];

  const int  lane      = threadIdx.x & 31;
  const int  warp      = threadIdx.x >> 5;
  const I    x0        = I(blockIdx.x) * kTileX;
  const I    y0        = I(blockIdx.y) * TY;
  const I    z0        = I(blockIdx.z) * TZ;
  const V    tileBase  = (V(z0) * e.ny + y0) * e.nx + x0; // the tile's first voxel (V: the voxel index type)
  const V    plane     = V(e.nx) * e.ny;
  const auto rowOffset = [&](int row) { return V(row / TY) * plane + V(row % TY) * e.nx; };
  const auto rowInside = [&](int row) { return y0 + I(row % TY) < e.ny && z0 + I(row / TY) < e.nz; };
  const auto imageRow  = [&](int row) { return I(z0 + row / TY) * e.ny + (y0 + row % TY); };
  const auto wordOf    = [&](int row) { return imageRow(row) * I(gridDim.x) + blockIdx.x; };
  const auto nodeOf    = [&](int t) { // the node of the run that starts at tile index t
    const int row = t / kTileX;
    return (wordOf(row) << kNodeShift) + I(RunOrdinal(F[row], t % kTileX));
  };

  // Every load of the warp's rows is issued before the first is used (bit j: row warp + 8 j).
  const bool xInside = x0 + lane < e.nx;
  unsigned   fgBits = 0, insideRows = 0;
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j)
  {
    const int  row    = warp + j * kLocalWarps;
    const bool inside = rowInside(row);
    insideRows |= unsigned(inside) << j;
    fgBits |= unsigned(inside && xInside && op.Load(tileBase + rowOffset(row) + lane)) << j;
  }
  for (int k = threadIdx.x; k < TileT::Voxels / 4; k += kLocalThreads)
    reinterpret_cast<int4 *>(L)[k] = make_int4(4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3);
  unsigned myMask = 0; // lane j: the mask of row warp + 8 j
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j)
  {
    const unsigned m = __ballot_sync(0xffffffffu, (fgBits >> j) & 1u);
    myMask           = lane == j ? m : myMask;
  }
  const bool hasRow      = lane < kRowsPerWarp;
  const bool myRowInside = hasRow && ((insideRows >> lane) & 1u);
  const int  myRow       = warp + lane * kLocalWarps;
  const int  my0         = myRow * kTileX; // tile index of the row's first voxel
  if (hasRow)
    F[myRow] = myMask;
  if (myRowInside) // after the ballots: every lane has read its pixels
    masks[wordOf(myRow)] = myMask;
  __syncthreads();

  // Unions between the runs of this lane's row and the rows behind it in the tile, found one row a lane and run
  // from the warp's queue, 32 at a time (a | b << 16: tile indices): a lane's own unions would leave the lanes with
  // fewer idle (full connectivity, 512^3 blobs: 1.86 ms against 1.71 with a warp a row).
  const unsigned myStarts = myMask & ~(myMask << 1);
  int *          queue    = Q[warp];
  {
    auto                            unite = [&](int item) { Unite(L, item & 0xffff, item >> 16); };
    WarpQueue<int, decltype(unite)> unions{ queue, lane, 0, unite };
    const int                       ly        = myRow % TY;
    const int                       lz        = myRow / TY;
    const auto                      uniteWith = [&](bool behind, int nrow) { // warp-uniform
      const unsigned n       = behind ? F[nrow] : 0u;
      const unsigned nStarts = n & ~(n << 1);
      const int      n0      = nrow * kTileX;
      unsigned       a, c;
      RunPairs<Full>(myMask, n, a, c);
      while (__any_sync(0xffffffffu, (a | c) != 0))
      {
                             const bool     fromA = a != 0;
                             const unsigned bits  = fromA ? a : c;
                             const int      b     = __ffs(bits) - 1;
                             const int      q     = fromA ? n0 + RunStart(nStarts, RunPartner(n, b)) : n0 + b + 1;
                             unions.Push(bits != 0, (my0 + RunStart(myStarts, b)) | (q << 16));
                             if (fromA)
          a &= a - 1;
        else
          c &= c - 1;
      }
    };
    uniteWith(hasRow && ly > 0, myRow - 1);
    if (TZ > 1)
    {
      uniteWith(hasRow && lz > 0, myRow - TY);
      if (Full)
      {
        uniteWith(hasRow && lz > 0 && ly > 0, myRow - TY - 1);
        uniteWith(hasRow && lz > 0 && ly + 1 < TY, myRow - TY + 1);
      }
    }
    unions.Flush();
  }
  __syncthreads();

  // Every run start finds its root (queued, 32 at a time) and keeps it as its parent; a root counts itself.
  {
    auto resolve = [&](int t)
    {
      const int r = FindRoot(L, t);
      atomicMin(L + t, r); // other warps' finds only ever lower a parent to an ancestor
      if (r == t)
        atomicAdd(chunkRoots + (nodeOf(t) >> kNodeChunkShift), I(1));
    };
    WarpQueue<int, decltype(resolve)> roots{ queue, lane, 0, resolve };
    for (unsigned s = hasRow ? myStarts : 0u; __any_sync(0xffffffffu, s != 0); s &= s - 1)
      roots.Push(s != 0, my0 + __ffs(s) - 1);
    roots.Flush();
  }
  __syncthreads(); // every run start holds its root

  // Each lane writes its row's nodes' parents, their roots' nodes, and the sentinel after the last: 8 slots at a
  // time (whole sectors), the second 8 only for rows of 8 runs or more.
  if (myRowInside)
  {
    const I  w = wordOf(myRow);
    unsigned s = myStarts;
    for (int h = 0; h < 2; ++h)
    {
      I v[kHalfRow];
#pragma unroll
      for (int k = 0; k < kHalfRow; ++k)
      {
        v[k] = s != 0 ? nodeOf(L[my0 + __ffs(s) - 1]) : Sentinel<I>();
        s &= s - 1;
      }
      StoreHalfRow(slots + (h ? half : I(0)) + w * kHalfRow, v);
      if (__popc(myStarts) < kHalfRow)
        break;
    }
  }
}

/** The boundary pass of binary images, on the runs (see kNodesPerRow): one thread a tile row (w = r * tilesX + i,
 * row r = z * ny + y, tile column i) instead of one a face voxel, so a warp's few loads cover 1024 voxels and its
 * unions run 32 at a time from the queue. Voxel bit b of row w is node w * 16 + RunOrdinal(masks[w], b).
 * Across a y or z face, the row and each row behind it that it touches (one; three with full connectivity) are
 * joined with one union a pair of adjacent runs, as in the local merge, within the 32 columns; pairs that also
 * cross an x face are the x face's.
 * Across the x face, the row's first voxel p with the voxel s before it, unless the same pair one row up or one
 * slice back inside the same tiles is foreground on both sides (the tiles' own unions and that earlier pair join
 * them). Full connectivity: also p with the other eight voxels in the plane x = 32 i - 1 around s, except, when s
 * is foreground, those in s's tile (joined to s inside it). */
template <bool Full, typename I, class TileT>
__global__ void
__launch_bounds__(kBoundaryThreads)
  BinaryBoundaryKernel(const unsigned * masks, I * slots, I half, Extent<I> e, I * chunkRoots)
{
  __shared__ VoxelPair<I> queues[kBoundaryThreads / 32][64];
  const unsigned          lane  = threadIdx.x & 31;
  auto                    unite = [&](const VoxelPair<I> & pair)
  {
    I linked;
    if (Unite<I>(slots, pair.p, pair.q, &linked, SlotMap<I>{ half }))
      atomicAdd(chunkRoots + (linked >> kNodeChunkShift), ~I(0)); // minus one
  };
  WarpQueue<VoxelPair<I>, decltype(unite)> unions{ queues[threadIdx.x >> 5], int(lane), 0, unite };
  const unsigned                           ny     = static_cast<unsigned>(e.ny);
  const unsigned                           nz     = static_cast<unsigned>(e.nz);
  const unsigned                           tilesX = static_cast<unsigned>((e.nx + kTileX - 1) / kTileX);
  const unsigned                           words  = ny * nz * tilesX; // below 2^31 (ChooseNodePath)
  const auto node = [](unsigned w, unsigned m, int b) { return (I(w) << kNodeShift) + I(RunOrdinal(m, b)); };
  // The unions between this row (mask m, word wm) and another (mask n, word wn), RunPairs' pairs (n = 0: none).
  // Warp-uniform.
  const auto pushRuns = [&](unsigned m, unsigned n, unsigned wm, unsigned wn)
  {
    unsigned a, c;
    RunPairs<Full>(m, n, a, c);
    while (__any_sync(0xffffffffu, (a | c) != 0))
    {
      const bool     fromA = a != 0;
      const unsigned bits  = fromA ? a : c;
      const int      b     = bits != 0 ? __ffs(bits) - 1 : 0;
      const int      qb    = fromA ? RunPartner(n, b) : b + 1;
      unions.Push(bits != 0, VoxelPair<I>{ node(wm, m, b), node(wn, n, qb) });
      if (fromA)
        a &= a - 1;
      else
        c &= c - 1;
    }
  };
  // Warp-uniform loop (the queue needs all lanes); 32-bit row arithmetic.
  for (unsigned w0 = blockIdx.x * blockDim.x + threadIdx.x - lane; w0 < words; w0 += gridDim.x * blockDim.x)
  {
    const unsigned w       = w0 + lane;
    const bool     valid   = w < words;
    const unsigned r       = valid ? w / tilesX : 0;
    const unsigned i       = w - r * tilesX;
    const unsigned y       = r % ny;
    const unsigned z       = r / ny;
    const bool     yInside = y % TileT::Y != 0; // row y - 1 is in the same tiles
    const bool     zInside = z % TileT::Z != 0;
    // The mask of the row dr rows (dy + dz ny) and di tile columns away, and its word.
    const auto     wordAt = [&](int dr, int di) { return w + unsigned(dr * int(tilesX) + di); };
    const auto     maskAt = [&](int dr, int di) { return masks[wordAt(dr, di)]; };
    const unsigned m      = valid ? maskAt(0, 0) : 0u;
    if constexpr (!Full)
    {
      // All loads first.
      const int      dz       = -int(ny);
      const unsigned left     = valid && i > 0 ? maskAt(0, -1) : 0u;
      const unsigned up       = valid && y > 0 ? maskAt(-1, 0) : 0u;
      const unsigned upLeft   = valid && y > 0 && i > 0 ? maskAt(-1, -1) : 0u;
      const unsigned back     = valid && z > 0 ? maskAt(dz, 0) : 0u;
      const unsigned backLeft = valid && z > 0 && i > 0 ? maskAt(dz, -1) : 0u;
      const auto     crosses  = [](unsigned a, unsigned leftOfA) { return (a & 1u) && (leftOfA >> 31); };
      const bool xPair = crosses(m, left) && !(yInside && crosses(up, upLeft)) && !(zInside && crosses(back, backLeft));
      unions.Push(xPair, VoxelPair<I>{ node(w, m, 0), node(wordAt(0, -1), left, 31) });
      pushRuns(m, yInside ? 0u : up, w, wordAt(-1, 0));
      pushRuns(m, zInside ? 0u : back, w, wordAt(dz, 0));
    }
    else
    {
      // The plane x = 32 i - 1 around s: masks of rows (y + dy, z + dz), tile column i - 1, in around[(dy + 1) +
      // 3 (dz + 1)] (0 outside the image).
      const bool pActive = valid && i > 0 && (m & 1u);
      unsigned   around[9];
#pragma unroll
      for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy)
        {
          const bool outside =
            (dy < 0 && y == 0) || (dz < 0 && z == 0) || (dy > 0 && y + 1 >= ny) || (dz > 0 && z + 1 >= nz);
          around[(dy + 1) + 3 * (dz + 1)] = pActive && !outside ? maskAt(dy + dz * int(ny), -1) : 0u;
        }
      const bool     sActive = around[4] >> 31;
      const unsigned up      = valid && y > 0 && yInside && sActive ? maskAt(-1, 0) : 0u;
      const unsigned back    = valid && z > 0 && zInside && sActive ? maskAt(-int(ny), 0) : 0u;
      // (p, s) follows from the same pair one row up or one slice back when all four voxels are foreground.
      const bool straight = sActive && !((up & 1u) && (around[3] >> 31)) && !((back & 1u) && (around[1] >> 31));
      const bool yLowIn = yInside, yHighIn = (y + 1) % TileT::Y != 0, zLowIn = zInside,
                 zHighIn = (z + 1) % TileT::Z != 0;
#pragma unroll
      for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy)
        {
          const int  k        = (dy + 1) + 3 * (dz + 1);
          const bool sameTile = (dy == 0 || (dy < 0 ? yLowIn : yHighIn)) && (dz == 0 || (dz < 0 ? zLowIn : zHighIn));
          const bool wanted   = k == 4 ? straight : (around[k] >> 31) && !(sActive && sameTile);
          unions.Push(wanted, VoxelPair<I>{ node(w, m, 0), node(wordAt(dy + dz * int(ny), -1), around[k], 31) });
        }
        // Across the y face: rows (y - 1, z + dz); across the z face: rows (y + dy, z - 1).
#pragma unroll
      for (int d = -1; d <= 1; ++d)
      {
        const bool yRow = valid && m != 0 && !yInside && y > 0 && !(d < 0 && z == 0) && !(d > 0 && z + 1 >= nz);
        pushRuns(m, yRow ? maskAt(d * int(ny) - 1, 0) : 0u, w, wordAt(d * int(ny) - 1, 0));
        const bool zRow = valid && m != 0 && !zInside && z > 0 && !(d < 0 && y == 0) && !(d > 0 && y + 1 >= ny);
        pushRuns(m, zRow ? maskAt(d - int(ny), 0) : 0u, w, wordAt(d - int(ny), 0));
      }
    }
  }
  unions.Flush();
}

// ---- Binary images: numbering the root runs and the final link -------------------------------------------------

/** Loads 8 slots (one or two 32-byte sectors) from p, 32-byte aligned, as 16-byte vectors. */
template <typename I>
__device__ __forceinline__ void
LoadHalfRow(const I * p, I (&v)[kHalfRow])
{
  constexpr int kVectors = kHalfRow * sizeof(I) / 16;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
  {
    const uint4 q = reinterpret_cast<const uint4 *>(p)[k];
    memcpy(reinterpret_cast<char *>(v) + 16 * k, &q, 16);
  }
}

/** The root bits (bit k: node k is a root) of tile row w from its first 8 slots `v`, reading the other 8 when no
 * sentinel ends the first. */
template <typename I>
__device__ __forceinline__ unsigned
RowRoots(const I * slots, I half, unsigned w, const I (&v)[kHalfRow])
{
  const I  first = I(w) << kNodeShift;
  unsigned roots = 0;
  bool     more  = true;
#pragma unroll
  for (int k = 0; k < kHalfRow; ++k)
  {
    more = more && v[k] != Sentinel<I>();
    roots |= unsigned(more && v[k] == first + I(k)) << k;
  }
  if (more) // 8 runs or more
  {
    I u[kHalfRow];
    LoadHalfRow(slots + half + I(w) * kHalfRow, u);
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
    {
      more = more && u[k] != Sentinel<I>();
      roots |= unsigned(more && u[k] == first + I(kHalfRow + k)) << (kHalfRow + k);
    }
  }
  return roots;
}

/** RootLabelKernel for the runs' union-find: one block a chunk of 2^14 nodes (1024 tile rows; in round j, thread t
 * takes row 256 j + t, so ranking by (j, t) is node order, which is raster order). Each thread reads its rows' first
 * 8 slots (a sector; SlotMap) for all rounds before using any, marks the roots up to the sentinel, and warp scans
 * and one exchange of the warp totals rank them; each root's slot takes its label plus `base` (RunNodes). */
template <typename I>
__global__ void
__launch_bounds__(kNodeRootLabelThreads)
  NodeRootLabelKernel(I * slots, I half, I base, const I * chunkOffset, unsigned words, long long background)
{
  constexpr int       kWarps = kNodeRootLabelThreads / 32;
  __shared__ unsigned warpTotals[kNodeRounds][kWarps];
  const int           lane = threadIdx.x & 31;
  const int           warp = threadIdx.x >> 5;
  const unsigned      row0 = blockIdx.x * kNodeChunkRows + threadIdx.x; // this thread's row in round 0
  I                   v[kNodeRounds][kHalfRow];
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    const unsigned w = row0 + j * kNodeRootLabelThreads;
    if (w < words)
      LoadHalfRow(slots + I(w) * kHalfRow, v[j]);
  }
  unsigned roots[kNodeRounds], before[kNodeRounds];
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    const unsigned w         = row0 + j * kNodeRootLabelThreads;
    roots[j]                 = w < words ? RowRoots(slots, half, w, v[j]) : 0u;
    const unsigned c         = __popc(roots[j]);
    unsigned       inclusive = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1)
    {
      const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, d);
      inclusive += lane >= d ? up : 0u;
    }
    before[j] = inclusive - c;
    if (lane == 31)
      warpTotals[j][warp] = inclusive;
  }
  __syncthreads();
  unsigned long long rank = chunkOffset[blockIdx.x]; // roots of this chunk before round j
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    unsigned earlierWarps = 0, all = 0;
#pragma unroll
    for (int k = 0; k < kWarps; ++k)
    {
      earlierWarps += k < warp ? warpTotals[j][k] : 0u;
      all += warpTotals[j][k];
    }
    unsigned long long r     = rank + earlierWarps + before[j];
    const I            first = I(row0 + j * kNodeRootLabelThreads) << kNodeShift;
    for (unsigned bits = roots[j]; bits != 0; bits &= bits - 1, ++r)
    {
      const bool skip = background >= 0 && r >= static_cast<unsigned long long>(background);
      slots[SlotMap<I>{ half }(first + I(__ffs(bits) - 1))] = base + static_cast<I>(skip ? r + 1 : r);
    }
    rank += all;
  }
}

/** Per warp of NodeFinalize: the labels of the runs of its 32 tile rows (padded against bank conflicts). */
template <typename I>
using RunLabels = I[32][kNodesPerRow + 1];

/** The final link of the runs' union-find into labels of TNarrow, with the per-label statistics when Stats. A warp
 * takes a segment of up to 32 tile rows of one image row (one load of their masks). First each lane takes a row and
 * follows its runs' parents to their roots' labels (values from `base` up) (the first 8 slots read before any is
 * followed), keeping the labels in shared memory; then the warp writes the segment's labels a tile row at a time, each
 * lane its voxel's (a coalesced row of 32 labels). */
template <typename I, typename TLabel, typename TNarrow, bool Stats>
__device__ __forceinline__ void
NodeFinalize(const I *                  slots,
             I                          half,
             I                          base,
             const unsigned *           masks,
             TNarrow *                  labels,
             const Extent<I> &          e,
             long long                  background,
             const StatisticsPointers & stats,
             RunLabels<I> &             runLabels)
{
  const int        lane           = threadIdx.x & 31;
  const unsigned   tilesX         = static_cast<unsigned>((e.nx + kTileX - 1) / kTileX);
  const unsigned   segmentsPerRow = (tilesX + 31) / 32;
  const unsigned   segments       = static_cast<unsigned>(e.ny * e.nz) * segmentsPerRow; // below 2^31: tile rows are
  const unsigned   warpsPerBlock  = blockDim.x / 32;
  const unsigned   upToLane       = 0xffffffffu >> (31 - lane);
  const SlotMap<I> at{ half };
  for (unsigned seg = blockIdx.x * warpsPerBlock + (threadIdx.x >> 5); seg < segments; seg += gridDim.x * warpsPerBlock)
  {
    const unsigned r     = seg / segmentsPerRow;
    const unsigned i0    = (seg - r * segmentsPerRow) * 32;
    const unsigned tiles = min(32u, tilesX - i0);
    const unsigned w     = r * tilesX + i0 + lane; // this lane's tile row
    const unsigned m     = unsigned(lane) < tiles ? masks[w] : 0u;

    // This lane's row: the labels of its runs.
    const unsigned starts = m & ~(m << 1);
    const int      runs   = __popc(starts);
    I              v[kHalfRow];
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
      v[k] = k < runs ? slots[I(w) * kHalfRow + k] : base;
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
    {
      while (v[k] < base)
        v[k] = slots[at(v[k])];
      runLabels[lane][k] = v[k] - base;
    }
    for (int k = kHalfRow; k < runs; ++k) // rows of more than 8 runs
    {
      I u = slots[half + I(w) * kHalfRow + (k - kHalfRow)];
      while (u < base)
        u = slots[at(u)];
      runLabels[lane][k] = u - base;
    }
    __syncwarp();

    // The segment's labels, a tile row at a time.
    TNarrow *      out     = labels + (uint64_t(r) * e.nx + uint64_t(i0) * kTileX);
    const uint64_t voxel0  = uint64_t(r) * e.nx + uint64_t(i0) * kTileX; // for the statistics
    const unsigned columns = static_cast<unsigned>(e.nx) - i0 * kTileX;  // from the segment's first voxel on
#pragma unroll 4
    for (unsigned j = 0; j < tiles; ++j)
    {
      const unsigned mj         = __shfl_sync(0xffffffffu, m, j);
      const bool     foreground = (mj >> lane) & 1u;
      const TLabel   label      = foreground ? static_cast<TLabel>(runLabels[j][__popc(mj & ~(mj << 1) & upToLane) - 1])
                                             : static_cast<TLabel>(background);
      const unsigned x          = j * kTileX + lane;
      if (x < columns)
        out[x] = static_cast<TNarrow>(label);
      if (Stats)
        AccumulateStatistics<I, TLabel>(label, foreground, voxel0 + x, e.nx, e.ny, background, stats);
    }
    __syncwarp();
  }
}

/** NodeFinalize in the labels' transfer width (TransferWidth, from the count on the device). */
template <typename I, typename TLabel, bool Stats>
__global__ void
__launch_bounds__(kFinalizeThreads) NodeFinalizeKernel(const I *          slots,
                                                       I                  half,
                                                       I                  base,
                                                       const unsigned *   masks,
                                                       void *             labels,
                                                       Extent<I>          e,
                                                       const I *          lastOffset,
                                                       const I *          lastCount,
                                                       long long          background,
                                                       StatisticsPointers stats)
{
  __shared__ RunLabels<I> runLabels[kFinalizeThreads / 32];
  RunLabels<I> &          mine = runLabels[threadIdx.x >> 5];
  const unsigned width = TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
  if (width == 1)
    NodeFinalize<I, TLabel, uint8_t, Stats>(
      slots, half, base, masks, static_cast<uint8_t *>(labels), e, background, stats, mine);
  if constexpr (sizeof(TLabel) >= 2)
    if (width == 2)
      NodeFinalize<I, TLabel, uint16_t, Stats>(
        slots, half, base, masks, static_cast<uint16_t *>(labels), e, background, stats, mine);
  if constexpr (sizeof(TLabel) >= 4)
    if (width == 4)
      NodeFinalize<I, TLabel, uint32_t, Stats>(
        slots, half, base, masks, static_cast<uint32_t *>(labels), e, background, stats, mine);
  if constexpr (sizeof(TLabel) >= 8)
    if (width == 8)
      NodeFinalize<I, TLabel, uint64_t, Stats>(
        slots, half, base, masks, static_cast<uint64_t *>(labels), e, background, stats, mine);
}

} // namespace cc
} // namespace chs

#endif
