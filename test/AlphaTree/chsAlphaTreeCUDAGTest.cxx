// The CUDA alpha-tree constructions against the CPU reference; bad input; size limits; wide parents.
#include "AlphaTree/chsAlphaTreeTestSupport.h"

TEST(AlphaTreeCUDA, EqualsReference2D)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  for (bool full : { false, true })
  {
    SCOPED_TRACE(full ? "8-connected" : "4-connected");
    CheckCudaEqualsCPU(Values<uint8_t>({ 70, 45, 1, full }, 11, 256, false), { 70, 45, 1, full });
    CheckCudaEqualsCPU(Values<uint8_t>({ 101, 67, 1, full }, 12, 256, true), { 101, 67, 1, full });
    CheckCudaEqualsCPU(Values<uint8_t>({ 64, 64, 1, full }, 13, 4, false), { 64, 64, 1, full });
    CheckCudaEqualsCPU(Values<uint16_t>({ 77, 50, 1, full }, 14, 65536, true), { 77, 50, 1, full });
    CheckCudaEqualsCPU(Values<uint16_t>({ 300, 260, 1, full }, 15, 65536, false), { 300, 260, 1, full });
    CheckCudaEqualsCPU(Values<float>({ 93, 41, 1, full }, 16, 10.0, true), { 93, 41, 1, full });
    CheckCudaEqualsCPU(Values<uint8_t>({ 513, 1, 1, full }, 17, 3, false), { 513, 1, 1, full });
    CheckCudaEqualsCPU(Values<uint8_t>({ 1, 300, 1, full }, 18, 3, false), { 1, 300, 1, full });
    CheckCudaEqualsCPU(std::vector<uint8_t>(40 * 33, 9), { 40, 33, 1, full });
    CheckCudaEqualsCPU(std::vector<float>(1, 2.5f), { 1, 1, 1, full });
    for (int norm : { 0, 1, 2 })
    {
      const Case c{ 45, 38, 1, full, 3, norm };
      CheckCudaEqualsCPU(Values<uint8_t>(c, 19 + norm, 256, true), c);
      CheckCudaEqualsCPU(Values<float>(c, 22 + norm, 1.0, false), c);
    }
  }
}

TEST(AlphaTreeCUDA, EqualsReference3D)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  for (bool full : { false, true })
  {
    SCOPED_TRACE(full ? "26-connected" : "6-connected");
    CheckCudaEqualsCPU(Values<uint8_t>({ 19, 17, 13, full }, 31, 256, true), { 19, 17, 13, full });
    CheckCudaEqualsCPU(Values<uint8_t>({ 20, 16, 9, full }, 32, 3, false), { 20, 16, 9, full });
    CheckCudaEqualsCPU(Values<uint16_t>({ 23, 21, 10, full }, 33, 65536, false), { 23, 21, 10, full });
    CheckCudaEqualsCPU(Values<float>({ 12, 11, 17, full }, 34, 5.0, true), { 12, 11, 17, full });
    CheckCudaEqualsCPU(std::vector<uint16_t>(9 * 10 * 11, 300), { 9, 10, 11, full });
    const Case c{ 14, 13, 9, full, 4, 2 };
    CheckCudaEqualsCPU(Values<uint8_t>(c, 35, 256, true), c);
    // Whole and partial tiles of 16-bit noise (16 x 16 x 8 voxels, 16 x 8 x 8 26-connected): many components and
    // parallel edges per tile after the spanning tree's tile rounds.
    CheckCudaEqualsCPU(Values<uint16_t>({ 48, 40, 27, full }, 36, 65536, false), { 48, 40, 27, full });
  }
}

TEST(AlphaTreeCUDA, SpanningTreeOnWholeTiles)
{
  // The spanning tree's tile rounds on whole tiles (64 x 32 pixels, 16 x 16 x 8 voxels) of 16-bit noise, where each
  // tile ends with many components and parallel edges between them, run after run; small enough for racecheck.
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  for (const Case & c : { Case{ 128, 64, 1, false }, Case{ 128, 64, 1, true }, Case{ 32, 32, 16, false } })
  {
    const auto v   = Values<uint16_t>(c, 61 + unsigned(c.full), 65536, false);
    auto       p   = ParametersOf(c);
    const Tree cpu = RunCPU(v, c, p);
    p.algorithm    = chs::AlphaTreeAlgorithm::SpanningTree;
    for (int run = 0; run < 2; ++run)
    {
      const Tree gpu = RunCUDA(v, c, p);
      EXPECT_EQ(gpu.parent, cpu.parent) << c.nx << "x" << c.ny << "x" << c.nz << (c.full ? " full" : "") << ", run "
                                        << run;
      EXPECT_EQ(gpu.level, cpu.level);
    }
  }
}

