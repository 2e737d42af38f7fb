// Independent oracles and inputs for the single-linkage tests: Prim's minimum spanning tree, the top-down dendrogram
// (the paper's algorithm 1: remove the heaviest edge, recurse on both sides), the partition of a graph keeping the
// edges up to a weight, and generators of trees and graphs. None of it shares code with the module.
#ifndef chsDendrogramOracles_h
#define chsDendrogramOracles_h

#include "itkDendrogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <random>
#include <vector>

namespace chs_test
{

struct Graph
{
  uint64_t              n = 0;
  std::vector<uint32_t> u, v;
  std::vector<double>   w;
  void
  Add(uint32_t a, uint32_t b, double weight)
  {
    u.push_back(a);
    v.push_back(b);
    w.push_back(weight);
  }
};

/** Prim's algorithm with edges compared by (weight, index): the tree's edge indices sorted by (weight, index). */
inline std::vector<uint64_t>
PrimTree(const Graph & g)
{
  std::vector<std::vector<uint64_t>> incident(g.n);
  for (uint64_t i = 0; i < g.u.size(); ++i)
  {
    incident[g.u[i]].push_back(i);
    incident[g.v[i]].push_back(i);
  }
  using Entry = std::pair<std::pair<double, uint64_t>, uint32_t>; // ((w, index), far vertex)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::vector<bool>                                                   in(g.n, false);
  std::vector<uint64_t>                                               tree;
  auto                                                                enter = [&](uint32_t x)
  {
    in[x] = true;
    for (uint64_t e : incident[x])
    {
      const uint32_t y = g.u[e] == x ? g.v[e] : g.u[e];
      if (!in[y])
        heap.push({ { g.w[e], e }, y });
    }
  };
  enter(0);
  while (!heap.empty())
  {
    const Entry top = heap.top();
    heap.pop();
    if (in[top.second])
      continue;
    tree.push_back(top.first.second);
    enter(top.second);
  }
  std::sort(tree.begin(),
            tree.end(),
            [&](uint64_t a, uint64_t b) { return std::make_pair(g.w[a], a) < std::make_pair(g.w[b], b); });
  return tree;
}

/** The dendrogram's parents by the top-down definition, for a tree whose edges are given in rank order. */
inline std::vector<uint32_t>
TopDownParents(uint64_t n, const std::vector<uint32_t> & U, const std::vector<uint32_t> & V)
{
  std::vector<uint32_t>                                   parent(2 * n - 1, 0);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adjacency(n); // (neighbour, rank)
  for (uint32_t r = 0; r < U.size(); ++r)
  {
    adjacency[U[r]].push_back({ V[r], r });
    adjacency[V[r]].push_back({ U[r], r });
  }
  std::vector<bool> removed(U.size(), false);
  // The component of x (without removed edges): its vertices and edges.
  auto component = [&](uint32_t x, std::vector<uint32_t> & edges)
  {
    std::vector<uint32_t> stack{ x }, seen{ x };
    std::vector<bool>     mark(n, false);
    mark[x] = true;
    while (!stack.empty())
    {
      const uint32_t a = stack.back();
      stack.pop_back();
      for (auto [b, r] : adjacency[a])
        if (!removed[r] && !mark[b])
        {
          mark[b] = true;
          stack.push_back(b);
          edges.push_back(r);
        }
    }
  };
  std::function<uint32_t(uint32_t)> build = [&](uint32_t x) -> uint32_t
  {
    std::vector<uint32_t> edges;
    component(x, edges);
    if (edges.empty())
      return x;
    const uint32_t top = *std::max_element(edges.begin(), edges.end());
    removed[top]       = true;
    const uint32_t a = build(U[top]), b = build(V[top]);
    parent[a] = parent[b] = uint32_t(n + top);
    return uint32_t(n + top);
  };
  const uint32_t root = build(0);
  parent[root]        = root;
  return parent;
}

/** Labels (consecutive from 1 in vertex order) of the components of the edges of weight at most t. */
inline std::vector<uint32_t>
ThresholdComponents(const Graph & g, double t)
{
  std::vector<std::vector<uint32_t>> adjacency(g.n);
  for (uint64_t i = 0; i < g.u.size(); ++i)
    if (g.w[i] <= t)
    {
      adjacency[g.u[i]].push_back(g.v[i]);
      adjacency[g.v[i]].push_back(g.u[i]);
    }
  std::vector<uint32_t> label(g.n, 0);
  uint32_t              next = 0;
  for (uint32_t s = 0; s < g.n; ++s)
  {
    if (label[s])
      continue;
    label[s] = ++next;
    std::vector<uint32_t> stack{ s };
    while (!stack.empty())
    {
      const uint32_t a = stack.back();
      stack.pop_back();
      for (uint32_t b : adjacency[a])
        if (!label[b])
        {
          label[b] = next;
          stack.push_back(b);
        }
    }
  }
  return label;
}

/** Trees on n vertices, shuffled vertex ids and edge order; weights from `weight(i)` for the i-th edge built. */
enum class TreeShape
{
  Random,      // vertex i joins a uniformly chosen earlier vertex
  Star,        // one centre: the dendrogram is one chain (the sorting case)
  Path,        // a path
  Caterpillar, // a path with a leaf on every vertex
  Balanced     // vertex i joins (i - 1) / 2
};

inline Graph
MakeTree(uint64_t                                n,
         TreeShape                               shape,
         std::mt19937 &                          rng,
         const std::function<double(uint64_t)> & weight,
         bool                                    shuffle = true)
{
  Graph g;
  g.n = n;
  std::vector<uint32_t> id(n);
  std::iota(id.begin(), id.end(), 0u);
  if (shuffle)
    std::shuffle(id.begin(), id.end(), rng);
  for (uint64_t i = 1; i < n; ++i)
  {
    uint64_t j = 0;
    switch (shape)
    {
      case TreeShape::Random:
        j = std::uniform_int_distribution<uint64_t>(0, i - 1)(rng);
        break;
      case TreeShape::Star:
        j = 0;
        break;
      case TreeShape::Path:
        j = i - 1;
        break;
      case TreeShape::Caterpillar:
        j = i % 2 == 0 ? i - 2 : i - 1;
        break;
      case TreeShape::Balanced:
        j = (i - 1) / 2;
        break;
    }
    g.Add(id[j], id[i], weight(i - 1));
  }
  if (shuffle)
  {
    std::vector<uint64_t> order(g.u.size());
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    Graph s;
    s.n = n;
    for (uint64_t i : order)
      s.Add(g.u[i], g.v[i], g.w[i]);
    return s;
  }
  return g;
}

/** A dendrogram's parents (0), first ends (1) or second ends (2), widened to 64 bits. */
inline std::vector<uint64_t>
WidenedIds(const itk::Dendrogram * d, int which)
{
  const auto widen = [](const auto * c) { return std::vector<uint64_t>(c->begin(), c->end()); };
  if (d->HasWideNodeIds())
    return widen(which == 0 ? d->GetWideParents() : which == 1 ? d->GetWideEdgeU() : d->GetWideEdgeV());
  return widen(which == 0 ? d->GetParents() : which == 1 ? d->GetEdgeU() : d->GetEdgeV());
}

/** Two dendrograms are the same, whatever the width of their node ids. */
inline void
ExpectSameDendrogram(const itk::Dendrogram * a, const itk::Dendrogram * b)
{
  ASSERT_EQ(a->GetNumberOfVertices(), b->GetNumberOfVertices());
  EXPECT_EQ(WidenedIds(a, 0), WidenedIds(b, 0)) << "parents";
  EXPECT_EQ(a->GetWeights()->CastToSTLConstContainer(), b->GetWeights()->CastToSTLConstContainer());
  EXPECT_EQ(a->GetEdgeIds()->CastToSTLConstContainer(), b->GetEdgeIds()->CastToSTLConstContainer());
  EXPECT_EQ(WidenedIds(a, 1), WidenedIds(b, 1)) << "first ends";
  EXPECT_EQ(WidenedIds(a, 2), WidenedIds(b, 2)) << "second ends";
}

/** Checks a dendrogram against the oracles: its tree edges are Prim's, its parents the top-down ones, and its cut at
 * every distinct weight the components of the graph's edges up to that weight. */
inline void
ExpectMatchesOracles(const itk::Dendrogram * d, const Graph & g)
{
  ASSERT_EQ(d->GetNumberOfVertices(), g.n);
  const std::vector<uint64_t> tree = PrimTree(g);
  ASSERT_EQ(tree.size() + 1, g.n) << "the test graph is connected";
  std::vector<uint32_t> U, V;
  for (uint64_t r = 0; r < tree.size(); ++r)
  {
    ASSERT_EQ(d->GetEdgeIds()->at(r), tree[r]) << "tree edge of rank " << r;
    EXPECT_EQ(d->GetWeights()->at(r), g.w[tree[r]]);
    U.push_back(g.u[tree[r]]);
    V.push_back(g.v[tree[r]]);
  }
  const std::vector<uint32_t> parents = TopDownParents(g.n, U, V);
  const std::vector<uint64_t> found   = WidenedIds(d, 0);
  for (uint64_t x = 0; x < parents.size(); ++x)
    ASSERT_EQ(found.at(x), parents[x]) << "parent of node " << x;
  std::vector<double> levels(g.w.begin(), g.w.end());
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  for (double t : levels)
  {
    const auto cut = d->ComputeClustersAtDistance(t);
    ASSERT_EQ(std::vector<uint32_t>(cut->begin(), cut->end()), ThresholdComponents(g, t)) << "cut at " << t;
  }
}

} // namespace chs_test

#endif
