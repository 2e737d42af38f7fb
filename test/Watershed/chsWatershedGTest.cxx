// Tests of the watershed and waterfall backends (include/chsWatershed.h): the CPU reference against oracles
// independent of both backends (the paper's worked 1D examples, a 6x2 image worked out by hand, brute-force
// steepest descent on images without plateaux, regional minima counted by flood fill, a waterfall worked out by
// hand, the hierarchy's properties), the CUDA backend against the CPU reference on many images, every algorithm,
// plateau resolution, connectivity, several pixel and label types, block shapes and repeated runs; bad input.
#include "chsConnectedComponents.h"
#include "chsWatershed.h"
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

TEST(WatershedReference, PaperFourteenPixelExample)
{
  // Section 3.4: 75 89 ... 89 81; the balanced resolution ends with distances 0 1 2 3 4 5 5 4 3 2 1 0 on the
  // plateau, so pixels 0..6 drain left and 7..13 right.
  const std::vector<uint8_t> I     = { 75, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 89, 81 };
  const chs::Grid            g     = MakeGrid(14, 1);
  uint64_t                   count = 0;
  EXPECT_EQ(CPU(I, g, {}, &count), (std::vector<uint32_t>{ 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2 }));
  EXPECT_EQ(count, 2u);
  auto withLines      = Params(false);
  withLines.markLines = true;
  // The pair (6, 7) has equal values: the later pixel, 7, is the line.
  EXPECT_EQ(CPU(I, g, withLines), (std::vector<uint32_t>{ 1, 1, 1, 1, 1, 1, 1, 0, 2, 2, 2, 2, 2, 2 }));
}

TEST(WatershedReference, PaperLongPlateauExample)
{
  // Section 3.3: 75, then 2n pixels of 89, then 81: the plateau splits in its middle, n + 1 pixels to each side.
  for (int n : { 1, 2, 5, 50, 301 })
  {
    std::vector<uint8_t> I(2 * n + 2, 89);
    I.front() = 75;
    I.back()  = 81;
    std::vector<uint32_t> expected(2 * n + 2, 2);
    std::fill(expected.begin(), expected.begin() + n + 1, 1u);
    EXPECT_EQ(CPU(I, MakeGrid(I.size(), 1)), expected) << "n = " << n;
    // The same along y and z.
    EXPECT_EQ(CPU(I, MakeGrid(1, I.size())), expected) << "n = " << n;
    EXPECT_EQ(CPU(I, MakeGrid(1, 1, I.size())), expected) << "n = " << n;
  }
}

TEST(WatershedReference, SixByTwoImageWorkedByHand)
{
  // A minimal plateau of value 1 with two state-3 pixels (2 and 7) that step IV must merge, a non-minimal plateau of
  // value 3 whose inner pixel (4) has distance 1 and points to pixel 10, and a ridge of 9s split between the basins.
  const std::vector<int16_t> I     = { 5, 1, 1, 9, 3, 3, //
                                       1, 1, 7, 9, 3, 2 };
  const chs::Grid            g     = MakeGrid(6, 2);
  uint64_t                   count = 0;
  EXPECT_EQ(CPU(I, g, {}, &count), (std::vector<uint32_t>{ 1, 1, 1, 1, 2, 2, 1, 1, 1, 2, 2, 2 }));
  EXPECT_EQ(count, 2u);
  auto withLines      = Params(false);
  withLines.markLines = true;
  EXPECT_EQ(CPU(I, g, withLines), (std::vector<uint32_t>{ 1, 1, 1, 0, 2, 2, 1, 1, 1, 0, 2, 2 }));
}

TEST(WatershedReference, SteepestDescentWithoutPlateaus)
{
  // A random permutation: no two pixels are equal, so the watershed is plain steepest descent.
  for (const auto & g : { MakeGrid(37, 23), MakeGrid(9, 11, 7) })
    for (bool full : { false, true })
    {
      std::vector<int32_t> I(g.NumberOfVoxels());
      for (size_t i = 0; i < I.size(); ++i)
        I[i] = int32_t(i) - 100;
      std::shuffle(I.begin(), I.end(), std::mt19937(g.size[2] * 7 + full));
      uint64_t count = 0;
      EXPECT_EQ(CPU(I, g, Params(full), &count), SteepestDescent(I, g, full));
      EXPECT_EQ(count, CountRegionalMinima(I, g, full));
    }
}

TEST(WatershedReference, OneBasinPerRegionalMinimum)
{
  for (const auto & g : { MakeGrid(40, 31), MakeGrid(13, 10, 9) })
    for (bool full : { false, true })
      for (int levels : { 3, 8, 0 })
      {
        const auto I      = SmoothNoise<float>(g, 11 + levels, levels, 1.0);
        uint64_t   count  = 0;
        const auto labels = CPU(I, g, Params(full), &count);
        EXPECT_EQ(count, CountRegionalMinima(I, g, full));
        EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), count);
        // Labels by first pixel: each label's first pixel comes after the previous label's.
        uint32_t seen = 0;
        for (uint32_t l : labels)
        {
          ASSERT_LE(l, seen + 1);
          seen = std::max(seen, l);
        }
        // Every minimal plateau lies in one basin, and different ones in different basins.
        std::vector<uint64_t> plateau;
        std::vector<bool>     minimal;
        Plateaus(I, g, full, plateau, minimal);
        std::map<uint64_t, uint32_t> basinOf;
        std::map<uint32_t, uint64_t> plateauOf;
        for (uint64_t p = 0; p < I.size(); ++p)
          if (minimal[p])
          {
            EXPECT_EQ(basinOf.emplace(plateau[p], labels[p]).first->second, labels[p]);
            EXPECT_EQ(plateauOf.emplace(labels[p], plateau[p]).first->second, plateau[p]);
          }
      }
}

TEST(WatershedReference, ConstantRampAndSinglePixel)
{
  uint64_t count = 0;
  EXPECT_EQ(CPU(std::vector<float>(35, 2.5f), MakeGrid(7, 5), {}, &count), std::vector<uint32_t>(35, 1));
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(CPU(std::vector<uint8_t>{ 9 }, MakeGrid(1, 1), {}, &count), std::vector<uint32_t>{ 1 });
  std::vector<double> ramp(6 * 4);
  for (int i = 0; i < 24; ++i)
    ramp[i] = (i % 6) * 0.5 + (i / 6);
  EXPECT_EQ(CPU(ramp, MakeGrid(6, 4), Params(true), &count), std::vector<uint32_t>(24, 1));
}