TEST(AlphaTreeCUDA, LevelSynchronousGridAndBlockLevels)
{
  // Levels with more edges than one block takes (the whole grid runs them) between levels with few (block 0 runs
  // them alone), in both orders, 2D and 3D, several runs; 8-bit images through the tile stage, 16-bit ones without.
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  // The level-synchronous tree equals the CPU reference's, run after run.
  auto Check = [](const auto & image, const Case & c, int runs, const std::string & what)
  {
    auto       p   = ParametersOf(c);
    const Tree cpu = RunCPU(image, c, p);
    p.algorithm    = chs::AlphaTreeAlgorithm::LevelSynchronous;
    for (int run = 0; run < runs; ++run)
    {
      const Tree gpu = RunCUDA(image, c, p);
      EXPECT_EQ(gpu.parent, cpu.parent) << what << ", run " << run;
      EXPECT_EQ(gpu.level, cpu.level) << what << ", run " << run;
    }
  };
  for (bool full : { false, true })
  {
    const Case           c{ 301, 257, 1, full };
    auto                 v = Values<uint8_t>(c, 51, 6, true);
    std::mt19937         rng(52);
    std::vector<uint8_t> w = v;
    for (size_t i = 0; i < w.size(); i += 37 + rng() % 50)
      w[i] = uint8_t(w[i] + 10 + rng() % 200); // isolated peaks: many levels with a few edges each
    for (const auto & image : { v, w })
      Check(image, c, 3, full ? "8-connected" : "4-connected");
    // 8-bit volumes run the tile stage (16 x 16 x 8 tiles, partial ones on three sides).
    const Case           e{ 70, 45, 37, full };
    std::vector<uint8_t> b = Values<uint8_t>(e, 54, 8, true);
    for (size_t i = 0; i < b.size(); i += 31 + rng() % 45)
      b[i] = uint8_t(b[i] + 10 + rng() % 200);
    Check(b, e, 2, full ? "26-connected 8-bit volume" : "6-connected 8-bit volume");
    const Case d{ 41, 37, 29, full };
    auto       u = Values<uint16_t>(d, 53, 5, true);
    for (size_t i = 0; i < u.size(); i += 29 + rng() % 40)
      u[i] = uint16_t(u[i] + 100 + rng() % 60000);
    Check(u, d, 1, full ? "26-connected 16-bit volume" : "6-connected 16-bit volume");
  }
}

TEST(AlphaTreeCUDA, SameTreeForEveryTileAndRun)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  const Case c2{ 150, 97, 1, true };
  const auto v2  = Values<uint16_t>(c2, 41, 4096, true);
  auto       p   = ParametersOf(c2);
  const Tree cpu = RunCPU(v2, c2, p);
  for (auto algorithm : kAlgorithms)
    for (auto tile : { std::vector<unsigned>{ 8, 8, 1 }, { 16, 16, 1 }, { 32, 32, 1 }, { 64, 4, 1 }, { 5, 7, 1 } })
      for (int run = 0; run < 3; ++run)
      {
        p.algorithm    = algorithm;
        p.tileX        = tile[0];
        p.tileY        = tile[1];
        p.tileZ        = tile[2];
        const Tree gpu = RunCUDA(v2, c2, p);
        EXPECT_EQ(gpu.parent, cpu.parent) << "tile " << tile[0] << "x" << tile[1] << " run " << run;
        EXPECT_EQ(gpu.level, cpu.level);
      }
  const Case c3{ 21, 18, 17, false };
  const auto v3   = Values<uint8_t>(c3, 42, 256, true);
  auto       p3   = ParametersOf(c3);
  const Tree cpu3 = RunCPU(v3, c3, p3);
  for (auto tile : { std::vector<unsigned>{ 4, 4, 4 }, { 8, 8, 8 }, { 16, 8, 8 }, { 3, 5, 7 } })
  {
    p3.tileX       = tile[0];
    p3.tileY       = tile[1];
    p3.tileZ       = tile[2];
    const Tree gpu = RunCUDA(v3, c3, p3);
    EXPECT_EQ(gpu.parent, cpu3.parent) << "tile " << tile[0] << "x" << tile[1] << "x" << tile[2];
  }
}

TEST(AlphaTreeCUDA, BadInput)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  const Case               c{ 3, 3, 1, false };
  const std::vector<float> nan{ 0, 1, 2, 3, 4, 5, 6, std::numeric_limits<float>::quiet_NaN(), 8 };
  try
  {
    chs::ImageAlphaTreeCUDA(nan.data(), GridOf(c), ParametersOf(c), NotCalled(), {});
    ADD_FAILURE() << "no exception for a NaN pixel";
  }
  catch (const std::invalid_argument & e)
  {
    EXPECT_NE(std::string(e.what()).find("pixel 7 is NaN"), std::string::npos) << e.what();
  }
  auto p  = ParametersOf(c);
  p.tileX = 64;
  p.tileY = 64;
  const std::vector<uint8_t> v(9, 0);
  EXPECT_THROW(chs::ImageAlphaTreeCUDA(v.data(), GridOf(c), p, NotCalled(), {}), std::invalid_argument);
}

