/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeCutImageFilter_hxx
#define itkAlphaTreeCutImageFilter_hxx

#include "chs/AlphaTree.h"
#include "itkAlphaTreeCutImageFilter.h"
#include "itkCudaSegmentationRun.h"
#include "itkImageHierarchyGeometry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

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
  tree->CheckCutParameters(m_Alpha, m_Omega);
  const bool          constrained = !std::isinf(m_Omega);
  const double *      level       = tree->GetLevels()->CastToSTLConstContainer().data();
  const double *      range       = constrained ? tree->GetValueRanges()->CastToSTLConstContainer().data() : nullptr;
  const SizeValueType n           = tree->GetNumberOfLeaves();
  const SizeValueType nodes       = tree->GetNumberOfNodes();
  const double        omega       = constrained ? m_Omega : std::numeric_limits<double>::infinity();
  SizeValueType       count       = 0;
  const BackendEnum   backend     = this->ResolveBackend();
  out->SetBufferedRegion(out->GetLargestPossibleRegion());
  AllocateHostCached(out, backend == BackendEnum::CUDA);
  // Labels of the tree's node id width (32 or 64 bits): written in place when the label type is that, else through
  // a temporary.
  auto cut = [&](const auto * parent)
  {
    using TNode                      = std::remove_const_t<std::remove_pointer_t<decltype(parent)>>;
    constexpr bool           inPlace = std::is_same<LabelType, TNode>::value;
    std::unique_ptr<TNode[]> temporary(inPlace ? nullptr : new TNode[n]);
    TNode *                  labels = inPlace ? reinterpret_cast<TNode *>(out->GetBufferPointer()) : temporary.get();
    this->RunBackend(backend,
                     [&](const chs::ExecutionContext & context, chs::RunInfo & run) {
                       count = chs::AlphaTreeCut(parent, level, range, n, nodes, m_Alpha, omega, labels, context, &run);
                     },
                     { out });
    if (!inPlace && count <= SizeValueType(NumericTraits<LabelType>::max()))
      std::copy(labels, labels + n, out->GetBufferPointer());
  };
  if (tree->HasWideNodeIds())
    cut(tree->GetWideParents()->CastToSTLConstContainer().data());
  else
    cut(tree->GetParents()->CastToSTLConstContainer().data());
  if (count > SizeValueType(NumericTraits<LabelType>::max()))
  {
    out->Initialize();
    itkExceptionMacro(<< count << " regions do not fit the label type (at most "
                      << SizeValueType(NumericTraits<LabelType>::max()) << ").");
  }
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
