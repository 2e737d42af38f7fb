// What the watershed and waterfall command-line programs share: the optional smoothing and gradient magnitude in
// front of the filter, the watershed options and their 3D Slicer description.
#ifndef chsExampleWatershed_h
#define chsExampleWatershed_h

#include "chsExampleCli.h"
#include "chsExampleOptions.h"
#include "itkCudaWatershedEnums.h"

#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkImage.h"

#include <string>

namespace chs_example
{

struct WatershedOptions
{
  double                                     sigma          = 0.0; // > 0: the gradient magnitude at this scale
  bool                                       fullyConnected = false;
  itk::CudaWatershedEnums::Algorithm         algorithm      = itk::CudaWatershedEnums::Algorithm::PRUF;
  itk::CudaWatershedEnums::PlateauResolution plateaus       = itk::CudaWatershedEnums::PlateauResolution::Balanced;
  unsigned                                   reductionRate  = 6;
};

/** Declares the watershed options (into the Slicer group open in `m`; --rr is for the command line only). */
inline void
AddWatershedOptions(Module & m, WatershedOptions & o)
{
  using Algorithm  = itk::CudaWatershedEnums::Algorithm;
  using Resolution = itk::CudaWatershedEnums::PlateauResolution;
  m.Add(Number("--sigma",
               "<s>",
               o.sigma,
               "flood the gradient magnitude of the input smoothed at scale s (physical units) instead of the input "
               "itself (default 0: the input, e.g. a gradient image)")
          .Slicer("sigma",
                  "Gradient scale",
                  "Flood the gradient magnitude of the input smoothed at this scale (physical units); 0 floods the "
                  "input itself.")
          .Range("0", "100", "0.1"));
  m.Add(Switch("--fully-connected", o.fullyConnected, "8-connectivity in 2D, 26 in 3D (default: 4 / 6)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Add(Choice("--algorithm",
               "<name>",
               o.algorithm,
               { { "pruf", Algorithm::PRUF }, { "apruf", Algorithm::APRUF }, { "prw", Algorithm::PRW } },
               "algorithm",
               "pruf (default), apruf or prw: the same result, different speed")
          .Slicer("algorithm", "Algorithm", "PRUF, APRUF or PRW: the same result at different speeds."));
  m.Add(Choice("--plateaus",
               "<name>",
               o.plateaus,
               { { "balanced", Resolution::Balanced },
                 { "sync", Resolution::Synchronous },
                 { "async", Resolution::BlockAsynchronous } },
               "plateau resolution",
               "balanced (default), sync or async (async may split non-minimal plateaux differently)")
          .Slicer("plateaus",
                  "Plateau resolution",
                  "balanced and sync split plateaux by distance (the same result); async may split them "
                  "differently."));
  m.Add(Number("--rr", "<n>", o.reductionRate, "reduction rate of pruf and prw (default 6)"));
}

/** Sets the watershed properties of a CudaWatershedImageFilter or CudaWaterfallImageFilter. */
template <class TFilter>
void
ApplyWatershedOptions(const WatershedOptions & o, TFilter * filter)
{
  filter->SetFullyConnected(o.fullyConnected);
  filter->SetReductionRate(o.reductionRate);
  filter->SetAlgorithm(o.algorithm);
  filter->SetPlateauResolution(o.plateaus);
}

/** The image the watershed floods: the input itself, or its gradient magnitude at scale sigma. */
template <class TImage>
typename TImage::Pointer
Relief(TImage * input, double sigma)
{
  if (sigma <= 0)
    return input;
  auto gradient = itk::GradientMagnitudeRecursiveGaussianImageFilter<TImage, TImage>::New();
  gradient->SetInput(input);
  gradient->SetSigma(sigma);
  gradient->Update();
  typename TImage::Pointer out = gradient->GetOutput();
  out->DisconnectPipeline();
  return out;
}

} // namespace chs_example

#endif
