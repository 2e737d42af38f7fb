/*=========================================================================
 *  CudaHierarchicalSegmentation: the alpha-tree (quasi-flat zone hierarchy) of an image, ITK-free API.
 *
 *  Two implementations of one definition: the CUDA backend (src/AlphaTree/; four constructions, see
 *  AlphaTreeAlgorithm: the level-synchronous Kruskal, Carlinet, Kaci and Blin's per-block partial trees merged across
 *  tile borders with the lock-free CONNECT (v1, v2), and the minimum spanning tree with PANDORA) and the sequential
 *  CPU reference (src/AlphaTree/chsAlphaTreeCPU.cxx: Kruskal over the sorted edges with a union-find, then
 *  canonicalisation, the paper's algorithm 1). For the same input they write identical arrays. The queries that are
 *  per-pixel work, the cut and the saliency maps, have both backends too (AlphaTreeCut, AlphaTreeSaliency,
 *  AlphaTreeEdgeSaliency, below). Each operation runs the backend its ExecutionContext names (include/chs/Execution.h).
 *
 *  The definition (docs/alpha-tree.md):
 *  - The image graph and its edge weights are those of the single-linkage image graphs (include/chs/SingleLinkage.h):
 *    4/8-connectivity in 2D, 6/26 in 3D; |a - b| for scalars, the L1, L2 or L-infinity norm for vectors.
 *  - An alpha-connected component is a set of pixels joined by paths whose edges weigh at most alpha. The tree's
 *    nodes are the distinct alpha-connected components for all alpha; a node's level is the smallest alpha at which
 *    it is one. Leaves are the pixels (level 0); every internal node has at least two children and a level above
 *    its children's, so the tree is canonical and has at most 2n - 1 nodes.
 *  - Node ids: pixels are the leaves 0 .. n-1 (raster index, x fastest); the internal nodes follow, ordered by
 *    (level, smallest pixel index in the node). Parents therefore come after their children and the root, the last
 *    node, is its own parent. A 1-pixel image is a single leaf that is its own root.
 *=========================================================================*/
#ifndef chsAlphaTree_h
#define chsAlphaTree_h

