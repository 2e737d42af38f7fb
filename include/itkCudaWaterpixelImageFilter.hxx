/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWaterpixelImageFilter_hxx
#define itkCudaWaterpixelImageFilter_hxx

#include "itkCudaWaterpixelImageFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"
#include "chs/Waterpixels.h"

namespace itk
{

template <typename TInputImage, typename TOutputImage>
CudaWaterpixelImageFilter<TInputImage, TOutputImage>::CudaWaterpixelImageFilter()
{
  m_GridStep.Fill(10);
}

template <typename TInputImage, typename TOutputImage>
void
CudaWaterpixelImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using PixelCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical = typename CudaCanonicalLabel<OutputPixelType>::Type;

  m_NumberOfSuperpixels = 0;
  m_CompactnessUsed     = 0.0;
  m_NumberOfRounds      = 0;

  const InputImageType * input = this->GetInput();
  CheckWholeImage(input, "input", this);
  const RegionType          region = input->GetLargestPossibleRegion();
  chs::Grid                 grid;
  chs::WaterpixelParameters parameters;
  grid.dimension = ImageDimension;
  for (unsigned d = 0; d < ImageDimension; ++d)
  {
    grid.size[d]           = region.GetSize(d);
    parameters.gridStep[d] = m_GridStep[d];
  }
  parameters.compactness          = static_cast<float>(m_Compactness);
  parameters.gradientMinimumSeeds = m_GradientMinimumSeeds;
  parameters.fullyConnected       = m_FullyConnected;

  const BackendEnum backend = this->ResolveBackend();

  this->AllocateCachedOutputs(backend == BackendEnum::CUDA);
  OutputImageType *     output = this->GetOutput();
  const auto *          in     = reinterpret_cast<const PixelCanonical *>(input->GetBufferPointer());
  auto *                out    = reinterpret_cast<LabelCanonical *>(output->GetBufferPointer());
  chs::WaterpixelResult result;
  this->RunBackend(backend,
                   [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                   { result = chs::Waterpixels(in, grid, parameters, out, nullptr, context, &run); },
                   { output });
  m_NumberOfSuperpixels = result.superpixels;
  m_CompactnessUsed     = result.compactness;
  m_NumberOfRounds      = result.rounds;
}

template <typename TInputImage, typename TOutputImage>
void
CudaWaterpixelImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "GridStep: " << m_GridStep << std::endl;
  os << indent << "Compactness: " << m_Compactness << std::endl;
  os << indent << "GradientMinimumSeeds: " << m_GradientMinimumSeeds << std::endl;
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "NumberOfSuperpixels: " << m_NumberOfSuperpixels << std::endl;
  os << indent << "CompactnessUsed: " << m_CompactnessUsed << std::endl;
}

} // namespace itk

#endif
