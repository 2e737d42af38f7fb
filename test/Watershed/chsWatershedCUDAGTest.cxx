// The CUDA watershed against the CPU reference: inputs, types, voxel orders, overlapped transfers, bad input.
#include "Watershed/chsWatershedTestSupport.h"

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
