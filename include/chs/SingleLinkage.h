/*=========================================================================
 *  CudaHierarchicalSegmentation: single-linkage dendrograms (minimum spanning tree, then the dendrogram of the
 *  tree), ITK-free API.
 *
 *  Two implementations of one definition: the CUDA backend (src/Engines/SingleLinkage/: Boruvka minimum spanning
 *  tree with a concurrent union-find, then PANDORA, Sao et al., ICPP 2024) and the sequential CPU reference
 *  (src/Engines/SingleLinkage/chsSingleLinkageCPU.cxx: Kruskal, then the bottom-up union-find dendrogram, the paper's
 *algorithm 2), chosen by the ExecutionContext's backend (include/chs/Execution.h). For the same input they write
 *identical arrays.
 *
 *  The definition (docs/single-linkage.md):
 *  - Edges are ordered by (weight, edge index). The order is total, so the minimum spanning tree and its
 *    dendrogram are unique.
 *  - The minimum spanning tree's edges, in that order, get ranks 0 .. n-2 (n vertices). Node ids: the vertices are
 *    the leaves 0 .. n-1; the edge of rank r is the internal node n + r. Every parent has a larger id than its
 *    children (topological order) and the root, node 2n - 2, is its own parent.
 *  - The parent of a vertex is its lightest tree edge; the parent of an edge node is the lightest tree edge that
 *    joins its cluster (the vertices joined by edges up to it) to another cluster.
 *  - Image graphs: vertex = pixel (raster index, x fastest); edge index = pixel * K + slot, where the K slots are
 *    the neighbours after the pixel in raster order, by increasing raster offset (4/8-connectivity: K = 2/4; 6/26:
 *    K = 3/13). Weights: |a - b| for scalars (exact for integers; in float for float, rounded to float for double
 *    pixels); for vectors the L1, L2 or L-infinity norm of the per-component differences, in float, summed in
 *    component order with every operation rounded.
 *=========================================================================*/
#ifndef chsSingleLinkage_h
#define chsSingleLinkage_h

#include "chs/Execution.h"

#include <cstdint>

namespace chs
{

enum class VectorDistance
{
  L1,
  L2,
  LInfinity
};

struct ImageGraphParameters
{
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool fullyConnected = false;
  /** Components per pixel (interleaved); 1 for scalar images. */
  unsigned       components = 1;
  VectorDistance distance   = VectorDistance::L2;
  /** Testing only: the dendrogram's CUDA minimum spanning tree numbers edges in the bits that the weight codes leave
   * (the path of images of 2^32 edge slots or more) on any image. The results are the same. */
  bool forceWideEdgeKeys = false;
};

/** Where a backend writes the dendrogram of a graph with n vertices: `parent` has 2n - 1 entries, the other arrays
 * n - 1, indexed by rank (the internal node n + r stands for the tree edge of rank r). `edge` receives the edge's
 * index in the input (graphs) or its image edge index; `u` and `v` its end vertices, as given in the input (graphs)
 * or u < v (images). Any pointer but `parent` may be null. Node and vertex ids of TNode: 32-bit ones
 * (DendrogramArrays) for up to MaximumDendrogramVertices vertices, 64-bit ones (DendrogramArraysT<uint64_t>) beyond;
 * both backends write the same ids into either width. */
template <typename TNode>
struct DendrogramArraysT
{
  TNode *    parent = nullptr;
  double *   weight = nullptr;
  uint64_t * edge   = nullptr;
  TNode *    u      = nullptr;
  TNode *    v      = nullptr;
};
using DendrogramArrays = DendrogramArraysT<uint32_t>;

struct SingleLinkageResult
{
  /** CUDA: PANDORA's contraction levels (at most ceil(log2(n))), and Boruvka rounds (0 when the input was a tree);
   * CPU: 0. */
  unsigned contractionLevels = 0;
  unsigned boruvkaRounds     = 0;
  /** CUDA: milliseconds of the minimum spanning tree (kernels, from the upload to the sorted tree) and of the
   * dendrogram (PANDORA, with its sorts). */
  double mstMilliseconds        = 0.0;
  double dendrogramMilliseconds = 0.0;
};

/** Largest number of vertices with 32-bit node ids (2n - 1 of them): DendrogramArrays. */
constexpr uint64_t MaximumDendrogramVertices = (uint64_t(1) << 31) - 1;
/** Largest number of vertices with 64-bit node ids (DendrogramArraysT<uint64_t>) for the CUDA backend, whose
 * minimum spanning tree and PANDORA number vertices and tree edges in 32 bits, and for graphs of either backend (their
 * vertex ids are 32-bit). The CPU reference takes images of any number of pixels into 64-bit arrays. */
constexpr uint64_t MaximumWideDendrogramVertices = (uint64_t(1) << 32) - 1;

/** The dendrogram of an image's pixel graph. Throws std::invalid_argument, before writing anything, for an empty
 * image, more pixels than the node ids hold (32-bit arrays: MaximumDendrogramVertices; 64-bit arrays:
 * MaximumWideDendrogramVertices on the device, no limit on the CPU), too many edge slots (pixels x K: 2^56 for 8-bit
 * integer pixels, 2^48 for 16-bit ones, 2^33 for float, double and vector pixels, 2^32 for 32-bit integers: the
 * weight code and the edge index share a 64-bit key), a NaN or infinite pixel (inf - inf has no weight), or 0
 * components. The two widths give the same ids. */
template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkage(const TPixel *                   pixels,
                   const Grid &                     grid,
                   const ImageGraphParameters &     parameters,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context = ExecutionContext(),
                   RunInfo *                        info    = nullptr);

/** The edges of an image's pixel graph (the definition above), in edge-index order: u[i] < v[i] are the pixels of the
 * i-th existing edge and edge[i] its index pixel * K + slot. Returns the number of edges; with null arrays only counts
 * them. Host code. Throws std::invalid_argument for more than MaximumDendrogramVertices pixels or 2^32 edge slots
 * (its edges are for the graph entry, which takes fewer than 2^32 - 1). */
CudaHierarchicalSegmentation_EXPORT uint64_t
ImageGraphEdges(const Grid & grid, bool fullyConnected, uint32_t * u, uint32_t * v, uint64_t * edge);

/** The dendrogram of a weighted graph given as edge arrays (u[i], v[i], w[i]), i < edgeCount, on vertices
 * 0 .. vertexCount - 1. A graph with vertexCount - 1 edges is a tree and is its own minimum spanning tree; any other
 * connected graph gets its minimum spanning tree first. `inputIsTree` promises a tree (edgeCount must then be
 * vertexCount - 1). Throws std::invalid_argument, before writing anything, for no vertex, more vertices than the node
 * ids hold (MaximumDendrogramVertices into 32-bit arrays, MaximumWideDendrogramVertices into 64-bit ones), 2^32 - 1
 * edges or more, a vertex id out of range, a NaN weight (naming the first such edge), fewer than vertexCount - 1
 * edges, or a graph that is not connected (a promised tree that is not one). */
template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkage(const uint32_t *                 u,
                   const uint32_t *                 v,
                   const TWeight *                  w,
                   uint64_t                         edgeCount,
                   uint64_t                         vertexCount,
                   bool                             inputIsTree,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context = ExecutionContext(),
                   RunInfo *                        info    = nullptr);

} // namespace chs

#endif
