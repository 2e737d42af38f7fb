// Reliability of every filter at the limits: axes of 2^31 + 1 pixels, runs refused before they allocate, reservations.
#include "Common/itkReliabilityTestSupport.h"

/** Label types too small for the regions: every algorithm whose region count depends on the image refuses with the
 * count and the type's limit, on both backends, and leaves no output. (Connected components: its own test.) */
TEST(Reliability, LabelTypesTooSmallAreRefused)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (HasCudaDevice())
    backends.push_back(Backend::CUDA);
  const auto relief = Relief(64, 9); // hundreds of basins
  const auto grey   = RandomImage<U8_2>(Size<U8_2>({ 64, 64 }), 0.9, 9, 200);
  for (const Backend b : backends)
  {
    auto watershed = itk::CudaWatershedImageFilter<F_2, U8L_2>::New();
    watershed->SetInput(relief);
    ExpectLabelTypeRefused(watershed, b, "more than the label type holds (255)");

    auto waterpixels = itk::CudaWaterpixelImageFilter<U8_2, U8L_2>::New();
    waterpixels->SetInput(grey);
    waterpixels->SetGridStep(2); // 1024 cells
    ExpectLabelTypeRefused(waterpixels, b, "1024 waterpixels do not fit the label type (at most 255)");

    auto tree = itk::CudaImageToAlphaTreeFilter<U8_2>::New();
    tree->SetInput(grey);
    tree->SetBackend(b);
    auto cut = itk::AlphaTreeCutImageFilter<U8L_2>::New();
    cut->SetInput(tree->GetOutput());
    cut->SetAlpha(0);
    ExpectLabelTypeRefused(cut, b, "regions do not fit the label type (at most 255)");

    auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<U8_2>::New();
    dendrogram->SetInput(grey);
    dendrogram->SetBackend(b);
    auto clusters = itk::DendrogramToLabelImageFilter<U8L_2>::New();
    clusters->SetInput(dendrogram->GetOutput());
    clusters->SetNumberOfClusters(1000);
    try
    {
      clusters->Update();
      ADD_FAILURE() << "DendrogramToLabelImageFilter: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("1000 clusters do not fit the label type (at most 255)"),
                std::string::npos)
        << e.GetDescription();
    }
  }
}

TEST(Reliability, GPUOneAxisOf2To31Plus1Pixels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const itk::SizeValueType n = (itk::SizeValueType(1) << 31) + 1;
  OneLongAxis<2>(Size<U8_2>({ n, 1 }), n);
}

TEST(Reliability, GPUOneAxisOf2To31Plus1Voxels3D)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const itk::SizeValueType n = (itk::SizeValueType(1) << 31) + 1;
  std::cout << "along z:" << std::endl;
  OneLongAxis<3>(Size<U8_3>({ 1, 1, n }), n);
  std::cout << "along x:" << std::endl;
  OneLongAxis<3>(Size<U8_3>({ n, 1, 1 }), n);
}

/** A run that does not fit the device's free memory (the test hook says 1 MiB is free) is refused before it allocates
 * anything, with an exception naming the bytes it needs and the bytes free; the outputs are released and the next
 * update succeeds. The filters whose runs reserve their device memory: connected components, the watershed, the
 * waterfall, waterpixels, the seeded IFT. */
TEST(Reliability, GPURefusedBeforeAllocatingWhenTheDeviceMemoryIsShort)
{
  CHS_REQUIRE_GPU();
  for (const unsigned k : { 0u, 1u, 2u, 6u, 7u })
  {
    auto              w        = MakeWorkload(k, 500 + k);
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name;
    const uint64_t allocations = chs::testing::DeviceAllocations();
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const std::string what = Refusal([&] { w->run(Backend::CUDA, 0); });
    chs::testing::SetDeviceMemoryLimit(0);
    EXPECT_NE(what.find(" needs "), std::string::npos) << w->name << ": " << what;
    EXPECT_NE(what.find(" bytes) of device memory; device 0 has 0.00 GB (1048576 bytes) free"), std::string::npos)
      << w->name << ": " << what;
    EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << w->name << ": allocated before it was refused";
    EXPECT_TRUE(w->released()) << w->name << ": an output kept its buffer";
    w->reset();
    EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after the refusal";
  }
}

