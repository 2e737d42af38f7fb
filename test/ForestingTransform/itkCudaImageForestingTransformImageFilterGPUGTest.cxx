// The filter's CUDA backend against brute force and the CPU reference; failures; large volumes.
#include "ForestingTransform/itkCudaImageForestingTransformTestSupport.h"

TEST(CudaImageForestingTransformImageFilter, GPUMatchesBruteForce)
{
  CHS_REQUIRE_GPU();
  unsigned seed = 200;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      auto w2 = RandomWeights<uint8_t, 2>(Size<itk::Image<uint8_t, 2>>({ 45, 37 }), 3, seed++);
      ExpectMatchesOracle<uint8_t, 2>(
        w2, Seeds<2>(w2->GetLargestPossibleRegion().GetSize(), 5, 3, seed++), Backend::CUDA, full, arc);
      auto w3 = RandomWeights<uint16_t, 3>(Size<itk::Image<uint16_t, 3>>({ 13, 11, 10 }), 4, seed++);
      ExpectMatchesOracle<uint16_t, 3>(
        w3, Seeds<3>(w3->GetLargestPossibleRegion().GetSize(), 4, 3, seed++), Backend::CUDA, full, arc);
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUMatchesCPU2D)
{
  CHS_REQUIRE_GPU();
  using W8      = itk::Image<uint8_t, 2>;
  using WF      = itk::Image<float, 2>;
  unsigned seed = 300;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto size = Size<W8>({ 301, 197 });
      ExpectBackendsAgree<uint8_t, 2>(
        RandomWeights<uint8_t, 2>(size, 256, seed), Seeds<2>(size, 40, 9, seed + 1), full, arc, "random uint8");
      ExpectBackendsAgree<float, 2>(SmoothWeights<float, 2>(size, 1000.0, 0, seed + 2),
                                    Seeds<2>(size, 40, 9, seed + 3),
                                    full,
                                    arc,
                                    "smoothed noise, float");
      ExpectBackendsAgree<uint8_t, 2>(SmoothWeights<uint8_t, 2>(size, 250.0, 5, seed + 4),
                                      Seeds<2>(size, 30, 30, seed + 5),
                                      full,
                                      arc,
                                      "quantised, wide plateaux");
      ExpectBackendsAgree<uint8_t, 2>(MakeImage<W8>(size, 3), Seeds<2>(size, 25, 25, seed + 6), full, arc, "constant");
      ExpectBackendsAgree<float, 2>(SmoothWeights<float, 2>(Size<WF>({ 700, 90 }), 50.0, 8, seed + 7),
                                    Seeds<2>(Size<WF>({ 700, 90 }), 3, 3, seed + 8, true),
                                    full,
                                    arc,
                                    "seeds in one corner");
      seed += 10;
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUMatchesCPU3D)
{
  CHS_REQUIRE_GPU();
  using W       = itk::Image<int16_t, 3>;
  unsigned seed = 400;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto size = Size<W>({ 37, 29, 23 });
      ExpectBackendsAgree<int16_t, 3>(
        RandomWeights<int16_t, 3>(size, 1000, seed), Seeds<3>(size, 30, 5, seed + 1), full, arc, "random int16");
      ExpectBackendsAgree<float, 3>(SmoothWeights<float, 3>(size, 10.0, 0, seed + 2),
                                    Seeds<3>(size, 20, 20, seed + 3),
                                    full,
                                    arc,
                                    "smoothed noise, float");
      ExpectBackendsAgree<uint32_t, 3>(SmoothWeights<uint32_t, 3>(size, 100000.0, 4, seed + 4),
                                       Seeds<3>(size, 20, 4, seed + 5),
                                       full,
                                       arc,
                                       "quantised uint32");
      ExpectBackendsAgree<uint8_t, 3>(SmoothWeights<uint8_t, 3>(Size<W>({ 90, 20, 18 }), 30.0, 3, seed + 6),
                                      Seeds<3>(Size<W>({ 90, 20, 18 }), 2, 2, seed + 7, true),
                                      full,
                                      arc,
                                      "seeds in one corner");
      seed += 10;
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUCheckerboardAndRamp)
{
  CHS_REQUIRE_GPU();
  using W          = itk::Image<uint16_t, 2>;
  const auto size  = Size<W>({ 130, 66 });
  auto       board = Checkerboard<W>(size);
  auto       ramp  = MakeImage<W>(size);
  for (size_t i = 0; i < NumberOfPixels(size); ++i)
    ramp->GetBufferPointer()[i] = static_cast<uint16_t>(i % size[0]);
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      ExpectBackendsAgree<uint16_t, 2>(board, Seeds<2>(size, 12, 4, 7), full, arc, "checkerboard");
      ExpectBackendsAgree<uint16_t, 2>(ramp, Seeds<2>(size, 12, 4, 8), full, arc, "ramp");
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUSignedWeightsAgreeAndNegativesThrow)
{
  // Signed weights run as the unsigned integers of their bits
  // (src/Engines/ForestingTransform/chsForestingTransformSigned.cu): the CPU reference's transform over the whole
  // non-negative range, and the first negative weight (raster order) named as the CPU reference names it, nothing
  // written, the filter running again after.
  CHS_REQUIRE_GPU();
  const itk::Size<2> size = { { 45, 37 } };
  unsigned           seed = 700;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      ExpectBackendsAgree<int8_t, 2>(
        RandomWeights<int8_t, 2>(size, 128, seed), Seeds<2>(size, 20, 5, seed + 1), full, arc, "random int8, 0..127");
      auto w32                      = RandomWeights<int32_t, 2>(size, 1000, seed + 2);
      w32->GetBufferPointer()[100]  = std::numeric_limits<int32_t>::max();
      w32->GetBufferPointer()[1000] = std::numeric_limits<int32_t>::max();
      ExpectBackendsAgree<int32_t, 2>(w32, Seeds<2>(size, 20, 5, seed + 3), full, arc, "int32 with its largest value");
      seed += 10;
    }
  auto weights                             = RandomWeights<int16_t, 2>(size, 50, 17);
  weights->GetBufferPointer()[5 * 45 + 2]  = std::numeric_limits<int16_t>::min();
  weights->GetBufferPointer()[3 * 45 + 40] = -1; // the first in raster order
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    auto filter = IFT<int16_t, 2>::New();
    filter->SetInput(weights);
    filter->SetSeedImage(Seeds<2>(size, 20, 5, 18));
    filter->SetBackend(b);
    try
    {
      filter->Update();
      ADD_FAILURE() << "negative weight: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("(40, 3)"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";
  }
  weights->GetBufferPointer()[5 * 45 + 2]  = 0;
  weights->GetBufferPointer()[3 * 45 + 40] = std::numeric_limits<int16_t>::max();
  weights->Modified();
  ExpectBackendsAgree<int16_t, 2>(weights, Seeds<2>(size, 20, 5, 18), true, ArcWeight::Maximum, "int16 after the fix");
}

