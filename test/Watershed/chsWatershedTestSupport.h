// Tests of the watershed and waterfall backends (include/chs/Watershed.h): the CPU reference against oracles
// independent of both backends (the paper's worked 1D examples, a 6x2 image worked out by hand, brute-force
// steepest descent on images without plateaux, regional minima counted by flood fill, a waterfall worked out by
// hand, the hierarchy's properties), the CUDA backend against the CPU reference on many images, every algorithm,
// plateau resolution, connectivity, several pixel and label types, block shapes and repeated runs; bad input.
// What the watershed and waterfall tests share: oracles, inputs, helpers.
#ifndef chsWatershedTestSupport_h
#define chsWatershedTestSupport_h

#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "Watershed/chsWatershedBackends.h"
#include "Common/chsTestImages.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

namespace
{

chs::Grid
MakeGrid(uint64_t nx, uint64_t ny, uint64_t nz = 1)
{
  chs::Grid g;
  g.size[0]   = nx;
  g.size[1]   = ny;
  g.size[2]   = nz;
  g.dimension = nz > 1 ? 3 : 2;
  return g;
}

template <typename T>
std::vector<uint32_t>
CPU(const std::vector<T> &           image,
    const chs::Grid &                grid,
    const chs::WatershedParameters & p     = {},
    uint64_t *                       count = nullptr)
{
  std::vector<uint32_t> labels(image.size(), 12345);
  const auto            r = chs::WatershedCPU(image.data(), grid, p, labels.data());
  if (count)
    *count = r.basinCount;
  return labels;
}

template <typename T>
std::vector<uint32_t>
GPU(const std::vector<T> &           image,
    const chs::Grid &                grid,
    const chs::WatershedParameters & p     = {},
    uint64_t *                       count = nullptr)
{
  std::vector<uint32_t> labels(image.size(), 12345);
  const auto            r = chs::WatershedCUDA(image.data(), grid, p, labels.data(), chs::ExecutionContext{});
  if (count)
    *count = r.basinCount;
  return labels;
}

/** The neighbours of p, for the oracles (written again here, not shared with the backends). */
std::vector<uint64_t>
Neighbours(const chs::Grid & g, uint64_t p, bool full)
{
  std::vector<uint64_t> out;
  const int64_t         nx = g.size[0], ny = g.size[1], nz = g.size[2];
  const int64_t         x = p % nx, y = p / nx % ny, z = p / (nx * ny);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int m = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if (m == 0 || (!full && m > 1))
          continue;
        const int64_t a = x + dx, b = y + dy, c = z + dz;
        if (a >= 0 && b >= 0 && c >= 0 && a < nx && b < ny && c < nz)
          out.push_back(uint64_t(a + nx * (b + ny * c)));
      }
  return out;
}

/** Renumbers labels 1, 2, ... by first occurrence. */
std::vector<uint32_t>
ByFirstPixel(const std::vector<uint64_t> & id)
{
  std::map<uint64_t, uint32_t> number;
  std::vector<uint32_t>        out(id.size());
  for (size_t i = 0; i < id.size(); ++i)
  {
    auto it = number.find(id[i]);
    if (it == number.end())
      it = number.emplace(id[i], uint32_t(number.size() + 1)).first;
    out[i] = it->second;
  }
  return out;
}