TEST(WatershedReference, SignedAndFloatingPointOrder)
{
  // Negative values, -0 against +0, and the extremes of each type order as numbers.
  const std::vector<double> d = { 3, -0.0, 0.0, 7, -1e300, 5, std::numeric_limits<double>::infinity(), 2 };
  const std::vector<int8_t> c = { 3, -128, 0, 7, -100, 5, 127, 2 };
  const chs::Grid           g = MakeGrid(8, 1);
  EXPECT_EQ(CPU(d, g), (std::vector<uint32_t>{ 1, 1, 1, 2, 2, 2, 3, 3 }));
  EXPECT_EQ(CPU(c, g), (std::vector<uint32_t>{ 1, 1, 1, 2, 2, 2, 3, 3 }));
}

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

TEST(WaterfallReference, OneDimensionalExampleWorkedByHand)
{
  // Basins A {0,1} B {2,3} C {4} D {5,6} E {7,8}; passes A|B 5, B|C 3, C|D 9, D|E 1; lowest passes A 5, B 3, C 3,
  // D 1, E 1: level 1 joins A, B, C and D, E; level 2 joins the two across 9.
  const std::vector<uint8_t>         I = { 0, 5, 1, 3, 2, 9, 0, 1, 0 };
  std::vector<std::vector<uint32_t>> levels;
  const auto                         r = Waterfall(false, I, MakeGrid(9, 1), {}, levels);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_EQ(levels[0], (std::vector<uint32_t>{ 1, 1, 2, 2, 3, 4, 4, 5, 5 }));
  EXPECT_EQ(levels[1], (std::vector<uint32_t>{ 1, 1, 1, 1, 1, 2, 2, 2, 2 }));
  EXPECT_EQ(levels[2], std::vector<uint32_t>(9, 1));
  EXPECT_EQ(r.regionCounts, (std::vector<uint64_t>{ 5, 2, 1 }));
  ASSERT_EQ(r.parents.size(), 2u);
  EXPECT_EQ(r.parents[0], (std::vector<uint32_t>{ 1, 1, 1, 2, 2 }));
  EXPECT_EQ(r.parents[1], (std::vector<uint32_t>{ 1, 1 }));
}

TEST(WaterfallReference, RaisedBasinJoinsEveryNeighbourAtItsPass)
{
  // Basins D {0,1} B {2,3} A {4..8} C {9,10} E {11,12}, lowest passes 3 3 6 3 3. Raised to its pass, A would be a
  // plateau that a second pixel watershed splits between B and C (docs/watershed.md); here it joins both.
  const std::vector<uint8_t>         I = { 0, 3, 1, 6, 2, 2, 2, 2, 2, 6, 1, 3, 0 };
  std::vector<std::vector<uint32_t>> levels;
  const auto                         r = Waterfall(false, I, MakeGrid(13, 1), {}, levels);
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0], (std::vector<uint32_t>{ 1, 1, 2, 2, 3, 3, 3, 3, 3, 4, 4, 5, 5 }));
  EXPECT_EQ(levels[1], std::vector<uint32_t>(13, 1));
  EXPECT_EQ(r.parents[0], (std::vector<uint32_t>{ 1, 1, 1, 1, 1 }));
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

TEST(WaterfallReference, NestedLevelsDownToOneRegion)
{
  for (const auto & g : { MakeGrid(64, 48), MakeGrid(16, 12, 10) })
    for (bool full : { false, true })
    {
      const auto               I = SmoothNoise<float>(g, 5, 0, 1.0);
      chs::WaterfallParameters p;
      p.watershed.fullyConnected = full;
      std::vector<std::vector<uint32_t>> levels;
      const auto                         r = Waterfall(false, I, g, p, levels);
      CheckHierarchy(I, g, p, r, levels, true);
      EXPECT_GE(levels.size(), 3u);
      // A limited number of levels gives the first levels of the full hierarchy.
      p.numberOfLevels = 2;
      std::vector<std::vector<uint32_t>> two;
      Waterfall(false, I, g, p, two);
      ASSERT_EQ(two.size(), 2u);
      EXPECT_EQ(two[1], levels[1]);
    }
}

TEST(WatershedReference, BadInput)
{
  std::vector<float>    I(12, 1.0f);
  std::vector<uint32_t> L(12, 7);
  I[7] = std::nanf("");
  EXPECT_THROW(chs::WatershedCPU(I.data(), MakeGrid(4, 3), {}, L.data()), std::invalid_argument);
  EXPECT_EQ(L, std::vector<uint32_t>(12, 7)) << "nothing is written on failure";
  I[7] = 1.0f;
  EXPECT_THROW(chs::WatershedCPU(I.data(), MakeGrid(0, 3), {}, L.data()), std::invalid_argument);
  chs::WatershedParameters p;
  p.reductionRate = 0;
  EXPECT_THROW(chs::WatershedCPU(I.data(), MakeGrid(4, 3), p, L.data()), std::invalid_argument);
  p              = {};
  p.blockSize[0] = 64;
  p.blockSize[1] = 32;
  p.blockSize[2] = 1;
  EXPECT_THROW(chs::WatershedCPU(I.data(), MakeGrid(4, 3), p, L.data()), std::invalid_argument);
  // More basins than 8-bit labels hold: a checkerboard of 600 pixels has 300 minima.
  std::vector<uint8_t> board(600);
  for (int i = 0; i < 600; ++i)
    board[i] = uint8_t(((i % 30) + (i / 30)) % 2);
  std::vector<uint8_t> small(600, 7);
  EXPECT_THROW(chs::WatershedCPU(board.data(), MakeGrid(30, 20), {}, small.data()), std::invalid_argument);
  EXPECT_EQ(small, std::vector<uint8_t>(600, 7));
  chs::WaterfallParameters wp;
  wp.watershed.markLines                       = true;
  const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned, uint64_t) { return L.data(); };
  EXPECT_THROW(chs::WaterfallCPU(I.data(), MakeGrid(4, 3), wp, sink), std::invalid_argument);
  // Every run stops at 2^32 voxels along an axis; the check comes before the image is read.
  const chs::Grid huge = MakeGrid(uint64_t(1) << 32, 1);
  EXPECT_THROW((chs::MarkerWatershedCPU<float, uint32_t>(I.data(), nullptr, nullptr, huge, {}, L.data())),
               std::invalid_argument);
  EXPECT_THROW(chs::WatershedCPU(I.data(), MakeGrid(uint64_t(1) << 32, 1), {}, L.data()), std::invalid_argument);
  EXPECT_THROW(chs::WaterfallCPU(I.data(), MakeGrid(uint64_t(1) << 32, 1), {}, sink), std::invalid_argument);
  EXPECT_EQ(L, std::vector<uint32_t>(12, 7));
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