TEST(CudaImageForestingTransformImageFilter, GPURoundLimitThrows)
{
  CHS_REQUIRE_GPU();
  // One seed in a corner of a 600 x 600 image: the front crosses about 19 tiles each way, far more than 3 rounds.
  using W                      = itk::Image<uint8_t, 2>;
  auto weights                 = RandomWeights<uint8_t, 2>(Size<W>({ 600, 600 }), 200, 5);
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 600, 600 }));
  seeds->GetBufferPointer()[0] = 1;
  auto filter                  = IFT<uint8_t, 2>::New();
  filter->SetInput(weights);
  filter->SetSeedImage(seeds);
  filter->SetBackend(Backend::CUDA);
  filter->SetMaximumNumberOfRounds(3); // fewer than a batch of rounds: the limit is exact
  try
  {
    filter->Update();
    ADD_FAILURE() << "no exception at the round limit";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("did not converge within 3 rounds"), std::string::npos)
      << e.GetDescription();
  }
  filter->SetMaximumNumberOfRounds(0);
  ASSERT_NO_THROW(filter->Update());
  EXPECT_GT(filter->GetNumberOfRounds(), 3u);
}

TEST(CudaImageForestingTransformImageFilter, GPUAllocationFailureThrowsAndLeaksNothing)
{
  CHS_REQUIRE_GPU();
  using W             = itk::Image<float, 2>;
  auto     weights    = SmoothWeights<float, 2>(Size<W>({ 256, 256 }), 10.0, 0, 4);
  auto     seeds      = Seeds<2>(weights->GetLargestPossibleRegion().GetSize(), 20, 5, 6);
  uint64_t freeBefore = 0, total = 0, freeAfter = 0;
  chs::CudaDeviceMemoryInfo(0, freeBefore, total);
  for (int k = 1; k <= 8; ++k)
  {
    auto filter = IFT<float, 2>::New();
    filter->SetInput(weights);
    filter->SetSeedImage(seeds);
    filter->SetBackend(Backend::CUDA);
    chs::testing::FailDeviceAllocationAfter(k);
    bool threw = false;
    try
    {
      filter->Update();
    }
    catch (const itk::ExceptionObject &)
    {
      threw = true;
    }
    chs::testing::FailDeviceAllocationAfter(0);
    if (!threw)
      break; // fewer than k allocations
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr);
    ASSERT_NO_THROW(filter->Update()) << "after allocation failure " << k;
  }
  chs::CudaDeviceMemoryInfo(0, freeAfter, total);
  EXPECT_GE(freeAfter + (4u << 20), freeBefore) << "device memory leaked";
}

