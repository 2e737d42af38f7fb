// The alpha-tree of a 3D volume in an ITK pipeline: smooth the volume (Gaussian, in physical units; 0 to skip),
// rescale it to 8 bits (256 levels, the fastest GPU construction), build the tree once on the GPU, read off how many
// alpha-connected components the volume has at a range of alphas (each a cut of the same tree, no rebuild), and write
// the alpha-omega cut at the chosen alpha as a label volume with the input's geometry (render it with
// RenderLabelSurfaces, or open it in 3D Slicer).
//
//   AlphaTreeVolumePipeline <input volume> <sigma> <alpha> <omega> <labels output>
//
// alpha and omega are in the rescaled grey levels (0..255); omega "inf" for a plain alpha cut.
#include "itkAlphaTreeCutImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkRescaleIntensityImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <string>

int
main(int argc, char ** argv)
{
  if (argc != 6)
  {
    std::cerr << "Usage: " << argv[0] << " <input volume> <sigma> <alpha> <omega|inf> <labels output>\n";
    return 2;
  }
  using InputVolume  = itk::Image<float, 3>;
  using GreyVolume   = itk::Image<unsigned char, 3>;
  using LabelVolume  = itk::Image<unsigned int, 3>;
  const double sigma = std::stod(argv[2]);
  const double alpha = std::stod(argv[3]);
  const double omega = std::string(argv[4]) == "inf" ? std::numeric_limits<double>::infinity() : std::stod(argv[4]);

  try
  {
    auto smooth = itk::SmoothingRecursiveGaussianImageFilter<InputVolume>::New();
    smooth->SetInput(itk::ReadImage<InputVolume>(argv[1]));
    smooth->SetSigma(sigma > 0 ? sigma : 1.0);
    auto rescale = itk::RescaleIntensityImageFilter<InputVolume, GreyVolume>::New();
    if (sigma > 0)
      rescale->SetInput(smooth->GetOutput());
    else
      rescale->SetInput(itk::ReadImage<InputVolume>(argv[1]));
    rescale->SetOutputMinimum(0);
    rescale->SetOutputMaximum(255);

    // 6-connected; the GPU when there is one (Auto picks the level-synchronous construction for 8-bit volumes).
    auto tree = itk::CudaImageToAlphaTreeFilter<GreyVolume>::New();
    tree->SetInput(rescale->GetOutput());
    tree->SetComputeValueRanges(!std::isinf(omega));
    tree->Update();
    const itk::AlphaTree * t = tree->GetOutput();
    std::cout << "alpha-tree of " << t->GetNumberOfLeaves() << " voxels: " << t->GetNumberOfNodes() << " nodes, "
              << tree->GetKernelMilliseconds() << " ms of GPU kernels\n";
    for (double a : { 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0 })
    {
      const auto         labels = t->ComputeLabels(a);
      itk::SizeValueType count  = 0;
      for (auto l : *labels)
        count = std::max<itk::SizeValueType>(count, l);
      std::cout << "  alpha " << a << ": " << count << " components\n";
    }

    auto cut = itk::AlphaTreeCutImageFilter<LabelVolume>::New();
    cut->SetInput(t);
    cut->SetAlpha(alpha);
    cut->SetOmega(omega);
    itk::WriteImage(cut->GetOutput(), argv[5], true);
    std::cout << cut->GetObjectCount() << " regions at alpha " << alpha << ", omega " << omega << " -> " << argv[5]
              << '\n';
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << e << '\n';
    return 1;
  }
  return 0;
}