TEST(WatershedCUDA, EqualsReference)
{
  CHS_REQUIRE_GPU();
  for (const auto & in : Inputs())
    for (bool full : { false, true })
    {
      const auto expected = CPU(in.f, in.grid, Params(full));
      for (auto a : { chs::WatershedAlgorithm::PRUF, chs::WatershedAlgorithm::APRUF, chs::WatershedAlgorithm::PRW })
        for (auto r : { chs::PlateauResolution::Balanced, chs::PlateauResolution::Synchronous })
        {
          uint64_t count = 0;
          EXPECT_EQ(GPU(in.f, in.grid, Params(full, a, r), &count), expected)
            << in.name << " " << in.grid.size[0] << "x" << in.grid.size[1] << "x" << in.grid.size[2] << " full " << full
            << " algorithm " << int(a) << " resolution " << int(r);
          EXPECT_EQ(count, *std::max_element(expected.begin(), expected.end()));
        }
    }
}

/** The 64-bit path (voxel indices and labels of 64 bits on the device, the CPU reference's basins numbered in 64 bits),
 * forced on small images: the same labels and counts as the 32-bit path and the reference, for every input,
 * connectivity, algorithm and plateau resolution, with and without watershed lines, into 8- to 64-bit labels. */
TEST(WatershedCUDA, WideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  for (const auto & in : Inputs())
    for (bool full : { false, true })
      for (bool lines : { false, true })
      {
        auto p                 = Params(full);
        p.markLines            = lines;
        uint64_t   narrowCount = 0, wideCount = 0;
        const auto expected = CPU(in.f, in.grid, p, &narrowCount);
        auto       wide     = p;
        wide.forceWideIndex = true;
        EXPECT_EQ(CPU(in.f, in.grid, wide, &wideCount), expected) << in.name << " full " << full << " lines " << lines;
        EXPECT_EQ(wideCount, narrowCount) << in.name;
        for (auto a : { chs::WatershedAlgorithm::PRUF, chs::WatershedAlgorithm::APRUF, chs::WatershedAlgorithm::PRW })
          for (auto r : { chs::PlateauResolution::Balanced,
                          chs::PlateauResolution::Synchronous,
                          chs::PlateauResolution::BlockAsynchronous })
          {
            auto q           = Params(full, a, r);
            q.markLines      = lines;
            auto w           = q;
            w.forceWideIndex = true;
            uint64_t count   = 0;
            // The asynchronous resolution's own result (the same minima, another split of non-minimal plateaux) is
            // compared with its 32-bit run; the others with the reference.
            const auto narrow = r == chs::PlateauResolution::BlockAsynchronous ? GPU(in.f, in.grid, q) : expected;
            EXPECT_EQ(GPU(in.f, in.grid, w, &count), narrow)
              << in.name << " " << in.grid.size[0] << "x" << in.grid.size[1] << "x" << in.grid.size[2] << " full "
              << full << " lines " << lines << " algorithm " << int(a) << " resolution " << int(r);
            EXPECT_EQ(count, narrowCount) << in.name;
          }
      }
  // Every label type from the 64-bit path, and a 64-bit pixel type.
  const chs::Grid g        = MakeGrid(70, 45, 3);
  const auto      f        = SmoothNoise<float>(g, 9, 40, 1.0);
  auto            p        = Params(true);
  const auto      expected = CPU(f, g, p);
  p.forceWideIndex         = true;
  std::vector<uint64_t> l64(f.size());
  std::vector<uint16_t> l16(f.size());
  std::vector<uint8_t>  l8(f.size());
  chs::WatershedCUDA(f.data(), g, p, l64.data(), chs::ExecutionContext{});
  chs::WatershedCUDA(f.data(), g, p, l16.data(), chs::ExecutionContext{});
  EXPECT_TRUE(std::equal(l64.begin(), l64.end(), expected.begin()));
  EXPECT_TRUE(std::equal(l16.begin(), l16.end(), expected.begin()));
  EXPECT_EQ(GPU(Cast<double>(f), g, p), expected);
  if (*std::max_element(expected.begin(), expected.end()) <= 255)
  {
    chs::WatershedCUDA(f.data(), g, p, l8.data(), chs::ExecutionContext{});
    EXPECT_TRUE(std::equal(l8.begin(), l8.end(), expected.begin()));
  }
}

/** The path reductions, unions and numbering in cubes of 64^3 voxels (forced for every size; by default only volumes of
 * 64 slices of 2^18 voxels or more take them): the reference's labels and counts for every input, algorithm and
 * connectivity on both index widths, and a volume whose cubes the image's edges cut along every axis. */
