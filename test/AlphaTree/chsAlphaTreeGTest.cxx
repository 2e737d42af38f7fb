// Tests of the alpha-tree backends (include/chsAlphaTree.h): the CPU reference against oracles written from the
// definition (thresholded components of the test's own pixel graph at every level, the canonical structure), the
// CUDA backend against the CPU reference on many images, both construction algorithms, several tile shapes and
// repeated runs, and bad input.
#include "chsAlphaTree.h"
#include "AlphaTree/chsAlphaTreeOracles.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace
{

const chs::AlphaTreeAlgorithm kAlgorithms[] = { chs::AlphaTreeAlgorithm::Auto,
                                                chs::AlphaTreeAlgorithm::InsertAllEdges,
                                                chs::AlphaTreeAlgorithm::SkipRedundantEdges,
                                                chs::AlphaTreeAlgorithm::SpanningTree,
                                                chs::AlphaTreeAlgorithm::LevelSynchronous };

/** Whether the algorithm builds trees of these pixels (LevelSynchronous: integer scalars of 8 or 16 bits). */
template <typename T>
bool
Supports(chs::AlphaTreeAlgorithm algorithm, unsigned components)
{
  return algorithm != chs::AlphaTreeAlgorithm::LevelSynchronous ||
         (std::is_integral<T>::value && sizeof(T) <= 2 && components == 1);
}

struct Tree
{
  std::vector<uint32_t> parent;
  std::vector<double>   level;
};

struct Case
{
  int64_t  nx, ny, nz;
  bool     full;
  unsigned components = 1;
  int      norm       = 2; // 1, 2 or 0 (L-infinity) for vectors
};

/** An allocator that sizes the tree's vectors. */
chs::AlphaTreeAllocator
Into(Tree & t)
{
  return [&t](uint64_t nodes)
  {
    t.parent.assign(nodes, 0);
    t.level.assign(nodes, -1.0);
    return chs::AlphaTreeArrays{ t.parent.data(), t.level.data() };
  };
}

/** An allocator that must not be called (the run fails before). */
chs::AlphaTreeAllocator
NotCalled()
{
  return [](uint64_t) -> chs::AlphaTreeArrays
  {
    ADD_FAILURE() << "the allocator was called although the run fails";
    return {};
  };
}

chs::Grid
GridOf(const Case & c)
{
  chs::Grid g;
  g.size[0]   = uint64_t(c.nx);
  g.size[1]   = uint64_t(c.ny);
  g.size[2]   = uint64_t(c.nz);
  g.dimension = c.nz > 1 ? 3 : 2;
  return g;
}

chs::AlphaTreeParameters
ParametersOf(const Case & c)
{
  chs::AlphaTreeParameters p;
  p.graph.fullyConnected = c.full;
  p.graph.components     = c.components;
  p.graph.distance       = c.norm == 1   ? chs::VectorDistance::L1
                           : c.norm == 2 ? chs::VectorDistance::L2
                                         : chs::VectorDistance::LInfinity;
  return p;
}

template <typename T>
Tree
RunCPU(const std::vector<T> & v, const Case & c, const chs::AlphaTreeParameters & p)
{
  Tree       t;
  const auto r = chs::ImageAlphaTreeCPU(v.data(), GridOf(c), p, Into(t));
  EXPECT_EQ(r.nodes, t.parent.size());
  return t;
}

template <typename T>
Tree
RunCUDA(const std::vector<T> & v, const Case & c, const chs::AlphaTreeParameters & p)
{
  Tree       t;
  const auto r = chs::ImageAlphaTreeCUDA(v.data(), GridOf(c), p, Into(t), {});
  EXPECT_EQ(r.nodes, t.parent.size());
  return t;
}

/** Values with `levels` distinct grey levels (few: large flat zones), smoothed when `smooth`. */
template <typename T>
std::vector<T>
Values(const Case & c, unsigned seed, double levels, bool smooth)
{
  const uint64_t                         n = uint64_t(c.nx * c.ny * c.nz) * c.components;
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double>                    raw(n);
  for (auto & r : raw)
    r = u(rng);
  if (smooth)
    for (int pass = 0; pass < 3; ++pass)
      for (uint64_t i = c.components; i + c.components < n; ++i)
        raw[i] = (raw[i - c.components] + 2 * raw[i] + raw[i + c.components]) / 4;
  std::vector<T> v(n);
  for (uint64_t i = 0; i < n; ++i)
    v[i] = std::is_floating_point<T>::value ? T(raw[i] * levels) : T(std::floor(raw[i] * levels * 0.9999));
  return v;
}

template <typename T>
void
CheckReference(const std::vector<T> & v, const Case & c)
{
  const auto     p = ParametersOf(c);
  const Tree     t = RunCPU(v, c, p);
  const uint64_t n = uint64_t(c.nx * c.ny * c.nz);
  chs_test::ExpectCanonicalStructure(t.parent, t.level, n);
  chs_test::ExpectAlphaPartitions(
    t.parent, t.level, n, chs_test::ImageEdges(v, c.nx, c.ny, c.nz, c.components, c.full, c.norm));
}

template <typename T>
void
CheckCudaEqualsCPU(const std::vector<T> & v, const Case & c)
{
  auto       p   = ParametersOf(c);
  const Tree cpu = RunCPU(v, c, p);
  for (auto algorithm : kAlgorithms)
  {
    p.algorithm = algorithm;
    if (!Supports<T>(algorithm, c.components))
    {
      EXPECT_THROW(chs::ImageAlphaTreeCUDA(v.data(), GridOf(c), p, NotCalled(), {}), std::invalid_argument);
      continue;
    }
    const Tree gpu = RunCUDA(v, c, p);
    ASSERT_EQ(gpu.parent.size(), cpu.parent.size()) << "algorithm " << int(algorithm);
    EXPECT_EQ(gpu.parent, cpu.parent) << "algorithm " << int(algorithm);
    EXPECT_EQ(gpu.level, cpu.level) << "algorithm " << int(algorithm);
  }
  // The spanning tree with wide edge keys, as from 2^32 edge slots on.
  p.algorithm               = chs::AlphaTreeAlgorithm::SpanningTree;
  p.graph.forceWideEdgeKeys = true;
  const Tree keys           = RunCUDA(v, c, p);
  EXPECT_EQ(keys.parent, cpu.parent) << "spanning tree, wide edge keys";
  EXPECT_EQ(keys.level, cpu.level) << "spanning tree, wide edge keys";
  p.graph.forceWideEdgeKeys = false;
  if (std::is_integral<T>::value && sizeof(T) <= 2 && c.components == 1)
  {
    // 8-bit pixels: the tile stage's references to force entries in a bit set, as from 2^30 pixels on; 16-bit
    // pixels: 64-bit edge ids, as from 2^32 - 1 edge slots on.
    p.algorithm    = chs::AlphaTreeAlgorithm::LevelSynchronous;
    p.forceWideIds = true;
    const Tree gpu = RunCUDA(v, c, p);
    EXPECT_EQ(gpu.parent, cpu.parent) << "level-synchronous, wide ids";
    EXPECT_EQ(gpu.level, cpu.level) << "level-synchronous, wide ids";
    // 64-bit node ids, as from 2^31 pixels on (every edge sorted by level, no tile stage, no shared-memory tail).
    p.forceWideIds     = false;
    p.forceWideNodeIds = true;
    const Tree wide    = RunCUDA(v, c, p);
    EXPECT_EQ(wide.parent, cpu.parent) << "level-synchronous, 64-bit node ids";
    EXPECT_EQ(wide.level, cpu.level) << "level-synchronous, 64-bit node ids";
  }
}

} // namespace

