/*=========================================================================
 *  CudaHierarchicalSegmentation: hierarchies by attribute on a single-linkage dendrogram (watershed hierarchies by
 *  area, volume and dynamics; attribute filtering), ITK-free API.
 *
 *  Both operations take a dendrogram as include/chs/SingleLinkage.h defines it (the binary partition tree of a
 *  graph's minimum spanning tree: leaves 0 .. n-1, the tree edge of rank r is node n + r, parents after children) and
 *  give a new weight to every tree edge; the result is the single-linkage dendrogram of the same minimum spanning tree
 *  with the new weights, edges ordered by (new weight, old rank). Two implementations of one definition: CUDA
 *  (src/AttributeHierarchy/chsAttributeHierarchy.cu: bottom-up passes in which the second child to finish computes its
 *  parent, pointer jumping for the top-down pass, then the sort and PANDORA of the graph entry) and the sequential CPU
 *  reference (src/AttributeHierarchy/chsAttributeHierarchyCPU.cxx), chosen by the ExecutionContext's backend
 *  (include/chs/Execution.h). For the same input they write identical arrays.
 *
 *  The definitions (docs/single-linkage.md, "Hierarchies by attribute"); alt(x) is the weight of node x (0 for the
 *  leaves), the children of a node are taken in increasing id order:
 *  - area(x): number of leaves under x.
 *  - volume(x) = the double nearest (ties to even) to the exact sum of the terms area(y) * (alt(parent(y)) - alt(y))
 *    over the internal nodes y of x's subtree, x included (the root's own term is 0); 0 for the leaves. Every volume
 *    is exact before it is rounded once, so no order of additions enters the definition (both backends sum in a
 *    fixed point of 2^q, 2^q the lowest set bit over the weights, in 128 or 256 bits: src/AttributeHierarchy/
 *    chsExactVolume.h). Weights spanning more than 2^222 units of 2^q (doubles only: float32 weights below 2^73 never
 *    do) are first rounded to multiples of 2^(T - 222), |weight| < 2^T. Whole-number weights give the integers.
 *  - depth(x) of an internal node: the lowest weight of an internal node under x (alt(x) when both children are
 *    leaves); its deepest child: the internal child of smaller depth, the smaller id on ties.
 *  - height(x) = alt(parent(x)) - depth(x) for internal nodes (the root: alt(root) - depth(root)); 0 for the leaves.
 *  - dynamics(x) of an internal node = height(t), t the highest node reached from x by moving to the parent while
 *    the current node is its parent's deepest child (the extinction value of the height).
 *  - Watershed hierarchy by attribute A in {area, volume, dynamics} (Najman, Cousty and Perret, "Playing with
 *    Kruskal", ISMM 2013): corrected(x) = 0 for leaves, A(root) at the root, and for the other internal nodes A(x)
 *    when alt(x) != alt(parent(x)), else the largest corrected value of its children. The tree edge of node x gets
 *    the smallest corrected value of x's children (so 0 when a child is a leaf).
 *  - Attribute filtering with A in {area, volume, height} and a threshold t: the tree edge of node x keeps alt(x)
 *    when both children have A >= t, and gets 0 otherwise (the frontier between a region smaller than t and its
 *    neighbour is removed; regions of the result are regions of the input or unions of adjacent ones).
 *  These equal Higra's watershed_hierarchy_by_area / _volume / _dynamics and filter_non_relevant_node_from_tree (with
 *  canonize_tree=False) on the same graph (python/tests/test_trees.py compares them array by array); for weights that
 *  are not whole numbers Higra sums the volumes in double from the leaves up, within a relative (2h + 3) 2^-53 of the
 *  exact volume that this definition rounds once, h the height of the node's subtree (the tests check that bound,
 *  and the hierarchies against Higra's watershed_hierarchy_by_attribute given volumes summed in Python's fractions).
 *=========================================================================*/
#ifndef chsAttributeHierarchy_h
#define chsAttributeHierarchy_h

#include "chs/SingleLinkage.h"

