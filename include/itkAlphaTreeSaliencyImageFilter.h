/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTreeSaliencyImageFilter_h
#define itkAlphaTreeSaliencyImageFilter_h

#include "itkAlphaTree.h"
#include "itkCudaSegmentationFilter.h"
#include "itkImageSource.h"

namespace itk
{

/** \class AlphaTreeSaliencyImageFilter
 * \brief The saliency map (ultrametric contour map) of an alpha-tree: for every pair of face-neighbouring pixels,
 * the level at which the tree merges them (the level of their lowest common ancestor), drawn on the interpixel
 * (Khalimsky) grid.
 *
 * The output has 2 s - 1 samples along an axis of s pixels, half the spacing and the same origin and direction, so
 * pixel (x, y) sits at (2x, 2y) with value 0; the sample between two face neighbours holds their merge level; a
 * sample between more pixels (a corner in 2D; an edge or corner between voxels in 3D) holds the largest of the
 * samples beside it. Thresholding it above alpha draws the borders of the alpha-connected components.
 *
 * Per sample work: on the GPU (Backend Auto, the default, or CUDA: the tree is uploaded, each sample between two
 * pixels climbs to their lowest common ancestor) or on the CPU; both give the same values (computed in float, which
 * holds every level the module's trees have exactly).
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TOutputImage>
class ITK_TEMPLATE_EXPORT AlphaTreeSaliencyImageFilter : public CudaSegmentationFilter<ImageSource<TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(AlphaTreeSaliencyImageFilter);

  using Self                                   = AlphaTreeSaliencyImageFilter;
  using Superclass                             = CudaSegmentationFilter<ImageSource<TOutputImage>>;
  using Pointer                                = SmartPointer<Self>;
  using ConstPointer                           = SmartPointer<const Self>;
  using OutputImageType                        = TOutputImage;
  using OutputPixelType                        = typename OutputImageType::PixelType;
  using BackendEnum                            = typename Superclass::BackendEnum;
  static constexpr unsigned int ImageDimension = OutputImageType::ImageDimension;

  itkNewMacro(Self);
  chsTypeMacro(AlphaTreeSaliencyImageFilter, ImageSource);

  void
  SetInput(const AlphaTree * tree);
  const AlphaTree *
  GetInput() const;

protected:
  AlphaTreeSaliencyImageFilter();
  ~AlphaTreeSaliencyImageFilter() override = default;
  void
  GenerateOutputInformation() override;
  void
  GenerateData() override;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkAlphaTreeSaliencyImageFilter.hxx"
#endif

#endif
