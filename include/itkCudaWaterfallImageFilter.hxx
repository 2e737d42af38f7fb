/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWaterfallImageFilter_hxx
#define itkCudaWaterfallImageFilter_hxx

#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"

#include <algorithm>
#include <vector>

namespace itk
{

template <typename TInputImage, typename TOutputImage>
auto
CudaWaterfallImageFilter<TInputImage, TOutputImage>::GetLevel(unsigned int level) -> OutputImageType *
{
  if (level >= this->GetNumberOfComputedLevels())
  {
    itkExceptionMacro(<< "Level " << level << " was not computed; the last update computed "
                      << this->GetNumberOfComputedLevels() << " levels.");
  }
  if (level > 0 && !m_LevelImagesProduced)
  {
    itkExceptionMacro(<< "Level " << level << " has no output image: the last update ran with ProduceLevelImages off; "
                      << "ComputeLevelImage(" << level << ") makes it.");
  }
  return this->GetOutput(level);
}

template <typename TInputImage, typename TOutputImage>
auto
CudaWaterfallImageFilter<TInputImage, TOutputImage>::ComputeLevelImage(unsigned int level) const ->
  typename OutputImageType::Pointer
{
  if (level >= this->GetNumberOfComputedLevels())
  {
    itkExceptionMacro(<< "Level " << level << " was not computed; the last update computed "
                      << this->GetNumberOfComputedLevels() << " levels.");
  }
  const OutputImageType * first = this->GetOutput();
  // Level 0's label r (1-based) -> its label at `level`, through the parent labels of the levels between.
  std::vector<OutputPixelType> map(m_RegionCounts[0] + 1, OutputPixelType(0));
  for (SizeValueType r = 1; r <= m_RegionCounts[0]; ++r)
  {
    SizeValueType label = r;
    for (unsigned int k = 0; k < level; ++k)
      label = m_ParentLabels[k][label - 1];
    map[r] = static_cast<OutputPixelType>(label);
  }
  auto out = OutputImageType::New();
  out->CopyInformation(first);
  out->SetRegions(first->GetBufferedRegion());
  AllocateHostCached(out.GetPointer());
  const OutputPixelType * in  = first->GetBufferPointer();
  OutputPixelType *       dst = out->GetBufferPointer();
  const SizeValueType     n   = first->GetBufferedRegion().GetNumberOfPixels();
  // One gather over the voxels, in slices on the ITK's threads.
  const SizeValueType slices = std::max<SizeValueType>(1, std::min<SizeValueType>(n / (SizeValueType(1) << 18), 64));
  MultiThreaderBase::New()->ParallelizeArray(
    0,
    slices,
    [&](SizeValueType s)
    {
      const SizeValueType a = n * s / slices, b = n * (s + 1) / slices;
      for (SizeValueType i = a; i < b; ++i)
        dst[i] = map[in[i]];
    },
    nullptr);
  return out;
}

template <typename TInputImage, typename TOutputImage>
SizeValueType
CudaWaterfallImageFilter<TInputImage, TOutputImage>::GetRegionCount(unsigned int level) const
{
  if (level >= m_RegionCounts.size())
  {
    itkExceptionMacro(<< "Level " << level << " was not computed; the last update computed " << m_RegionCounts.size()
                      << " levels.");
  }
  return m_RegionCounts[level];
}

template <typename TInputImage, typename TOutputImage>
auto
CudaWaterfallImageFilter<TInputImage, TOutputImage>::GetParentLabels(unsigned int level) const -> const LabelArrayType &
{
  // m_ParentLabels keeps its vectors between updates; the levels of the last update are m_RegionCounts'.
  if (level + 1 >= m_RegionCounts.size())
  {
    itkExceptionMacro(<< "Level " << level << " has no next level; the last update computed " << m_RegionCounts.size()
                      << " levels.");
  }
  return m_ParentLabels[level];
}

template <typename TInputImage, typename TOutputImage>
SizeValueType
CudaWaterfallImageFilter<TInputImage, TOutputImage>::GetParentLabel(unsigned int level, SizeValueType label) const
{
  const LabelArrayType & parents = this->GetParentLabels(level);
  if (label < 1 || label > parents.size())
  {
    itkExceptionMacro(<< "Level " << level << " has labels 1 to " << parents.size() << "; " << label
                      << " is not one of them.");
  }
  return parents[label - 1];
}

template <typename TInputImage, typename TOutputImage>
void
CudaWaterfallImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  using PixelCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical = typename CudaCanonicalLabel<OutputPixelType>::Type;