TEST(AlphaTreeReference, HandMadeImage)
{
  // 4 x 1 image 0 0 2 5, 4-connected: flat zone {0, 1} at level 0, then {0, 1, 2} at 2, then everything at 3.
  const std::vector<uint8_t> v{ 0, 0, 2, 5 };
  const Case                 c{ 4, 1, 1, false };
  const Tree                 t = RunCPU(v, c, ParametersOf(c));
  EXPECT_EQ(t.parent, (std::vector<uint32_t>{ 4, 4, 5, 6, 5, 6, 6 }));
  EXPECT_EQ(t.level, (std::vector<double>{ 0, 0, 0, 0, 0, 2, 3 }));
}

TEST(AlphaTreeReference, ConstantAndSinglePixelImages)
{
  const Case                 c{ 5, 3, 1, true };
  const std::vector<uint8_t> v(15, 7);
  const Tree                 t = RunCPU(v, c, ParametersOf(c));
  ASSERT_EQ(t.parent.size(), 16u) << "a constant image has one node above its leaves";
  for (uint32_t x = 0; x < 16; ++x)
    EXPECT_EQ(t.parent[x], 15u);
  EXPECT_EQ(t.level[15], 0.0);

  const Case                 one{ 1, 1, 1, false };
  const std::vector<uint8_t> w{ 3 };
  const Tree                 single = RunCPU(w, one, ParametersOf(one));
  EXPECT_EQ(single.parent, (std::vector<uint32_t>{ 0 }));
}