TEST(WatershedCUDA, CubeVoxelOrderEqualsReference)
{
  CHS_REQUIRE_GPU();
  const chs_test::VoxelOrderScope cubes(2);
  auto                            inputs = Inputs();
  const chs::Grid                 g      = MakeGrid(70, 66, 65);
  inputs.push_back({ "smooth, cubes cut by the edges", g, SmoothNoise<float>(g, 4, 0, 1000.0) });
  inputs.push_back({ "quantised, cubes cut by the edges", g, SmoothNoise<float>(g, 5, 6, 1.0) });
  for (const auto & in : inputs)
    for (bool full : { false, true })
    {
      uint64_t   expectedCount = 0;
      const auto expected      = CPU(in.f, in.grid, Params(full), &expectedCount);
      for (auto a : { chs::WatershedAlgorithm::PRUF, chs::WatershedAlgorithm::APRUF, chs::WatershedAlgorithm::PRW })
        for (bool wide : { false, true })
        {
          auto p           = Params(full, a, chs::PlateauResolution::Balanced);
          p.forceWideIndex = wide;
          uint64_t count   = 0;
          EXPECT_EQ(GPU(in.f, in.grid, p, &count), expected)
            << in.name << " " << in.grid.size[0] << "x" << in.grid.size[1] << "x" << in.grid.size[2] << " full " << full
            << " algorithm " << int(a) << " wide " << wide;
          EXPECT_EQ(count, expectedCount) << in.name;
        }
    }
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

// Transfers overlapped with kernels (testing::SetTransferOverlap): step I and the tile shortcuts run on the rows or
// slices that have arrived while the rest is uploaded, and the labels are numbered a range at a time ahead of each
// range's download. Labels and counts equal the CPU reference's with the overlap on and off, through the staged
// transfers (images above 4 MiB; the default staging, and chunks of 64 KiB that end inside rows) and the direct ones
// (an image below 4 MiB), for images without plateaus (the early steps stand), with them (step I runs again), 2D
// and 3D, 32- and 64-bit labels (the latter widened on the host), and a NaN found while the image arrives.
TEST(WatershedCUDA, OverlappedTransfersEqualReference)
{
  CHS_REQUIRE_GPU();
  struct Case
  {
    std::string        name;
    chs::Grid          grid;
    std::vector<float> f;
  };
  std::vector<Case> cases;
  const chs::Grid   g2 = MakeGrid(1100, 1003); // 4.4 MB of floats, two ranges of labels
  cases.push_back({ "2D smooth", g2, SmoothNoise<float>(g2, 4, 0, 1000.0) });
  cases.push_back({ "2D quantised", g2, SmoothNoise<float>(g2, 5, 6, 1.0) });
  const chs::Grid g3 = MakeGrid(150, 130, 70); // raster order: slices of fewer than 2^18 voxels
  cases.push_back({ "3D smooth", g3, SmoothNoise<float>(g3, 7, 0, 1000.0) });
  cases.push_back({ "3D quantised", g3, SmoothNoise<float>(g3, 8, 9, 1.0) });
  const chs::Grid small = MakeGrid(300, 211);
  cases.push_back({ "2D below the staging's minimum", small, SmoothNoise<float>(small, 9, 0, 1000.0) });
  const chs::Grid g8 = MakeGrid(2100, 2050);
  const auto      u8 = SmoothNoise<uint8_t>(g8, 10, 5, 1.0);
  for (bool full : { false, true })
  {
    std::vector<std::vector<uint32_t>> expected;
    std::vector<uint64_t>              expectedCount(cases.size());
    for (size_t c = 0; c < cases.size(); ++c)
      expected.push_back(CPU(cases[c].f, cases[c].grid, Params(full), &expectedCount[c]));
    uint64_t   count8    = 0;
    const auto expected8 = CPU(u8, g8, Params(full), &count8);
    for (uint64_t chunk : { uint64_t(0), uint64_t(64) << 10 })
      for (bool overlap : { true, false })
      {
        const TransferScope scope(overlap, chunk, chunk ? 3 : 0, chunk ? 2 : 0);
        for (size_t c = 0; c < cases.size(); ++c)
          for (auto a : { chs::WatershedAlgorithm::PRUF, chs::WatershedAlgorithm::APRUF, chs::WatershedAlgorithm::PRW })
          {
            uint64_t count = 0;
            EXPECT_EQ(GPU(cases[c].f, cases[c].grid, Params(full, a, chs::PlateauResolution::Balanced), &count),
                      expected[c])
              << cases[c].name << " full " << full << " algorithm " << int(a) << " overlap " << overlap << " chunk "
              << chunk;
            EXPECT_EQ(count, expectedCount[c]) << cases[c].name;
          }
        uint64_t count = 0;
        EXPECT_EQ(GPU(u8, g8, Params(full), &count), expected8) << "uint8 full " << full << " overlap " << overlap;
        EXPECT_EQ(count, count8);
        std::vector<uint64_t> wide(cases[0].f.size(), 7);
        const auto r = chs::WatershedCUDA(cases[0].f.data(), g2, Params(full), wide.data(), chs::ExecutionContext{});
        EXPECT_EQ(r.basinCount, expectedCount[0]);
        EXPECT_TRUE(std::equal(wide.begin(), wide.end(), expected[0].begin())) << "64-bit labels, overlap " << overlap;
        // A NaN in the last rows is found once they arrive, and named.
        auto bad                        = cases[0].f;
        bad[uint64_t(1100) * 1000 + 17] = std::nanf("");
        bad[uint64_t(1100) * 1001 + 3]  = std::nanf("");
        std::vector<uint32_t> labels(bad.size());
        try
        {
          chs::WatershedCUDA(bad.data(), g2, Params(full), labels.data(), chs::ExecutionContext{});
          ADD_FAILURE() << "a NaN must be rejected";
        }
        catch (const std::exception & e)
        {
          EXPECT_NE(std::string(e.what()).find("(17, 1000)"), std::string::npos) << e.what();
        }
      }
  }
}

TEST(WatershedCUDA, EveryPixelTypeAndLabelType)
{
  CHS_REQUIRE_GPU();
  const chs::Grid g = MakeGrid(70, 45);
  const auto      f = SmoothNoise<float>(g, 9, 40, 1.0);
  for (bool full : { false, true })
  {
    const auto p = Params(full);
    // f holds 0 .. 39: values -20 .. 19 in every signed type, 0 .. 39 in the unsigned ones.
    std::vector<float> s(f.size()), u(f.size());
    for (size_t i = 0; i < f.size(); ++i)
    {
      s[i] = f[i] - 20.0f;
      u[i] = f[i];
    }
    const auto expected = CPU(s, g, p);
    EXPECT_EQ(GPU(Cast<int8_t>(s), g, p), expected);
    EXPECT_EQ(GPU(Cast<int16_t>(s), g, p), expected);
    EXPECT_EQ(GPU(Cast<int32_t>(s), g, p), expected);
    EXPECT_EQ(GPU(Cast<int64_t>(s), g, p), expected);
    EXPECT_EQ(GPU(Cast<double>(s), g, p), expected);
    EXPECT_EQ(GPU(Cast<uint8_t>(u), g, p), expected);
    EXPECT_EQ(GPU(Cast<uint16_t>(u), g, p), expected);
    EXPECT_EQ(GPU(Cast<uint32_t>(u), g, p), expected);
    EXPECT_EQ(GPU(Cast<uint64_t>(u), g, p), expected);
    // Doubles that differ below float precision stay distinct.
    std::vector<double> fine(f.size());
    for (size_t i = 0; i < f.size(); ++i)
      fine[i] = 1.0 + double(f[i]) * 1e-14;
    EXPECT_EQ(GPU(fine, g, p), CPU(fine, g, p));
    // 8- and 16-bit labels.
    std::vector<uint16_t> l16(f.size());
    std::vector<uint8_t>  l8(f.size());
    chs::WatershedCUDA(s.data(), g, p, l16.data(), chs::ExecutionContext{});
    EXPECT_TRUE(std::equal(l16.begin(), l16.end(), expected.begin()));
    if (*std::max_element(expected.begin(), expected.end()) <= 255)
    {
      chs::WatershedCUDA(s.data(), g, p, l8.data(), chs::ExecutionContext{});
      EXPECT_TRUE(std::equal(l8.begin(), l8.end(), expected.begin()));
    }
  }
}

TEST(WatershedCUDA, LinesEqualReference)
{
  CHS_REQUIRE_GPU();
  for (const auto & in : Inputs())
    for (bool full : { false, true })
    {
      auto p      = Params(full);
      p.markLines = true;
      EXPECT_EQ(GPU(in.f, in.grid, p), CPU(in.f, in.grid, p)) << in.name;
    }
}

TEST(WatershedCUDA, SameResultForEveryBlockRateAndRun)
{
  CHS_REQUIRE_GPU();
  const chs::Grid g2 = MakeGrid(203, 150), g3 = MakeGrid(41, 37, 29);
  for (const auto & g : { g2, g3 })
  {
    const auto I = SmoothNoise<uint8_t>(g, 21, 5, 1.0);
    for (bool full : { false, true })
    {
      const auto                                 expected = CPU(I, g, Params(full));
      const std::vector<std::array<unsigned, 3>> blocks =
        g.dimension == 2
          ? std::vector<std::array<unsigned, 3>>{ { 16, 16, 1 }, { 32, 32, 1 }, { 7, 5, 1 }, { 64, 2, 1 } }
          : std::vector<std::array<unsigned, 3>>{ { 8, 8, 8 }, { 4, 4, 4 }, { 16, 8, 4 }, { 3, 5, 7 } };
      for (const auto & b : blocks)
        for (unsigned rr : { 1u, 2u, 6u })
          for (int run = 0; run < 2; ++run)
          {
            auto p          = Params(full);
            p.blockSize[0]  = b[0];
            p.blockSize[1]  = b[1];
            p.blockSize[2]  = b[2];
            p.reductionRate = rr;
            EXPECT_EQ(GPU(I, g, p), expected) << b[0] << "x" << b[1] << "x" << b[2] << " RR " << rr;
          }
    }
  }
}

TEST(WatershedCUDA, AsynchronousFindsTheSameMinima)
{
  CHS_REQUIRE_GPU();
  for (const auto & in : Inputs())
    for (bool full : { false, true })
    {
      uint64_t   expectedCount = 0, count = 0;
      const auto expected = CPU(in.f, in.grid, Params(full), &expectedCount);
      const auto labels   = GPU(
        in.f, in.grid, Params(full, chs::WatershedAlgorithm::PRUF, chs::PlateauResolution::BlockAsynchronous), &count);
      EXPECT_EQ(count, expectedCount) << in.name;
      // On the minimal plateaux the two partitions are the same (a one-to-one map between labels).
      std::vector<uint64_t> plateau;
      std::vector<bool>     minimal;
      Plateaus(in.f, in.grid, full, plateau, minimal);
      std::map<uint32_t, uint32_t> forward, backward;
      for (size_t p = 0; p < labels.size(); ++p)
        if (minimal[p])
        {
          EXPECT_EQ(forward.emplace(expected[p], labels[p]).first->second, labels[p]) << in.name;
          EXPECT_EQ(backward.emplace(labels[p], expected[p]).first->second, expected[p]) << in.name;
        }
      // Every pixel still drains into a basin: labels 1 .. count, by first pixel.
      uint32_t seen = 0;
      for (uint32_t l : labels)
      {
        ASSERT_GE(l, 1u);
        ASSERT_LE(l, seen + 1);
        seen = std::max(seen, l);
      }
      // Repeated runs agree (the asynchronous tiles read the previous round's distances).
      EXPECT_EQ(
        GPU(in.f, in.grid, Params(full, chs::WatershedAlgorithm::APRUF, chs::PlateauResolution::BlockAsynchronous)),
        labels)
        << in.name;
    }
}

/** Sets where the CUDA waterfall runs its levels for one scope (chs::testing::SetWaterfallLevelPath). */
struct LevelPathScope
{
  explicit LevelPathScope(int path) { chs::testing::SetWaterfallLevelPath(path); }
  ~LevelPathScope() { chs::testing::SetWaterfallLevelPath(0); }
};

// Every input on both paths of the levels (the voxels and the region graph), and on the path the sizes choose.
TEST(WaterfallCUDA, EqualsReference)
{
  CHS_REQUIRE_GPU();
  for (int path : { 1, 2, 0 })
  {
    const LevelPathScope scope(path);
    for (const auto & in : Inputs())
      for (bool full : { false, true })
      {
        chs::WaterfallParameters p;
        p.watershed.fullyConnected = full;
        std::vector<std::vector<uint32_t>> cpu, gpu;
        const auto                         rc = Waterfall(false, in.f, in.grid, p, cpu);
        const auto                         rg = Waterfall(true, in.f, in.grid, p, gpu);
        EXPECT_EQ(gpu, cpu) << in.name << " path " << path;
        EXPECT_EQ(rg.regionCounts, rc.regionCounts) << in.name << " path " << path;
        EXPECT_EQ(rg.parents, rc.parents) << in.name << " path " << path;
        if (path != 0 && rc.regionCounts.size() > 1)
          EXPECT_EQ(rg.levelsOnRegionGraph, path == 2) << in.name;
        CheckHierarchy(in.f, in.grid, p, rg, gpu, true);
      }
    // Double pixels take the 64-bit lowest passes.
    const chs::Grid                    g = MakeGrid(50, 40);
    const auto                         d = SmoothNoise<double>(g, 8, 0, 1e-9);
    std::vector<std::vector<uint32_t>> cpu, gpu;
    Waterfall(false, d, g, {}, cpu);
    Waterfall(true, d, g, {}, gpu);
    EXPECT_EQ(gpu, cpu) << "path " << path;
  }
}

// On the region graph, the levels a sink asks for are made from level 0's labels and the composed parents: only
// some levels asked for, into 16-bit labels (narrowed on the device), and a limited number of levels.
TEST(WaterfallCUDA, RegionGraphLevelsOnRequest)
{
  CHS_REQUIRE_GPU();
  const chs::Grid g = MakeGrid(120, 90);
  const auto      f = SmoothNoise<float>(g, 3, 0, 1000.0);
  for (int path : { 1, 2 })
  {
    const LevelPathScope               scope(path);
    std::vector<std::vector<uint32_t>> all;
    chs::WaterfallParameters           p;
    Waterfall(false, f, g, p, all);
    ASSERT_GE(all.size(), 4u);
    std::vector<std::vector<uint16_t>>      some(all.size());
    const chs::WaterfallLevelSink<uint16_t> sink = [&](unsigned level, uint64_t) -> uint16_t *
    {
      if (level % 2 == 0)
        return nullptr;
      some[level].assign(f.size(), 0);
      return some[level].data();
    };
    const auto r = chs::WaterfallCUDA(f.data(), g, p, sink, chs::ExecutionContext{});
    EXPECT_EQ(r.levelsOnRegionGraph, path == 2);
    ASSERT_EQ(r.regionCounts.size(), all.size());
    for (size_t k = 1; k < all.size(); k += 2)
      EXPECT_EQ(std::vector<uint32_t>(some[k].begin(), some[k].end()), all[k]) << "level " << k << " path " << path;
    p.numberOfLevels = 3;
    std::vector<std::vector<uint32_t>> three;
    const auto                         r3 = Waterfall(true, f, g, p, three);
    ASSERT_EQ(three.size(), 3u);
    for (size_t k = 0; k < 3; ++k)
      EXPECT_EQ(three[k], all[k]) << "level " << k << " path " << path;
    EXPECT_EQ(r3.parents.size(), 2u);
  }
}

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

// The sizes choose, as include/chsWatershed.h says: the region graph for 2^20 voxels or more when its edges (12 bytes
// each for float pixels) take no more than the voxel arrays (16 bytes a voxel); smooth images, noise and
// checkerboards of both sizes, both connectivities, 2D and 3D.
TEST(WaterfallCUDA, PathChosenBySizes)
{
  CHS_REQUIRE_GPU();
  int graphs = 0, voxels = 0;
  for (const auto & g : { MakeGrid(1024, 1024), MakeGrid(128, 128, 64), MakeGrid(256, 128) })
  {
    std::vector<float> checker(g.NumberOfVoxels());
    for (uint64_t q = 0; q < checker.size(); ++q)
      checker[q] = float((q % g.size[0] + q / g.size[0] % g.size[1] + q / (g.size[0] * g.size[1])) % 2);
    const std::vector<std::vector<float>> images{ SmoothNoise<float>(g, 4, 0, 1000.0),
                                                  Noise<float>(g.NumberOfVoxels(), 5, 0, 1000),
                                                  checker };
    for (const auto & image : images)
      for (bool full : { false, true })
      {
        chs::WaterfallParameters p;
        p.watershed.fullyConnected = full;
        p.numberOfLevels           = 2;
        std::vector<std::vector<uint32_t>> levels;
        const auto                         r = Waterfall(true, image, g, p, levels);
        if (r.regionCounts.size() < 2)
          continue; // one region: no level after level 0
        const uint64_t n      = g.NumberOfVoxels();
        const bool     expect = n >= (uint64_t(1) << 20) && RegionGraphEdges(levels[0], g, full) * 12 <= n * 16;
        EXPECT_EQ(r.levelsOnRegionGraph, expect) << n << " voxels, full " << full;
        (expect ? graphs : voxels) += 1;
      }
  }
  EXPECT_GT(graphs, 0); // both choices were made
  EXPECT_GT(voxels, 0);
}

// The 64-bit path of the waterfall (forced on small images): the same levels and parents as the 32-bit path and the
// CPU reference (forced to its 64-bit numbering too), on the voxels and on the region graph, every input, both
// connectivities; then 16-bit labels and double pixels.
TEST(WaterfallCUDA, WideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  for (int path : { 1, 2 })
  {
    const LevelPathScope scope(path);
    for (const auto & in : Inputs())
      for (bool full : { false, true })
      {
        chs::WaterfallParameters p;
        p.watershed.fullyConnected    = full;
        auto wide                     = p;
        wide.watershed.forceWideIndex = true;
        std::vector<std::vector<uint32_t>> cpu, cpuWide, gpuWide;
        const auto                         rc = Waterfall(false, in.f, in.grid, p, cpu);
        const auto                         rw = Waterfall(false, in.f, in.grid, wide, cpuWide);
        EXPECT_EQ(cpuWide, cpu) << in.name;
        EXPECT_EQ(rw.parents, rc.parents) << in.name;
        const auto rg = Waterfall(true, in.f, in.grid, wide, gpuWide);
        EXPECT_EQ(gpuWide, cpu) << in.name << " full " << full << " path " << path;
        EXPECT_EQ(rg.regionCounts, rc.regionCounts) << in.name << " path " << path;
        EXPECT_EQ(rg.parents, rc.parents) << in.name << " path " << path;
        if (rc.regionCounts.size() > 1)
          EXPECT_EQ(rg.levelsOnRegionGraph, path == 2) << in.name;
      }
    const chs::Grid          g = MakeGrid(70, 45, 3);
    const auto               f = SmoothNoise<float>(g, 9, 40, 1.0);
    chs::WaterfallParameters p;
    p.watershed.fullyConnected = true;
    std::vector<std::vector<uint32_t>> expected;
    Waterfall(false, f, g, p, expected);
    ASSERT_GE(expected.size(), 2u);
    p.watershed.forceWideIndex = true;
    std::vector<std::vector<uint16_t>>      narrow(expected.size());
    const chs::WaterfallLevelSink<uint16_t> sink = [&](unsigned level, uint64_t)
    {
      narrow[level].assign(f.size(), 0);
      return narrow[level].data();
    };
    chs::WaterfallCUDA(f.data(), g, p, sink, chs::ExecutionContext{});
    for (size_t k = 0; k < expected.size(); ++k)
      EXPECT_EQ(std::vector<uint32_t>(narrow[k].begin(), narrow[k].end()), expected[k]) << "level " << k;
    std::vector<std::vector<uint32_t>> fromDouble;
    Waterfall(true, Cast<double>(f), g, p, fromDouble);
    EXPECT_EQ(fromDouble, expected) << "path " << path;
  }
}

TEST(WatershedCUDA, BadInput)
{
  CHS_REQUIRE_GPU();
  std::vector<double>   I(12, 1.0);
  std::vector<uint32_t> L(12, 7);
  I[5] = std::nan("");
  EXPECT_THROW(chs::WatershedCUDA(I.data(), MakeGrid(4, 3), {}, L.data(), chs::ExecutionContext{}),
               std::invalid_argument);
  EXPECT_EQ(L, std::vector<uint32_t>(12, 7));
  I[5] = 1.0;
  chs::WatershedParameters p;
  p.blockSize[0] = 1024;
  p.blockSize[1] = 1;
  p.blockSize[2] = 1;
  std::vector<float>    V(8 * 8 * 8, 1.0f);
  std::vector<uint32_t> LV(V.size(), 7);
  EXPECT_THROW(chs::WatershedCUDA(V.data(), MakeGrid(8, 8, 8), p, LV.data(), chs::ExecutionContext{}),
               std::invalid_argument); // 3D block with z = 1 and 1024 x 3 x 3 halo cells: too much shared memory
  std::vector<uint8_t> board(600);
  for (int i = 0; i < 600; ++i)
    board[i] = uint8_t(((i % 30) + (i / 30)) % 2);
  std::vector<uint8_t> small(600, 7);
  EXPECT_THROW(chs::WatershedCUDA(board.data(), MakeGrid(30, 20), {}, small.data(), chs::ExecutionContext{}),
               std::invalid_argument);
  EXPECT_EQ(small, std::vector<uint8_t>(600, 7));
  // A failed device allocation surfaces as an error, and the next run works.
  chs::testing::FailDeviceAllocationAfter(2);
  EXPECT_THROW(chs::WatershedCUDA(I.data(), MakeGrid(4, 3), {}, L.data(), chs::ExecutionContext{}), chs::CudaError);
  chs::testing::FailDeviceAllocationAfter(0);
  EXPECT_EQ(GPU(I, MakeGrid(4, 3)), std::vector<uint32_t>(12, 1));
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

/** A volume above 2^32 voxels (2048 x 2048 x 1025, 8-bit; 107 GB of device memory: an H200), when CHS_LARGE_TESTS is
 * set. The CPU reference would need some 160 GB of host memory, so the labels are checked against the definition's
 * invariants, computed independently: the basin count equals the regional minima (flat zones, from the
 * connected-components filter's flat-zone mode, with no lower neighbour); labels are numbered 1, 2, ... by first
 * voxel; every voxel with a lower neighbour has the label of its lowest one (the smallest value, then the largest
 * index); every regional minimum is one basin. */
TEST(WatershedCUDA, GPUVolumeAbove2To32Voxels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const chs::Grid g = MakeGrid(2048, 2048, 1025);
  const uint64_t  n = g.NumberOfVoxels(), nx = g.size[0], ny = g.size[1], nz = g.size[2];
  ASSERT_GT(n, uint64_t(1) << 32);
  const std::vector<uint8_t> I = LargeVolume(g);
  std::vector<uint32_t>      labels(n);
  chs::RunInfo               info;
  uint64_t                   basins = 0;
  try
  {
    basins = chs::WatershedCUDA(I.data(), g, chs::WatershedParameters{}, labels.data(), chs::ExecutionContext{}, &info)
               .basinCount;
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << basins << " basins; peak device memory " << info.peakDeviceBytes << " bytes, reserved "
            << info.reservedDeviceBytes << ", kernels " << info.kernelMilliseconds << " ms" << std::endl;
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  EXPECT_GT(info.peakDeviceBytes, n * 24);

  // Numbered by first voxel: each new label is one more than the largest so far; the largest is the count.
  uint64_t largest = 0, misnumbered = 0;
  for (uint64_t p = 0; p < n; ++p)
    if (labels[p] > largest)
    {
      misnumbered += labels[p] != largest + 1;
      largest = labels[p];
    }
    else
      misnumbered += labels[p] == 0;
  EXPECT_EQ(misnumbered, 0u);
  EXPECT_EQ(largest, basins);

  // Steepest descent, face neighbours in increasing raster order.
  const int64_t         off[6][3] = { { 0, 0, -1 }, { 0, -1, 0 }, { -1, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
  std::atomic<uint64_t> wrongDescent{ 0 };
  chs_test::ParallelRange(n,
                          [&](uint64_t a, uint64_t b)
                          {
                            uint64_t wrong = 0;
                            for (uint64_t p = a; p < b; ++p)
                            {
                              const int64_t x = int64_t(p % nx), y = int64_t(p / nx % ny), z = int64_t(p / (nx * ny));
                              uint64_t      low = p;
                              for (const auto & o : off)
                              {
                                const int64_t qx = x + o[0], qy = y + o[1], qz = z + o[2];
                                if (qx < 0 || qy < 0 || qz < 0 || qx >= int64_t(nx) || qy >= int64_t(ny) ||
                                    qz >= int64_t(nz))
                                  continue;
                                const uint64_t q = uint64_t(qx) + nx * (uint64_t(qy) + ny * uint64_t(qz));
                                if (low == p || I[q] <= I[low])
                                  low = q;
                              }
                              if (I[low] < I[p])
                                wrong += labels[p] != labels[low];
                            }
                            wrongDescent += wrong;
                          });
  EXPECT_EQ(wrongDescent.load(), 0u);

  // Regional minima: flat zones without a lower neighbour, each a single basin, as many as the basins.
  std::vector<uint32_t>             zone(n);
  chs::ConnectedComponentParameters cc;
  cc.mode         = chs::ConnectedComponentMode::FlatZones;
  cc.maximumLabel = 0xffffffffu;
  const uint64_t zones =
    chs::LabelConnectedComponentsCUDA(I.data(), nullptr, zone.data(), g, cc, nullptr, chs::ExecutionContext{});
  std::vector<std::atomic<uint8_t>> raised(zones + 1);
  chs_test::ParallelRange(n,
                          [&](uint64_t a, uint64_t b)
                          {
                            for (uint64_t p = a; p < b; ++p)
                            {
                              const int64_t x = int64_t(p % nx), y = int64_t(p / nx % ny), z = int64_t(p / (nx * ny));
                              for (const auto & o : off)
                              {
                                const int64_t qx = x + o[0], qy = y + o[1], qz = z + o[2];
                                if (qx < 0 || qy < 0 || qz < 0 || qx >= int64_t(nx) || qy >= int64_t(ny) ||
                                    qz >= int64_t(nz))
                                  continue;
                                if (I[uint64_t(qx) + nx * (uint64_t(qy) + ny * uint64_t(qz))] < I[p])
                                {
                                  raised[zone[p]].store(1, std::memory_order_relaxed);
                                  break;
                                }
                              }
                            }
                          });
  uint64_t minima = 0;
  for (uint64_t z = 1; z <= zones; ++z)
    minima += raised[z].load() == 0;
  EXPECT_EQ(minima, basins) << zones << " flat zones";
  std::atomic<uint64_t> split{ 0 };
  chs_test::ParallelRange(n,
                          [&](uint64_t a, uint64_t b)
                          {
                            uint64_t wrong = 0;
                            for (uint64_t p = a; p < b; ++p)
                              if (raised[zone[p]].load(std::memory_order_relaxed) == 0)
                              {
                                if (p % nx + 1 < nx && zone[p + 1] == zone[p])
                                  wrong += labels[p + 1] != labels[p];
                                if (p / nx % ny + 1 < ny && zone[p + nx] == zone[p])
                                  wrong += labels[p + nx] != labels[p];
                                if (p + nx * ny < n && zone[p + nx * ny] == zone[p])
                                  wrong += labels[p + nx * ny] != labels[p];
                              }
                            split += wrong;
                          });
  EXPECT_EQ(split.load(), 0u);
}

/** The waterfall of a volume above 2^32 voxels (the watershed test's volume; about 108 GB of device memory and 60 GB
 * of host memory), when CHS_LARGE_TESTS is set. Checked against what defines it, computed independently here: level 0
 * is the watershed's labels; the lowest pass of every level-0 region (the smallest max(I(p), I(q)) over its face
 * pairs with other regions) and the union of every pair of regions across a pair at the lowest pass of either give
 * exactly the regions of level 1; every level's labels are numbered by first voxel, its parents map every region
 * into the next level's, each label of which has a region, and the levels end at one region. */
TEST(WaterfallCUDA, GPUVolumeAbove2To32Voxels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const chs::Grid g = MakeGrid(2048, 2048, 1025);
  const uint64_t  n = g.NumberOfVoxels(), nx = g.size[0], ny = g.size[1], nz = g.size[2];
  ASSERT_GT(n, uint64_t(1) << 32);
  const std::vector<uint8_t>              I = LargeVolume(g);
  std::vector<uint32_t>                   level0(n), level1(n);
  const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned level, uint64_t) -> uint32_t * {
    return level == 0 ? level0.data() : level == 1 ? level1.data() : nullptr;
  };
  chs::RunInfo         info;
  chs::WaterfallResult r;
  try
  {
    r = chs::WaterfallCUDA(I.data(), g, chs::WaterfallParameters{}, sink, chs::ExecutionContext{}, &info);
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << r.regionCounts.size() << " levels, " << r.regionCounts[0] << " regions at level 0, "
            << (r.regionCounts.size() > 1 ? r.regionCounts[1] : 0) << " at level 1; levels on the "
            << (r.levelsOnRegionGraph ? "region graph" : "voxels") << "; peak device memory " << info.peakDeviceBytes
            << " bytes, reserved " << info.reservedDeviceBytes << "; watershed " << r.watershedMilliseconds
            << " ms, levels " << r.levelsMilliseconds << " ms" << std::endl;
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  ASSERT_GE(r.regionCounts.size(), 3u);
  EXPECT_EQ(r.regionCounts.back(), 1u);
  ASSERT_EQ(r.parents.size() + 1, r.regionCounts.size());
  {
    std::vector<uint32_t> watershed(n);
    chs::WatershedCUDA(I.data(), g, chs::WatershedParameters{}, watershed.data(), chs::ExecutionContext{});
    EXPECT_TRUE(watershed == level0) << "level 0 is not the watershed";
  }
  // Every level's parents map its regions onto all of the next level's.
  for (size_t k = 0; k + 1 < r.regionCounts.size(); ++k)
  {
    ASSERT_EQ(r.parents[k].size(), r.regionCounts[k]);
    std::vector<uint8_t> hit(r.regionCounts[k + 1] + 1, 0);
    for (uint32_t parent : r.parents[k])
    {
      ASSERT_GE(parent, 1u);
      ASSERT_LE(parent, r.regionCounts[k + 1]);
      hit[parent] = 1;
    }
    EXPECT_EQ(std::count(hit.begin() + 1, hit.end(), 1), std::ptrdiff_t(r.regionCounts[k + 1])) << "level " << k;
    EXPECT_LT(r.regionCounts[k + 1], r.regionCounts[k]);
  }
  // Levels 0 and 1: numbered by first voxel, and level 1 = the parents of level 0.
  for (const auto * level : { &level0, &level1 })
  {
    uint64_t largest = 0, misnumbered = 0;
    for (uint32_t l : *level)
      if (l > largest)
      {
        misnumbered += l != largest + 1;
        largest = l;
      }
      else
        misnumbered += l == 0;
    EXPECT_EQ(misnumbered, 0u);
    EXPECT_EQ(largest, r.regionCounts[level == &level0 ? 0 : 1]);
  }
  std::atomic<uint64_t> unparented{ 0 };
  chs_test::ParallelRange(n,
                          [&](uint64_t a, uint64_t b)
                          {
                            uint64_t wrong = 0;
                            for (uint64_t p = a; p < b; ++p)
                              wrong += level1[p] != r.parents[0][level0[p] - 1];
                            unparented += wrong;
                          });
  EXPECT_EQ(unparented.load(), 0u);
  // Level 1 from its definition: lowest passes, then a concurrent union-find over the level-0 regions.
  const uint64_t                     regions = r.regionCounts[0];
  std::vector<std::atomic<uint16_t>> pass(regions + 1);
  std::vector<std::atomic<uint32_t>> up(regions + 1);
  for (uint64_t i = 0; i <= regions; ++i)
  {
    pass[i].store(0xffff, std::memory_order_relaxed);
    up[i].store(uint32_t(i), std::memory_order_relaxed);
  }
  const auto forEachBoundaryPair = [&](auto && f)
  {
    chs_test::ParallelRange(
      n,
      [&](uint64_t a, uint64_t b)
      {
        for (uint64_t p = a; p < b; ++p)
        {
          const uint64_t x = p % nx, y = p / nx % ny, z = p / (nx * ny);
          for (uint64_t q : { x + 1 < nx ? p + 1 : p, y + 1 < ny ? p + nx : p, z + 1 < nz ? p + nx * ny : p })
            if (q != p && level0[q] != level0[p])
              f(level0[p], level0[q], uint16_t(std::max(I[p], I[q])));
        }
      });
  };
  const auto lower = [&](uint32_t region, uint16_t h)
  {
    uint16_t seen = pass[region].load(std::memory_order_relaxed);
    while (h < seen && !pass[region].compare_exchange_weak(seen, h, std::memory_order_relaxed))
    {
    }
  };
  forEachBoundaryPair(
    [&](uint32_t a, uint32_t b, uint16_t h)
    {
      lower(a, h);
      lower(b, h);
    });
  const auto find = [&](uint32_t a)
  {
    for (;;)
    {
      const uint32_t next = up[a].load(std::memory_order_relaxed);
      if (next == a)
        return a;
      a = next;
    }
  };
  forEachBoundaryPair(
    [&](uint32_t a, uint32_t b, uint16_t h)
    {
      if (h != pass[a].load(std::memory_order_relaxed) && h != pass[b].load(std::memory_order_relaxed))
        return;
      for (;;)
      {
        a = find(a);
        b = find(b);
        if (a == b)
          return;
        if (a < b)
          std::swap(a, b);
        uint32_t expected = a; // link the larger root under the smaller one while it is still a root
        if (up[a].compare_exchange_weak(expected, b))
          return;
      }
    });
  // The unions are level 1's regions: region -> root and region -> level-1 label are the same partition.
  std::vector<uint32_t> labelOfRoot(regions + 1, 0), rootOfLabel(r.regionCounts[1] + 1, 0);
  uint64_t              mismatched = 0;
  for (uint32_t region = 1; region <= regions; ++region)
  {
    const uint32_t root = find(region), label = r.parents[0][region - 1];
    if (!labelOfRoot[root])
      labelOfRoot[root] = label;
    if (!rootOfLabel[label])
      rootOfLabel[label] = root;
    mismatched += labelOfRoot[root] != label || rootOfLabel[label] != root;
  }
  EXPECT_EQ(mismatched, 0u);
}
