// Tests of the alpha-tree backends (include/chs/AlphaTree.h): the CPU reference against oracles written from the
// definition (thresholded components of the test's own pixel graph at every level, the canonical structure), the
// CUDA backend against the CPU reference on many images, both construction algorithms, several tile shapes and
// repeated runs, and bad input.
// What the alpha-tree tests share: oracles, inputs, helpers.
#ifndef chsAlphaTreeTestSupport_h
#define chsAlphaTreeTestSupport_h

#include "AlphaTree/chsAlphaTreeBackends.h"
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

} // namespace

#endif