TEST(AlphaTreeReference, MatchesThresholdedComponents)
{
  for (bool full : { false, true })
  {
    SCOPED_TRACE(full ? "full" : "face");
    CheckReference(Values<uint8_t>({ 17, 13, 1, full }, 1, 6, false), { 17, 13, 1, full });
    CheckReference(Values<uint8_t>({ 19, 11, 1, full }, 2, 256, true), { 19, 11, 1, full });
    CheckReference(Values<uint16_t>({ 15, 12, 1, full }, 3, 65536, true), { 15, 12, 1, full });
    CheckReference(Values<float>({ 14, 9, 1, full }, 4, 1.0, true), { 14, 9, 1, full });
    CheckReference(Values<uint8_t>({ 7, 6, 5, full }, 5, 5, false), { 7, 6, 5, full });
    CheckReference(Values<float>({ 6, 5, 4, full }, 6, 3.0, true), { 6, 5, 4, full });
    for (int norm : { 0, 1, 2 })
    {
      const Case c{ 11, 10, 1, full, 3, norm };
      CheckReference(Values<uint8_t>(c, 7 + norm, 8, false), c);
      const Case d{ 5, 4, 3, full, 2, norm };
      CheckReference(Values<float>(d, 9 + norm, 2.0, true), d);
    }
  }
}

TEST(AlphaTreeReference, BadInput)
{
  const Case               c{ 3, 3, 1, false };
  const std::vector<float> nan{ 0, 1, 2, 3, std::numeric_limits<float>::quiet_NaN(), 5, 6, 7, 8 };
  EXPECT_THROW(chs::ImageAlphaTreeCPU(nan.data(), GridOf(c), ParametersOf(c), NotCalled()), std::invalid_argument);
  chs::Grid empty;
  empty.size[0] = 0;
  const std::vector<uint8_t> v(9, 0);
  EXPECT_THROW(chs::ImageAlphaTreeCPU(v.data(), empty, ParametersOf(c), NotCalled()), std::invalid_argument);
  EXPECT_THROW(chs::ImageAlphaTreeCPU(v.data(), GridOf(c), ParametersOf(c), {}), std::invalid_argument);
  auto p             = ParametersOf(c);
  p.graph.components = 0;
  EXPECT_THROW(chs::ImageAlphaTreeCPU(v.data(), GridOf(c), p, NotCalled()), std::invalid_argument);
}

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

