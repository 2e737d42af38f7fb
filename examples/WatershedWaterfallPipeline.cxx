// WatershedWaterfallPipeline: the pipeline to copy for a watershed hierarchy of an image.
//
//   read -> smooth (recursive Gaussian, sigma) -> gradient magnitude -> CudaWatershedImageFilter (with lines)
//                                                                   -> CudaWaterfallImageFilter (every level)
//
// Writes <prefix>watershed.nrrd, <prefix>level<k>.nrrd for every waterfall level and, for a 2D image, an overlay of
// each level's region borders on the input, <prefix>level<k>.png.
//
//   WatershedWaterfallPipeline <input> <sigma> <output-prefix>
#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "chsExampleOverlay.h"

#include "itkGradientMagnitudeImageFilter.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <iostream>
#include <string>

namespace
{

template <unsigned D>
int
Run(const std::string & input, double sigma, const std::string & prefix)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;

  auto reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(input);
  auto smooth = itk::SmoothingRecursiveGaussianImageFilter<Image, Image>::New();
  smooth->SetInput(reader->GetOutput());
  smooth->SetSigma(sigma);
  auto gradient = itk::GradientMagnitudeImageFilter<Image, Image>::New();
  gradient->SetInput(smooth->GetOutput());

  // The watershed: one basin per regional minimum of the gradient, with lines (label 0) between basins.
  auto watershed = itk::CudaWatershedImageFilter<Image, Labels>::New();
  watershed->SetInput(gradient->GetOutput());
  watershed->SetMarkWatershedLine(true);
  auto writer = itk::ImageFileWriter<Labels>::New();
  writer->SetInput(watershed->GetOutput());
  writer->SetFileName(prefix + "watershed.nrrd");
  writer->UseCompressionOn();
  writer->Update();
  std::cout << "watershed: " << watershed->GetObjectCount() << " basins\n";

  // The waterfall: level 0 is the same watershed without lines, then coarser levels down to one region.
  auto waterfall = itk::CudaWaterfallImageFilter<Image, Labels>::New();
  waterfall->SetInput(gradient->GetOutput());
  waterfall->Update();
  for (unsigned k = 0; k < waterfall->GetNumberOfComputedLevels(); ++k)
  {
    auto levelWriter = itk::ImageFileWriter<Labels>::New();
    levelWriter->SetInput(waterfall->GetLevel(k));
    levelWriter->SetFileName(prefix + "level" + std::to_string(k) + ".nrrd");
    levelWriter->UseCompressionOn();
    levelWriter->Update();
    if (D == 2)
      chs_example::WriteBorderOverlay(
        reader->GetOutput(), waterfall->GetLevel(k), prefix + "level" + std::to_string(k) + ".png");
    std::cout << "level " << k << ": " << waterfall->GetRegionCount(k) << " regions";
    if (k > 0) // each region of the level before lies in one region of this level
      std::cout << " (region 1 of level " << k - 1 << " is in region " << waterfall->GetParentLabel(k - 1, 1) << ")";
    std::cout << '\n';
  }
  return 0;
}

} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 4)
  {
    std::cerr << "Usage: WatershedWaterfallPipeline <input> <sigma> <output-prefix>\n";
    return 2;
  }
  try
  {
    auto io = itk::ImageIOFactory::CreateImageIO(argv[1], itk::CommonEnums::IOFileMode::ReadMode);
    if (!io)
    {
      std::cerr << "cannot read " << argv[1] << '\n';
      return 1;
    }
    io->SetFileName(argv[1]);
    io->ReadImageInformation();
    return io->GetNumberOfDimensions() == 3 ? Run<3>(argv[1], std::stod(argv[2]), argv[3])
                                            : Run<2>(argv[1], std::stod(argv[2]), argv[3]);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "WatershedWaterfallPipeline: " << e.GetDescription() << '\n';
    return 1;
  }
}