/** The reservation bounds the run's peak, and the check uses it: a device with fewer bytes free than the run reserved
 * refuses it, one with twice as many (and the pool's margin) runs it; the watershed from markers finds its minima
 * and floods within its bound. */
TEST(Reliability, GPUReservationBoundsThePeakAndDecidesTheRefusal)
{
  CHS_REQUIRE_GPU();
  auto           image = Relief(257, 5);
  chs::Grid      grid;
  const uint64_t n = 257 * 257;
  grid.size[0] = grid.size[1] = 257;
  std::vector<uint32_t>    labels(n), again(n);
  chs::ExecutionContext    context;
  chs::RunInfo             info;
  chs::WatershedParameters p;
  const float *            pixels = image->GetBufferPointer();
  chs::WatershedCUDA(pixels, grid, p, labels.data(), context, &info);
  EXPECT_GT(info.peakDeviceBytes, n * 16);
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  chs::testing::SetDeviceMemoryLimit(info.reservedDeviceBytes);
  EXPECT_THROW(chs::WatershedCUDA(pixels, grid, p, again.data(), context), chs::DeviceMemoryError);
  chs::testing::SetDeviceMemoryLimit(2 * info.reservedDeviceBytes + (uint64_t(64) << 20));
  chs::WatershedCUDA(pixels, grid, p, again.data(), context);
  chs::testing::SetDeviceMemoryLimit(0);
  EXPECT_EQ(again, labels);

  for (const double level : { 0.0, 3.0 })
  {
    chs::MarkerWatershedParameters m;
    m.level = level;
    chs::RunInfo mi;
    chs::MarkerWatershedCUDA<float, uint32_t>(pixels, nullptr, nullptr, grid, m, labels.data(), context, &mi);
    EXPECT_GT(mi.peakDeviceBytes, n * 16) << "level " << level;
    EXPECT_LE(mi.peakDeviceBytes, mi.reservedDeviceBytes) << "level " << level;
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const uint64_t allocations = chs::testing::DeviceAllocations();
    const auto     refused     = [&]
    { chs::MarkerWatershedCUDA<float, uint32_t>(pixels, nullptr, nullptr, grid, m, again.data(), context); };
    EXPECT_THROW(refused(), chs::DeviceMemoryError) << "level " << level;
    chs::testing::SetDeviceMemoryLimit(0);
    EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << "level " << level;
  }
}

/** A volume larger than the device (16384 x 16384 x 4096 voxels, 1.1 TB of 8-bit input) is refused by connected
 * components, whose 64-bit paths accept its size, before anything is read or allocated. */
TEST(Reliability, GPUVolumeLargerThanTheDeviceIsRefused)
{
  CHS_REQUIRE_GPU();
  chs::Grid grid;
  grid.dimension = 3;
  grid.size[0] = grid.size[1] = 16384;
  grid.size[2]                = 4096;
  uint64_t freeBytes = 0, totalBytes = 0;
  chs::CudaDeviceMemoryInfo(0, freeBytes, totalBytes);
  ASSERT_GT(grid.NumberOfVoxels(), totalBytes);
  std::vector<uint8_t>  input(1); // never read: the run is refused first
  std::vector<uint32_t> labels(1);
  const uint64_t        allocations = chs::testing::DeviceAllocations();
  const std::string     what        = Refusal(
    [&]
    {
      chs::LabelConnectedComponentsCUDA<uint8_t, uint32_t>(
        input.data(), nullptr, labels.data(), grid, {}, nullptr, chs::ExecutionContext{}, nullptr);
    });
  EXPECT_NE(what.find("the connected-components labeling of 16384 x 16384 x 4096 voxels needs "), std::string::npos)
    << what;
  EXPECT_NE(what.find(" free"), std::string::npos) << what;
  EXPECT_EQ(chs::testing::DeviceAllocations(), allocations);
}

