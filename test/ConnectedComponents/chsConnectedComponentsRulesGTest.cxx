// The ITK-free labelling's rules beyond ITK's filter (include/chs/ConnectedComponents.h): non-zero zones, delta,
// 18-connectivity, periodic boundaries, the graph mode, coordinate sums and per-label statistics. The CPU reference
// against a flood fill written here from the header's words (its own neighbourhood, wrap and difference), and the
// CUDA backend against the CPU reference, equal run after run.
#include "Common/chsTestImages.h"
#include "chs/ConnectedComponents.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace
{

using chs::ConnectedComponentMode;

struct Case
{
  chs::Grid              grid;
  ConnectedComponentMode mode;
  int                    connectivity; // 1 face, 2 edge, 3 full
  double                 delta;
  bool                   periodic;
};

chs::ConnectedComponentParameters
Params(const Case & c)
{
  chs::ConnectedComponentParameters p;
  p.mode              = c.mode;
  p.fullyConnected    = c.connectivity == 3;
  p.edgeConnected     = c.connectivity == 2;
  p.delta             = c.delta;
  p.periodic          = c.periodic;
  p.maximumLabel      = std::numeric_limits<uint32_t>::max();
  p.computeStatistics = true;
  return p;
}

/** |a - b| exactly (long double holds every value of the tested types). */
template <typename T>
long double
Difference(T a, T b)
{
  return a > b ? static_cast<long double>(a) - static_cast<long double>(b)
               : static_cast<long double>(b) - static_cast<long double>(a);
}

/** The header's definition, by flood fill: active voxels (mask-free here), the neighbourhood of the connectivity on
 * the grid or the torus, the connection rule of the mode; objects numbered by their first voxel in raster order. */
template <typename T>
std::vector<uint32_t>
FloodFill(const std::vector<T> & f, const Case & c, uint64_t * count)
{
  const int64_t nx = c.grid.size[0], ny = c.grid.size[1], nz = c.grid.size[2];
  const auto    active = [&](uint64_t i)
  { return c.mode == ConnectedComponentMode::FlatZones || c.mode == ConnectedComponentMode::Graph || f[i] != T(0); };
  // The graph mode's backward offsets in the header's order: dz, dy, dx ascending.
  std::vector<std::array<int, 3>> backward;
  const int                       zr = nz > 1 ? 1 : 0;
  for (int dz = -zr; dz <= 0; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int m = std::abs(dx) + std::abs(dy) + std::abs(dz);
        if ((dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)))) && m <= c.connectivity)
          backward.push_back({ dx, dy, dz });
      }
  const auto wrap = [&](int64_t q, int64_t n, int d, bool & ok)
  {
    if (d != 0 && n == 1)
      ok = false;
    if (q < 0 || q >= n)
    {
      if (!c.periodic)
        ok = false;
      q = (q + n) % n;
    }
    return q;
  };
  const auto connected = [&](uint64_t i, uint64_t j, int dx, int dy, int dz)
  {
    switch (c.mode)
    {
      case ConnectedComponentMode::Binary:
        return true;
      case ConnectedComponentMode::Graph:
      {
        // j is a neighbour of i; the bit is held by whichever of the two is later in raster order (the other is its
        // backward neighbour at the opposite offset).
        for (size_t o = 0; o < backward.size(); ++o)
        {
          if (backward[o][0] == dx && backward[o][1] == dy && backward[o][2] == dz && ((uint64_t(f[i]) >> o) & 1u))
            return true;
          if (backward[o][0] == -dx && backward[o][1] == -dy && backward[o][2] == -dz && ((uint64_t(f[j]) >> o) & 1u))
            return true;
        }
        return false;
      }
      default:
        if (c.delta == 0)
          return f[i] == f[j];
        if constexpr (std::is_floating_point<T>::value)
          return std::abs(f[i] - f[j]) <= T(c.delta);
        else
          return Difference(f[i], f[j]) <= static_cast<long double>(std::floor(c.delta));
    }
  };
  std::vector<uint32_t> labels(f.size(), 0);
  uint32_t              next = 0;
  for (uint64_t s = 0; s < f.size(); ++s)
  {
    if (!active(s) || labels[s] != 0)
      continue;
    labels[s] = ++next;
    std::deque<uint64_t> queue{ s };
    while (!queue.empty())
    {
      const uint64_t i = queue.front();
      queue.pop_front();
      const int64_t x = int64_t(i % nx), y = int64_t(i / nx % ny), z = int64_t(i / nx / ny);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
          {
            const int m = std::abs(dx) + std::abs(dy) + std::abs(dz);
            if (m == 0 || m > c.connectivity || (nz == 1 && dz != 0))
              continue;
            bool          ok = true;
            const int64_t qx = wrap(x + dx, nx, dx, ok), qy = wrap(y + dy, ny, dy, ok), qz = wrap(z + dz, nz, dz, ok);
            if (!ok)
              continue;
            const uint64_t j = uint64_t((qz * ny + qy) * nx + qx);
            if (j == i || labels[j] != 0 || !active(j) || !connected(i, j, dx, dy, dz))
              continue;
            labels[j] = next;
            queue.push_back(j);
          }
    }
  }
  *count = next;
  return labels;
}

