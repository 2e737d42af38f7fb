/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageForestingTransformImageFilter_hxx
#define itkCudaImageForestingTransformImageFilter_hxx

#include "itkCudaImageForestingTransformImageFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"

namespace itk
{

template <typename TInputImage, typename TLabelImage>
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::CudaImageForestingTransformImageFilter()
{
  this->AddRequiredInputName("SeedImage", 1);
  this->SetNumberOfRequiredOutputs(3);
  this->SetNthOutput(1, this->MakeOutput(1));
  this->SetNthOutput(2, this->MakeOutput(2));
}

template <typename TInputImage, typename TLabelImage>
DataObject::Pointer
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::MakeOutput(DataObjectPointerArraySizeType idx)
{
  if (idx == 1)
  {
    return CostImageType::New().GetPointer();
  }
  if (idx == 2)
  {
    return PredecessorImageType::New().GetPointer();
  }
  return Superclass::MakeOutput(idx);
}

template <typename TInputImage, typename TLabelImage>
auto
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::GetCostOutput() -> CostImageType *
{
  return dynamic_cast<CostImageType *>(this->ProcessObject::GetOutput(1));
}

template <typename TInputImage, typename TLabelImage>
auto
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::GetPredecessorOutput() -> PredecessorImageType *
{
  return dynamic_cast<PredecessorImageType *>(this->ProcessObject::GetOutput(2));
}

template <typename TInputImage, typename TLabelImage>
void
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::GenerateData()
{
  using WeightCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical  = typename CudaCanonicalLabel<LabelPixelType>::Type;

  m_SeedCount      = 0;
  m_NumberOfRounds = 0;

  const InputImageType * input  = this->GetInput();
  const LabelImageType * seeds  = this->GetSeedImage();
  const RegionType       region = input->GetLargestPossibleRegion();
  CheckWholeImage(input, "input", this);
  if (seeds->GetLargestPossibleRegion() != region || seeds->GetBufferedRegion() != region)
  {
    itkExceptionMacro(<< "The seed image must cover the input's largest possible region " << region
                      << "; its largest possible region is " << seeds->GetLargestPossibleRegion() << '.');
  }

  const chs::Grid                   grid = CudaGridOf(region);
  chs::ForestingTransformParameters parameters;
  parameters.fullyConnected = m_FullyConnected;
  static_assert(int(ArcWeightEnum::Maximum) == int(chs::ArcWeightFunction::Maximum) &&
                  int(ArcWeightEnum::AbsoluteDifference) == int(chs::ArcWeightFunction::AbsoluteDifference),
                "the filter's arc weights map one to one onto the backends'");
  parameters.arcWeight     = static_cast<chs::ArcWeightFunction>(m_ArcWeight);
  parameters.maximumRounds = m_MaximumNumberOfRounds;

  const BackendEnum backend = this->ResolveBackend();

  this->template AllocateCachedOutputs<CostImageType, PredecessorImageType>(backend == BackendEnum::CUDA);
  LabelImageType *              labels      = this->GetOutput();
  CostImageType *               cost        = this->GetCostOutput();
  PredecessorImageType *        predecessor = this->GetPredecessorOutput();
  const auto *                  w           = reinterpret_cast<const WeightCanonical *>(input->GetBufferPointer());
  const auto *                  s           = reinterpret_cast<const LabelCanonical *>(seeds->GetBufferPointer());
  auto *                        l           = reinterpret_cast<LabelCanonical *>(labels->GetBufferPointer());
  auto *                        p           = reinterpret_cast<int64_t *>(predecessor->GetBufferPointer());
  chs::ForestingTransformResult result;
  this->RunBackend(
    backend,
    [&](const chs::ExecutionContext & context, chs::RunInfo & run)
    { result = chs::ImageForestingTransform(w, s, grid, parameters, l, cost->GetBufferPointer(), p, context, &run); },
    { labels, cost, predecessor });
  m_SeedCount      = result.seedCount;
  m_NumberOfRounds = result.rounds;
}

template <typename TInputImage, typename TLabelImage>
void
CudaImageForestingTransformImageFilter<TInputImage, TLabelImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "ArcWeight: " << m_ArcWeight << std::endl;
  os << indent << "MaximumNumberOfRounds: " << m_MaximumNumberOfRounds << std::endl;
  os << indent << "SeedCount: " << m_SeedCount << std::endl;
  os << indent << "NumberOfRounds: " << m_NumberOfRounds << std::endl;
}

} // namespace itk

#endif