/** Issue 31's bad input: a volume larger than the device, within each algorithm's size limits, is refused by every
 * filter's CUDA backend before it reads the input into device memory or allocates anything, with DeviceMemoryError
 * naming the bytes it needs (more than the device has) and the bytes free; then each filter runs again and gives
 * the CPU reference's result. The inputs and outputs are address space that reads as zeros (ZeroSpace). Waterpixels
 * are not among them: their limit, 2^31 voxels, fits an H200 (28 bytes a voxel). */
TEST(Reliability, GPUEveryFilterRefusesAVolumeLargerThanTheDevice)
{
  CHS_REQUIRE_GPU();
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 700 + k));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const chs::ExecutionContext context;

  // 2048 x 2048 x 4096 uint8 voxels (1.7e10, the 64-bit paths; 12 to 24 bytes a voxel and more).
  chs::Grid volume;
  volume.dimension = 3;
  volume.size[0] = volume.size[1] = 2048;
  volume.size[2]                  = 4096;
  const uint64_t n                = volume.NumberOfVoxels();
  {
    const ZeroSpace image(n), labels(n * sizeof(uint32_t)), seeds(n * sizeof(uint32_t));
    ASSERT_NE(image.As<uint8_t>(), nullptr);
    ASSERT_NE(labels.As<uint32_t>(), nullptr);
    ExpectRefusedAsLargerThanTheDevice(
      "watershed",
      [&]
      { chs::WatershedCUDA(image.As<uint8_t>(), volume, chs::WatershedParameters{}, labels.As<uint32_t>(), context); });
    ExpectRefusedAsLargerThanTheDevice(
      "waterfall",
      [&]
      {
        const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned, uint64_t) { return labels.As<uint32_t>(); };
        chs::WaterfallCUDA(image.As<uint8_t>(), volume, chs::WaterfallParameters{}, sink, context);
      });
    ExpectRefusedAsLargerThanTheDevice("watershed from markers (the minima as markers)",
                                       [&]
                                       {
                                         chs::MarkerWatershedCUDA<uint8_t, uint32_t>(image.As<uint8_t>(),
                                                                                     nullptr,
                                                                                     nullptr,
                                                                                     volume,
                                                                                     chs::MarkerWatershedParameters{},
                                                                                     labels.As<uint32_t>(),
                                                                                     context);
                                       });
    ExpectRefusedAsLargerThanTheDevice("Image Foresting Transform",
                                       [&]
                                       {
                                         chs::ImageForestingTransformCUDA<uint8_t, uint32_t>(
                                           image.As<uint8_t>(),
                                           seeds.As<uint32_t>(),
                                           volume,
                                           chs::ForestingTransformParameters{},
                                           labels.As<uint32_t>(),
                                           nullptr,
                                           nullptr,
                                           context);
                                       });
  }
  {
    // The alpha-tree: 1290^3 uint8 voxels (2.15e9, below the node ids' 2^31 - 1), 26-connected (93 bytes a voxel).
    chs::Grid cube;
    cube.dimension = 3;
    cube.size[0] = cube.size[1] = cube.size[2] = 1290;
    const ZeroSpace          image(cube.NumberOfVoxels());
    chs::AlphaTreeParameters p;
    p.graph.fullyConnected = true;
    ExpectRefusedAsLargerThanTheDevice("alpha-tree",
                                       [&]
                                       {
                                         chs::ImageAlphaTreeCUDA<uint8_t>(
                                           image.As<uint8_t>(),
                                           cube,
                                           p,
                                           [](uint64_t) -> chs::AlphaTreeArrays
                                           { throw std::logic_error("the tree's arrays were asked for"); },
                                           context);
                                       });
  }
  {
    // The image dendrogram: 40000^2 uint8 pixels (1.6e9, 3.2e9 edge slots; 126 bytes a pixel).
    chs::Grid plane;
    plane.dimension = 2;
    plane.size[0] = plane.size[1] = 40000;
    plane.size[2]                 = 1;
    const ZeroSpace image(plane.NumberOfVoxels());
    ExpectRefusedAsLargerThanTheDevice(
      "image dendrogram",
      [&]
      {
        chs::ImageSingleLinkageCUDA<uint8_t>(
          image.As<uint8_t>(), plane, chs::ImageGraphParameters{}, chs::DendrogramArrays{}, context);
      });
    // The graph dendrogram: 4e9 float-weighted edges on 1e9 vertices (28 bytes an edge kept, and the sort's).
    const uint64_t  m = 4000000000ull;
    const ZeroSpace ends(m * sizeof(uint32_t)), weights(m * sizeof(float));
    ExpectRefusedAsLargerThanTheDevice("graph dendrogram",
                                       [&]
                                       {
                                         chs::GraphSingleLinkageCUDA<float>(ends.As<uint32_t>(),
                                                                            ends.As<uint32_t>(),
                                                                            weights.As<float>(),
                                                                            m,
                                                                            1000000000ull,
                                                                            false,
                                                                            chs::DendrogramArrays{},
                                                                            context);
                                       });
  }
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(workloads[k]->run(Backend::CUDA, 0), expected[k]) << workloads[k]->name << ", after the refusals";
}

