/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkImageHierarchyGeometry_h
#define itkImageHierarchyGeometry_h

#include "itkImageHierarchy.h"
#include "itkMacro.h"

namespace itk
{

/** Records an image's geometry in a tree whose leaves are its pixels. */
template <typename TImage>
void
CopyImageGeometry(const TImage * image, ImageHierarchy * hierarchy)
{
  constexpr unsigned D      = TImage::ImageDimension;
  const auto &       region = image->GetLargestPossibleRegion();
  SizeValueType      size[D];
  double             spacing[D], origin[D], direction[D * D];
  for (unsigned r = 0; r < D; ++r)
  {
    size[r]    = region.GetSize(r);
    spacing[r] = image->GetSpacing()[r];
    origin[r]  = image->GetOrigin()[r];
    for (unsigned c = 0; c < D; ++c)
      direction[r * D + c] = image->GetDirection()[r][c];
  }
  hierarchy->SetImageGeometry(D, size, spacing, origin, direction);
}

/** Gives an image the geometry of the image whose pixels are a tree's leaves (its largest possible region, spacing,
 * origin, direction); throws when the tree's leaves are not the pixels of an image of the same dimension. */
template <typename TImage>
void
ApplyImageGeometry(const ImageHierarchy * hierarchy, TImage * image)
{
  constexpr unsigned D = TImage::ImageDimension;
  if (hierarchy->GetImageDimension() != D)
  {
    itkGenericExceptionMacro(<< "The " << hierarchy->GetNameOfClass() << "'s leaves are not the pixels of a " << D
                             << "-D image (its image dimension is " << hierarchy->GetImageDimension() << ").");
  }
  typename TImage::SizeType      size;
  typename TImage::SpacingType   spacing;
  typename TImage::PointType     origin;
  typename TImage::DirectionType direction;
  for (unsigned r = 0; r < D; ++r)
  {
    size[r]    = hierarchy->GetImageSize(r);
    spacing[r] = hierarchy->GetImageSpacing(r);
    origin[r]  = hierarchy->GetImageOrigin(r);
    for (unsigned c = 0; c < D; ++c)
      direction[r][c] = hierarchy->GetImageDirection(r, c);
  }
  image->SetLargestPossibleRegion(typename TImage::RegionType(size));
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
}

} // namespace itk

#endif