// The 64-bit path (forced on small images) on both backends gives the 32-bit path's labels, costs and predecessors:
// every arc weight, both connectivities, 2D and 3D, plateaux and random weights.
TEST(CudaImageForestingTransformImageFilter, GPUWideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  unsigned seed = 900;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      using W8        = itk::Image<uint8_t, 2>;
      const auto size = Size<W8>({ 301, 197 });
      ExpectWidePathAgrees<uint8_t, 2>(
        RandomWeights<uint8_t, 2>(size, 256, seed), Seeds<2>(size, 40, 9, seed + 1), full, arc, "random uint8");
      ExpectWidePathAgrees<uint8_t, 2>(SmoothWeights<uint8_t, 2>(size, 250.0, 5, seed + 2),
                                       Seeds<2>(size, 30, 30, seed + 3),
                                       full,
                                       arc,
                                       "quantised, wide plateaux");
      using W3         = itk::Image<float, 3>;
      const auto size3 = Size<W3>({ 37, 29, 23 });
      ExpectWidePathAgrees<float, 3>(SmoothWeights<float, 3>(size3, 10.0, 0, seed + 4),
                                     Seeds<3>(size3, 20, 20, seed + 5),
                                     full,
                                     arc,
                                     "smoothed noise, float, 3D");
      ExpectWidePathAgrees<uint16_t, 3>(
        MakeImage<itk::Image<uint16_t, 3>>(Size<itk::Image<uint16_t, 3>>({ 40, 33, 21 }), 7),
        Seeds<3>(Size<itk::Image<uint16_t, 3>>({ 40, 33, 21 }), 3, 3, seed + 6, true),
        full,
        arc,
        "constant, seeds in one corner, 3D");
      seed += 10;
    }
}