namespace
{
using chs_test::InvalidArgumentMessage;

/** 720 x 720 x 600 voxels, 26-connected: 311,040,000 pixels and 4,043,520,000 edge slots, whose sum passes 2^32 - 1. */
const Case kBeyondSlotIds{ 720, 720, 600, true };
/** 720 x 720 x 640 voxels, 26-connected: 331,776,000 pixels and 4,313,088,000 edge slots, more than 32-bit edge ids
 * number. */
const Case kBeyondEdgeIds{ 720, 720, 640, true };
/** 720 x 720 x 620 voxels, 26-connected: 321,408,000 pixels and 4,178,304,000 edge slots, whose sum passes 2^32 - 1
 * while the slots alone stay below it. */
const Case kBeyondSlotIds16{ 720, 720, 620, true };
/** 65,536 x 32,768 pixels: 2^31, one more than node ids of 32 bits allow (2n - 1 nodes). */
const Case kBeyondNodeIds{ 65536, 32768, 1, false };

/** A backend's size checks, made before any pixel is read (the one-pixel arrays are never read): float pixels beyond
 * the edge indices that their weight codes leave in a 64-bit key (33 bits), 8- and 16-bit pixels beyond those of
 * theirs (56 and 48 bits), which both backends check. 8- and 16-bit integer pixels have no other limit of their
 * own (GPU26ConnectedVolumeBeyond32BitSlotIds, GPU16BitVolumeBeyond32BitSlotIds and GPU16BitVolumeBeyond32BitEdgeIds
 * build such trees; from 2^31 pixels on, node ids are 64-bit). */
template <typename F>
void
ExpectSizeRefusals(F && build)
{
  const std::vector<uint16_t> u16(1);
  const std::vector<float>    f32(1);
  const std::vector<uint8_t>  u8(1);
  // 1024 x 1024 x 700, 26-connected: 9,542,041,600 edge slots.
  std::string what = InvalidArgumentMessage([&] { build(f32.data(), Case{ 1024, 1024, 700, true }); });
  EXPECT_NE(what.find("9542041600 edge slots; fewer than 2^33 are supported"), std::string::npos) << what;
  // 2^56 and 2^48 pixels, face-connected: three edge slots a pixel.
  what = InvalidArgumentMessage(
    [&] {
      build(u8.data(), Case{ int64_t(1) << 19, int64_t(1) << 19, int64_t(1) << 18, false });
    });
  EXPECT_NE(what.find("216172782113783808 edge slots; fewer than 2^56 are supported"), std::string::npos) << what;
  what = InvalidArgumentMessage(
    [&] {
      build(u16.data(), Case{ int64_t(1) << 16, int64_t(1) << 16, int64_t(1) << 16, false });
    });
  EXPECT_NE(what.find("844424930131968 edge slots; fewer than 2^48 are supported"), std::string::npos) << what;
}

/** A volume that the level-synchronous construction takes and the others cannot, when CHS_LARGE_TESTS is set: its
 * CUDA tree (also with the tile stage's wide references forced, for 8-bit pixels, and with 64-bit node ids, the path
 * of 2^31 pixels and more, written to 32-bit parents) must equal the CPU reference's. The 64-bit run is left out,
 * saying so, where the device cannot hold it. */
template <typename T>
void
ExpectLargeTreeEqualsReference(const Case & c, double levels)
{
  using Clock                             = std::chrono::steady_clock;
  const auto                            v = Values<T>(c, 51, levels, true);
  const auto                            p = ParametersOf(c);
  std::vector<std::string>              names{ "default" };
  std::vector<chs::AlphaTreeParameters> variants{ p };
  if (std::is_same<T, uint8_t>::value)
  {
    names.push_back("wide ids forced");
    variants.push_back(p);
    variants.back().forceWideIds = true;
  }
  names.push_back("64-bit node ids");
  variants.push_back(p);
  variants.back().forceWideNodeIds = true;
  std::vector<Tree> gpu(variants.size());
  for (size_t k = 0; k < variants.size(); ++k)
  {
    chs::RunInfo info;
    uint64_t     nodes = 0;
    const auto   t0    = Clock::now();
    try
    {
      nodes = chs::ImageAlphaTreeCUDA(v.data(), GridOf(c), variants[k], Into(gpu[k]), {}, &info).nodes;
    }
    catch (const chs::DeviceMemoryError & e)
    {
      if (k == 0)
        GTEST_SKIP() << e.what();
      std::cout << names[k] << ": not run, " << e.what() << std::endl;
      continue;
    }
    std::cout << names[k] << ": " << nodes << " nodes; CUDA "
              << std::chrono::duration<double>(Clock::now() - t0).count() << " s (kernels " << info.kernelMilliseconds
              << " ms, peak device memory " << info.peakDeviceBytes << " bytes, reserved " << info.reservedDeviceBytes
              << ")" << std::endl;
    EXPECT_EQ(nodes, gpu[k].parent.size());
    EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  }
  const auto t1  = Clock::now();
  const Tree cpu = RunCPU(v, c, p);
  std::cout << "CPU reference " << std::chrono::duration<double>(Clock::now() - t1).count() << " s" << std::endl;
  for (size_t k = 0; k < variants.size(); ++k)
  {
    if (gpu[k].parent.empty())
      continue;
    SCOPED_TRACE(names[k]);
    ASSERT_EQ(gpu[k].parent.size(), cpu.parent.size());
    // The first difference only: the vectors hold hundreds of millions of nodes.
    const auto parents = std::mismatch(gpu[k].parent.begin(), gpu[k].parent.end(), cpu.parent.begin());
    EXPECT_TRUE(parents.first == gpu[k].parent.end())
      << "parents differ first at node " << (parents.first - gpu[k].parent.begin());
    const auto levelsAt = std::mismatch(gpu[k].level.begin(), gpu[k].level.end(), cpu.level.begin());
    EXPECT_TRUE(levelsAt.first == gpu[k].level.end())
      << "levels differ first at node " << (levelsAt.first - gpu[k].level.begin());
  }
}
} // namespace