  m_RegionCounts.clear();
  for (auto & parents : m_ParentLabels)
  {
    parents.clear(); // emptied, capacity kept for this update's
  }
  m_WatershedMilliseconds = 0.0;
  m_LevelsMilliseconds    = 0.0;
  m_LevelsOnRegionGraph   = false;

  const InputImageType * input = this->GetInput();
  CheckWholeImage(input, "input", this);
  const auto               region = input->GetLargestPossibleRegion();
  const chs::Grid          grid   = CudaGridOf(region);
  chs::WaterfallParameters parameters;
  parameters.watershed      = this->MakeWatershedParameters(false);
  parameters.numberOfLevels = m_NumberOfLevels;
  const BackendEnum backend = this->ResolveBackend();

  // Output 0 is the pipeline's; the outputs of the other levels are made as the levels come, with its geometry.
  this->AllocateCachedOutputs(backend == BackendEnum::CUDA);
  OutputImageType *                             first = this->GetOutput();
  std::vector<DataObject *>                     made{ first };
  const bool                                    produce = m_ProduceLevelImages;
  const chs::WaterfallLevelSink<LabelCanonical> sink    = [&](unsigned level, uint64_t) -> LabelCanonical *
  {
    OutputImageType * out = first;
    if (level > 0 && !produce)
      return nullptr; // kept as parent labels
    if (level > 0)
    {
      if (level >= this->GetNumberOfIndexedOutputs() || this->GetOutput(level) == nullptr)
      {
        this->SetNthOutput(level, this->MakeOutput(level));
      }
      out = this->GetOutput(level);
      out->CopyInformation(first);
      out->SetRequestedRegion(first->GetRequestedRegion());
      out->SetBufferedRegion(first->GetBufferedRegion());
      AllocateHostCached(out, backend == BackendEnum::CUDA);
      made.push_back(out);
    }
    return reinterpret_cast<LabelCanonical *>(out->GetBufferPointer());
  };
  const auto *         in = reinterpret_cast<const PixelCanonical *>(input->GetBufferPointer());
  chs::WaterfallResult result;
  try
  {
    this->RunBackend(backend,
                     [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                     { result = chs::Waterfall(in, grid, parameters, sink, context, &run); },
                     { first });
  }
  catch (...)
  {
    for (DataObject * output : made)
    {
      output->Initialize();
    }
    this->SetNumberOfIndexedOutputs(1);
    throw;
  }
  // Levels of an earlier update beyond this one's are dropped.
  this->SetNumberOfIndexedOutputs(
    static_cast<ProcessObject::DataObjectPointerArraySizeType>(produce ? result.regionCounts.size() : 1));
  m_LevelImagesProduced   = produce;
  m_WatershedMilliseconds = result.watershedMilliseconds;
  m_LevelsMilliseconds    = result.levelsMilliseconds;
  m_LevelsOnRegionGraph   = result.levelsOnRegionGraph;
  m_RegionCounts.assign(result.regionCounts.begin(), result.regionCounts.end());
  // Into the vectors of the previous update where there are some (their memory is mapped already).
  m_ParentLabels.resize(result.parents.size());
  for (size_t k = 0; k < result.parents.size(); ++k)
  {
    m_ParentLabels[k].assign(result.parents[k].begin(), result.parents[k].end());
  }
}

template <typename TInputImage, typename TOutputImage>
void
CudaWaterfallImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfLevels: " << m_NumberOfLevels << std::endl;
  os << indent << "ProduceLevelImages: " << m_ProduceLevelImages << std::endl;
  os << indent << "ComputedLevels: " << m_RegionCounts.size() << std::endl;
}

} // namespace itk

#endif
