// A short ITK pipeline: threshold a volume, label its objects on the GPU, keep the objects' sizes, write labels.
//
//   ConnectedComponentPipeline <input> <lower> <upper> <output>
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkBinaryThresholdImageFilter.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <iostream>

int
main(int argc, char ** argv)
{
  if (argc != 5)
  {
    std::cerr << "Usage: " << argv[0] << " <input> <lower> <upper> <output>\n";
    return 2;
  }
  using InputImage = itk::Image<short, 3>;
  using MaskImage  = itk::Image<unsigned char, 3>;
  using LabelImage = itk::Image<unsigned int, 3>;

  auto threshold = itk::BinaryThresholdImageFilter<InputImage, MaskImage>::New();
  threshold->SetInput(itk::ReadImage<InputImage>(argv[1]));
  threshold->SetLowerThreshold(static_cast<short>(std::stoi(argv[2])));
  threshold->SetUpperThreshold(static_cast<short>(std::stoi(argv[3])));

  // Same parameters and output as itk::ConnectedComponentImageFilter; runs on the GPU when there is one.
  auto label = itk::CudaConnectedComponentImageFilter<MaskImage, LabelImage>::New();
  label->SetInput(threshold->GetOutput());
  label->FullyConnectedOn();
  label->ComputeStatisticsOn();

  try
  {
    itk::WriteImage(label->GetOutput(), argv[4], true);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << e << '\n';
    return 1;
  }
  std::cout << label->GetObjectCount() << " objects\n";
  for (unsigned l = 1; l <= std::min<itk::SizeValueType>(label->GetObjectCount(), 10); ++l)
    std::cout << "  label " << l << ": " << label->GetVoxelCount(l) << " voxels in " << label->GetBoundingBox(l);
  return 0;
}
