// A consumer of the installed module (examples/consumer/CMakeLists.txt): a watershed and an alpha-tree on small
// images whose results are known, on the GPU when there is one (else the CPU reference). Exits 0 when both results
// are the expected ones.
#include "itkAlphaTreeCutImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkCudaWatershedImageFilter.h"

#include <cmath>
#include <iostream>

using Image  = itk::Image<float, 2>;
using Labels = itk::Image<unsigned int, 2>;

Image::Pointer
MakeImage(float (*value)(long x, long y))
{
  auto image = Image::New();
  image->SetRegions(Image::RegionType({ 0, 0 }, { 64, 64 }));
  image->Allocate();
  for (long y = 0; y < 64; ++y)
    for (long x = 0; x < 64; ++x)
      image->SetPixel({ x, y }, value(x, y));
  return image;
}

int
main()
{
  using Backend = itk::CudaSegmentationBackendEnums::Backend;
  int failures  = 0;

  // Two cones (the distance to the nearer of two points): two regional minima, so two basins.
  auto watershed = itk::CudaWatershedImageFilter<Image, Labels>::New();
  watershed->SetInput(MakeImage(
    [](long x, long y) { return float(std::min(std::hypot(x - 16.0, y - 20.0), std::hypot(x - 48.0, y - 40.0))); }));
  watershed->SetBackend(Backend::Auto);
  watershed->Update();
  const bool gpu = watershed->GetLastBackend() == Backend::CUDA;
  std::cout << "watershed: " << watershed->GetObjectCount() << " basins (" << (gpu ? "CUDA" : "CPU reference") << ")\n";
  failures += watershed->GetObjectCount() != 2;

  // Four flat quadrants 0, 10 / 20, 30: the alpha-tree's cuts at alpha 0, 10 and 20 have 4, 2 and 1 regions.
  auto tree = itk::CudaImageToAlphaTreeFilter<Image>::New();
  tree->SetInput(MakeImage([](long x, long y) { return float((x >= 32 ? 10 : 0) + (y >= 32 ? 20 : 0)); }));
  tree->Update();
  auto cut = itk::AlphaTreeCutImageFilter<Labels>::New();
  cut->SetInput(tree->GetOutput());
  for (const auto & [alpha, expected] : { std::pair<double, unsigned>{ 0, 4 }, { 10, 2 }, { 20, 1 } })
  {
    cut->SetAlpha(alpha);
    cut->Update();
    std::cout << "alpha-tree cut at alpha " << alpha << ": " << cut->GetObjectCount() << " regions\n";
    failures += cut->GetObjectCount() != expected;
  }
  std::cout << (failures ? "FAILED" : "passed") << '\n';
  return failures ? 1 : 0;
}