#include "chs/Execution.h"
#include "chs/SingleLinkage.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace chs
{

/** How the CUDA backend builds the tree before canonicalising it. */
enum class AlphaTreeAlgorithm
{
  /** The fastest measured on the H200 (bench/results/2026-11-2*-h200-alpha-tree-*): LevelSynchronous for 8-bit
   * scalar images, SpanningTree for the others. */
  Auto,
  /** The paper's GPU v1: every edge is inserted into the hierarchy (a chain per pixel, then CONNECT). */
  InsertAllEdges,
  /** The paper's GPU v2 (CONNECT-WITH): an edge that joins pixels already joined at its level or below (residual),
   * or whose level is already on one of the two branches (redundant), is not inserted. */
  SkipRedundantEdges,
  /** The image's minimum spanning tree (Boruvka) and its binary partition tree (PANDORA), the single-linkage
   * backend's construction: its work does not grow with the number of distinct levels on a branch, which is what
   * slows the paper's merges down on high-dynamic-range images (16-bit, float, vectors). */
  SpanningTree,
  /** Kruskal's union-find one level at a time, every edge of a level at once (src/AlphaTree/chsAlphaTreeLevels.cuh):
   * builds the canonical tree directly, with two grid barriers per level. For 8-bit and 16-bit integer scalar images
   * only (std::invalid_argument otherwise); its time grows with the number of distinct edge weights. */
  LevelSynchronous
};

struct AlphaTreeParameters
{
  ImageGraphParameters graph;
  AlphaTreeAlgorithm   algorithm = AlphaTreeAlgorithm::Auto;
  /** CUDA, InsertAllEdges and SkipRedundantEdges: the tile of one thread block, 0 x 0 x 0 for the default (32 x 32
   * in 2D; 8 x 8 x 8 in 3D, 8 x 8 x 4 with 26-connectivity). Any shape of at most 1024 pixels (tileZ = 1 in 2D)
   * whose nodes (pixels and edge slots, 8 bytes each) fit in a block's shared memory; the tree does not depend on
   * it. Checked by every algorithm. */
  unsigned tileX = 0, tileY = 0, tileZ = 0;
  /** Testing only: the level-synchronous construction's tile stage marks its references to force entries in a bit set
   * over the node ids even for small images (the path taken from 2^30 pixels on, where bit 31 of a node id is no
   * longer free). */
  bool forceWideIds = false;
  /** Testing only: the CPU reference and the CUDA level-synchronous construction number nodes and pixels in 64 bits
   * even for small images (the path taken from 2^31 pixels on, where the 2n - 1 nodes no longer have 32-bit ids). The
   * other CUDA constructions number in 32 bits whatever this says. */
  bool forceWideNodeIds = false;
};

/** Trees of at most this many nodes have 32-bit node ids (0 .. 2^32 - 2): every image of up to
 * MaximumDendrogramVertices pixels. Larger trees (2^31 pixels and more) need 64-bit ids. */
constexpr uint64_t MaximumNarrowTreeNodes = (uint64_t(1) << 32) - 1;

/** Where a backend writes the tree: parents and levels of every node. The parents go to exactly one of `parent`
 * (32-bit node ids, for trees of at most MaximumNarrowTreeNodes nodes) and `parent64` (64-bit node ids, for any
 * tree), as the allocator chooses; both backends write the same ids to either. `level` may be null. */
struct AlphaTreeArrays
{
  uint32_t * parent = nullptr;
  double *   level  = nullptr;
  /** Set by an allocator whose level array already holds 0 for the n leaves (value-initialised storage): the CUDA
   * backend then skips writing them. */
  bool       leafLevelsZero = false;
  uint64_t * parent64       = nullptr;
};

/** Called by a backend once, when the tree is built and checked and its number of nodes known (between n and
 * 2n - 1), to get the arrays to write it to; on failure before that point nothing is allocated or written. An
 * allocator that gives no parent array, both, or a 32-bit one for more than MaximumNarrowTreeNodes nodes gets
 * std::invalid_argument, and nothing is written. */
using AlphaTreeAllocator = std::function<AlphaTreeArrays(uint64_t nodes)>;

struct AlphaTreeResult
{
  /** Nodes written (n leaves plus the internal nodes); the CUDA backend also checks on the device that they form a
   * tree of the definition (parents after children, one root, levels rising, two children or more per internal
   * node) and throws std::logic_error otherwise. */
  uint64_t nodes = 0;
  /** CUDA: edges inserted in the hierarchy before canonicalisation (all of them for InsertAllEdges). */
  uint64_t insertedEdges = 0;
  /** CUDA: milliseconds of the construction (local trees and global merges) and of the canonicalisation with the
   * renumbering, device events. */
  double buildMilliseconds        = 0.0;
  double canonicaliseMilliseconds = 0.0;
};

/** Throws std::invalid_argument, before writing anything, for an empty image, 0 components, a NaN or infinite pixel,
 * or edge slots (pixels x 2 in 2D 4-connected, x 4 8-connected, x 3 and x 13 in 3D) beyond the edge indices that the
 * weight codes leave in a 64-bit sort key: 2^56 for 8-bit integer scalars, 2^48 for 16-bit ones, 2^33 for float and
 * vector pixels. From 2^31 pixels on (and with AlphaTreeParameters::forceWideNodeIds) both backends number nodes and
 * pixels in 64 bits, and the tree then needs the allocator's `parent64`. The CUDA backend refuses the sizes its
 * construction cannot number (pixels plus edge slots of 2^32 - 1 or more for v1 and v2; more than 2^31 - 1 pixels
 * for the spanning tree, which numbers edges in the bits the weight codes leave from 2^32 slots on; the
 * level-synchronous one numbers edge slots in 64 bits where 32 do not hold them, and nodes where 32 do not; Auto
 * picks it for 8-bit scalars and for 16-bit ones beyond pixels plus slots, the spanning tree for the others), and
 * throws chs::DeviceMemoryError, before allocating, for a run that does not fit the device's free memory. */
template <typename TPixel>
AlphaTreeResult
ImageAlphaTree(const TPixel *              pixels,
               const Grid &                grid,
               const AlphaTreeParameters & parameters,
               const AlphaTreeAllocator &  allocate,
               const ExecutionContext &    context = ExecutionContext(),
               RunInfo *                   info    = nullptr);

/** A cut of a tree (the arrays of the definition above: `nodes` parents and levels, the first `leaves` the pixels):
 * each pixel's region is its highest ancestor x with level[x] <= alpha and, when omega is finite, range[x] <= omega
 * (the pixel itself when none qualifies); `range` (per node, the largest difference of values inside it) may be null
 * when omega is infinite. Writes labels[p] (consecutive from 1 in raster order of each region's first pixel) and
 * returns the number of regions. Throws std::invalid_argument for a NaN alpha or omega, or a finite omega without
 * ranges, before writing anything. The CUDA backend gives the same labels. The queries are instantiated for 32-bit
 * and 64-bit node ids (TNode uint32_t or uint64_t: AlphaTreeArrays::parent or parent64; a cut writes labels of the
 * same type) with the same results. */
template <typename TNode>
CudaHierarchicalSegmentation_EXPORT uint64_t
AlphaTreeCut(const TNode *            parent,
             const double *           level,
             const double *           range,
             uint64_t                 leaves,
             uint64_t                 nodes,
             double                   alpha,
             double                   omega,
             TNode *                  labels,
             const ExecutionContext & context = ExecutionContext(),
             RunInfo *                info    = nullptr);

/** The saliency map of a tree (the arrays of the definition above) of an image of pixelSize[0..dimension) pixels, on
 * the interpixel grid of 2 s - 1 samples per axis (x fastest): 0 at the pixels (even coordinates), the level of the
 * lowest common ancestor of two face neighbours between them, and the largest of the samples beside it where a
 * sample lies between more pixels (dimension 2 and 3). Writes every sample of `saliency`. The CUDA backend gives the
 * same values. */
template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeSaliency(const TNode *            parent,
                  const double *           level,
                  uint64_t                 nodes,
                  const Grid &             pixels,
                  float *                  saliency,
                  const ExecutionContext & context = ExecutionContext(),
                  RunInfo *                info    = nullptr);

/** The level of the lowest common ancestor of each edge's ends (u[i], v[i] < nodes, i < count) in a tree whose
 * parents come after their children (the alpha-tree, or any dendrogram with its leaves at level 0): the saliency of
 * the tree on a graph's edges (Higra's `saliency`), in double. Throws std::invalid_argument, before writing anything,
 * for an end out of range. The CUDA backend gives the same values. */
template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeEdgeSaliency(const TNode *            parent,
                      const double *           level,
                      uint64_t                 nodes,
                      const TNode *            u,
                      const TNode *            v,
                      uint64_t                 count,
                      double *                 saliency,
                      const ExecutionContext & context = ExecutionContext(),
                      RunInfo *                info    = nullptr);

/** Per node of a tree of the definition above (`nodes` parents, 32- or 64-bit, the first `leaves` the pixels of
 * `components` interleaved values each), the largest difference of values inside the node over the components: the
 * range an alpha-omega cut compares with omega. Host code, one pass from the leaves up (parents come after their
 * children). */
template <typename TNode, typename TPixel>
void
AlphaTreeValueRanges(const TNode *  parent,
                     uint64_t       nodes,
                     const TPixel * pixels,
                     uint64_t       leaves,
                     unsigned       components,
                     double *       range)
{
  std::vector<TPixel> low(nodes * components, std::numeric_limits<TPixel>::max());
  std::vector<TPixel> high(nodes * components, std::numeric_limits<TPixel>::lowest());
  std::copy(pixels, pixels + leaves * components, low.begin());
  std::copy(pixels, pixels + leaves * components, high.begin());
  for (uint64_t x = 0; x < nodes; ++x)
  {
    const uint64_t p = parent[x];
    double         r = 0.0;
    for (unsigned c = 0; c < components; ++c)
    {
      const TPixel lo = low[x * components + c], hi = high[x * components + c];
      r = std::max(r, double(hi) - double(lo));
      if (p != x)
      {
        low[p * components + c]  = std::min(low[p * components + c], lo);
        high[p * components + c] = std::max(high[p * components + c], hi);
      }
    }
    range[x] = r;
  }
}

/** Leaves under each node of a tree whose parents (32- or 64-bit) come after their children (alpha-trees and
 * dendrograms): 1 for the first `leaves` nodes, the sum of the children's for the others. Host code. */
template <typename TNode, typename TArea>
void
TreeAreas(const TNode * parent, uint64_t nodes, uint64_t leaves, TArea * area)
{
  std::fill(area, area + nodes, TArea(0));
  for (uint64_t x = 0; x < nodes; ++x)
  {
    if (x < leaves)
      area[x] = 1;
    if (parent[x] != x)
      area[parent[x]] += area[x];
  }
}

} // namespace chs

#endif