/** Plateau of every pixel (flood fill) and whether it is a minimal plateau (no pixel with a lower neighbour). */
template <typename T>
void
Plateaus(const std::vector<T> &  I,
         const chs::Grid &       g,
         bool                    full,
         std::vector<uint64_t> & plateau,
         std::vector<bool> &     minimal)
{
  const uint64_t n = I.size();
  plateau.assign(n, ~uint64_t(0));
  std::vector<bool>     isMin;
  std::vector<uint64_t> stack;
  for (uint64_t s = 0; s < n; ++s)
  {
    if (plateau[s] != ~uint64_t(0))
      continue;
    const uint64_t id     = isMin.size();
    bool           lowest = true;
    plateau[s]            = id;
    stack.push_back(s);
    while (!stack.empty())
    {
      const uint64_t p = stack.back();
      stack.pop_back();
      for (uint64_t q : Neighbours(g, p, full))
      {
        if (I[q] < I[p])
          lowest = false;
        if (I[q] == I[p] && plateau[q] == ~uint64_t(0))
        {
          plateau[q] = id;
          stack.push_back(q);
        }
      }
    }
    isMin.push_back(lowest);
  }
  minimal.resize(n);
  for (uint64_t p = 0; p < n; ++p)
    minimal[p] = isMin[plateau[p]];
}

template <typename T>
uint64_t
CountRegionalMinima(const std::vector<T> & I, const chs::Grid & g, bool full)
{
  std::vector<uint64_t> plateau;
  std::vector<bool>     minimal;
  Plateaus(I, g, full, plateau, minimal);
  std::vector<uint64_t> ids;
  for (uint64_t p = 0; p < I.size(); ++p)
    if (minimal[p])
      ids.push_back(plateau[p]);
  std::sort(ids.begin(), ids.end());
  return uint64_t(std::unique(ids.begin(), ids.end()) - ids.begin());
}

/** Brute-force steepest descent for images whose neighbouring pixels all differ: follow the lowest neighbour down
 * to a local minimum. */
template <typename T>
std::vector<uint32_t>
SteepestDescent(const std::vector<T> & I, const chs::Grid & g, bool full)
{
  std::vector<uint64_t> end(I.size());
  for (uint64_t p = 0; p < I.size(); ++p)
  {
    uint64_t a = p;
    for (;;)
    {
      uint64_t low = a;
      for (uint64_t q : Neighbours(g, a, full))
        if (I[q] < I[low])
          low = q;
      if (low == a)
        break;
      a = low;
    }
    end[p] = a;
  }
  return ByFirstPixel(end);
}

template <typename T>
std::vector<T>
Noise(uint64_t n, unsigned seed, double lo, double hi)
{
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T>                         v(n);
  for (auto & x : v)
    x = static_cast<T>(u(rng));
  return v;
}

/** Box-smoothed noise (3 passes of a 3-wide box along each axis), quantised to `levels` values when non-zero. */
template <typename T>
std::vector<T>
SmoothNoise(const chs::Grid & g, unsigned seed, int levels, double scale)
{
  const uint64_t      nx = g.size[0], ny = g.size[1], nz = g.size[2], n = nx * ny * nz;
  std::vector<double> a         = Noise<double>(n, seed, 0.0, 1.0), b(n);
  const uint64_t      stride[3] = { 1, nx, nx * ny }, extent[3] = { nx, ny, nz };
  for (int pass = 0; pass < 3; ++pass)
    for (int d = 0; d < int(g.dimension); ++d)
    {
      for (uint64_t p = 0; p < n; ++p)
      {
        const uint64_t c = p / stride[d] % extent[d];
        double         s = a[p], w = 1;
        if (c > 0)
          s += a[p - stride[d]], ++w;
        if (c + 1 < extent[d])
          s += a[p + stride[d]], ++w;
        b[p] = s / w;
      }
      a.swap(b);
    }
  double         lo = *std::min_element(a.begin(), a.end()), hi = *std::max_element(a.begin(), a.end());
  std::vector<T> out(n);
  for (uint64_t p = 0; p < n; ++p)
  {
    const double t = (a[p] - lo) / (hi - lo + 1e-12);
    out[p]         = levels ? static_cast<T>(std::floor(t * (levels - 1) + 0.5) * scale) : static_cast<T>(t * scale);
  }
  return out;
}

