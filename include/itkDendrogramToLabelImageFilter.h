/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkDendrogramToLabelImageFilter_h
#define itkDendrogramToLabelImageFilter_h

#include "itkCudaSegmentationBackendEnums.h" // chsTypeMacro
#include "itkDendrogram.h"
#include "itkImageSource.h"

namespace itk
{

/** \class DendrogramToLabelImageFilter
 * \brief Cuts the dendrogram of an image graph into flat clusters and writes them as a label image with the image's
 * geometry.
 *
 * With NumberOfClusters = k > 0: the n - k lightest tree edges are merged, giving exactly k clusters. Otherwise
 * (default): the edges of weight at most Distance are merged. Labels are consecutive from 1 in raster order of each
 * cluster's first pixel; GetNumberOfClusters() gives their number. The dendrogram must come from an image
 * (CudaImageToSingleLinkageDendrogramFilter) of this filter's dimension.
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TOutputImage>
class ITK_TEMPLATE_EXPORT DendrogramToLabelImageFilter : public ImageSource<TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(DendrogramToLabelImageFilter);

  using Self                                   = DendrogramToLabelImageFilter;
  using Superclass                             = ImageSource<TOutputImage>;
  using Pointer                                = SmartPointer<Self>;
  using ConstPointer                           = SmartPointer<const Self>;
  using OutputImageType                        = TOutputImage;
  using LabelType                              = typename OutputImageType::PixelType;
  static constexpr unsigned int ImageDimension = OutputImageType::ImageDimension;

  itkNewMacro(Self);
  chsTypeMacro(DendrogramToLabelImageFilter, ImageSource);

  void
  SetInput(const Dendrogram * dendrogram);
  const Dendrogram *
  GetInput() const;

  itkSetMacro(Distance, double);
  itkGetConstMacro(Distance, double);
  itkSetMacro(NumberOfClusters, SizeValueType);
  itkGetConstMacro(NumberOfClusters, SizeValueType);

  /** Clusters of the last update. */
  itkGetConstMacro(ObjectCount, SizeValueType);

protected:
  DendrogramToLabelImageFilter();
  ~DendrogramToLabelImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override;
  void
  EnlargeOutputRequestedRegion(DataObject * output) override
  {
    output->SetRequestedRegionToLargestPossibleRegion();
  }
  void
  GenerateData() override;

private:
  double        m_Distance{ 0.0 };
  SizeValueType m_NumberOfClusters{ 0 };
  SizeValueType m_ObjectCount{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkDendrogramToLabelImageFilter.hxx"
#endif

#endif
