// Oracles for alpha-trees, written from the definition (include/chs/AlphaTree.h) without the module's code: the
// test's own pixel graph and weights, the thresholded connected components by a plain union-find, and the structure
// every canonical alpha-tree must have.
#ifndef chsAlphaTreeOracles_h
#define chsAlphaTreeOracles_h

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>
#include <vector>

namespace chs_test
{

struct WeightedEdge
{
  uint32_t p, q;
  double   w;
};

/** The pixel graph of an image given as n x components values (x fastest): face neighbours (4 / 6) or all
 * neighbours (8 / 26); weight |a - b| for one component (exact for integers, in float for float), else the L1
 * (norm 1), L2 (2) or L-infinity (0) norm of the differences, each step rounded to float as the definition says. */
template <typename T>
std::vector<WeightedEdge>
ImageEdges(const std::vector<T> & v, int64_t nx, int64_t ny, int64_t nz, unsigned components, bool full, int norm)
{
  std::vector<WeightedEdge> edges;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
            {
              const int order = (dx != 0) + (dy != 0) + (dz != 0);
              if (order == 0 || (!full && order > 1) || (nz == 1 && dz != 0))
                continue;
              const int64_t qx = x + dx, qy = y + dy, qz = z + dz;
              if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                continue;
              const uint64_t p = uint64_t((z * ny + y) * nx + x), q = uint64_t((qz * ny + qy) * nx + qx);
              if (q < p)
                continue;
              const T a = v[p * components], b = v[q * components];
              if (components == 1)
              {
                edges.push_back({ uint32_t(p), uint32_t(q), double(a > b ? T(a - b) : T(b - a)) });
                continue;
              }
              volatile float acc = 0; // volatile: no contraction, every step rounded
              for (unsigned c = 0; c < components; ++c)
              {
                const T        ac = v[p * components + c], bc = v[q * components + c];
                const float    d  = float(ac > bc ? ac - bc : bc - ac);
                volatile float dd = d * d;
                acc               = norm == 1 ? acc + d : norm == 2 ? acc + dd : std::max(float(acc), d);
              }
              edges.push_back({ uint32_t(p), uint32_t(q), double(norm == 2 ? std::sqrt(float(acc)) : float(acc)) });
            }
  return edges;
}

/** Labels (the smallest pixel of each component) of the graph keeping the edges of weight at most alpha. */
inline std::vector<uint32_t>
ThresholdComponents(const std::vector<WeightedEdge> & edges, uint64_t n, double alpha)
{
  std::vector<uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t a)
  {
    while (parent[a] != a)
      a = parent[a] = parent[parent[a]];
    return a;
  };
  for (const auto & e : edges)
    if (e.w <= alpha)
    {
      const uint32_t a = find(e.p), b = find(e.q);
      if (a != b)
        parent[std::max(a, b)] = std::min(a, b);
    }
  std::vector<uint32_t> label(n);
  for (uint64_t i = 0; i < n; ++i)
    label[i] = find(uint32_t(i));
  return label;
}

/** Whether two labelings are the same partition. */
inline bool
SamePartition(const std::vector<uint32_t> & a, const std::vector<uint32_t> & b)
{
  if (a.size() != b.size())
    return false;
  std::map<uint32_t, uint32_t> ab, ba;
  for (size_t i = 0; i < a.size(); ++i)
  {
    if (ab.emplace(a[i], b[i]).first->second != b[i] || ba.emplace(b[i], a[i]).first->second != a[i])
      return false;
  }
  return true;
}

/** The structure every tree of the definition has: n leaves, parents after children, one root (the last node),
 * internal levels above their internal children's, at least two children per internal node, internal nodes in
 * (level, smallest pixel) order. */
inline void
ExpectCanonicalStructure(const std::vector<uint32_t> & parent, const std::vector<double> & level, uint64_t n)
{
  const uint64_t total = parent.size();
  ASSERT_EQ(level.size(), total);
  ASSERT_GE(total, n);
  ASSERT_EQ(parent[total - 1], total - 1) << "the last node is the root";
  std::vector<uint32_t> children(total, 0), smallest(total, UINT32_MAX);
  for (uint64_t x = 0; x + 1 < total; ++x)
  {
    ASSERT_GT(parent[x], x) << "node " << x;
    ASSERT_LT(parent[x], total);
    ASSERT_GE(parent[x], n) << "a leaf is nobody's parent";
    ++children[parent[x]];
    if (x >= n)
      EXPECT_LT(level[x], level[parent[x]]) << "node " << x << " has its parent's level";
    else
      EXPECT_EQ(level[x], 0.0);
    smallest[x]         = x < n ? uint32_t(x) : smallest[x];
    smallest[parent[x]] = std::min(smallest[parent[x]], smallest[x]);
  }
  for (uint64_t x = n; x < total; ++x)
    EXPECT_GE(children[x], 2u) << "internal node " << x;
  for (uint64_t x = n + 1; x < total; ++x)
    EXPECT_TRUE(level[x - 1] < level[x] || (level[x - 1] == level[x] && smallest[x - 1] < smallest[x]))
      << "nodes " << x - 1 << " and " << x << " are not in (level, smallest pixel) order";
}

/** For every level of the tree (and below the first), the partition into the tree's alpha-components equals the
 * thresholded connected components of the graph. */
inline void
ExpectAlphaPartitions(const std::vector<uint32_t> &     parent,
                      const std::vector<double> &       level,
                      uint64_t                          n,
                      const std::vector<WeightedEdge> & edges)
{
  std::set<double> alphas(level.begin() + n, level.end());
  alphas.insert(0.0);
  for (const auto & e : edges)
    alphas.insert(e.w);
  for (double alpha : alphas)
  {
    std::vector<uint32_t> label(n);
    for (uint64_t p = 0; p < n; ++p)
    {
      uint32_t x = uint32_t(p);
      while (parent[x] != x && level[parent[x]] <= alpha)
        x = parent[x];
      label[p] = x;
    }
    EXPECT_TRUE(SamePartition(label, ThresholdComponents(edges, n, alpha))) << "alpha " << alpha;
  }
}

} // namespace chs_test

#endif
