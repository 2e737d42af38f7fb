// Waterpixels of any ITK-readable 2D image or 3D volume: read, compute the superpixels (on the GPU when there is one),
// write the label image and a PNG of the superpixel borders over the image (the middle slice of a volume).
//
//   WaterpixelPipeline <input> <grid step> <output labels> <output overlay.png> [compactness]
#include "itkCudaWaterpixelImageFilter.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"

#include <iostream>
#include <string>

template <unsigned D>
int
Run(char ** argv, double compactness)
{
  using Image  = itk::Image<float, D>; // any scalar input is read as float, the type the border image is made in
  using Labels = itk::Image<unsigned int, D>;
  auto reader  = itk::ImageFileReader<Image>::New();
  reader->SetFileName(argv[1]);

  auto waterpixels = itk::CudaWaterpixelImageFilter<Image, Labels>::New();
  waterpixels->SetInput(reader->GetOutput());
  waterpixels->SetGridStep(std::stoul(argv[2])); // sigma, the cell size in pixels
  waterpixels->SetCompactness(compactness);      // negative: automatic (0.04 x the input's range)
  waterpixels->Update();

  auto writer = itk::ImageFileWriter<Labels>::New();
  writer->SetInput(waterpixels->GetOutput());
  writer->SetFileName(argv[3]);
  writer->UseCompressionOn();
  writer->Update();
  chs_example::WriteBorderOverlay(reader->GetOutput(), waterpixels->GetOutput(), argv[4]);

  std::cout << waterpixels->GetNumberOfSuperpixels() << " waterpixels (compactness "
            << waterpixels->GetCompactnessUsed() << ", "
            << (waterpixels->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA ? "CUDA" : "CPU")
            << ") -> " << argv[3] << ", " << argv[4] << '\n';
  return 0;
}

int
main(int argc, char ** argv)
{
  if (argc < 5)
  {
    std::cerr << "Usage: " << argv[0] << " <input> <grid step> <output labels> <output overlay.png> [compactness]\n";
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
    const double compactness = argc > 5 ? std::stod(argv[5]) : -1.0;
    return io->GetNumberOfDimensions() == 3 ? Run<3>(argv, compactness) : Run<2>(argv, compactness);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << e << '\n';
    return 1;
  }
}
