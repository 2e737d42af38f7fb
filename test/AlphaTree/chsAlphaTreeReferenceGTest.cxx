// The alpha-tree's CPU reference against independent oracles; the queries; the edge saliency.
#include "AlphaTree/chsAlphaTreeTestSupport.h"

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

TEST(AlphaTreeReference, SizeLimitsOfEachPixelType)
{
  ExpectSizeRefusals([](const auto * pixels, const Case & c)
                     { chs::ImageAlphaTreeCPU(pixels, GridOf(c), ParametersOf(c), NotCalled()); });
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