// The finds of the labelling in cubes of 64^3 voxels (forced for every size; by default only volumes of 64 slices of
// 2^18 voxels or more take them) give the reference's labels, costs and predecessors on both index widths: a volume
// whose cubes the image's edges cut along every axis, and a 2D image (one slice of each cube).
TEST(CudaImageForestingTransformImageFilter, GPUCubeVoxelOrderEqualsReference)
{
  CHS_REQUIRE_GPU();
  EXPECT_THROW(chs::testing::SetVoxelOrder(3), std::invalid_argument);
  const chs_test::VoxelOrderScope cubes(2);
  using W3         = itk::Image<float, 3>;
  using W2         = itk::Image<uint8_t, 2>;
  const auto size3 = Size<W3>({ 70, 66, 65 });
  const auto size2 = Size<W2>({ 301, 197 });
  const auto w3    = SmoothWeights<float, 3>(size3, 10.0, 0, 41);
  const auto s3    = Seeds<3>(size3, 60, 20, 42);
  const auto w2    = SmoothWeights<uint8_t, 2>(size2, 250.0, 5, 43);
  const auto s2    = Seeds<2>(size2, 30, 30, 44);
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto expected3 = RunApi<float, 3>(w3, s3, false, full, arc, false);
      const auto expected2 = RunApi<uint8_t, 2>(w2, s2, false, full, arc, false);
      for (bool wide : { false, true })
      {
        const auto r3 = RunApi<float, 3>(w3, s3, true, full, arc, wide);
        EXPECT_EQ(r3.labels, expected3.labels) << "3D full " << full << " wide " << wide;
        EXPECT_EQ(r3.cost, expected3.cost) << "3D full " << full << " wide " << wide;
        EXPECT_EQ(r3.predecessor, expected3.predecessor) << "3D full " << full << " wide " << wide;
        const auto r2 = RunApi<uint8_t, 2>(w2, s2, true, full, arc, wide);
        EXPECT_EQ(r2.labels, expected2.labels) << "2D full " << full << " wide " << wide;
        EXPECT_EQ(r2.predecessor, expected2.predecessor) << "2D full " << full << " wide " << wide;
      }
    }
}

// A volume above 2^32 voxels (2048 x 2048 x 1025, 8-bit weights and labels; about 86 GB of device memory), when
// CHS_LARGE_TESTS is set. Its answer follows from the definition: the weights are 1 everywhere, the seeds fill the
// planes z = 100 (label 1) and z = 900 (label 2), the arc weight is the maximum, face neighbours. Every other voxel
// then costs 1, reached by a path that rises once, next to a seed plane, and runs straight along z: its label is
// the nearer plane's, and half way between them (z = 500: 400 arcs from both) the predecessor of smaller index, the
// one below, gives label 1.
TEST(CudaImageForestingTransformImageFilter, GPUVolumeAbove2To32Voxels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  chs::Grid grid;
  grid.dimension   = 3;
  grid.size[0]     = 2048;
  grid.size[1]     = 2048;
  grid.size[2]     = 1025;
  const uint64_t n = grid.NumberOfVoxels(), plane = grid.size[0] * grid.size[1];
  ASSERT_GT(n, uint64_t(1) << 32);
  std::vector<uint8_t> weights(n, 1), seeds(n, 0), labels(n, 0);
  std::fill(seeds.begin() + 100 * plane, seeds.begin() + 101 * plane, uint8_t(1));
  std::fill(seeds.begin() + 900 * plane, seeds.begin() + 901 * plane, uint8_t(2));
  std::vector<uint32_t>             cost(n, 7);
  chs::ForestingTransformParameters p;
  p.arcWeight = chs::ArcWeightFunction::Maximum;
  chs::RunInfo                  info;
  chs::ForestingTransformResult r;
  try
  {
    r = chs::ImageForestingTransformCUDA(
      weights.data(), seeds.data(), grid, p, labels.data(), cost.data(), nullptr, chs::ExecutionContext{}, &info);
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << r.rounds << " rounds, " << info.kernelMilliseconds << " ms of kernels; peak device memory "
            << info.peakDeviceBytes << " bytes, reserved " << info.reservedDeviceBytes << std::endl;
  EXPECT_EQ(r.seedCount, 2 * plane);
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  std::atomic<uint64_t> wrongLabel{ 0 }, wrongCost{ 0 };
  ParallelRange(n,
                [&](uint64_t a, uint64_t b)
                {
                  uint64_t label = 0, costs = 0;
                  for (uint64_t i = a; i < b; ++i)
                  {
                    const uint64_t z    = i / plane;
                    const bool     seed = z == 100 || z == 900;
                    label += labels[i] != (z <= 500 ? 1 : 2);
                    costs += cost[i] != (seed ? 0u : 1u);
                  }
                  wrongLabel += label;
                  wrongCost += costs;
                });
  EXPECT_EQ(wrongLabel.load(), 0u);
  EXPECT_EQ(wrongCost.load(), 0u);
}
