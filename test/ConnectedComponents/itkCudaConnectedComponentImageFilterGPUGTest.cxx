// The filter's CUDA backend against ITK and flood fill; transfers, memory, failures.
#include "ConnectedComponents/itkCudaConnectedComponentTestSupport.h"

TEST(CudaConnectedComponentImageFilter, GPUFlatZonesMatchFloodFill)
{
  CHS_REQUIRE_GPU();
  FlatZonesSameAsFloodFill<U8_2, L32_2>(Backend::CUDA);
  FlatZonesSameAsFloodFill<U8_3, L32_3>(Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPUSignedImagesWithNegativeValues)
{
  CHS_REQUIRE_GPU();
  SignedImageSameAsITKAndFloodFill<itk::Image<signed char, 2>, L32_2>(Size<U8_2>({ 97, 66 }), 5);
  SignedImageSameAsITKAndFloodFill<S16_2, L32_2>(Size<U8_2>({ 300, 41 }), 6);
  SignedImageSameAsITKAndFloodFill<itk::Image<long, 3>, L32_3>(Size<U8_3>({ 35, 20, 17 }), 7);
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKOnRandomImages2D)
{
  CHS_REQUIRE_GPU();
  RandomInputsSameAsITK<U8_2, L32_2>(Backend::CUDA, kSizes2D);
  RandomInputsSameAsITK<S16_2, L16_2>(Backend::CUDA, { { 77, 45 } });
  RandomInputsSameAsITK<S16_2, L32_2>(Backend::CUDA, { { 1000, 700 } });
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKOnRandomVolumes3D)
{
  CHS_REQUIRE_GPU();
  RandomInputsSameAsITK<U8_3, L32_3>(Backend::CUDA, kSizes3D);
  RandomInputsSameAsITK<F32_3, L64_3>(Backend::CUDA, { { 21, 22, 23 }, { 130, 100, 60 } });
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKOnStructuredInputs)
{
  CHS_REQUIRE_GPU();
  StructuredInputsSameAsITK<U8_2, L32_2>(Backend::CUDA);
  StructuredInputsSameAsITK<U8_3, L32_3>(Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKOnLargeBlobs)
{
  CHS_REQUIRE_GPU();
  ExpectSameAsITK<U8_2, L32_2>(BlobImage<U8_2>(Size<U8_2>({ 1500, 1300 }), 3, 0.5, 3), Backend::CUDA);
  ExpectSameAsITK<U8_3, L32_3>(BlobImage<U8_3>(Size<U8_3>({ 150, 140, 130 }), 2, 0.5, 4), Backend::CUDA);
  ExpectSameAsITK<U8_3, L32_3>(BlobImage<U8_3>(Size<U8_3>({ 160, 96, 70 }), 2, 0.5, 5), Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKWithMaskAndBackgroundValue)
{
  CHS_REQUIRE_GPU();
  auto input = RandomImage<U8_2>(Size<U8_2>({ 120, 90 }), 0.6, 5);
  auto mask  = RandomImage<U8_2>(Size<U8_2>({ 120, 90 }), 0.7, 6, 200);
  ExpectSameAsITK<U8_2, L32_2>(input, Backend::CUDA, mask);
  ExpectSameAsITK<U8_2, L16_2>(input, Backend::CUDA, nullptr, 5);
  auto volume = RandomImage<U8_3>(Size<U8_3>({ 40, 30, 20 }), 0.5, 7);
  auto vmask  = RandomImage<U8_3>(Size<U8_3>({ 40, 30, 20 }), 0.8, 8);
  ExpectSameAsITK<U8_3, L32_3>(volume, Backend::CUDA, vmask);
}

TEST(CudaConnectedComponentImageFilter, GPUMatchesITKWithMoreThan65535Objects)
{
  CHS_REQUIRE_GPU();
  // Isolated pixels on a lattice: 512 * 400 = 204800 objects in both connectivities.
  auto input = MakeImage<U8_2>(Size<U8_2>({ 1024, 800 }));
  for (itk::ImageRegionIterator<U8_2> it(input, input->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    it.Set(it.GetIndex()[0] % 2 == 0 && it.GetIndex()[1] % 2 == 0);
  const auto got = RunModule<U8_2, L32_2>(input, Backend::CUDA, true);
  EXPECT_EQ(got.count, 204800u);
  ExpectSameAsITK<U8_2, L32_2>(input, Backend::CUDA);
  ExpectSameAsITK<U8_3, L32_3>(Checkerboard<U8_3>(Size<U8_3>({ 90, 80, 70 })), Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPULargeTransfersMatchITK)
{
  CHS_REQUIRE_GPU();
  // Transfers of 4 MiB and more go through the pinned staging buffers (4 slots of 4 MiB): an input, a mask and
  // labels of several chunks each, not multiples of the chunk, and more chunks than slots.
  const auto size  = Size<U8_2>({ 3000, 2900 });
  auto       input = BlobImage<U8_2>(size, 4, 0.5, 21);
  auto       mask  = RandomImage<U8_2>(size, 0.97, 22, 200);
  ExpectSameAsITK<U8_2, L32_2>(input, Backend::CUDA, mask);
  // Two filters on two threads at once: one holds the staging buffers, the other copies directly.
  auto       other      = BlobImage<U8_3>(Size<U8_3>({ 200, 180, 160 }), 3, 0.5, 23);
  const auto expected2D = RunITK<U8_2, L32_2>(input, true);
  const auto expected3D = RunITK<U8_3, L32_3>(other, false);
  for (int round = 0; round < 3; ++round)
  {
    Labeling<L32_2> got2D;
    Labeling<L32_3> got3D;
    std::thread     a([&] { got2D = RunModule<U8_2, L32_2>(input, Backend::CUDA, true); });
    std::thread     b([&] { got3D = RunModule<U8_3, L32_3>(other, Backend::CUDA, false); });
    a.join();
    b.join();
    EXPECT_EQ(got2D.count, expected2D.count);
    EXPECT_TRUE(SameVoxels(got2D.labels.GetPointer(), expected2D.labels.GetPointer()));
    EXPECT_EQ(got3D.count, expected3D.count);
    EXPECT_TRUE(SameVoxels(got3D.labels.GetPointer(), expected3D.labels.GetPointer()));
  }
}

TEST(CudaConnectedComponentImageFilter, GPUNarrowLabelDownloadsMatchITK)
{
  CHS_REQUIRE_GPU();
  // Labels cross the link in 1, 2 or 4 bytes when the object count (and the background label) allow it, and are
  // widened on the host: counts on both sides of 255 and 65535, through the staging buffers (2101 x 2049: 4 MiB
  // and more even at one byte a label) and through the direct path (301 x 299; both sizes leave a tail after the last
  // 16-byte vector).
  using U16_2      = itk::Image<unsigned short, 2>;
  using L64_2      = itk::Image<unsigned long, 2>;
  const auto large = Size<U8_2>({ 2101, 2049 });
  const auto small = Size<U8_2>({ 301, 299 });
  for (itk::SizeValueType objects : { 255, 256, 65535, 65536 })
  {
    SCOPED_TRACE(::testing::Message() << objects << " objects");
    auto input = IsolatedPixels<U8_2>(large, objects);
    EXPECT_EQ((RunModule<U8_2, L32_2>(input, Backend::CUDA, false).count), objects);
    ExpectSameAsITK<U8_2, L32_2>(input, Backend::CUDA);
    ExpectSameAsITK<U8_2, L64_2>(input, Backend::CUDA);
    if (objects <= 256)
    {
      ExpectSameAsITK<U8_2, L16_2>(input, Backend::CUDA);
      ExpectSameAsITK<U8_2, L32_2>(IsolatedPixels<U8_2>(small, objects), Backend::CUDA);
    }
  }
  // The background label counts too: 255 objects fit one byte beside background 255, 256 do not.
  for (itk::SizeValueType objects : { 255, 256 })
  {
    SCOPED_TRACE(::testing::Message() << objects << " objects, background 255");
    ExpectSameAsITK<U16_2, L32_2>(
      IsolatedPixels<U16_2>(Size<U16_2>({ 2101, 2049 }), objects, 255), Backend::CUDA, nullptr, 255);
    ExpectSameAsITK<U16_2, L32_2>(
      IsolatedPixels<U16_2>(Size<U16_2>({ 301, 299 }), objects, 255), Backend::CUDA, nullptr, 255);
  }
}

TEST(CudaConnectedComponentImageFilter, GPUWideIndexPathMatchesCPU)
{
  CHS_REQUIRE_GPU();
  GPUMatchesCPUThroughTheAPI<uint32_t>(true, 0);
  GPUMatchesCPUThroughTheAPI<uint16_t>(true, 0);
  GPUMatchesCPUThroughTheAPI<uint16_t>(true, 7);
  GPUMatchesCPUThroughTheAPI<uint64_t>(true, 0);
  GPUMatchesCPUThroughTheAPI<uint16_t>(false, 3);
  GPUMatchesCPUThroughTheAPI<uint64_t>(false, 0);
  GPUMatchesCPUThroughTheAPI<uint32_t>(false, 0, true);
  GPUMatchesCPUThroughTheAPI<uint16_t>(false, 5, true);
}

TEST(CudaConnectedComponentImageFilter, GPUPeakMemoryIsInputLabelsAndOneLabelSizedBuffer)
{
  CHS_REQUIRE_GPU();
  PeakMemoryWithinBound<uint16_t>(false);
  PeakMemoryWithinBound<uint32_t>(false);
  PeakMemoryWithinBound<uint64_t>(false);
  PeakMemoryWithinBound<uint32_t>(true);
  PeakMemoryWithinBound<uint64_t>(true);
}

TEST(CudaConnectedComponentImageFilter, GPUStatisticsMatchBruteForce)
{
  CHS_REQUIRE_GPU();
  StatisticsMatchBruteForce<U8_2>(Backend::CUDA);
  StatisticsMatchBruteForce<U8_3>(Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPULabelTypeTooSmallThrows)
{
  CHS_REQUIRE_GPU();
  ExpectLabelOverflow(Backend::CUDA);
}

TEST(CudaConnectedComponentImageFilter, GPUAllocationFailureThrowsAndLeaksNothing)
{
  CHS_REQUIRE_GPU();
  auto input  = BlobImage<U8_3>(Size<U8_3>({ 64, 64, 64 }), 2, 0.5, 9);
  auto filter = itk::CudaConnectedComponentImageFilter<U8_3, L32_3>::New();
  filter->SetInput(input);
  filter->SetBackend(Backend::CUDA);
  filter->ComputeStatisticsOn();
  filter->Update(); // warm up the context and the memory pool
  const auto expected   = filter->GetObjectCount();
  uint64_t   freeBefore = 0, total = 0, freeAfter = 0;
  chs::CudaDeviceMemoryInfo(0, freeBefore, total);
  for (int failing = 1; failing <= 8; ++failing) // every allocation of a run, in turn
  {
    chs::testing::FailDeviceAllocationAfter(failing);
    filter->Modified();
    try
    {
      filter->Update();
      FAIL() << "allocation " << failing << " did not fail";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("cudaErrorMemoryAllocation"), std::string::npos)
        << e.GetDescription();
    }
    chs::testing::FailDeviceAllocationAfter(0);
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr);
  }
  chs::CudaDeviceMemoryInfo(0, freeAfter, total);
  EXPECT_EQ(freeAfter, freeBefore);
  filter->Modified();
  filter->Update();
  EXPECT_EQ(filter->GetObjectCount(), expected);
}