/** A device exactly as large as a run's check before allocating asks for (the test hook): the run then either fits or
 * is refused at a part it sizes on the way (the waterfall's parent table, connected components' statistics, Boruvka's
 * later rounds of the image and graph dendrograms), with DeviceMemoryError naming what it holds; never another error,
 * nothing left on the device, and the next update gives the reference's result. */
TEST(Reliability, GPURefusedAtThePartsSizedOnTheWay)
{
  CHS_REQUIRE_GPU();
  unsigned staged = 0; // refusals at a part sized on the way (the message names what the run holds)
  for (const unsigned k : { 0u, 2u, 4u, 5u })
  {
    auto w = MakeWorkload(k, 600 + k);
    if (k == 0)
      dynamic_cast<itk::CudaConnectedComponentImageFilter<U8_3, L32_3> *>(w->filters.front())->ComputeStatisticsOn();
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name;
    uint64_t freeBefore = 0, total = 0;
    chs::CudaDeviceMemoryInfo(0, freeBefore, total);
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const uint64_t first = NeededBytes(Refusal([&] { w->run(Backend::CUDA, 0); }));
    chs::testing::SetDeviceMemoryLimit(0);
    ASSERT_GT(first, uint64_t(1) << 20) << w->name;
    w->reset();
    chs::testing::SetDeviceMemoryLimit(first);
    const std::string what = Refusal([&] { w->run(Backend::CUDA, 0); });
    chs::testing::SetDeviceMemoryLimit(0);
    std::cout << w->name << ": a device of " << first << " bytes: " << (what.empty() ? "fits" : what) << std::endl;
    staged += what.find(" it holds; device 0 has ") != std::string::npos;
    if (!what.empty())
    {
      EXPECT_NE(what.find(" of device memory"), std::string::npos) << w->name << ": " << what;
      EXPECT_EQ(what.find("could not allocate"), std::string::npos) << w->name << ": " << what;
      EXPECT_TRUE(w->released()) << w->name;
      w->reset();
    }
    uint64_t freeAfter = 0;
    chs::CudaDeviceMemoryInfo(0, freeAfter, total);
    EXPECT_EQ(freeAfter, freeBefore) << w->name;
    EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after the refusal";
  }
  EXPECT_GT(staged, 0u) << "no run was refused at a part sized on the way";
}
