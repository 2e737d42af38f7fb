/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaConnectedComponentImageFilter_h
#define itkCudaConnectedComponentImageFilter_h

#include "itkContinuousIndex.h"
#include "itkImageToImageFilter.h"
#include "itkCudaSegmentationFilter.h"

#include <vector>

namespace itk
{

/** \class CudaConnectedComponentImageFilter
 * \brief Connected-components labeling on the GPU, a drop-in for ConnectedComponentImageFilter.
 *
 * Non-zero input pixels (inside the optional mask) are foreground; foreground neighbours are connected (face
 * neighbours, or all neighbours with FullyConnected). The output is identical, voxel for voxel, to
 * itk::ConnectedComponentImageFilter's: background pixels get BackgroundValue, and objects are numbered in raster
 * order of their first pixel, counting up from 0 and skipping BackgroundValue (so 1..N with the default 0).
 *
 * With FlatZones on, every pixel inside the mask belongs to a component and neighbours of equal value are
 * connected: the flat-zone partition that the watershed and alpha-tree filters build on. A DistanceThreshold above
 * 0 joins flat-zone neighbours whose values differ by at most it (ScalarConnectedComponentImageFilter's rule; the
 * components are then every pixel reached by a chain of such neighbours). PeriodicBoundary wraps the image around
 * every axis (a torus: periodic simulation volumes, tiled textures).
 *
 * The CUDA backend runs the three kernels of Chen et al. (local union-find merge in shared memory after a
 * row-column coarse labeling, boundary analysis on tile borders only, final link), extended to 8-connectivity in
 * 2D and 6/26-connectivity in 3D, then relabels with a prefix sum. The CPU backend is the sequential reference;
 * both give the same labels. With ComputeStatistics on, the voxel count and bounding box of every object are
 * computed in the final pass.
 *
 * J. Chen, Q. Yao, H. Sabirin, K. Nonaka, H. Sankoh, S. Naito, "An Optimized Union-Find Algorithm for Connected
 * Components Labeling Using GPUs", 2017.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaConnectedComponentImageFilter
  : public CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentImageFilter);

  using Self         = CudaConnectedComponentImageFilter;
  using Superclass   = CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType       = TInputImage;
  using OutputImageType      = TOutputImage;
  using MaskImageType        = TMaskImage;
  using InputPixelType       = typename TInputImage::PixelType;
  using OutputPixelType      = typename TOutputImage::PixelType;
  using OutputImagePixelType = OutputPixelType;
  using MaskPixelType        = typename TMaskImage::PixelType;
  using RegionType           = typename TOutputImage::RegionType;
  using IndexType            = typename TOutputImage::IndexType;
  using SizeType             = typename TOutputImage::SizeType;
  using BackendEnum          = typename Superclass::BackendEnum;

  static constexpr unsigned int ImageDimension = TOutputImage::ImageDimension;

  itkNewMacro(Self);
  chsTypeMacro(CudaConnectedComponentImageFilter, ImageToImageFilter);

  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D images and 3D volumes are supported");
  static_assert(std::is_integral<OutputPixelType>::value, "the output pixel type must be an integer type");

  /** Face connectivity (default) or full connectivity. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** Output value of background pixels; object labels skip it. */
  itkSetMacro(BackgroundValue, OutputPixelType);
  itkGetConstMacro(BackgroundValue, OutputPixelType);

  /** Label the flat zones (equal-valued connected regions) instead of the foreground objects. */
  itkSetMacro(FlatZones, bool);
  itkGetConstReferenceMacro(FlatZones, bool);
  itkBooleanMacro(FlatZones);

  /** With FlatZones: join neighbours whose values differ by at most this (default 0: equal values); >= 0. */
  itkSetMacro(DistanceThreshold, double);
  itkGetConstMacro(DistanceThreshold, double);

  /** Wrap around every axis: pixels on opposite faces are neighbours. */
  itkSetMacro(PeriodicBoundary, bool);
  itkGetConstReferenceMacro(PeriodicBoundary, bool);
  itkBooleanMacro(PeriodicBoundary);

  /** Also compute the voxel count, bounding box and centroid of every object. */
  itkSetMacro(ComputeStatistics, bool);
  itkGetConstReferenceMacro(ComputeStatistics, bool);
  itkBooleanMacro(ComputeStatistics);

  /** Optional mask: pixels where the mask is zero are background. */
  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);

  /** Number of objects found by the last update. */
  itkGetConstMacro(ObjectCount, SizeValueType);

  /** Statistics of the last update (ComputeStatistics on), by object label. */
  SizeValueType
  GetVoxelCount(OutputPixelType label) const;
  RegionType
  GetBoundingBox(OutputPixelType label) const;
  /** The mean index of the object's pixels (TransformContinuousIndexToPhysicalPoint gives its physical point). */
  ContinuousIndex<double, ImageDimension>
  GetCentroid(OutputPixelType label) const;
  /** Voxel counts of all objects in label order (object k has label k+1 with the default background 0). */
  const std::vector<SizeValueType> &
  GetVoxelCounts() const
  {
    return m_VoxelCounts;
  }

protected:
  CudaConnectedComponentImageFilter();
  ~CudaConnectedComponentImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  SizeValueType
  ObjectIndex(OutputPixelType label) const;

  bool            m_FullyConnected{ false };
  bool            m_FlatZones{ false };
  bool            m_ComputeStatistics{ false };
  bool            m_PeriodicBoundary{ false };
  double          m_DistanceThreshold{ 0.0 };
  SizeValueType   m_ObjectCount{ 0 };
  OutputPixelType m_BackgroundValue{ NumericTraits<OutputPixelType>::ZeroValue() };

  std::vector<SizeValueType>                           m_VoxelCounts;
  std::vector<RegionType>                              m_BoundingBoxes;
  std::vector<ContinuousIndex<double, ImageDimension>> m_Centroids;
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaConnectedComponentImageFilter.hxx"
#endif

#endif
