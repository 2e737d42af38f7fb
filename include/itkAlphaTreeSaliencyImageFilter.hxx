/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeSaliencyImageFilter_hxx
#define itkAlphaTreeSaliencyImageFilter_hxx

#include "chs/AlphaTree.h"
#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkCudaSegmentationRun.h"
#include "itkImageHierarchyGeometry.h"

#include <algorithm>
#include <memory>

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
  chs::Grid grid;
  grid.dimension = ImageDimension;
  for (unsigned d = 0; d < ImageDimension; ++d)
    grid.size[d] = pixelSize[d];
  const SizeValueType total   = size[0] * size[1] * size[2];
  const double *      l       = tree->GetLevels()->CastToSTLConstContainer().data();
  const SizeValueType nodes   = tree->GetNumberOfNodes();
  const BackendEnum   backend = this->ResolveBackend();
  out->SetBufferedRegion(out->GetLargestPossibleRegion());
  AllocateHostCached(out, backend == BackendEnum::CUDA);
  // A float map is written in place; other pixel types through a temporary.
  constexpr bool           inPlace = std::is_same<typename OutputImageType::PixelType, float>::value;
  std::unique_ptr<float[]> temporary(inPlace ? nullptr : new float[total]);
  float *                  map  = inPlace ? reinterpret_cast<float *>(out->GetBufferPointer()) : temporary.get();
  auto                     draw = [&](const auto * p)
  {
    this->RunBackend(backend,
                     [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                     { chs::AlphaTreeSaliency(p, l, nodes, grid, map, context, &run); },
                     { out });
  };
  if (tree->HasWideNodeIds())
    draw(tree->GetWideParents()->CastToSTLConstContainer().data());
  else
    draw(tree->GetParents()->CastToSTLConstContainer().data());
  if (!inPlace)
    std::copy(map, map + total, out->GetBufferPointer());
}

} // namespace itk

#endif
