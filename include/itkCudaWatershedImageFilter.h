/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWatershedImageFilter_h
#define itkCudaWatershedImageFilter_h

#include "itkCudaWatershedFilterBase.h"
#include "itkImage.h"

namespace itk
{

/** \class CudaWatershedImageFilter
 * \brief Watershed by steepest descent on the GPU (PRUF, APRUF, PRW): one basin per regional minimum, every pixel
 * in a basin, exact and deterministic.
 *
 * The input is usually a gradient magnitude image; any scalar pixel type (integers up to 64 bits, float and double,
 * no NaN). Each pixel follows its steepest descent (its lowest neighbour; among equal ones, the last in raster order)
 * down to a regional minimum; a non-minimal plateau is split between the basins around it by geodesic distance from
 * where each can drain. The output labels the basins 1, 2, ... in raster order of each basin's first pixel;
 * GetObjectCount() is the number of basins, which is the number of regional minima. With MarkWatershedLine on, a
 * pixel that has a neighbour in another basin which is lower, or equal and earlier in raster order, is set to 0, as
 * users of MorphologicalWatershedImageFilter expect lines; the basins keep their minima.
 *
 * Markers, a mask and a level (ITK's MorphologicalWatershedFromMarkersImageFilter and the Level of its
 * MorphologicalWatershedImageFilter): with a marker image (SetMarkerImage, the output's label type: every non-zero
 * pixel is a marker with that label), a mask (SetMaskImage: pixels where it is 0 are left out and labelled 0) or a
 * Level above 0, the filter floods the input from the markers instead: each pixel takes the label of the marker that
 * reaches it first as the level rises (the Image Foresting Transform where a path costs its largest pixel, the
 * marker's included; ties by geodesic distance on plateaux, then raster order). Without a marker image the markers are
 * the regional minima of the input's h-minima transform of height Level (minima shallower than Level merge into deeper
 * ones), numbered 1, 2, ... in raster order; GetObjectCount() is their number (0 with a marker image). Input pixels of
 * up to 32 bits; no MarkWatershedLine. include/chs/Watershed.h (chs::MarkerWatershed) states the definition.
 *
 * Parameters: FullyConnected (4/8 in 2D, 6/26 in 3D), Algorithm and PlateauResolution (CudaWatershedEnums; the
 * defaults PRUF and Balanced), ReductionRate (RR, default 6) and the plateau resolution's BlockSize (default
 * 16x16 in 2D, 8x8x8 in 3D; 0 0 0 means the default). The CUDA backend and the sequential CPU reference give the
 * same labels, voxel for voxel, for the balanced and synchronous resolutions, whatever the algorithm, block size, RR
 * and run (include/chs/Watershed.h states the definition).
 *
 * V. Yeghiazaryan, Y. Gabrielyan, I. Voiculescu, "Parallel Watershed Partitioning: GPU-Based Hierarchical Image
 * Segmentation".
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaWatershedImageFilter : public CudaWatershedFilterBase<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaWatershedImageFilter);

  using Self         = CudaWatershedImageFilter;
  using Superclass   = CudaWatershedFilterBase<TInputImage, TOutputImage>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

  using InputImageType        = TInputImage;
  using OutputImageType       = TOutputImage;
  using InputPixelType        = typename TInputImage::PixelType;
  using OutputPixelType       = typename TOutputImage::PixelType;
  using BackendEnum           = typename Superclass::BackendEnum;
  using AlgorithmEnum         = typename Superclass::AlgorithmEnum;
  using PlateauResolutionEnum = typename Superclass::PlateauResolutionEnum;
  using BlockSizeType         = typename Superclass::BlockSizeType;
  using MarkerImageType       = TOutputImage;
  using MaskImageType         = Image<unsigned char, ImageDimension>;

  itkNewMacro(Self);
  chsTypeMacro(CudaWatershedImageFilter, ImageToImageFilter);

  /** Set the watershed-line pixels to 0 (off by default: every pixel is in a basin). */
  itkSetMacro(MarkWatershedLine, bool);
  itkGetConstReferenceMacro(MarkWatershedLine, bool);
  itkBooleanMacro(MarkWatershedLine);

  /** Markers to flood from (optional): every non-zero pixel is a marker with its label. */
  itkSetInputMacro(MarkerImage, MarkerImageType);
  itkGetInputMacro(MarkerImage, MarkerImageType);
  /** Pixels to label (optional): where the mask is 0 the output is 0 and no flood passes. */
  itkSetInputMacro(MaskImage, MaskImageType);
  itkGetInputMacro(MaskImage, MaskImageType);
  /** Without a marker image: minima shallower than Level are merged (the h-minima transform's height; 0, the default,
   * keeps every regional minimum). A whole number for integer pixel types. */
  itkSetMacro(Level, double);
  itkGetConstMacro(Level, double);

  /** Basins (regional minima) of the last update; with markers, a mask or a level: the markers found (0 when a marker
   * image is given). */
  itkGetConstMacro(ObjectCount, SizeValueType);
  /** Marker pixels inside the mask of the last update by flooding (0 for the watershed by steepest descent). */
  itkGetConstMacro(SeedCount, SizeValueType);
  /** Global rounds of the plateau resolution in the last CUDA update (0 on the CPU, and when no pixel that does not
   * descend has an equal neighbour: the resolution is then skipped). */
  itkGetConstMacro(PlateauRounds, SizeValueType);

protected:
  CudaWatershedImageFilter();
  ~CudaWatershedImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  bool          m_MarkWatershedLine{ false };
  double        m_Level{ 0.0 };
  SizeValueType m_ObjectCount{ 0 };
  SizeValueType m_SeedCount{ 0 };
  SizeValueType m_PlateauRounds{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaWatershedImageFilter.hxx"
#endif

#endif
