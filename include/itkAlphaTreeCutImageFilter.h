/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeCutImageFilter_h
#define itkAlphaTreeCutImageFilter_h

#include "itkAlphaTree.h"
#include "itkCudaSegmentationFilter.h"
#include "itkImageSource.h"

#include <limits>

namespace itk
{

/** \class AlphaTreeCutImageFilter
 * \brief Cuts an alpha-tree into a label image with the image's geometry: the alpha-connected components at Alpha
 * or, with a finite Omega, Soille's alpha-omega constrained components (the largest alpha'-components, alpha' <=
 * Alpha, whose value range is at most Omega; the tree must have been built with value ranges).
 *
 * Labels are consecutive from 1 in raster order of each region's first pixel; GetObjectCount() gives their number.
 * The cut is per pixel and runs on the GPU (Backend Auto, the default, or CUDA: the tree is uploaded, every node
 * finds its region by pointer jumping, an exclusive scan numbers the regions) or on the CPU (one pass from the root
 * down); both give the same labels.
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TOutputImage>
class ITK_TEMPLATE_EXPORT AlphaTreeCutImageFilter : public CudaSegmentationFilter<ImageSource<TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(AlphaTreeCutImageFilter);

  using Self                                   = AlphaTreeCutImageFilter;
  using Superclass                             = CudaSegmentationFilter<ImageSource<TOutputImage>>;
  using Pointer                                = SmartPointer<Self>;
  using ConstPointer                           = SmartPointer<const Self>;
  using OutputImageType                        = TOutputImage;
  using LabelType                              = typename OutputImageType::PixelType;
  using BackendEnum                            = typename Superclass::BackendEnum;
  static constexpr unsigned int ImageDimension = OutputImageType::ImageDimension;

  itkNewMacro(Self);
  chsTypeMacro(AlphaTreeCutImageFilter, ImageSource);

  void
  SetInput(const AlphaTree * tree);
  const AlphaTree *
  GetInput() const;

  itkSetMacro(Alpha, double);
  itkGetConstMacro(Alpha, double);
  /** Infinite (default): no constraint on the value range. */
  itkSetMacro(Omega, double);
  itkGetConstMacro(Omega, double);
  /** Regions of the last update. */
  itkGetConstMacro(ObjectCount, SizeValueType);

protected:
  AlphaTreeCutImageFilter();
  ~AlphaTreeCutImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override;
  void
  GenerateData() override;

private:
  double        m_Alpha{ 0.0 };
  double        m_Omega{ std::numeric_limits<double>::infinity() };
  SizeValueType m_ObjectCount{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkAlphaTreeCutImageFilter.hxx"
#endif

#endif
