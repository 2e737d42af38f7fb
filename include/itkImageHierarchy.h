/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkImageHierarchy_h
#define itkImageHierarchy_h

#include "itkCudaSegmentationBackendEnums.h" // chsTypeMacro
#include "itkDataObject.h"
#include "CudaHierarchicalSegmentationExport.h"

#include <array>

namespace itk
{

/** \class ImageHierarchy
 * \brief Base of the module's tree objects (Dendrogram, AlphaTree) whose leaves can be the pixels of an image: keeps
 * that image's geometry (dimension, size, spacing, origin, direction) so that cuts of the tree become label images
 * with it. Dimension 0 means the leaves are not pixels.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT ImageHierarchy : public DataObject
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(ImageHierarchy);

  using Self         = ImageHierarchy;
  using Superclass   = DataObject;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  chsTypeMacro(ImageHierarchy, DataObject);

  /** The geometry of the image whose pixels are the leaves (dimension 0: none): for each of the `dimension` axes the
   * size, spacing and origin, and the direction matrix (row-major, dimension x dimension). */
  void
  SetImageGeometry(unsigned              dimension,
                   const SizeValueType * size,
                   const double *        spacing,
                   const double *        origin,
                   const double *        direction);

  itkGetConstMacro(ImageDimension, unsigned);
  SizeValueType
  GetImageSize(unsigned axis) const
  {
    return m_ImageSize[axis];
  }
  double
  GetImageSpacing(unsigned axis) const
  {
    return m_ImageSpacing[axis];
  }
  double
  GetImageOrigin(unsigned axis) const
  {
    return m_ImageOrigin[axis];
  }
  double
  GetImageDirection(unsigned row, unsigned column) const
  {
    return m_ImageDirection[row * 3 + column];
  }

protected:
  ImageHierarchy()           = default;
  ~ImageHierarchy() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  unsigned                     m_ImageDimension = 0;
  std::array<SizeValueType, 3> m_ImageSize{ { 0, 0, 0 } };
  std::array<double, 3>        m_ImageSpacing{ { 1, 1, 1 } };
  std::array<double, 3>        m_ImageOrigin{ { 0, 0, 0 } };
  std::array<double, 9>        m_ImageDirection{ { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
};

} // namespace itk

#endif
