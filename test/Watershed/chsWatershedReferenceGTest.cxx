// The watershed's and waterfall's CPU reference against independent oracles; bad input.
#include "Watershed/chsWatershedTestSupport.h"

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
