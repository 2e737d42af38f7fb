// The filter's CPU reference against ITK and flood fill; statistics; bad input; the factory.
#include "ConnectedComponents/itkCudaConnectedComponentTestSupport.h"
#include "itkScalarConnectedComponentImageFilter.h"

#include <random>

TEST(CudaConnectedComponentImageFilter, CPUMatchesITKOnRandomImages2D)
{
  RandomInputsSameAsITK<U8_2, L32_2>(Backend::CPU, kSizes2D);
  RandomInputsSameAsITK<S16_2, L16_2>(Backend::CPU, { { 77, 45 } });
}

TEST(CudaConnectedComponentImageFilter, CPUMatchesITKOnRandomVolumes3D)
{
  RandomInputsSameAsITK<U8_3, L32_3>(Backend::CPU, kSizes3D);
  RandomInputsSameAsITK<F32_3, L64_3>(Backend::CPU, { { 21, 22, 23 } });
}

TEST(CudaConnectedComponentImageFilter, CPUMatchesITKOnStructuredInputs)
{
  StructuredInputsSameAsITK<U8_2, L32_2>(Backend::CPU);
  StructuredInputsSameAsITK<U8_3, L32_3>(Backend::CPU);
}

TEST(CudaConnectedComponentImageFilter, CPUMatchesITKWithMaskAndBackgroundValue)
{
  auto input = RandomImage<U8_2>(Size<U8_2>({ 120, 90 }), 0.6, 5);
  auto mask  = RandomImage<U8_2>(Size<U8_2>({ 120, 90 }), 0.7, 6, 200);
  ExpectSameAsITK<U8_2, L32_2>(input, Backend::CPU, mask);
  ExpectSameAsITK<U8_2, L16_2>(input, Backend::CPU, nullptr, 5); // labels count from 0 and skip 5
  auto volume = RandomImage<U8_3>(Size<U8_3>({ 40, 30, 20 }), 0.5, 7);
  auto vmask  = RandomImage<U8_3>(Size<U8_3>({ 40, 30, 20 }), 0.8, 8);
  ExpectSameAsITK<U8_3, L32_3>(volume, Backend::CPU, vmask);
}

TEST(CudaConnectedComponentImageFilter, SignedLabelTypeMatchesITK)
{
  // A negative background: ITK then numbers the objects from 0.
  using S32_2 = itk::Image<int, 2>;
  auto input  = RandomImage<U8_2>(Size<U8_2>({ 70, 50 }), 0.5, 13);
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    ExpectSameAsITK<U8_2, S32_2>(input, b, nullptr, -1);
  }
}

TEST(CudaConnectedComponentImageFilter, CPUFlatZonesMatchFloodFill)
{
  FlatZonesSameAsFloodFill<U8_2, L32_2>(Backend::CPU);
  FlatZonesSameAsFloodFill<U8_3, L32_3>(Backend::CPU);
}

TEST(CudaConnectedComponentImageFilter, FlatZonesOfFloatImageMatchFloodFill)
{
  // Smooth float ramps quantised to a few levels: large plateaus; NaN is never equal to anything.
  using F2   = itk::Image<float, 2>;
  auto input = MakeImage<F2>(Size<F2>({ 150, 70 }));
  auto p     = input->GetBufferPointer();
  for (int i = 0; i < 150 * 70; ++i)
    p[i] = std::floor(4.0f * std::sin(0.05f * (i % 150)) * std::cos(0.07f * (i / 150)));
  p[500]                 = std::numeric_limits<float>::quiet_NaN();
  p[501]                 = std::numeric_limits<float>::quiet_NaN();
  uint64_t expectedCount = 0;
  auto     expected      = FloodFillLabels<F2, L32_2>(input, true, true, nullptr, expectedCount);
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    auto got = RunModule<F2, L32_2>(input, b, true, nullptr, true);
    EXPECT_EQ(got.count, expectedCount);
    EXPECT_TRUE(SameVoxels(got.labels.GetPointer(), expected.GetPointer()));
  }
}

