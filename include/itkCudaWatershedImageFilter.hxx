/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWatershedImageFilter_hxx
#define itkCudaWatershedImageFilter_hxx

#include "itkCudaWatershedImageFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"

namespace itk
{

template <typename TInputImage, typename TOutputImage>
CudaWatershedImageFilter<TInputImage, TOutputImage>::CudaWatershedImageFilter()
{
  this->AddOptionalInputName("MarkerImage", 1);
  this->AddOptionalInputName("MaskImage", 2);
}

template <typename TInputImage, typename TOutputImage>
void
CudaWatershedImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using PixelCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical = typename CudaCanonicalLabel<OutputPixelType>::Type;

  m_ObjectCount   = 0;
  m_PlateauRounds = 0;
  m_SeedCount     = 0;

  const InputImageType * input = this->GetInput();
  CheckWholeImage(input, "input", this);
  const auto                     region     = input->GetLargestPossibleRegion();
  const chs::Grid                grid       = CudaGridOf(region);
  const chs::WatershedParameters parameters = this->MakeWatershedParameters(m_MarkWatershedLine);
  const MarkerImageType *        markers    = this->GetMarkerImage();
  const MaskImageType *          mask       = this->GetMaskImage();
  for (const ImageBase<ImageDimension> * extra : { static_cast<const ImageBase<ImageDimension> *>(markers),
                                                   static_cast<const ImageBase<ImageDimension> *>(mask) })
  {
    if (extra && (extra->GetLargestPossibleRegion() != region || extra->GetBufferedRegion() != region))
    {
      itkExceptionMacro(<< "The " << (extra == markers ? "marker" : "mask")
                        << " image must cover the input's largest possible region " << region
                        << "; its largest possible region is " << extra->GetLargestPossibleRegion() << '.');
    }
  }
  const bool flood = markers || mask || m_Level != 0.0;
  if (flood && m_MarkWatershedLine)
  {
    itkExceptionMacro(<< "MarkWatershedLine is not available with a marker image, a mask or a Level: the watershed "
                         "by flooding labels every pixel it reaches.");
  }
  const BackendEnum backend = this->ResolveBackend();

  this->AllocateCachedOutputs(backend == BackendEnum::CUDA);
  OutputImageType * output = this->GetOutput();
  const auto *      in     = reinterpret_cast<const PixelCanonical *>(input->GetBufferPointer());
  auto *            out    = reinterpret_cast<LabelCanonical *>(output->GetBufferPointer());
  if (flood)
  {
    chs::MarkerWatershedParameters floodParameters;
    floodParameters.fullyConnected = this->GetFullyConnected();
    floodParameters.level          = m_Level;
    const auto *    m = markers ? reinterpret_cast<const LabelCanonical *>(markers->GetBufferPointer()) : nullptr;
    const uint8_t * k = mask ? reinterpret_cast<const uint8_t *>(mask->GetBufferPointer()) : nullptr;
    chs::MarkerWatershedResult found;
    this->RunBackend(backend,
                     [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                     { found = chs::MarkerWatershed(in, m, k, grid, floodParameters, out, context, &run); },
                     { output });
    m_ObjectCount = found.markerCount;
    m_SeedCount   = found.seedCount;
    return;
  }
  chs::WatershedResult result;
  this->RunBackend(backend,
                   [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                   { result = chs::Watershed(in, grid, parameters, out, context, &run); },
                   { output });
  m_ObjectCount   = result.basinCount;
  m_PlateauRounds = result.plateauRounds;
}

template <typename TInputImage, typename TOutputImage>
void
CudaWatershedImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "MarkWatershedLine: " << m_MarkWatershedLine << std::endl;
  os << indent << "Level: " << m_Level << std::endl;
  os << indent << "SeedCount: " << m_SeedCount << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "PlateauRounds: " << m_PlateauRounds << std::endl;
}

} // namespace itk

#endif
