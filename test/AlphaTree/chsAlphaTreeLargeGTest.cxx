// Alpha-trees of volumes beyond 32-bit slot and edge ids on the GPU (CHS_LARGE_TESTS).
#include "AlphaTree/chsAlphaTreeTestSupport.h"

/** An unsigned 8-bit volume whose pixels plus edge slots pass 2^32 - 1 (720 x 720 x 600, 26-connected; about 30 GB of
 * device memory), when CHS_LARGE_TESTS is set; the CPU reference takes some 50 GB of host memory and a few minutes. */
TEST(AlphaTreeCUDA, GPU26ConnectedVolumeBeyond32BitSlotIds)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  ExpectLargeTreeEqualsReference<uint8_t>(kBeyondSlotIds, 256);
}

/** The same for 16-bit pixels, whose pixels plus edge slots pass 2^32 - 1 while the slots alone do not (720 x 720 x
 * 620, 26-connected; about 60 GB of device memory): Auto takes the level-synchronous construction. */
TEST(AlphaTreeCUDA, GPU16BitVolumeBeyond32BitSlotIds)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  ExpectLargeTreeEqualsReference<uint16_t>(kBeyondSlotIds16, 65536);
}

/** 16-bit pixels beyond 32-bit edge ids (720 x 720 x 640, 26-connected: 4.31e9 edge slots; about 105 GB of device
 * memory, skipped where the device has less): the level-synchronous construction numbers the edges in 64 bits. The
 * CPU reference takes some 7 minutes on 16 cores. */
TEST(AlphaTreeCUDA, GPU16BitVolumeBeyond32BitEdgeIds)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  ExpectLargeTreeEqualsReference<uint16_t>(kBeyondEdgeIds, 65536);
}

/** A float volume beyond 32-bit edge indices (720 x 720 x 640, 26-connected: 4.31e9 edge slots), when CHS_LARGE_TESTS
 * is set: the spanning tree with wide edge keys. Its pixels are whole numbers below 64, so its alpha-tree is that of
 * the same volume in 8 bits, which the level-synchronous construction builds (checked against the CPU reference at
 * this size by GPU26ConnectedVolumeBeyond32BitSlotIds). Smooth values: few live edges leave the tile rounds (a noisy
 * volume of this size needs more memory than an H200 has). */
TEST(AlphaTreeCUDA, GPUFloatVolumeBeyond32BitEdgeIds)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  using Clock            = std::chrono::steady_clock;
  const Case           c = kBeyondEdgeIds;
  const uint64_t       n = uint64_t(c.nx * c.ny * c.nz);
  std::vector<uint8_t> v8(n);
  for (uint64_t i = 0; i < n; ++i)
  {
    const uint64_t x = i % uint64_t(c.nx), y = i / uint64_t(c.nx) % uint64_t(c.ny), z = i / uint64_t(c.nx * c.ny);
    v8[i] = uint8_t((x / 48 + y / 64 + z / 80 + (x + 2 * y + 3 * z) / 97) % 64);
  }
  const std::vector<float> v32(v8.begin(), v8.end());
  Tree                     spanning, levels;
  for (int k = 0; k < 2; ++k)
  {
    auto p      = ParametersOf(c);
    p.algorithm = k == 0 ? chs::AlphaTreeAlgorithm::Auto : chs::AlphaTreeAlgorithm::LevelSynchronous;
    chs::RunInfo info;
    const auto   t0 = Clock::now();
    try
    {
      if (k == 0)
        chs::ImageAlphaTreeCUDA(v32.data(), GridOf(c), p, Into(spanning), {}, &info);
      else
        chs::ImageAlphaTreeCUDA(v8.data(), GridOf(c), p, Into(levels), {}, &info);
    }
    catch (const chs::DeviceMemoryError & e)
    {
      GTEST_SKIP() << e.what();
    }
    std::cout << (k == 0 ? "float, spanning tree" : "uint8, level-synchronous") << ": "
              << (k == 0 ? spanning : levels).parent.size() << " nodes; CUDA "
              << std::chrono::duration<double>(Clock::now() - t0).count() << " s (kernels " << info.kernelMilliseconds
              << " ms, peak device memory " << info.peakDeviceBytes << " bytes, reserved " << info.reservedDeviceBytes
              << ")" << std::endl;
    EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  }
  ASSERT_EQ(spanning.parent.size(), levels.parent.size());
  const auto parents = std::mismatch(spanning.parent.begin(), spanning.parent.end(), levels.parent.begin());
  EXPECT_TRUE(parents.first == spanning.parent.end())
    << "parents differ first at node " << (parents.first - spanning.parent.begin());
  const auto levelsAt = std::mismatch(spanning.level.begin(), spanning.level.end(), levels.level.begin());
  EXPECT_TRUE(levelsAt.first == spanning.level.end())
    << "levels differ first at node " << (levelsAt.first - spanning.level.begin());
}
