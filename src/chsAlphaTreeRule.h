// The alpha-tree's checks that both backends make (include/chsAlphaTree.h states the definition).
#ifndef chsAlphaTreeRule_h
#define chsAlphaTreeRule_h

#include "chsAlphaTree.h"
#include "chsSingleLinkageRule.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace chs
{
namespace at
{

/** The image graph of the tree, after the size checks: node ids of the CUDA construction (pixels, then K edge slots
 * per pixel) must fit in 32 bits, one value kept free. */
inline sl::ImageGraph
CheckedGraph(const Grid & grid, const AlphaTreeParameters & parameters)
{
  const sl::ImageGraph graph(grid, parameters.graph.fullyConnected);
  sl::CheckImageGraph(grid, parameters.graph, graph);
  const uint64_t nodes = grid.NumberOfVoxels() * (graph.slots + 1);
  if (nodes >= (uint64_t(1) << 32) - 1)
    throw std::invalid_argument("the image has " + std::to_string(grid.NumberOfVoxels()) + " pixels and " +
                                std::to_string(grid.NumberOfVoxels() * graph.slots) +
                                " edge slots; their sum must stay below 2^32 - 1");
  return graph;
}

/** The arrays of a tree of `nodes` nodes, from the caller's allocator. */
inline AlphaTreeArrays
Allocated(const AlphaTreeAllocator & allocate, uint64_t nodes)
{
  const AlphaTreeArrays out = allocate(nodes);
  if (out.parent == nullptr)
    throw std::invalid_argument("the allocator gave no parent array for the tree");
  return out;
}

/** The tree of a 1-pixel image: one leaf, its own root. */
inline AlphaTreeResult
SinglePixelTree(const AlphaTreeAllocator & allocate)
{
  const AlphaTreeArrays out = Allocated(allocate, 1);
  out.parent[0]             = 0;
  if (out.level)
    out.level[0] = 0.0;
  AlphaTreeResult result;
  result.nodes = 1;
  return result;
}

/** The checks of a cut's parameters that both backends make. */
inline void
CheckCut(const double * range, double alpha, double omega)
{
  if (alpha != alpha || omega != omega)
    throw std::invalid_argument("alpha and omega must not be NaN");
  if (omega < std::numeric_limits<double>::infinity() && range == nullptr)
    throw std::invalid_argument("an alpha-omega cut needs the nodes' value ranges");
}

} // namespace at
} // namespace chs

#endif
