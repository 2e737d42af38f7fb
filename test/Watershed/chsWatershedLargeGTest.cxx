// Watershed and waterfall volumes above 2^32 voxels on the GPU (CHS_LARGE_TESTS).
#include "Watershed/chsWatershedTestSupport.h"

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
