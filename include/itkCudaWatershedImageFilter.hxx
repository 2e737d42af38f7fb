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
void
CudaWatershedImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using PixelCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical = typename CudaCanonicalLabel<OutputPixelType>::Type;

  m_ObjectCount        = 0;
  m_PlateauRounds      = 0;

  const InputImageType * input = this->GetInput();
  CheckWholeImage(input, "input", this);
  const auto region = input->GetLargestPossibleRegion();
  const chs::Grid grid = CudaGridOf(region);
  const chs::WatershedParameters parameters = this->MakeWatershedParameters(m_MarkWatershedLine);
  const BackendEnum              backend    = this->ResolveBackend();

  this->AllocateCachedOutputs(backend == BackendEnum::CUDA);
  OutputImageType *    output = this->GetOutput();
  const auto *         in     = reinterpret_cast<const PixelCanonical *>(input->GetBufferPointer());
  auto *               out    = reinterpret_cast<LabelCanonical *>(output->GetBufferPointer());
  chs::WatershedResult result;
  this->RunBackend(
    backend,
    [&](const chs::ExecutionContext & context, chs::RunInfo & run)
    { result = chs::WatershedCUDA(in, grid, parameters, out, context, &run); },
    [&] { result = chs::WatershedCPU(in, grid, parameters, out); },
    { output });
  m_ObjectCount        = result.basinCount;
  m_PlateauRounds      = result.plateauRounds;
}

template <typename TInputImage, typename TOutputImage>
void
CudaWatershedImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "MarkWatershedLine: " << m_MarkWatershedLine << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
  os << indent << "PlateauRounds: " << m_PlateauRounds << std::endl;
}

} // namespace itk

#endif