template <typename T>
std::vector<T>
RandomValues(uint64_t n, unsigned seed, int low, int high, double zeros)
{
  std::mt19937                       rng(seed);
  std::uniform_int_distribution<int> value(low, high);
  std::uniform_real_distribution<>   u(0, 1);
  std::vector<T>                     f(n);
  for (auto & v : f)
    v = u(rng) < zeros ? T(0) : T(value(rng));
  return f;
}

std::vector<chs::Grid>
Grids()
{
  return { chs::Grid{ { 23, 17, 1 } },
           chs::Grid{ { 9, 8, 7 } },
           chs::Grid{ { 1, 12, 5 } },
           chs::Grid{ { 40, 2, 1 } },
           chs::Grid{ { 5, 1, 6 } } };
}

template <typename T>
std::vector<uint32_t>
Label(const std::vector<T> &              f,
      const Case &                        c,
      chs::Backend                        backend,
      uint64_t *                          count,
      chs::ConnectedComponentStatistics * stats      = nullptr,
      bool                                countsOnly = false)
{
  std::vector<uint32_t>             labels(f.size());
  chs::ConnectedComponentStatistics s;
  chs::ExecutionContext             context;
  context.backend            = backend;
  auto parameters            = Params(c);
  parameters.onlyVoxelCounts = countsOnly;
  *count = chs::LabelConnectedComponents(f.data(), nullptr, labels.data(), c.grid, parameters, &s, context);
  if (stats)
    *stats = s;
  return labels;
}

/** Every mode, connectivity, delta and boundary of the rules on the test grids: the CPU reference against the flood
 * fill, and (with a device) the CUDA backend against the CPU reference, labels, counts and statistics. */
template <typename T>
void
RulesHold(int low, int high, const std::vector<double> & deltas, bool graph = false)
{
  unsigned seed = 1;
  for (const chs::Grid & grid : Grids())
    for (ConnectedComponentMode mode : graph
                                         ? std::vector<ConnectedComponentMode>{ ConnectedComponentMode::Graph }
                                         : std::vector<ConnectedComponentMode>{ ConnectedComponentMode::Binary,
                                                                                ConnectedComponentMode::FlatZones,
                                                                                ConnectedComponentMode::NonZeroZones })
      for (int connectivity : { 1, 2, 3 })
        for (double delta : mode == ConnectedComponentMode::Binary || graph ? std::vector<double>{ 0 } : deltas)
          for (bool periodic : { false, true })
          {
            const Case c{ grid, mode, connectivity, delta, periodic };
            const auto f             = RandomValues<T>(grid.NumberOfVoxels(), ++seed, low, high, graph ? 0.0 : 0.3);
            uint64_t   expectedCount = 0, count = 0;
            const auto expected = FloodFill(f, c, &expectedCount);
            chs::ConnectedComponentStatistics stats;
            const auto                        cpu = Label(f, c, chs::Backend::CPU, &count, &stats);
            const auto what = ::testing::Message() << "grid " << grid.size[0] << "x" << grid.size[1] << "x"
                                                   << grid.size[2] << " mode " << int(mode) << " connectivity "
                                                   << connectivity << " delta " << delta << " periodic " << periodic;
            ASSERT_EQ(cpu, expected) << what;
            ASSERT_EQ(count, expectedCount) << what;
            // Statistics, by brute force over the labels: count, box and coordinate sums.
            std::vector<uint64_t> voxels(count, 0), sums(3 * count, 0);
            for (uint64_t i = 0; i < f.size(); ++i)
              if (cpu[i] != 0)
              {
                const uint64_t k = cpu[i] - 1;
                ++voxels[k];
                sums[3 * k + 0] += i % grid.size[0];
                sums[3 * k + 1] += i / grid.size[0] % grid.size[1];
                sums[3 * k + 2] += i / grid.size[0] / grid.size[1];
              }
            EXPECT_EQ(stats.voxelCount, voxels) << what;
            EXPECT_EQ(stats.coordinateSum, sums) << what;
            for (chs::Backend backend : { chs::Backend::CPU, chs::Backend::CUDA })
            {
              if (backend == chs::Backend::CUDA && !chs_test::HasCudaDevice())
                continue;
              uint64_t                          n = 0;
              chs::ConnectedComponentStatistics counts;
              EXPECT_EQ(Label(f, c, backend, &n, &counts, true), cpu) << what;
              EXPECT_EQ(counts.voxelCount, voxels) << what << " counts only";
              EXPECT_TRUE(counts.minimum.empty() && counts.maximum.empty() && counts.coordinateSum.empty()) << what;
            }
            if (!chs_test::HasCudaDevice())
              continue;
            for (int repeat = 0; repeat < 2; ++repeat)
            {
              uint64_t                          gpuCount = 0;
              chs::ConnectedComponentStatistics gpuStats;
              EXPECT_EQ(Label(f, c, chs::Backend::CUDA, &gpuCount, &gpuStats), cpu) << what << " repeat " << repeat;
              EXPECT_EQ(gpuCount, count) << what;
              EXPECT_EQ(gpuStats.voxelCount, stats.voxelCount) << what;
              EXPECT_EQ(gpuStats.minimum, stats.minimum) << what;
              EXPECT_EQ(gpuStats.maximum, stats.maximum) << what;
              EXPECT_EQ(gpuStats.coordinateSum, stats.coordinateSum) << what;
            }
          }
}

} // namespace

