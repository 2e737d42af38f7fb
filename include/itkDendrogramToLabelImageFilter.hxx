/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkDendrogramToLabelImageFilter_hxx
#define itkDendrogramToLabelImageFilter_hxx

#include "itkDendrogramToLabelImageFilter.h"
#include "itkImageHierarchyGeometry.h"

#include <algorithm>
#include <limits>

namespace itk
{

template <typename TOutputImage>
DendrogramToLabelImageFilter<TOutputImage>::DendrogramToLabelImageFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

template <typename TOutputImage>
void
DendrogramToLabelImageFilter<TOutputImage>::SetInput(const Dendrogram * dendrogram)
{
  this->ProcessObject::SetNthInput(0, const_cast<Dendrogram *>(dendrogram));
}

template <typename TOutputImage>
const Dendrogram *
DendrogramToLabelImageFilter<TOutputImage>::GetInput() const
{
  return itkDynamicCastInDebugMode<const Dendrogram *>(this->ProcessObject::GetInput(0));
}

template <typename TOutputImage>
void
DendrogramToLabelImageFilter<TOutputImage>::GenerateOutputInformation()
{
  const Dendrogram * dendrogram = this->GetInput();
  if (!dendrogram)
  {
    itkExceptionMacro(<< "No input dendrogram.");
  }
  ApplyImageGeometry(dendrogram, this->GetOutput());
}

template <typename TOutputImage>
void
DendrogramToLabelImageFilter<TOutputImage>::GenerateData()
{
  m_ObjectCount                  = 0;
  const Dendrogram *  dendrogram = this->GetInput();
  OutputImageType *   output     = this->GetOutput();
  const SizeValueType pixels     = output->GetLargestPossibleRegion().GetNumberOfPixels();
  if (dendrogram->GetNumberOfVertices() != pixels)
  {
    itkExceptionMacro(<< "The dendrogram has " << dendrogram->GetNumberOfVertices() << " vertices for " << pixels
                      << " pixels.");
  }
  const auto          labels = m_NumberOfClusters > 0 ? dendrogram->ComputeClusters(m_NumberOfClusters)
                                                      : dendrogram->ComputeClustersAtDistance(m_Distance);
  const SizeValueType count  = labels->empty() ? 0 : *std::max_element(labels->begin(), labels->end());
  if (count > SizeValueType(std::numeric_limits<LabelType>::max()))
  {
    itkExceptionMacro(<< count << " clusters do not fit the label type (at most "
                      << SizeValueType(std::numeric_limits<LabelType>::max()) << ").");
  }
  output->SetBufferedRegion(output->GetLargestPossibleRegion());
  AllocateHostCached(output);
  std::copy(labels->begin(), labels->end(), output->GetBufferPointer());
  m_ObjectCount = count;
}

template <typename TOutputImage>
void
DendrogramToLabelImageFilter<TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Distance: " << m_Distance << std::endl;
  os << indent << "NumberOfClusters: " << m_NumberOfClusters << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
}

} // namespace itk

#endif