namespace chs
{

enum class RegionAttribute
{
  Area,
  Volume,
  Height,
  Dynamics
};

/** A dendrogram of `vertices` leaves as the single-linkage backends write it: `parent` (2n - 1), and per rank
 * `weight`, `u`, `v` (n - 1 each) and, optionally, `edge` (null: the result's edges are the input's ranks). Host or
 * device pointers for the CUDA backend, host pointers for the CPU reference. Node and vertex ids of TNode: 32-bit
 * (DendrogramInput) for up to MaximumDendrogramVertices leaves, 64-bit (DendrogramInputT<uint64_t>) for up to
 * MaximumWideDendrogramVertices (the graph entry's limit, which both backends end with); the result is written in the
 * same width, with the same ids. */
template <typename TNode>
struct DendrogramInputT
{
  uint64_t         vertices = 0;
  const TNode *    parent   = nullptr;
  const double *   weight   = nullptr;
  const uint64_t * edge     = nullptr;
  const TNode *    u        = nullptr;
  const TNode *    v        = nullptr;
  /** Testing only: the CUDA backend ranks its Euler tour with 16-byte words (next visit and count, 64 bits each), as
   * it must from 2^30 leaves on (4n - 4 visits no longer fit the 32-bit half of a packed word) and always with 64-bit
   * ids. The results are the same. */
  bool forceWideTour = false;
};
using DendrogramInput = DendrogramInputT<uint32_t>;

/** The watershed hierarchy by `attribute` (Area, Volume or Dynamics) of the dendrogram `in`, written to `out` like a
 * single-linkage dendrogram (its `edge` is the input's edge of each tree edge, `u` and `v` its ends). Throws
 * std::invalid_argument, before writing anything, for no vertex, a null array, more vertices than the ids hold
 * (MaximumDendrogramVertices with 32-bit ids, MaximumWideDendrogramVertices with 64-bit ones), Height as the
 * attribute, or an input that is not a dendrogram (a parent before its child, a node with other than two children, a
 * NaN or decreasing weight, an end vertex out of range). */
template <typename TNode>
SingleLinkageResult
WatershedHierarchy(const DendrogramInputT<TNode> &  in,
                   RegionAttribute                  attribute,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context = ExecutionContext(),
                   RunInfo *                        info    = nullptr);

/** The dendrogram `in` with the frontiers of regions whose `attribute` (Area, Volume or Height) is below `threshold`
 * removed (their tree edges weigh 0). Throws as WatershedHierarchy does, and for Dynamics or a NaN threshold. */
template <typename TNode>
SingleLinkageResult
FilterRegions(const DendrogramInputT<TNode> &  in,
              RegionAttribute                  attribute,
              double                           threshold,
              const DendrogramArraysT<TNode> & out,
              const ExecutionContext &         context = ExecutionContext(),
              RunInfo *                        info    = nullptr);

/** The attribute filter of an alpha-tree, or of any tree whose parents come after their children and whose leaves
 * are the pixels of `grid` at level 0 (`nodes` parents and levels; include/chs/AlphaTree.h), as Higra filters a tree
 * that is not binary (filter_non_relevant_node_from_tree, canonize_tree=False): the single-linkage dendrogram of the
 * image graph (`fullyConnected`; include/chs/SingleLinkage.h) weighted by the tree's saliency (AlphaTreeEdgeSaliency:
 * the level of each edge's ends' lowest common ancestor), its tree edges numbered by image edge index, then
 * FilterRegions of it by `attribute` at `threshold`, written to `out`. One call for the three steps, each as its
 * entry defines it: on the CUDA backend the image graph, the saliency and the intermediate dendrogram stay on the
 * device (host or device pointers in and out). Throws std::invalid_argument as those entries do (an image of more
 * than MaximumDendrogramVertices pixels, or nodes that do not form such a tree). */
template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegions(const TNode *                    parent,
                       const double *                   level,
                       uint64_t                         nodes,
                       const Grid &                     grid,
                       bool                             fullyConnected,
                       RegionAttribute                  attribute,
                       double                           threshold,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context = ExecutionContext(),
                       RunInfo *                        info    = nullptr);

/** The attribute of every node (2n - 1 values) of the dendrogram `in`, as defined above (Dynamics: 0 for the leaves),
 * on the host. For reports and tests. */
template <typename TNode>
void
DendrogramAttribute(const DendrogramInputT<TNode> & in, RegionAttribute attribute, double * values);

} // namespace chs

#endif