TEST(ConnectedComponentRules, UnsignedValuesMatchFloodFill)
{
  RulesHold<uint8_t>(1, 9, { 0, 1, 3 });
}

TEST(ConnectedComponentRules, SignedDifferencesAreTheValues)
{
  // -5..5: differences across zero are those of the signed values (the CUDA backend labels the bits as unsigned).
  RulesHold<int16_t>(-5, 5, { 0, 2 });
  RulesHold<int64_t>(-3, 3, { 1 });
}

TEST(ConnectedComponentRules, FloatDifferencesMatchFloodFill)
{
  RulesHold<float>(1, 6, { 0, 1.5 });
}

TEST(ConnectedComponentRules, GraphModeJoinsByTheVoxelsBits)
{
  RulesHold<uint16_t>(0, 8191, { 0 }, true);
}

TEST(ConnectedComponentRules, BadParametersAreRefused)
{
  const std::vector<float> f(12, 1.0f);
  const chs::Grid          grid{ { 4, 3, 1 } };
  for (chs::Backend backend : { chs::Backend::CPU, chs::Backend::CUDA })
  {
    if (backend == chs::Backend::CUDA && !chs_test::HasCudaDevice())
      continue;
    chs::ExecutionContext context;
    context.backend = backend;
    std::vector<uint32_t> labels(12, 7);
    Case                  c{ grid, ConnectedComponentMode::NonZeroZones, 1, -1.0, false };
    EXPECT_THROW(chs::LabelConnectedComponents(f.data(), nullptr, labels.data(), grid, Params(c), nullptr, context),
                 std::invalid_argument);
    c.delta = 0;
    c.mode  = ConnectedComponentMode::Graph;
    EXPECT_THROW(chs::LabelConnectedComponents(f.data(), nullptr, labels.data(), grid, Params(c), nullptr, context),
                 std::invalid_argument);
    EXPECT_EQ(labels, std::vector<uint32_t>(12, 7)); // nothing written
  }
}

namespace
{
/** ComputeLabelStatistics on both backends against a brute-force pass; `top` the largest label of `labels`. */
void
ExpectBruteForceStatistics(const chs::Grid & grid, const std::vector<uint16_t> & labels, uint64_t top)
{
  const uint64_t        n = grid.NumberOfVoxels();
  std::vector<uint64_t> voxels(top + 1, 0), sums(3 * (top + 1), 0);
  std::vector<uint32_t> lo(3 * (top + 1), ~0u), hi(3 * (top + 1), 0);
  for (uint64_t i = 0; i < n; ++i)
  {
    const uint64_t k    = labels[i];
    const uint32_t c[3] = { uint32_t(i % grid.size[0]),
                            uint32_t(i / grid.size[0] % grid.size[1]),
                            uint32_t(i / grid.size[0] / grid.size[1]) };
    ++voxels[k];
    for (int d = 0; d < 3; ++d)
    {
      sums[3 * k + d] += c[d];
      lo[3 * k + d] = std::min(lo[3 * k + d], c[d]);
      hi[3 * k + d] = std::max(hi[3 * k + d], c[d]);
    }
  }
  for (chs::Backend backend : { chs::Backend::CPU, chs::Backend::CUDA })
  {
    if (backend == chs::Backend::CUDA && !chs_test::HasCudaDevice())
      continue;
    chs::ExecutionContext context;
    context.backend = backend;
    chs::ConnectedComponentStatistics s;
    EXPECT_EQ(chs::ComputeLabelStatistics(labels.data(), grid, s, context), top);
    EXPECT_EQ(s.voxelCount, voxels);
    EXPECT_EQ(s.coordinateSum, sums);
    EXPECT_EQ(s.minimum, lo);
    EXPECT_EQ(s.maximum, hi);
    // A label above the voxel count: refused, nothing written.
    auto bad = labels;
    bad[0]   = static_cast<uint16_t>(std::min<uint64_t>(n + 1, 65535));
    chs::ConnectedComponentStatistics untouched;
    untouched.voxelCount = { 42 };
    if (n + 1 <= 65535)
      EXPECT_THROW(chs::ComputeLabelStatistics(bad.data(), grid, untouched, context), std::invalid_argument);
    EXPECT_EQ(untouched.voxelCount, std::vector<uint64_t>{ 42 });
  }
}
} // namespace

