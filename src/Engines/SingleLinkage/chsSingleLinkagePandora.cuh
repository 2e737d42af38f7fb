// PANDORA's kernels (Sao, Prokopenko and Lebrun-Grandie, ICPP 2024), in the ascending order of this module: the
// tree edges are ranked 0 .. n - 2 by (weight, index), and the parent of a vertex is its lightest edge.
//
// Contraction, one level at a time, on a tree T_l with m vertices and k edges (in rank order):
//   - minimum incident edge of every vertex (atomicMin of the edge's position, which is in rank order);
//   - an edge is an alpha-edge when it is the lightest edge of neither of its ends; the others are contracted;
//   - the contracted edges are exactly the vertices' lightest edges: pointing every vertex across its lightest edge
//     gives a forest of the contracted components in which the only cycle of a component is the edge that is the
//     lightest of both its ends; the smaller end of that edge is the component's root;
//   - the roots are numbered (a scan), and the alpha-edges, with their ends renamed, are the next level's tree.
// Expansion, one thread per edge: an edge contracted at level l lies inside a vertex X of T_(l+1). While the
// lightest edge a of X in its tree is lighter than the edge, X is replaced by the vertex it was contracted into
// one level up. The first a that is heavier names the chain the edge belongs to: the chain of edges that hangs
// below a on X's side, whose top edge has a as its parent. An edge that finds none belongs to the root's chain.
// Sorting the edges by (chain, rank) lines every chain up: an edge's parent is the next edge of its chain, or the
// chain's own edge for the chain's top.
#ifndef chsSLPandora_cuh
#define chsSLPandora_cuh

#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace chs
{
namespace sl
{

constexpr uint32_t kNone = 0xffffffffu;
/** Contraction levels a tree of fewer than 2^32 vertices can need (the paper's bound, ceil(log2(n)), is 32). */
constexpr int kMaximumLevels = 40;

/** Where each level's vertices start among the vertices of all levels (fewer than 2n of them): ids of TNode, 32-bit
 * below 2^31 vertices. */
template <typename TNode>
struct LevelOffsets
{
  TNode offset[kMaximumLevels + 1];
};

/** A contraction level's vertex and edge counts, on the device: levels are queued before the host reads their
 * sizes back, with bounds (each level has fewer than half the edges of the one before) for the grids and scans.
 * A level after the last has no vertex. */
struct LevelSize
{
  uint32_t m, k;
};

/** Lightest incident edge (its position in the level's list) of every vertex. */
__global__ void
MinimumIncidentKernel(const LevelSize * size, const uint32_t * U, const uint32_t * V, uint32_t * minPos)
{
  const uint64_t k = size->k;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < k; i += uint64_t(gridDim.x) * blockDim.x)
  {
    // Read first: on a star every edge meets the centre, and most offers are already beaten.
    const uint32_t a = U[i], b = V[i];
    if (uint32_t(i) < minPos[a])
      atomicMin(minPos + a, uint32_t(i));
    if (uint32_t(i) < minPos[b])
      atomicMin(minPos + b, uint32_t(i));
  }
}

/** Records every vertex's lightest edge as a rank (R null: positions are ranks, level 0), and points the vertex
 * across it (to far[x] where given: its other end); the smaller end of an edge that is the lightest of both its ends
 * becomes a root. */
__global__ void
PointAcrossKernel(const LevelSize * size,
                  const uint32_t *  minPos,
                  const uint32_t *  R,
                  const uint32_t *  U,
                  const uint32_t *  V,
                  const uint32_t *  far,
                  uint32_t *        minRank,
                  uint32_t *        ptr)
{
  const uint64_t m = size->m;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < m; x += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t i = minPos[x];
    if (i == kNone)
    {
      minRank[x] = kNone;
      ptr[x]     = uint32_t(x);
      continue;
    }
    minRank[x]       = R ? R[i] : i;
    const uint32_t y = far ? far[x] : U[i] == x ? V[i] : U[i];
    ptr[x]           = (minPos[y] == i && x < y) ? uint32_t(x) : y;
  }
}

/** Every vertex finds its root (path halving on a forest that does not change here) and writes it to `root` (not
 * into `ptr`, where a slower thread's halving store may later put back an intermediate ancestor); roots are
 * flagged, and the flags from the level's vertex count up to `bound` cleared (the scan runs over the bound). */
__global__ void
FindRootsKernel(const LevelSize * size, uint64_t bound, uint32_t * ptr, uint32_t * root, uint32_t * rootFlag)
{
  const uint64_t m = size->m;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < bound; x += uint64_t(gridDim.x) * blockDim.x)
  {
    if (x >= m)
    {
      rootFlag[x] = 0;
      continue;
    }
    const uint32_t r = FollowToRoot(ptr, uint32_t(x));
    root[x]          = r;
    rootFlag[x]      = r == x ? 1u : 0u;
  }
}

/** The vertex of the next level that every vertex is contracted into, also kept with the vertex's lightest edge
 * in `vertex` (one 8-byte record: the edge kernels read both for an end in one sector). */
__global__ void
NameSupervertexKernel(const LevelSize * size,
                      const uint32_t *  root,
                      const uint32_t *  newId,
                      const uint32_t *  minPos,
                      uint32_t *        up,
                      uint2 *           vertex)
{
  const uint64_t m = size->m;
  for (uint64_t x = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; x < m; x += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t u = newId[root[x]];
    up[x]            = u;
    vertex[x]        = make_uint2(minPos[x], u);
  }
}