chs::WatershedParameters
Params(bool                    full,
       chs::WatershedAlgorithm a = chs::WatershedAlgorithm::PRUF,
       chs::PlateauResolution  r = chs::PlateauResolution::Balanced)
{
  chs::WatershedParameters p;
  p.fullyConnected = full;
  p.algorithm      = a;
  p.plateaus       = r;
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// The CPU reference against oracles.

// The waterfall.

template <typename T>
chs::WaterfallResult
Waterfall(bool                                 gpu,
          const std::vector<T> &               I,
          const chs::Grid &                    g,
          const chs::WaterfallParameters &     p,
          std::vector<std::vector<uint32_t>> & levels)
{
  levels.clear();
  const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned level, uint64_t)
  {
    EXPECT_EQ(level, levels.size());
    levels.emplace_back(I.size(), 0);
    return levels.back().data();
  };
  return gpu ? chs::WaterfallCUDA(I.data(), g, p, sink, chs::ExecutionContext{})
             : chs::WaterfallCPU(I.data(), g, p, sink);
}

/** The hierarchy's properties: level 0 is the watershed, every level's regions are unions of the previous level's
 * (the parents say which), counts fall, labels are by first pixel, the last level is one region. */
template <typename T>
void
CheckHierarchy(const std::vector<T> &                     I,
               const chs::Grid &                          g,
               const chs::WaterfallParameters &           p,
               const chs::WaterfallResult &               r,
               const std::vector<std::vector<uint32_t>> & levels,
               bool                                       complete)
{
  ASSERT_EQ(levels.size(), r.regionCounts.size());
  ASSERT_EQ(r.parents.size() + 1, levels.size());
  EXPECT_EQ(levels[0], CPU(I, g, p.watershed));
  for (size_t k = 0; k < levels.size(); ++k)
  {
    EXPECT_EQ(*std::max_element(levels[k].begin(), levels[k].end()), r.regionCounts[k]);
    uint32_t seen = 0;
    for (uint32_t l : levels[k])
    {
      ASSERT_LE(l, seen + 1);
      seen = std::max(seen, l);
    }
    if (k == 0)
      continue;
    EXPECT_LT(r.regionCounts[k], r.regionCounts[k - 1]);
    ASSERT_EQ(r.parents[k - 1].size(), r.regionCounts[k - 1]);
    for (size_t i = 0; i < I.size(); ++i)
      ASSERT_EQ(levels[k][i], r.parents[k - 1][levels[k - 1][i] - 1]) << "level " << k << " pixel " << i;
  }
  if (complete)
    EXPECT_EQ(r.regionCounts.back(), 1u);
}

// ---------------------------------------------------------------------------------------------------------------
// The CUDA backend against the CPU reference.

struct Input
{
  const char *       name;
  chs::Grid          grid;
  std::vector<float> f;
};

std::vector<Input>
Inputs()
{
  std::vector<Input> in;
  for (const auto & g : { MakeGrid(97, 61), MakeGrid(256, 128), MakeGrid(33, 29, 17) })
  {
    in.push_back({ "noise", g, Noise<float>(g.NumberOfVoxels(), 3, 0, 255) });
    in.push_back({ "smooth", g, SmoothNoise<float>(g, 4, 0, 1000.0) });
    in.push_back({ "quantised", g, SmoothNoise<float>(g, 5, 6, 1.0) });
    std::vector<float> checker(g.NumberOfVoxels()), ramp(g.NumberOfVoxels());
    for (uint64_t p = 0; p < checker.size(); ++p)
    {
      const uint64_t x = p % g.size[0], y = p / g.size[0] % g.size[1], z = p / (g.size[0] * g.size[1]);
      checker[p] = float((x + y + z) % 2);
      ramp[p]    = float(x + 2 * y + 3 * z);
    }
    in.push_back({ "checkerboard", g, checker });
    in.push_back({ "ramp", g, ramp });
    in.push_back({ "constant", g, std::vector<float>(g.NumberOfVoxels(), 4.0f) });
  }
  // The paper's worst case: one long non-minimal plateau.
  std::vector<float> line(4098, 89.0f);
  line.front() = 75;
  line.back()  = 81;
  in.push_back({ "long plateau", MakeGrid(4098, 1), line });
  std::vector<float> band(300 * 40, 89.0f);
  for (int y = 0; y < 40; ++y)
  {
    band[300 * y]       = 75;
    band[300 * y + 299] = 81;
  }
  in.push_back({ "long plateau band", MakeGrid(300, 40), band });
  return in;
}