TEST(ConnectedComponentRules, LabelStatisticsMatchBruteForce)
{
  for (const chs::Grid & grid : Grids())
  {
    const uint64_t n      = grid.NumberOfVoxels();
    auto           labels = RandomValues<uint16_t>(n, unsigned(n), 1, 6, 0.2);
    labels[n / 2]         = 8; // 7 and perhaps some of 1..6 do not occur
    ExpectBruteForceStatistics(grid, labels, 8);
  }
}

TEST(ConnectedComponentRules, LabelStatisticsOfLongRuns)
{
  // Runs of one label over many warps' steps (the CUDA backend gathers a warp's steps of one label), ending anywhere
  // in a step, across rows, slices and the warps' segments, with scattered single voxels between them; rows longer
  // than a segment; a label that fills the image.
  for (const chs::Grid & grid : { chs::Grid{ { 150, 37, 9 } },
                                  chs::Grid{ { 4099, 3, 1 } },
                                  chs::Grid{ { 31, 33, 35 } },
                                  chs::Grid{ { 64, 64, 3 } } })
  {
    const uint64_t        n = grid.NumberOfVoxels();
    std::vector<uint16_t> labels(n), uniform(n, 3);
    for (uint64_t i = 0; i < n; ++i)
    {
      const uint64_t x = i % grid.size[0], y = i / grid.size[0] % grid.size[1], z = i / grid.size[0] / grid.size[1];
      labels[i] = static_cast<uint16_t>((x + 5 * y + 11 * z) / 45 % 6);
      if ((i * 2654435761u) % 97 == 0)
        labels[i] = 7;
    }
    ExpectBruteForceStatistics(grid, labels, 7);
    ExpectBruteForceStatistics(grid, uniform, 3);
  }
}

TEST(ConnectedComponentRules, LabelMapsGatherTheTable)
{
  const chs::Grid       grid{ { 37, 11, 5 } };
  const uint64_t        n      = grid.NumberOfVoxels();
  const auto            labels = RandomValues<uint32_t>(n, 3, 1, 9, 0.3);
  const auto            image  = RandomValues<float>(n, 4, 1, 100, 0.0);
  std::vector<uint16_t> table(10);
  std::vector<uint8_t>  keep(10);
  for (size_t k = 0; k < table.size(); ++k)
  {
    table[k] = static_cast<uint16_t>(1000 + 7 * k);
    keep[k]  = k % 3 != 1;
  }
  for (chs::Backend backend : { chs::Backend::CPU, chs::Backend::CUDA })
  {
    if (backend == chs::Backend::CUDA && !chs_test::HasCudaDevice())
      continue;
    chs::ExecutionContext context;
    context.backend = backend;
    std::vector<uint16_t> mapped(n, 0);
    std::vector<float>    kept(n, -1.0f);
    chs::MapLabels(labels.data(), grid, table.data(), table.size(), mapped.data(), context);
    chs::KeepLabels(image.data(), labels.data(), grid, keep.data(), keep.size(), kept.data(), context);
    for (uint64_t i = 0; i < n; ++i)
    {
      ASSERT_EQ(mapped[i], table[labels[i]]) << i;
      ASSERT_EQ(kept[i], keep[labels[i]] ? image[i] : 0.0f) << i;
    }
    // A label beyond the table: refused, nothing written.
    std::vector<uint16_t> untouched(n, 5);
    EXPECT_THROW(chs::MapLabels(labels.data(), grid, table.data(), 9, untouched.data(), context),
                 std::invalid_argument);
    std::vector<float> alsoUntouched(n, 5.0f);
    EXPECT_THROW(chs::KeepLabels(image.data(), labels.data(), grid, keep.data(), 9, alsoUntouched.data(), context),
                 std::invalid_argument);
    EXPECT_EQ(untouched, std::vector<uint16_t>(n, 5));
    EXPECT_EQ(alsoUntouched, std::vector<float>(n, 5.0f));
  }
}