TEST(AlphaTreeReference, SizeLimitsOfEachPixelType)
{
  ExpectSizeRefusals([](const auto * pixels, const Case & c)
                     { chs::ImageAlphaTreeCPU(pixels, GridOf(c), ParametersOf(c), NotCalled()); });
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

namespace
{
/** The edge saliency of the alpha-tree (the level at which two pixels merge) equals the minimax path weight between
 * them, found by a search over the edges up to each weight in turn; the CUDA backend gives the same values. */
// 64-bit node ids (the path of trees of 2^31 pixels and more, forced on small images): the CPU reference's
// construction with 64-bit ids, and 64-bit parent arrays written by both backends, give the trees of 32-bit ids.
struct WideTree
{
  std::vector<uint64_t> parent;
  std::vector<double>   level;
};

chs::AlphaTreeAllocator
IntoWide(WideTree & t)
{
  return [&t](uint64_t nodes)
  {
    t.parent.assign(nodes, 0);
    t.level.assign(nodes, -1.0);
    chs::AlphaTreeArrays a;
    a.parent64 = t.parent.data();
    a.level    = t.level.data();
    return a;
  };
}

std::vector<uint64_t>
Widened(const std::vector<uint32_t> & v)
{
  return std::vector<uint64_t>(v.begin(), v.end());
}

const Case kWideCases[] = { { 13, 9, 1, false },
                            { 13, 9, 1, true },
                            { 7, 6, 5, false },
                            { 7, 6, 5, true },
                            { 1, 1, 1, false } };

template <typename T>
void
CheckWideNodeIds(const Case & c, double levels, bool cuda)
{
  const std::vector<T> v      = Values<T>(c, unsigned(c.nx * 7 + c.nz + (c.full ? 1 : 0)), levels, false);
  auto                 p      = ParametersOf(c);
  const Tree           narrow = RunCPU(v, c, p);
  const std::string what = std::string(typeid(T).name()) + ", " + std::to_string(c.nx) + " x " + std::to_string(c.ny) +
                           " x " + std::to_string(c.nz) + (c.full ? ", full" : ", faces");
  for (const bool forced : { false, true })
  {
    p.forceWideNodeIds = forced;
    WideTree   wide;
    const auto r = chs::ImageAlphaTreeCPU(v.data(), GridOf(c), p, IntoWide(wide));
    EXPECT_EQ(r.nodes, narrow.parent.size()) << what;
    EXPECT_EQ(wide.parent, Widened(narrow.parent)) << what << ", 64-bit parents, forced " << forced;
    EXPECT_EQ(wide.level, narrow.level) << what << ", 64-bit parents, forced " << forced;
    const Tree back = RunCPU(v, c, p);
    EXPECT_EQ(back.parent, narrow.parent) << what << ", 32-bit parents, forced " << forced;
    EXPECT_EQ(back.level, narrow.level) << what << ", 32-bit parents, forced " << forced;
  }
  if (!cuda)
    return;
  for (const bool forced : { false, true })
    for (auto algorithm : kAlgorithms)
    {
      if (!Supports<T>(algorithm, c.components))
        continue;
      // The level-synchronous and the spanning-tree constructions build with 64-bit ids when forced; v1 and v2
      // number in 32 bits.
      p.forceWideNodeIds = forced;
      p.algorithm        = algorithm;
      WideTree   wide;
      const auto r = chs::ImageAlphaTreeCUDA(v.data(), GridOf(c), p, IntoWide(wide), {});
      EXPECT_EQ(r.nodes, narrow.parent.size()) << what;
      EXPECT_EQ(wide.parent, Widened(narrow.parent))
        << what << ", CUDA, algorithm " << int(algorithm) << ", forced " << forced;
      EXPECT_EQ(wide.level, narrow.level) << what << ", CUDA, algorithm " << int(algorithm) << ", forced " << forced;
      const Tree back = RunCUDA(v, c, p);
      EXPECT_EQ(back.parent, narrow.parent)
        << what << ", CUDA to 32-bit parents, algorithm " << int(algorithm) << ", forced " << forced;
    }
}

void
CheckWideNodeIdsOfEveryType(bool cuda)
{
  for (const Case & c : kWideCases)
  {
    CheckWideNodeIds<uint8_t>(c, 5, cuda);
    CheckWideNodeIds<uint8_t>(c, 256, cuda);
    CheckWideNodeIds<uint16_t>(c, 3000, cuda);
    CheckWideNodeIds<int16_t>(c, 40, cuda);
    CheckWideNodeIds<float>(c, 10, cuda);
    Case vector       = c;
    vector.components = 3;
    CheckWideNodeIds<float>(vector, 4, cuda);
  }
}

TEST(AlphaTreeReference, WideNodeIdsGiveTheSameTree)
{
  CheckWideNodeIdsOfEveryType(false);
  // An allocator must give exactly one parent array.
  const Case            c{ 5, 4, 1, false };
  const auto            v = Values<uint8_t>(c, 3, 4, false);
  std::vector<uint32_t> p32(40);
  std::vector<uint64_t> p64(40);
  auto                  both = [&](uint64_t)
  {
    chs::AlphaTreeArrays a;
    a.parent   = p32.data();
    a.parent64 = p64.data();
    return a;
  };
  auto none = [](uint64_t) { return chs::AlphaTreeArrays{}; };
  for (const bool forced : { false, true })
  {
    auto p             = ParametersOf(c);
    p.forceWideNodeIds = forced;
    EXPECT_THROW(chs::ImageAlphaTreeCPU(v.data(), GridOf(c), p, both), std::invalid_argument);
    EXPECT_THROW(chs::ImageAlphaTreeCPU(v.data(), GridOf(c), p, none), std::invalid_argument);
  }
  EXPECT_EQ(p32, std::vector<uint32_t>(40, 0u)) << "nothing written";
  EXPECT_EQ(p64, std::vector<uint64_t>(40, 0u)) << "nothing written";
}

TEST(AlphaTreeCUDA, WideParentsGiveTheSameTree)
{
  if (!chs_test::HasCudaDevice())
    GTEST_SKIP() << "no CUDA device";
  CheckWideNodeIdsOfEveryType(true);
}

/** The queries on 64-bit parents (cuts with 64-bit labels, saliency maps, edge saliency, value ranges, areas) give
 * what they give on the same tree's 32-bit parents, on both backends. */
template <typename T>
void
CheckWideQueries(const Case & c, double levels)
{
  const std::vector<T> v    = Values<T>(c, 17, levels, true);
  const Tree           t    = RunCPU(v, c, ParametersOf(c));
  const auto           wide = Widened(t.parent);
  const uint64_t       n = uint64_t(c.nx * c.ny * c.nz), nodes = t.parent.size();
  std::vector<double>  range(nodes), range64(nodes);
  chs::AlphaTreeValueRanges(t.parent.data(), nodes, v.data(), n, c.components, range.data());
  chs::AlphaTreeValueRanges(wide.data(), nodes, v.data(), n, c.components, range64.data());
  EXPECT_EQ(range64, range);
  std::vector<uint64_t> area(nodes), area64(nodes);
  chs::TreeAreas(t.parent.data(), nodes, n, area.data());
  chs::TreeAreas(wide.data(), nodes, n, area64.data());
  EXPECT_EQ(area64, area);
  EXPECT_EQ(area.back(), n);
  const bool   cuda     = chs_test::HasCudaDevice();
  const double infinity = std::numeric_limits<double>::infinity();
  for (const double alpha : { 0.0, 1.0, levels / 8, infinity })
    for (const double omega : { infinity, levels / 4 })
    {
      std::vector<uint32_t> labels(n, 0);
      std::vector<uint64_t> labels64(n, 0);
      const uint64_t        count =
        chs::AlphaTreeCutCPU(t.parent.data(), t.level.data(), range.data(), n, nodes, alpha, omega, labels.data());
      EXPECT_EQ(
        chs::AlphaTreeCutCPU(wide.data(), t.level.data(), range.data(), n, nodes, alpha, omega, labels64.data()),
        count);
      EXPECT_EQ(labels64, Widened(labels)) << "alpha " << alpha << ", omega " << omega;
      EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), count);
      if (!cuda)
        continue;
      std::vector<uint64_t> gpu64(n, 0);
      EXPECT_EQ(
        chs::AlphaTreeCutCUDA(
          wide.data(), t.level.data(), range.data(), n, nodes, alpha, omega, gpu64.data(), chs::ExecutionContext()),
        count);
      EXPECT_EQ(gpu64, labels64) << "CUDA, alpha " << alpha << ", omega " << omega;
    }
  chs::Grid          grid    = GridOf(c);
  const uint64_t     samples = (2 * c.nx - 1) * (2 * c.ny - 1) * (c.nz > 1 ? 2 * c.nz - 1 : 1);
  std::vector<float> map(samples, -1.0f), map64(samples, -2.0f);
  chs::AlphaTreeSaliencyCPU(t.parent.data(), t.level.data(), nodes, grid, map.data());
  chs::AlphaTreeSaliencyCPU(wide.data(), t.level.data(), nodes, grid, map64.data());
  EXPECT_EQ(map64, map);
  // Edge saliency of every pair of pixels (i, i * 7 % n).
  std::vector<uint32_t> u(n), w(n);
  for (uint64_t i = 0; i < n; ++i)
    u[i] = uint32_t(i), w[i] = uint32_t(i * 7 % n);
  const auto          u64 = Widened(u), w64 = Widened(w);
  std::vector<double> edge(n, -1.0), edge64(n, -2.0);
  chs::AlphaTreeEdgeSaliencyCPU(t.parent.data(), t.level.data(), nodes, u.data(), w.data(), n, edge.data());
  chs::AlphaTreeEdgeSaliencyCPU(wide.data(), t.level.data(), nodes, u64.data(), w64.data(), n, edge64.data());
  EXPECT_EQ(edge64, edge);
  auto bad = u64;
  bad[1]   = nodes;
  EXPECT_THROW(
    chs::AlphaTreeEdgeSaliencyCPU(wide.data(), t.level.data(), nodes, bad.data(), w64.data(), n, edge64.data()),
    std::invalid_argument);
  if (!cuda)
    return;
  std::vector<float> gpuMap(samples, -3.0f);
  chs::AlphaTreeSaliencyCUDA(wide.data(), t.level.data(), nodes, grid, gpuMap.data(), chs::ExecutionContext());
  EXPECT_EQ(gpuMap, map);
  std::vector<double> gpuEdge(n, -3.0);
  chs::AlphaTreeEdgeSaliencyCUDA(
    wide.data(), t.level.data(), nodes, u64.data(), w64.data(), n, gpuEdge.data(), chs::ExecutionContext());
  EXPECT_EQ(gpuEdge, edge);
  EXPECT_THROW(
    chs::AlphaTreeEdgeSaliencyCUDA(
      wide.data(), t.level.data(), nodes, bad.data(), w64.data(), n, gpuEdge.data(), chs::ExecutionContext()),
    std::invalid_argument);
}

