// What the watershed and waterfall command-line programs share: the optional smoothing and gradient magnitude in
// front of the filter, the watershed options and their 3D Slicer description.
#ifndef chsExampleWatershed_h
#define chsExampleWatershed_h

#include "chsExampleCli.h"
#include "itkCudaWatershedEnums.h"

#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkImage.h"

#include <functional>
#include <string>

namespace chs_example
{

struct WatershedOptions
{
  double      sigma          = 0.0; // > 0: watershed of the gradient magnitude at this scale (physical units)
  bool        fullyConnected = false;
  std::string algorithm = "pruf", plateaus = "balanced";
  unsigned    reductionRate = 6;
};

/** Parses the watershed options; false for another option. */
inline bool
ParseWatershedOption(const std::string & a, const std::function<std::string()> & value, WatershedOptions & o)
{
  if (a == "--sigma")
    o.sigma = std::stod(value());
  else if (a == "--fully-connected")
    o.fullyConnected = true;
  else if (a == "--algorithm")
    o.algorithm = value();
  else if (a == "--plateaus")
    o.plateaus = value();
  else if (a == "--rr")
    o.reductionRate = unsigned(std::stoul(value()));
  else
    return false;
  return true;
}

/** Sets the watershed properties of a CudaWatershedImageFilter or CudaWaterfallImageFilter. */
template <class TFilter>
void
ApplyWatershedOptions(const char * program, const WatershedOptions & o, TFilter * filter)
{
  using Algorithm  = itk::CudaWatershedEnums::Algorithm;
  using Resolution = itk::CudaWatershedEnums::PlateauResolution;
  filter->SetFullyConnected(o.fullyConnected);
  filter->SetReductionRate(o.reductionRate);
  if (o.algorithm == "pruf")
    filter->SetAlgorithm(Algorithm::PRUF);
  else if (o.algorithm == "apruf")
    filter->SetAlgorithm(Algorithm::APRUF);
  else if (o.algorithm == "prw")
    filter->SetAlgorithm(Algorithm::PRW);
  else
    Fail(program, "unknown algorithm '" + o.algorithm + "' (pruf, apruf or prw)");
  if (o.plateaus == "balanced")
    filter->SetPlateauResolution(Resolution::Balanced);
  else if (o.plateaus == "sync")
    filter->SetPlateauResolution(Resolution::Synchronous);
  else if (o.plateaus == "async")
    filter->SetPlateauResolution(Resolution::BlockAsynchronous);
  else
    Fail(program, "unknown plateau resolution '" + o.plateaus + "' (balanced, sync or async)");
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

constexpr const char * kWatershedUsage =
  R"(  --sigma <s>             flood the gradient magnitude of the input smoothed at scale s (physical units) instead
                          of the input itself (default 0: the input, e.g. a gradient image)
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --algorithm <name>      pruf (default), apruf or prw: the same result, different speed
  --plateaus <name>       balanced (default), sync or async (async may split non-minimal plateaux differently)
  --rr <n>                reduction rate of pruf and prw (default 6)
)";

constexpr const char * kSlicerWatershedParameters = R"(    <double>
      <name>sigma</name>
      <longflag>--sigma</longflag>
      <label>Gradient scale</label>
      <description>Flood the gradient magnitude of the input smoothed at this scale (physical units); 0 floods the input itself.</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>100</maximum>
        <step>0.1</step>
      </constraints>
    </double>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
    <string-enumeration>
      <name>algorithm</name>
      <longflag>--algorithm</longflag>
      <label>Algorithm</label>
      <description>PRUF, APRUF or PRW: the same result at different speeds.</description>
      <default>pruf</default>
      <element>pruf</element>
      <element>apruf</element>
      <element>prw</element>
    </string-enumeration>
    <string-enumeration>
      <name>plateaus</name>
      <longflag>--plateaus</longflag>
      <label>Plateau resolution</label>
      <description>balanced and sync split plateaux by distance (the same result); async may split them differently.</description>
      <default>balanced</default>
      <element>balanced</element>
      <element>sync</element>
      <element>async</element>
    </string-enumeration>
)";

} // namespace chs_example

#endif
