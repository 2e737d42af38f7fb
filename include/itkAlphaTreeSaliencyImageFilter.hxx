/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeSaliencyImageFilter_hxx
#define itkAlphaTreeSaliencyImageFilter_hxx

#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkImageHierarchyGeometry.h"

#include <algorithm>

namespace itk
{

template <typename TOutputImage>
AlphaTreeSaliencyImageFilter<TOutputImage>::AlphaTreeSaliencyImageFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

template <typename TOutputImage>
void
AlphaTreeSaliencyImageFilter<TOutputImage>::SetInput(const AlphaTree * tree)
{
  this->ProcessObject::SetNthInput(0, const_cast<AlphaTree *>(tree));
}

template <typename TOutputImage>
const AlphaTree *
AlphaTreeSaliencyImageFilter<TOutputImage>::GetInput() const
{
  return itkDynamicCastInDebugMode<const AlphaTree *>(this->ProcessObject::GetInput(0));
}

template <typename TOutputImage>
void
AlphaTreeSaliencyImageFilter<TOutputImage>::GenerateOutputInformation()
{
  const AlphaTree * tree = this->GetInput();
  if (!tree)
  {
    itkExceptionMacro(<< "No input alpha-tree.");
  }
  OutputImageType * out = this->GetOutput();
  ApplyImageGeometry(tree, out);
  typename OutputImageType::SizeType    size    = out->GetLargestPossibleRegion().GetSize();
  typename OutputImageType::SpacingType spacing = out->GetSpacing();
  for (unsigned d = 0; d < ImageDimension; ++d)
  {
    size[d]    = 2 * size[d] - 1;
    spacing[d] = spacing[d] / 2;
  }
  out->SetLargestPossibleRegion(typename OutputImageType::RegionType(size));
  out->SetSpacing(spacing);
}

template <typename TOutputImage>
void
AlphaTreeSaliencyImageFilter<TOutputImage>::GenerateData()
{
  const AlphaTree * tree         = this->GetInput();
  OutputImageType * out          = this->GetOutput();
  const auto &      parent       = tree->GetParents()->CastToSTLConstContainer();
  const auto &      level        = tree->GetLevels()->CastToSTLConstContainer();
  SizeValueType     pixelSize[3] = { 1, 1, 1 }, size[3] = { 1, 1, 1 };
  for (unsigned d = 0; d < ImageDimension; ++d)
  {
    size[d]      = out->GetLargestPossibleRegion().GetSize(d);
    pixelSize[d] = (size[d] + 1) / 2;
  }
  if (tree->GetNumberOfLeaves() != pixelSize[0] * pixelSize[1] * pixelSize[2])
  {
    itkExceptionMacro(<< "The alpha-tree has " << tree->GetNumberOfLeaves() << " leaves for an image of "
                      << pixelSize[0] * pixelSize[1] * pixelSize[2] << " pixels.");
  }
  out->SetBufferedRegion(out->GetLargestPossibleRegion());
  out->Allocate();
  out->FillBuffer(OutputPixelType{});
  OutputPixelType * s = out->GetBufferPointer();
  // The merge level of two pixels: climb the smaller id (parents have larger ids) until the paths meet.
  auto merge = [&](uint32_t a, uint32_t b)
  {
    while (a != b)
      (a < b ? a : b) = parent[a < b ? a : b];
    return static_cast<OutputPixelType>(level[a]);
  };
  const SizeValueType stride[3]  = { 1, size[0], size[0] * size[1] };
  const SizeValueType pstride[3] = { 1, pixelSize[0], pixelSize[0] * pixelSize[1] };
  const SizeValueType total      = size[0] * size[1] * size[2];
  // Samples with k odd coordinates, k = 1 .. dimension: merge levels first, then the largest of the neighbours.
  for (unsigned k = 1; k <= ImageDimension; ++k)
    for (SizeValueType i = 0; i < total; ++i)
    {
      const SizeValueType c[3] = { i % size[0], (i / size[0]) % size[1], i / (size[0] * size[1]) };
      unsigned            odd  = 0;
      for (unsigned d = 0; d < ImageDimension; ++d)
        odd += unsigned(c[d] & 1);
      if (odd != k)
        continue;
      if (k == 1)
      {
        SizeValueType p = 0, q = 0;
        for (unsigned d = 0; d < ImageDimension; ++d)
        {
          p += (c[d] / 2) * pstride[d];
          q += ((c[d] + 1) / 2) * pstride[d];
        }
        s[i] = merge(uint32_t(p), uint32_t(q));
        continue;
      }
      OutputPixelType m = s[i];
      for (unsigned d = 0; d < ImageDimension; ++d)
        if (c[d] & 1)
          m = std::max({ m, s[i - stride[d]], s[i + stride[d]] });
      s[i] = m;
    }
}

} // namespace itk

#endif