TEST(AlphaTreeQueries, WideParentsGiveTheSameResults)
{
  CheckWideQueries<uint8_t>({ 31, 17, 1, false }, 40);
  CheckWideQueries<uint8_t>({ 31, 17, 1, true }, 40);
  CheckWideQueries<uint16_t>({ 9, 8, 7, false }, 500);
  CheckWideQueries<float>({ 9, 8, 7, true }, 12);
}

TEST(AlphaTreeEdgeSaliency, IsTheMinimaxPathWeight)
{
  const Case           c{ 11, 8, 1, false };
  std::mt19937         rng(31);
  std::vector<uint8_t> v(88);
  for (auto & x : v)
    x = uint8_t(rng() % 6);
  const Tree t = RunCPU(v, c, ParametersOf(c));
  // The 4-neighbour edges, and random pairs of pixels.
  std::vector<uint32_t> u, w;
  for (uint32_t y = 0; y < 8; ++y)
    for (uint32_t x = 0; x < 11; ++x)
    {
      if (x + 1 < 11)
        u.push_back(y * 11 + x), w.push_back(y * 11 + x + 1);
      if (y + 1 < 8)
        u.push_back(y * 11 + x), w.push_back((y + 1) * 11 + x);
    }
  for (int i = 0; i < 40; ++i)
    u.push_back(uint32_t(rng() % 88)), w.push_back(uint32_t(rng() % 88));
  std::vector<double> saliency(u.size(), -1.0);
  chs::AlphaTreeEdgeSaliencyCPU(
    t.parent.data(), t.level.data(), t.parent.size(), u.data(), w.data(), u.size(), saliency.data());
  auto connectedUpTo = [&](uint32_t a, uint32_t b, int alpha)
  {
    std::vector<bool>     seen(88, false);
    std::vector<uint32_t> stack{ a };
    seen[a] = true;
    while (!stack.empty())
    {
      const uint32_t p = stack.back();
      stack.pop_back();
      const int x = int(p % 11), y = int(p / 11);
      const int dx[4] = { 1, -1, 0, 0 }, dy[4] = { 0, 0, 1, -1 };
      for (int k = 0; k < 4; ++k)
      {
        const int qx = x + dx[k], qy = y + dy[k];
        if (qx < 0 || qx >= 11 || qy < 0 || qy >= 8)
          continue;
        const uint32_t q = uint32_t(qy * 11 + qx);
        if (!seen[q] && std::abs(int(v[p]) - int(v[q])) <= alpha)
        {
          seen[q] = true;
          stack.push_back(q);
        }
      }
    }
    return bool(seen[b]);
  };
  for (size_t i = 0; i < u.size(); ++i)
  {
    int alpha = 0;
    while (!connectedUpTo(u[i], w[i], alpha))
      ++alpha;
    EXPECT_EQ(saliency[i], double(alpha)) << "pixels " << u[i] << " and " << w[i];
  }
  std::vector<uint32_t> bad = u;
  bad[3]                    = uint32_t(t.parent.size());
  EXPECT_THROW(chs::AlphaTreeEdgeSaliencyCPU(
                 t.parent.data(), t.level.data(), t.parent.size(), bad.data(), w.data(), u.size(), saliency.data()),
               std::invalid_argument);
  if (!chs_test::HasCudaDevice())
    return;
  std::vector<double> gpu(u.size(), -2.0);
  chs::AlphaTreeEdgeSaliencyCUDA(t.parent.data(),
                                 t.level.data(),
                                 t.parent.size(),
                                 u.data(),
                                 w.data(),
                                 u.size(),
                                 gpu.data(),
                                 chs::ExecutionContext());
  EXPECT_EQ(gpu, saliency);
  EXPECT_THROW(chs::AlphaTreeEdgeSaliencyCUDA(t.parent.data(),
                                              t.level.data(),
                                              t.parent.size(),
                                              bad.data(),
                                              w.data(),
                                              u.size(),
                                              gpu.data(),
                                              chs::ExecutionContext()),
               std::invalid_argument);
}
} // namespace
