/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWatershedImageFilter_h
#define itkCudaWatershedImageFilter_h

#include "itkImageToImageFilter.h"
#include "itkCudaSegmentationFilter.h"
#include "itkCudaWatershedEnums.h"
#include "chsWatershed.h"

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
 * Parameters: FullyConnected (4/8 in 2D, 6/26 in 3D), Algorithm and PlateauResolution (CudaWatershedEnums; the
 * defaults PRUF and Balanced), ReductionRate (RR, default 6) and the plateau resolution's BlockSize (default
 * 16x16 in 2D, 8x8x8 in 3D; 0 0 0 means the default). The CUDA backend and the sequential CPU reference give the
 * same labels, voxel for voxel, for the balanced and synchronous resolutions, whatever the algorithm, block size, RR
 * and run (include/chsWatershed.h states the definition).
 *
 * V. Yeghiazaryan, Y. Gabrielyan, I. Voiculescu, "Parallel Watershed Partitioning: GPU-Based Hierarchical Image
 * Segmentation".
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaWatershedImageFilter
  : public CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaWatershedImageFilter);

  using Self         = CudaWatershedImageFilter;
  using Superclass   = CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;

  using InputImageType        = TInputImage;
  using OutputImageType       = TOutputImage;
  using InputPixelType        = typename TInputImage::PixelType;
  using OutputPixelType       = typename TOutputImage::PixelType;
  using BackendEnum           = typename Superclass::BackendEnum;
  using AlgorithmEnum         = CudaWatershedEnums::Algorithm;
  using PlateauResolutionEnum = CudaWatershedEnums::PlateauResolution;
  using BlockSizeType         = FixedArray<unsigned int, 3>;

  itkNewMacro(Self);
  chsTypeMacro(CudaWatershedImageFilter, ImageToImageFilter);

  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D images and 3D volumes are supported");
  static_assert(static_cast<unsigned>(TOutputImage::ImageDimension) == ImageDimension,
                "the label image has the dimension of the input");
  static_assert(std::is_arithmetic<InputPixelType>::value, "the input must be a scalar image");
  static_assert(std::is_integral<OutputPixelType>::value, "the output pixel type must be an integer type");

  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);
  itkSetEnumMacro(Algorithm, AlgorithmEnum);
  itkGetEnumMacro(Algorithm, AlgorithmEnum);
  itkSetEnumMacro(PlateauResolution, PlateauResolutionEnum);
  itkGetEnumMacro(PlateauResolution, PlateauResolutionEnum);
  /** RR: pointer jumps between global synchronisations of PRUF and PRW (1 to 64; default 6). */
  itkSetMacro(ReductionRate, unsigned int);
  itkGetConstMacro(ReductionRate, unsigned int);
  /** CUDA thread block of the plateau resolution (x, y, z; at most 1024 threads, z = 1 in 2D); 0 0 0: the default. */
  itkSetMacro(BlockSize, BlockSizeType);
  itkGetConstReferenceMacro(BlockSize, BlockSizeType);
  /** Set the watershed-line pixels to 0 (off by default: every pixel is in a basin). */
  itkSetMacro(MarkWatershedLine, bool);
  itkGetConstReferenceMacro(MarkWatershedLine, bool);
  itkBooleanMacro(MarkWatershedLine);


  /** Basins (regional minima) of the last update. */
  itkGetConstMacro(ObjectCount, SizeValueType);
  /** Global rounds of the plateau resolution in the last CUDA update (0 on the CPU). */
  itkGetConstMacro(PlateauRounds, SizeValueType);

protected:
  CudaWatershedImageFilter();
  ~CudaWatershedImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  bool                  m_FullyConnected{ false };
  AlgorithmEnum         m_Algorithm{ AlgorithmEnum::PRUF };
  PlateauResolutionEnum m_PlateauResolution{ PlateauResolutionEnum::Balanced };
  unsigned int          m_ReductionRate{ 6 };
  BlockSizeType         m_BlockSize;
  bool                  m_MarkWatershedLine{ false };
  SizeValueType         m_ObjectCount{ 0 };
  SizeValueType         m_PlateauRounds{ 0 };
};

/** The backends' watershed parameters from a filter's properties. */
inline chs::WatershedParameters
MakeCudaWatershedParameters(bool                                  fullyConnected,
                            CudaWatershedEnums::Algorithm         algorithm,
                            CudaWatershedEnums::PlateauResolution plateaus,
                            unsigned int                          reductionRate,
                            const FixedArray<unsigned int, 3> &   blockSize,
                            bool                                  markLines)
{
  static_assert(int(CudaWatershedEnums::Algorithm::PRW) == int(chs::WatershedAlgorithm::PRW) &&
                  int(CudaWatershedEnums::PlateauResolution::BlockAsynchronous) ==
                    int(chs::PlateauResolution::BlockAsynchronous),
                "the filters' enumerations map one to one onto the backends'");
  chs::WatershedParameters p;
  p.fullyConnected = fullyConnected;
  p.algorithm      = static_cast<chs::WatershedAlgorithm>(algorithm);
  p.plateaus       = static_cast<chs::PlateauResolution>(plateaus);
  p.reductionRate  = reductionRate;
  for (unsigned d = 0; d < 3; ++d)
    p.blockSize[d] = blockSize[d];
  p.markLines = markLines;
  return p;
}

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaWatershedImageFilter.hxx"
#endif

#endif
