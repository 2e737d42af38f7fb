/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeCutImageFilter_hxx
#define itkAlphaTreeCutImageFilter_hxx

#include "itkAlphaTreeCutImageFilter.h"
#include "itkImageHierarchyGeometry.h"

#include <algorithm>

namespace itk
{

template <typename TOutputImage>
AlphaTreeCutImageFilter<TOutputImage>::AlphaTreeCutImageFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

template <typename TOutputImage>
void
AlphaTreeCutImageFilter<TOutputImage>::SetInput(const AlphaTree * tree)
{
  this->ProcessObject::SetNthInput(0, const_cast<AlphaTree *>(tree));
}

template <typename TOutputImage>
const AlphaTree *
AlphaTreeCutImageFilter<TOutputImage>::GetInput() const
{
  return itkDynamicCastInDebugMode<const AlphaTree *>(this->ProcessObject::GetInput(0));
}

template <typename TOutputImage>
void
AlphaTreeCutImageFilter<TOutputImage>::GenerateOutputInformation()
{
  const AlphaTree * tree = this->GetInput();
  if (!tree)
  {
    itkExceptionMacro(<< "No input alpha-tree.");
  }
  ApplyImageGeometry(tree, this->GetOutput());
}

template <typename TOutputImage>
void
AlphaTreeCutImageFilter<TOutputImage>::GenerateData()
{
  m_ObjectCount          = 0;
  const AlphaTree * tree = this->GetInput();
  OutputImageType * out  = this->GetOutput();
  if (tree->GetNumberOfLeaves() != out->GetLargestPossibleRegion().GetNumberOfPixels())
  {
    itkExceptionMacro(<< "The alpha-tree has " << tree->GetNumberOfLeaves() << " leaves for an image of "
                      << out->GetLargestPossibleRegion().GetNumberOfPixels() << " pixels.");
  }
  const auto          labels = tree->ComputeLabels(m_Alpha, m_Omega);
  const SizeValueType count  = labels->empty() ? 0 : *std::max_element(labels->begin(), labels->end());
  if (count > SizeValueType(NumericTraits<LabelType>::max()))
  {
    itkExceptionMacro(<< count << " regions do not fit the label type (at most "
                      << SizeValueType(NumericTraits<LabelType>::max()) << ").");
  }
  out->SetBufferedRegion(out->GetLargestPossibleRegion());
  out->Allocate();
  std::copy(labels->begin(), labels->end(), out->GetBufferPointer());
  m_ObjectCount = count;
}

template <typename TOutputImage>
void
AlphaTreeCutImageFilter<TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Alpha: " << m_Alpha << std::endl;
  os << indent << "Omega: " << m_Omega << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
}

} // namespace itk

#endif
