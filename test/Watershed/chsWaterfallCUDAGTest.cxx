// The CUDA waterfall against the CPU reference: both level paths, wide indices.
#include "Watershed/chsWatershedTestSupport.h"

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

// The sizes choose, as include/chs/Watershed.h says: the region graph for 2^20 voxels or more when its edges (12 bytes
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