/** Flags the alpha-edges (flags cleared from the level's edge count up to `bound`); a contracted edge records its
 * level and the next level's vertex it lies in. `vertex`: each vertex's (lightest edge, next level's vertex). */
__global__ void
ClassifyEdgesKernel(const LevelSize * size,
                    uint64_t          bound,
                    const uint32_t *  R,
                    const uint32_t *  U,
                    const uint32_t *  V,
                    const uint2 *     vertex,
                    uint32_t          nextLevel,
                    uint32_t *        alphaFlag,
                    uint8_t *         edgeLevel,
                    uint32_t *        edgeVertex)
{
  const uint64_t k = size->k;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < bound; i += uint64_t(gridDim.x) * blockDim.x)
  {
    if (i >= k)
    {
      alphaFlag[i] = 0;
      continue;
    }
    const uint2 a     = vertex[U[i]];
    const bool  alpha = a.x != i && vertex[V[i]].x != i;
    alphaFlag[i]      = alpha ? 1u : 0u;
    if (!alpha)
    {
      const uint32_t r = R ? R[i] : uint32_t(i);
      edgeLevel[r]     = uint8_t(nextLevel);
      edgeVertex[r]    = a.y;
    }
  }
}

/** Writes the alpha-edges, renamed, as the next level's tree (in rank order: the scan keeps the order). */
__global__ void
GatherAlphaKernel(const LevelSize * size,
                  const uint32_t *  R,
                  const uint32_t *  U,
                  const uint32_t *  V,
                  const uint32_t *  alphaFlag,
                  const uint32_t *  position,
                  const uint2 *     vertex,
                  uint32_t *        nR,
                  uint32_t *        nU,
                  uint32_t *        nV)
{
  const uint64_t k = size->k;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < k; i += uint64_t(gridDim.x) * blockDim.x)
  {
    if (!alphaFlag[i])
      continue;
    const uint32_t j = position[i];
    nR[j]            = R ? R[i] : uint32_t(i);
    nU[j]            = vertex[U[i]].y;
    nV[j]            = vertex[V[i]].y;
  }
}

__global__ void
FirstLevelKernel(LevelSize * size, uint32_t m, uint32_t k)
{
  *size = LevelSize{ m, k };
}

/** The next level's size from the scans' totals, with the check that it is a tree with fewer edges; after the last
 * level (no edge: it must have one vertex), levels have no vertex. A violation is recorded in broken[0 .. 2]
 * (level + 1, vertices, edges) by the first thread that finds one. */
__global__ void
NextLevelKernel(const LevelSize * size,
                const uint32_t *  vertexTotal,
                const uint32_t *  edgeTotal,
                uint32_t          level,
                LevelSize *       next,
                uint32_t *        broken)
{
  const LevelSize s = *size;
  LevelSize       n{ 0, 0 };
  bool            bad = false;
  if (s.k == 0)
    bad = s.m > 1;
  else
  {
    n   = LevelSize{ *vertexTotal, *edgeTotal };
    bad = n.m != n.k + 1 || n.k >= s.k;
  }
  *next = n;
  if (bad && atomicCAS(broken, 0u, level + 1) == 0)
  {
    broken[1] = s.k == 0 ? s.m : n.m;
    broken[2] = n.k;
  }
}

/** Expansion: the chain of every edge (a vertex id over all levels, or `rootChain`). */
template <typename TNode>
__global__ void
FindChainKernel(uint64_t            edges,
                const uint8_t *     edgeLevel,
                const uint32_t *    edgeVertex,
                const uint32_t *    minRank,
                const uint32_t *    up,
                LevelOffsets<TNode> levels,
                TNode               rootChain,
                TNode *             chain)
{
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < edges; r += uint64_t(gridDim.x) * blockDim.x)
  {
    unsigned l = edgeLevel[r];
    uint32_t X = edgeVertex[r];
    TNode    c = rootChain;
    for (;;)
    {
      const TNode    id = levels.offset[l] + X;
      const uint32_t a  = minRank[id];
      if (a == kNone)
        break;
      if (uint32_t(r) < a)
      {
        c = id;
        break;
      }
      X = up[id];
      ++l;
    }
    chain[r] = c;
  }
}

/** Parents of the edge nodes from the edges sorted by (chain, rank), and of the vertices (their lightest edge). */
template <typename TNode>
__global__ void
StitchKernel(uint64_t         n,
             const TNode *    sortedChain,
             const uint32_t * sortedRank,
             const uint32_t * minRank,
             TNode            rootChain,
             TNode *          parent)
{
  const uint64_t edges = n - 1;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n + edges;
       i += uint64_t(gridDim.x) * blockDim.x)
  {
    if (i < edges)
    {
      const uint32_t r = sortedRank[i];
      const TNode    c = sortedChain[i];
      uint32_t       p;
      if (i + 1 < edges && sortedChain[i + 1] == c)
        p = sortedRank[i + 1];
      else if (c == rootChain)
        p = r;
      else
        p = minRank[c];
      parent[n + r] = TNode(n + p);
    }
    else
    {
      const uint64_t x = i - edges;
      parent[x]        = TNode(n + minRank[x]);
    }
  }
}

} // namespace sl
} // namespace chs

#endif