TEST(CudaConnectedComponentImageFilter, CPUHandlesMoreThan65535Objects)
{
  auto input = MakeImage<U8_2>(Size<U8_2>({ 1024, 800 }));
  for (itk::ImageRegionIterator<U8_2> it(input, input->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    it.Set(it.GetIndex()[0] % 2 == 0 && it.GetIndex()[1] % 2 == 0);
  const auto got = RunModule<U8_2, L32_2>(input, Backend::CPU, false);
  EXPECT_EQ(got.count, 204800u);
  ExpectSameAsITK<U8_2, L32_2>(input, Backend::CPU);
}

TEST(CudaConnectedComponentImageFilter, CPUStatisticsMatchBruteForce)
{
  StatisticsMatchBruteForce<U8_2>(Backend::CPU);
  StatisticsMatchBruteForce<U8_3>(Backend::CPU);
}

TEST(CudaConnectedComponentImageFilter, CopiesGeometryAndRunsAgain)
{
  auto         input      = RandomImage<U8_3>(Size<U8_3>({ 20, 10, 5 }), 0.5, 3);
  const double spacing[3] = { 0.5, 2.0, 3.0 };
  const double origin[3]  = { -1.0, 4.0, 9.0 };
  input->SetSpacing(spacing);
  input->SetOrigin(origin);
  auto filter = itk::CudaConnectedComponentImageFilter<U8_3, L32_3>::New();
  filter->SetInput(input);
  filter->SetBackend(Backend::CPU);
  filter->Update();
  EXPECT_EQ(filter->GetOutput()->GetSpacing(), input->GetSpacing());
  EXPECT_EQ(filter->GetOutput()->GetOrigin(), input->GetOrigin());
  EXPECT_EQ(filter->GetOutput()->GetDirection(), input->GetDirection());
  const auto first = filter->GetObjectCount();
  filter->FullyConnectedOn();
  filter->Update();
  EXPECT_LE(filter->GetObjectCount(), first);
  std::ostringstream os;
  filter->Print(os);
  EXPECT_NE(os.str().find("FullyConnected: 1"), std::string::npos);
}

TEST(CudaConnectedComponentImageFilter, AutoBackendPicksWhatIsAvailable)
{
  auto input  = RandomImage<U8_2>(Size<U8_2>({ 50, 40 }), 0.5, 3);
  auto filter = itk::CudaConnectedComponentImageFilter<U8_2, L32_2>::New();
  filter->SetInput(input);
  filter->Update(); // Auto by default
  EXPECT_EQ(filter->GetLastBackend(), HasCudaDevice() ? Backend::CUDA : Backend::CPU);
  const auto expected = RunITK<U8_2, L32_2>(input, false);
  EXPECT_EQ(filter->GetObjectCount(), expected.count);
}

TEST(CudaConnectedComponentImageFilter, EmptyRegionThrows)
{
  auto input = U8_2::New();
  input->SetRegions(Size<U8_2>({ 0, 10 }));
  input->Allocate();
  for (Backend b : { Backend::CPU, Backend::Auto })
  {
    auto filter = itk::CudaConnectedComponentImageFilter<U8_2, L32_2>::New();
    filter->SetInput(input);
    filter->SetBackend(b);
    try
    {
      filter->Update();
      FAIL() << "no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("empty"), std::string::npos) << e.GetDescription();
    }
  }
}

TEST(CudaConnectedComponentImageFilter, CPULabelTypeTooSmallThrows)
{
  ExpectLabelOverflow(Backend::CPU);
}

TEST(CudaConnectedComponentImageFilter, CUDABackendWithoutDeviceThrows)
{
  auto input  = RandomImage<U8_2>(Size<U8_2>({ 8, 8 }), 0.5, 3);
  auto filter = itk::CudaConnectedComponentImageFilter<U8_2, L32_2>::New();
  filter->SetInput(input);
  filter->SetBackend(Backend::CUDA);
  // Without a GPU device 0 is missing; with one, device 1000 is.
  filter->SetDeviceId(HasCudaDevice() ? 1000 : 0);
  try
  {
    filter->Update();
    FAIL() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("no CUDA device"), std::string::npos) << e.GetDescription();
  }
  filter->SetBackend(Backend::CPU);
  filter->Update();
  EXPECT_GT(filter->GetObjectCount(), 0u);
}

TEST(CudaConnectedComponentImageFilterFactory, UnchangedITKPipelineGivesTheSameLabels)
{
  using Image2      = itk::Image<unsigned char, 2>;
  using Image3      = itk::Image<short, 3>;
  using Labels2     = itk::Image<unsigned int, 2>;
  using Labels3     = itk::Image<unsigned long, 3>;
  const auto input2 = RandomImage<Image2>(Size<Image2>({ 213, 117 }), 0.45, 21);
  const auto mask2  = RandomImage<Image2>(Size<Image2>({ 213, 117 }), 0.8, 22);
  const auto input3 = RandomImage<Image3>(Size<Image3>({ 41, 37, 23 }), 0.3, 23);
  for (bool full : { false, true })
  {
    ExpectFactoryGivesITKsResult<Image2, Labels2>(input2.GetPointer(), nullptr, full, 0);
    ExpectFactoryGivesITKsResult<Image2, Labels2>(input2.GetPointer(), mask2.GetPointer(), full, 3);
    ExpectFactoryGivesITKsResult<Image3, Labels3>(input3.GetPointer(), nullptr, full, 0);
  }
  // A type the factory does not register: ITK's own filter, factory or not.
  const auto factory = itk::CudaConnectedComponentImageFilterFactory::RegisterOneFactory();
  auto       other   = itk::ConnectedComponentImageFilter<itk::Image<float, 2>, itk::Image<unsigned int, 2>>::New();
  EXPECT_EQ(std::string(other->GetNameOfClass()), "ConnectedComponentImageFilter");
  itk::ObjectFactoryBase::UnRegisterFactory(factory);
}

/** FlatZones with a DistanceThreshold: ITK's ScalarConnectedComponentImageFilter (whose rule it is) gives the same
 * components, on both backends, in 2D and 3D, both connectivities. */
template <typename TImage>
void
DistanceThresholdSameAsScalarConnectedComponents(const typename TImage::SizeType & size, unsigned seed)
{
  using L            = itk::Image<uint32_t, TImage::ImageDimension>;
  auto         input = MakeImage<TImage>(size);
  std::mt19937 rng(seed);
  for (itk::ImageRegionIterator<TImage> it(input, input->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    it.Set(static_cast<typename TImage::PixelType>(rng() % 12));
  for (double threshold : { 0.0, 1.0, 3.0 })
    for (bool full : { false, true })
    {
      auto itkFilter = itk::ScalarConnectedComponentImageFilter<TImage, L>::New();
      itkFilter->SetInput(input);
      itkFilter->SetDistanceThreshold(static_cast<typename TImage::PixelType>(threshold));
      itkFilter->SetFullyConnected(full);
      itkFilter->Update();
      for (Backend b : { Backend::CPU, Backend::CUDA })
      {
        if (b == Backend::CUDA && !HasCudaDevice())
          continue;
        auto filter = itk::CudaConnectedComponentImageFilter<TImage, L>::New();
        filter->SetInput(input);
        filter->SetFlatZones(true);
        filter->SetDistanceThreshold(threshold);
        filter->SetFullyConnected(full);
        filter->SetBackend(b);
        filter->Update();
        // The same partition: ITK numbers the components otherwise (and leaves its object count at 0).
        const auto *                 a = filter->GetOutput()->GetBufferPointer();
        const auto *                 e = itkFilter->GetOutput()->GetBufferPointer();
        std::map<uint32_t, uint32_t> forward, backward;
        bool                         same = true;
        const size_t                 n    = input->GetLargestPossibleRegion().GetNumberOfPixels();
        for (size_t i = 0; i < n && same; ++i)
          same =
            forward.emplace(a[i], e[i]).first->second == e[i] && backward.emplace(e[i], a[i]).first->second == a[i];
        EXPECT_TRUE(same) << "threshold " << threshold << " full " << full << " backend " << int(b);
        EXPECT_EQ(filter->GetObjectCount(), forward.size());
      }
    }
}

TEST(CudaConnectedComponentImageFilter, DistanceThresholdMatchesScalarConnectedComponents)
{
  DistanceThresholdSameAsScalarConnectedComponents<U8_2>(Size<U8_2>({ 61, 47 }), 3);
  DistanceThresholdSameAsScalarConnectedComponents<itk::Image<short, 3>>(Size<itk::Image<short, 3>>({ 19, 14, 11 }), 4);
}

TEST(CudaConnectedComponentImageFilter, PeriodicBoundaryAndCentroids)
{
  // A stripe across the right edge wraps to the left: one object; its centroid is the mean index of its pixels.
  using L    = itk::Image<uint32_t, 2>;
  auto input = MakeImage<U8_2>(Size<U8_2>({ 10, 6 }));
  input->FillBuffer(0);
  for (int y = 1; y < 4; ++y)
  {
    input->SetPixel({ { 0, y } }, 1);
    input->SetPixel({ { 9, y } }, 1);
  }
  input->SetPixel({ { 5, 5 } }, 1);
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    auto filter = itk::CudaConnectedComponentImageFilter<U8_2, L>::New();
    filter->SetInput(input);
    filter->SetComputeStatistics(true);
    filter->SetBackend(b);
    filter->Update();
    EXPECT_EQ(filter->GetObjectCount(), 3u);
    filter->PeriodicBoundaryOn();
    filter->Update();
    EXPECT_EQ(filter->GetObjectCount(), 2u);
    EXPECT_EQ(filter->GetOutput()->GetPixel({ { 0, 2 } }), filter->GetOutput()->GetPixel({ { 9, 2 } }));
    EXPECT_EQ(filter->GetVoxelCount(1), 6u);
    EXPECT_DOUBLE_EQ(filter->GetCentroid(1)[0], 4.5);
    EXPECT_DOUBLE_EQ(filter->GetCentroid(1)[1], 2.0);
    EXPECT_DOUBLE_EQ(filter->GetCentroid(2)[0], 5.0);
    EXPECT_DOUBLE_EQ(filter->GetCentroid(2)[1], 5.0);
    filter->SetDistanceThreshold(-1.0);
    filter->SetFlatZones(true);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject);
    filter->SetDistanceThreshold(0.0);
    EXPECT_NO_THROW(filter->Update()); // it runs again after the refusal
  }
}