template <typename T>
std::vector<T>
Cast(const std::vector<float> & f)
{
  std::vector<T> out(f.size());
  for (size_t i = 0; i < f.size(); ++i)
    out[i] = static_cast<T>(f[i]);
  return out;
}

/** Sets the transfer overlap and the staging's shape for a scope, and restores the defaults. */
struct TransferScope
{
  TransferScope(bool overlap, uint64_t chunk, unsigned slots, unsigned workers)
  {
    chs::testing::SetTransferOverlap(overlap);
    chs::testing::SetHostStaging(chunk, slots, workers, false);
  }
  ~TransferScope()
  {
    chs::testing::SetTransferOverlap(true);
    chs::testing::SetHostStaging(0, 0, 0, false);
  }
  TransferScope(const TransferScope &) = delete;
  TransferScope &
  operator=(const TransferScope &) = delete;
};

/** Sets where the CUDA waterfall runs its levels for one scope (chs::testing::SetWaterfallLevelPath). */
struct LevelPathScope
{
  explicit LevelPathScope(int path) { chs::testing::SetWaterfallLevelPath(path); }
  ~LevelPathScope() { chs::testing::SetWaterfallLevelPath(0); }
};

/** The region graph's edges, counted here from level 0's labels: for each voxel, the other regions among its forward
 * neighbours (after it in raster order). */
uint64_t
RegionGraphEdges(const std::vector<uint32_t> & label, const chs::Grid & g, bool full)
{
  const int64_t nx = int64_t(g.size[0]), ny = int64_t(g.size[1]), nz = int64_t(g.size[2]);
  uint64_t      edges = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
      {
        const uint32_t        l = label[uint64_t(x + nx * (y + ny * z))];
        std::vector<uint32_t> others;
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
            {
              const bool forward = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
              const int  steps   = std::abs(dx) + std::abs(dy) + std::abs(dz);
              if (!forward || (!full && steps != 1) || (g.dimension == 2 && dz != 0))
                continue;
              const int64_t qx = x + dx, qy = y + dy, qz = z + dz;
              if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                continue;
              const uint32_t lq = label[uint64_t(qx + nx * (qy + ny * qz))];
              if (lq != l && std::find(others.begin(), others.end(), lq) == others.end())
                others.push_back(lq);
            }
        edges += others.size();
      }
  return edges;
}

} // namespace

namespace
{
/** The large tests' volume: waves of several periods plus hashed noise of 12 levels (basins of all sizes and
 * plateaux), 8-bit. */
std::vector<uint8_t>
LargeVolume(const chs::Grid & g)
{
  const uint64_t       n = g.NumberOfVoxels(), nx = g.size[0], ny = g.size[1];
  std::vector<uint8_t> I(n);
  chs_test::ParallelRange(n,
                          [&](uint64_t a, uint64_t b)
                          {
                            for (uint64_t p = a; p < b; ++p)
                            {
                              const uint64_t x = p % nx, y = p / nx % ny, z = p / (nx * ny);
                              uint64_t       h = p * 0x9E3779B97F4A7C15ull;
                              h ^= h >> 31;
                              const double w = 100 + 40 * std::sin(x * 0.05) * std::cos(y * 0.037) +
                                               30 * std::sin(z * 0.09 + x * 0.011);
                              I[p] = uint8_t(w + double(h % 12));
                            }
                          });
  return I;
}
} // namespace

#endif
