// Internal: the argument checks that both backends of the hierarchies by attribute (include/chs/AttributeHierarchy.h)
// make before writing anything, and the CPU reference's check that its input is a dendrogram (the CUDA backend runs
// the same checks on the device, CheckDendrogramOnDevice).
#ifndef chsAttributeHierarchyCheck_h
#define chsAttributeHierarchyCheck_h

#include "chs/AttributeHierarchy.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace chs
{
namespace ah
{

inline void
CheckWatershedAttribute(RegionAttribute attribute)
{
  if (attribute == RegionAttribute::Height)
    throw std::invalid_argument("a watershed hierarchy is by area, volume or dynamics, not by height");
  if (attribute != RegionAttribute::Area && attribute != RegionAttribute::Volume &&
      attribute != RegionAttribute::Dynamics)
    throw std::invalid_argument("unknown region attribute");
}

inline void
CheckFilter(RegionAttribute attribute, double threshold)
{
  if (attribute == RegionAttribute::Dynamics)
    throw std::invalid_argument("regions are filtered by area, volume or height, not by dynamics");
  if (attribute != RegionAttribute::Area && attribute != RegionAttribute::Volume &&
      attribute != RegionAttribute::Height)
    throw std::invalid_argument("unknown region attribute");
  if (std::isnan(threshold))
    throw std::invalid_argument("the attribute threshold is NaN");
}

template <typename TNode>
void
CheckInput(const DendrogramInputT<TNode> & in, const char * what)
{
  const bool     wide    = sizeof(TNode) == sizeof(uint64_t);
  const uint64_t maximum = wide ? MaximumWideDendrogramVertices : MaximumDendrogramVertices;
  if (in.vertices == 0)
    throw std::invalid_argument(std::string(what) + " needs a dendrogram of at least one vertex");
  if (in.vertices > maximum)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(in.vertices) + " vertices; with " +
                                (wide ? "64-bit node ids (the graph entry's 32-bit vertex ids)" : "32-bit node ids") +
                                " at most " + std::to_string(maximum));
  if (!in.parent || (in.vertices > 1 && (!in.weight || !in.u || !in.v)))
    throw std::invalid_argument(std::string(what) + " needs the dendrogram's parents, weights and end vertices");
}

/** Throws std::invalid_argument naming the first broken invariant of a dendrogram on the host. */
template <typename TNode>
void
CheckDendrogramCPU(const DendrogramInputT<TNode> & in)
{
  const uint64_t n = in.vertices, root = 2 * n - 2;
  auto fail = [](const std::string & why) { throw std::invalid_argument("the input is not a dendrogram: " + why); };
  if (in.parent[root] != root)
    fail("the root " + std::to_string(root) + " is not its own parent");
  std::vector<unsigned char> children(n - 1, 0);
  for (uint64_t x = 0; x < root; ++x)
  {
    const uint64_t p = in.parent[x];
    if (p <= x || p < n || p > root)
      fail("node " + std::to_string(x) + " has parent " + std::to_string(p) +
           " (parents are internal nodes after their children)");
    if (++children[p - n] > 2)
      fail("node " + std::to_string(p) + " has more than two children");
    if (x >= n && !(in.weight[x - n] <= in.weight[p - n]))
      fail("the weight of node " + std::to_string(x) + " is NaN or above its parent's");
  }
  for (uint64_t k = 0; k + 1 < n; ++k)
  {
    if (children[k] != 2)
      fail("node " + std::to_string(n + k) + " has " + std::to_string(children[k]) + " children");
    if (std::isnan(in.weight[k]))
      fail("the weight of node " + std::to_string(n + k) + " is NaN");
    if (in.u[k] >= n || in.v[k] >= n)
      fail("tree edge " + std::to_string(k) + " has an end vertex out of range");
  }
}

} // namespace ah
} // namespace chs

#endif