TEST(AlphaTreeCUDA, SizeLimitsOfEachPixelTypeAndConstruction)
{
  CHS_REQUIRE_GPU();
  ExpectSizeRefusals([](const auto * pixels, const Case & c)
                     { chs::ImageAlphaTreeCUDA(pixels, GridOf(c), ParametersOf(c), NotCalled(), {}); });
  // 2^31 pixels: the level-synchronous construction with 64-bit node ids, some 294 GB, and the spanning tree with
  // 64-bit node ids (float pixels), refused on a device seen with 100 GiB free before they allocate or read a pixel.
  chs::testing::SetDeviceMemoryLimit(uint64_t(100) << 30);
  const uint64_t allocations = chs::testing::DeviceAllocations();
  for (const auto & build :
       { std::function<void()>(
           []
           {
             const std::vector<uint8_t> one(1);
             chs::ImageAlphaTreeCUDA(one.data(), GridOf(kBeyondNodeIds), ParametersOf(kBeyondNodeIds), NotCalled(), {});
           }),
         std::function<void()>(
           []
           {
             const std::vector<uint16_t> one(1);
             chs::ImageAlphaTreeCUDA(one.data(), GridOf(kBeyondNodeIds), ParametersOf(kBeyondNodeIds), NotCalled(), {});
           }),
         std::function<void()>(
           []
           {
             const std::vector<float> one(1);
             chs::ImageAlphaTreeCUDA(one.data(), GridOf(kBeyondNodeIds), ParametersOf(kBeyondNodeIds), NotCalled(), {});
           }) })
  {
    try
    {
      build();
      ADD_FAILURE() << "a tree of 2^31 pixels was built with a one-pixel array";
    }
    catch (const chs::DeviceMemoryError & e)
    {
      EXPECT_NE(std::string(e.what()).find("the alpha-tree of 65536 x 32768 voxels"), std::string::npos) << e.what();
    }
  }
  // Float pixels beyond 32-bit edge ids: the spanning tree with wide keys, some 89 GB before Boruvka's later rounds,
  // refused on a device seen with 8 GiB free.
  chs::testing::SetDeviceMemoryLimit(uint64_t(8) << 30);
  try
  {
    const std::vector<float> one(1);
    chs::ImageAlphaTreeCUDA(one.data(), GridOf(kBeyondEdgeIds), ParametersOf(kBeyondEdgeIds), NotCalled(), {});
    ADD_FAILURE() << "a float tree of 331M voxels was built with a one-pixel array";
  }
  catch (const chs::DeviceMemoryError & e)
  {
    EXPECT_NE(std::string(e.what()).find("the alpha-tree of 720 x 720 x 640 voxels"), std::string::npos) << e.what();
  }
  EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << "nothing allocated";
  chs::testing::SetDeviceMemoryLimit(0);
  // Unsigned 8-bit pixels beyond the 32-bit slot ids: v1 and v2 refuse them.
  const std::vector<uint8_t> u8(1);
  for (auto algorithm : { chs::AlphaTreeAlgorithm::InsertAllEdges, chs::AlphaTreeAlgorithm::SkipRedundantEdges })
  {
    auto p      = ParametersOf(kBeyondSlotIds);
    p.algorithm = algorithm;
    const std::string what =
      InvalidArgumentMessage([&] { chs::ImageAlphaTreeCUDA(u8.data(), GridOf(kBeyondSlotIds), p, NotCalled(), {}); });
    EXPECT_NE(what.find("edge slots; their sum must stay below 2^32 - 1 for the"), std::string::npos) << what;
  }
  // 2^32 pixels: the spanning tree numbers pixels in 32 bits.
  const std::vector<uint16_t> u16(1);
  const Case                  pixelIds{ 65536, 65536, 1, false };
  auto                        p = ParametersOf(pixelIds);
  p.algorithm                   = chs::AlphaTreeAlgorithm::SpanningTree;
  const std::string what =
    InvalidArgumentMessage([&] { chs::ImageAlphaTreeCUDA(u16.data(), GridOf(pixelIds), p, NotCalled(), {}); });
  EXPECT_NE(what.find("the image has 4294967296 pixels; at most 4294967295 are supported"), std::string::npos) << what;
}

TEST(AlphaTreeCUDA, WideParentsGiveTheSameTree)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  CheckWideNodeIdsOfEveryType(true);
}
