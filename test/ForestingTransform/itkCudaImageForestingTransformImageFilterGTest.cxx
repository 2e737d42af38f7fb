// The filter's CPU reference against brute force; ties; bad input; geometry.
#include "ForestingTransform/itkCudaImageForestingTransformTestSupport.h"

TEST(CudaImageForestingTransformImageFilter, PlateauBetweenTwoSeedsSplitsByDistanceThenIndex)
{
  // A row of equal weights between seeds 1 (x = 0) and 2 (x = 6): V = 5 everywhere but at the seeds; x = 1 and
  // x = 5 enter the plateau (D = 0), x = 3 is two steps from both and takes the smaller index, x = 2.
  using W                      = itk::Image<uint8_t, 2>;
  auto weights                 = MakeImage<W>(Size<W>({ 7, 1 }), 5);
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 7, 1 }));
  seeds->GetBufferPointer()[0] = 1;
  seeds->GetBufferPointer()[6] = 2;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<uint8_t, 2>(weights, seeds, b, false, ArcWeight::Target);
    EXPECT_EQ(r.labels, (std::vector<unsigned short>{ 1, 1, 1, 1, 2, 2, 2 }));
    EXPECT_EQ(r.cost, (std::vector<uint32_t>{ 0, 5, 5, 5, 5, 5, 0 }));
    EXPECT_EQ(r.predecessor, (std::vector<int64_t>{ -1, 0, 1, 2, 5, 6, -1 }));
  }
}

TEST(CudaImageForestingTransformImageFilter, PlateauIsSplitFromWhereEachPathEnteredIt)
{
  // Weights 9 9 9 9 9 9 9 2 1 0 with seed 1 at x = 0 and seed 2 at x = 9 (Target arcs). Seed 2 climbs 1, 2 and
  // enters the plateau of 9 at x = 6 with cost 9; seed 1 enters it at x = 1 with cost 9 too. x = 2..3 are nearer
  // x = 1's entry (D = 1, 2), x = 5 nearer x = 6's (D = 1); x = 4 is at D = 3 from x = 1 and D = 2 from x = 6:
  // seed 2's.
  using W               = itk::Image<uint8_t, 2>;
  auto          weights = MakeImage<W>(Size<W>({ 10, 1 }));
  const uint8_t b[]     = { 9, 9, 9, 9, 9, 9, 9, 2, 1, 0 };
  std::copy(b, b + 10, weights->GetBufferPointer());
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 10, 1 }));
  seeds->GetBufferPointer()[0] = 1;
  seeds->GetBufferPointer()[9] = 2;
  for (Backend bk : { Backend::CPU, Backend::CUDA })
  {
    if (bk == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<uint8_t, 2>(weights, seeds, bk, false, ArcWeight::Target);
    EXPECT_EQ(r.labels, (std::vector<unsigned short>{ 1, 1, 1, 1, 2, 2, 2, 2, 2, 2 }));
    EXPECT_EQ(r.cost, (std::vector<uint32_t>{ 0, 9, 9, 9, 9, 9, 9, 2, 1, 0 }));
    EXPECT_EQ(r.predecessor, (std::vector<int64_t>{ -1, 0, 1, 2, 5, 6, 7, 8, 9, -1 }));
  }
}

TEST(CudaImageForestingTransformImageFilter, OneSeedLabelsEveryPixel)
{
  using W      = itk::Image<float, 3>;
  auto weights = SmoothWeights<float, 3>(Size<W>({ 23, 19, 17 }), 100.0, 0, 3);
  auto seeds   = MakeImage<itk::Image<unsigned short, 3>>(weights->GetLargestPossibleRegion().GetSize());
  seeds->GetBufferPointer()[1234] = 7;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<float, 3>(weights, seeds, b, true, ArcWeight::Maximum);
    EXPECT_TRUE(std::all_of(r.labels.begin(), r.labels.end(), [](unsigned short l) { return l == 7; }));
  }
}

TEST(CudaImageForestingTransformImageFilter, CPUReferenceMatchesBruteForce2D)
{
  unsigned seed = 1;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
      for (int levels : { 2, 4, 50 })
      {
        SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc) << " levels " << levels);
        auto weights = RandomWeights<uint8_t, 2>(Size<itk::Image<uint8_t, 2>>({ 19, 13 }), levels, seed++);
        auto seeds   = Seeds<2>(weights->GetLargestPossibleRegion().GetSize(), 6, 3, seed++);
        ExpectMatchesOracle<uint8_t, 2>(weights, seeds, Backend::CPU, full, arc);
      }
}

TEST(CudaImageForestingTransformImageFilter, CPUReferenceMatchesBruteForce3D)
{
  unsigned seed = 100;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
      for (int levels : { 3, 40 })
      {
        SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc) << " levels " << levels);
        auto weights = RandomWeights<int16_t, 3>(Size<itk::Image<int16_t, 3>>({ 9, 7, 6 }), levels, seed++);
        auto seeds   = Seeds<3>(weights->GetLargestPossibleRegion().GetSize(), 4, 3, seed++);
        ExpectMatchesOracle<int16_t, 3>(weights, seeds, Backend::CPU, full, arc);
      }
}

TEST(CudaImageForestingTransformImageFilter, CPUForestIsConsistentOnLargerImages)
{
  using W2 = itk::Image<float, 2>;
  using W3 = itk::Image<uint16_t, 3>;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc));
      auto w2 = SmoothWeights<float, 2>(Size<W2>({ 250, 170 }), 100.0, 0, 11);
      auto s2 = Seeds<2>(w2->GetLargestPossibleRegion().GetSize(), 30, 10, 12);
      ExpectConsistentForest(Buffer(w2.GetPointer()),
                             Buffer(s2.GetPointer()),
                             Graph(w2->GetLargestPossibleRegion().GetSize(), full),
                             arc,
                             RunIFT<float, 2>(w2, s2, Backend::CPU, full, arc));
      auto w3 = SmoothWeights<uint16_t, 3>(Size<W3>({ 40, 30, 20 }), 900.0, 6, 13);
      auto s3 = Seeds<3>(w3->GetLargestPossibleRegion().GetSize(), 12, 4, 14);
      ExpectConsistentForest(Buffer(w3.GetPointer()),
                             Buffer(s3.GetPointer()),
                             Graph(w3->GetLargestPossibleRegion().GetSize(), full),
                             arc,
                             RunIFT<uint16_t, 3>(w3, s3, Backend::CPU, full, arc));
    }
}

TEST(CudaImageForestingTransformImageFilter, BadInputThrowsAndTheFilterRunsAgain)
{
  using W = itk::Image<float, 2>;
  using S = itk::Image<unsigned short, 2>;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    auto weights = MakeImage<W>(Size<W>({ 40, 30 }), 1.0f);
    auto seeds   = MakeImage<S>(Size<S>({ 40, 30 }));
    auto filter  = IFT<float, 2>::New();
    filter->SetInput(weights);
    filter->SetBackend(b);

    filter->SetSeedImage(MakeImage<S>(Size<S>({ 40, 31 })));
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "seed image of another size";

    filter->SetSeedImage(seeds);
    try
    {
      filter->Update();
      ADD_FAILURE() << "no seed: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("no seed"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";

    seeds->GetBufferPointer()[5] = 3;
    seeds->Modified();
    weights->GetBufferPointer()[2 * 40 + 7] = std::numeric_limits<float>::quiet_NaN();
    weights->Modified();
    try
    {
      filter->Update();
      ADD_FAILURE() << "NaN weight: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("(7, 2)"), std::string::npos) << e.GetDescription();
    }
    weights->GetBufferPointer()[2 * 40 + 7] = -1.0f;
    weights->Modified();
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "negative weight";

    weights->GetBufferPointer()[2 * 40 + 7] = 1.0f;
    weights->Modified();
    ASSERT_NO_THROW(filter->Update());
    EXPECT_EQ(filter->GetSeedCount(), 1u);
    const auto * l = filter->GetOutput()->GetBufferPointer();
    EXPECT_TRUE(std::all_of(l, l + 1200, [](unsigned short v) { return v == 3; }));
  }
}

TEST(CudaImageForestingTransformImageFilter, OutputsKeepTheInputGeometry)
{
  using W                 = itk::Image<uint8_t, 3>;
  auto         weights    = RandomWeights<uint8_t, 3>(Size<W>({ 6, 5, 4 }), 10, 9);
  const double spacing[3] = { 0.5, 2.0, 3.0 };
  const double origin[3]  = { -1.0, 4.0, 9.0 };
  weights->SetSpacing(spacing);
  weights->SetOrigin(origin);
  auto seeds = Seeds<3>(weights->GetLargestPossibleRegion().GetSize(), 2, 2, 3);
  seeds->SetSpacing(spacing);
  seeds->SetOrigin(origin);
  auto filter = IFT<uint8_t, 3>::New();
  filter->SetInput(weights);
  filter->SetSeedImage(seeds);
  filter->SetBackend(Backend::CPU);
  filter->Update();
  for (const itk::ImageBase<3> * out : { static_cast<const itk::ImageBase<3> *>(filter->GetOutput()),
                                         static_cast<const itk::ImageBase<3> *>(filter->GetCostOutput()),
                                         static_cast<const itk::ImageBase<3> *>(filter->GetPredecessorOutput()) })
  {
    EXPECT_EQ(out->GetSpacing(), weights->GetSpacing());
    EXPECT_EQ(out->GetOrigin(), weights->GetOrigin());
    EXPECT_EQ(out->GetLargestPossibleRegion(), weights->GetLargestPossibleRegion());
  }
}
