/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageForestingTransformImageFilter_h
#define itkCudaImageForestingTransformImageFilter_h

#include "itkImageToImageFilter.h"
#include "itkCudaForestingTransformEnums.h"
#include "itkCudaSegmentationFilter.h"
#include "chs/ForestingTransform.h"

namespace itk
{

/** \class CudaImageForestingTransformImageFilter
 * \brief Image Foresting Transform by seed competition on the GPU: a seeded watershed with exact, deterministic
 * tie breaking.
 *
 * Input 0 gives the arc weights B (non-negative, no NaN; integers of up to 32 bits or float); the seed image
 * (SetSeedImage, the label image type) marks the seeds: every non-zero pixel is a seed with that label. Each seed
 * conquers the pixels it reaches by a path whose largest arc weight (f_max) is smaller than any other seed's: the
 * cost map V holds that value (0 at the seeds). The arc weight w(p, q) is B(q) (default, as in the paper), or
 * max(B(p), B(q)), or |B(p) - B(q)| (SetArcWeight).
 *
 * Outputs: 0, the label image (every pixel gets the label of the seed at the root of its path); 1, the cost map V
 * (GetCostOutput; float for float weights, uint32 for integer weights); 2, the predecessor map P (GetPredecessorOutput;
 * the linear index of each pixel's predecessor in the buffer, -1 at the seeds).
 *
 * Where several seeds offer a pixel the same cost, the tie is broken by one documented rule that the CUDA backend and
 * the sequential CPU reference both follow, so that V, the labels and P are identical, run after run: a plateau of
 * V is split by the number of steps from where each path entered it, then by the predecessor's cost and hop count,
 * then by the smaller raster index (include/chs/ForestingTransform.h states it exactly).
 *
 * H. M. Goncalves, G. J. Q. de Vasconcelos, P. R. R. Rangel, M. Carvalho, N. L. Archilha, T. V. Spina, "cudaIFT:
 * 180x Faster Image Foresting Transform for Waterpixel Estimation using CUDA", VISAPP 2019.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TLabelImage>
class ITK_TEMPLATE_EXPORT CudaImageForestingTransformImageFilter
  : public CudaSegmentationFilter<ImageToImageFilter<TInputImage, TLabelImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaImageForestingTransformImageFilter);

  using Self         = CudaImageForestingTransformImageFilter;
  using Superclass   = CudaSegmentationFilter<ImageToImageFilter<TInputImage, TLabelImage>>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;

  using InputImageType                 = TInputImage;
  using LabelImageType                 = TLabelImage;
  using InputPixelType                 = typename TInputImage::PixelType;
  using LabelPixelType                 = typename TLabelImage::PixelType;
  using CostPixelType                  = typename chs::ForestingCost<InputPixelType>::Type;
  using CostImageType                  = Image<CostPixelType, ImageDimension>;
  using PredecessorImageType           = Image<OffsetValueType, ImageDimension>;
  using RegionType                     = typename TInputImage::RegionType;
  using BackendEnum                    = typename Superclass::BackendEnum;
  using ArcWeightEnum                  = CudaForestingTransformEnums::ArcWeight;
  using DataObjectPointerArraySizeType = typename Superclass::DataObjectPointerArraySizeType;

  itkNewMacro(Self);
  chsTypeMacro(CudaImageForestingTransformImageFilter, ImageToImageFilter);

  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D images and 3D volumes are supported");
  static_assert(static_cast<unsigned>(TLabelImage::ImageDimension) == ImageDimension,
                "the seed and label image has the dimension of the input");
  static_assert(std::is_arithmetic<InputPixelType>::value && sizeof(InputPixelType) <= 4,
                "the weights must be scalars of up to 32 bits (8-, 16- or 32-bit integers, or float): cast double or "
                "64-bit images to float first");
  static_assert(std::is_integral<LabelPixelType>::value, "the seed and label pixel type must be an integer type");
  static_assert(sizeof(OffsetValueType) == 8, "predecessors are 64-bit indices");

  /** The seeds: every non-zero pixel is a seed with that label. Required; same region as the input. */
  itkSetInputMacro(SeedImage, LabelImageType);
  itkGetInputMacro(SeedImage, LabelImageType);

  /** Face connectivity (default) or full connectivity. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** w(p, q): Target (B(q), default), Maximum (max(B(p), B(q))) or AbsoluteDifference (|B(p) - B(q)|). */
  itkSetEnumMacro(ArcWeight, ArcWeightEnum);
  itkGetEnumMacro(ArcWeight, ArcWeightEnum);

  /** CUDA: relaxation rounds allowed before the update fails with an exception; 0 (default): a bound never
   * reached (the number of pixels plus one). */
  itkSetMacro(MaximumNumberOfRounds, SizeValueType);
  itkGetConstMacro(MaximumNumberOfRounds, SizeValueType);

  /** The cost map V (output 1) and the predecessor map P (output 2). */
  CostImageType *
  GetCostOutput();
  PredecessorImageType *
  GetPredecessorOutput();

  /** Seeds (non-zero seed pixels) of the last update. */
  itkGetConstMacro(SeedCount, SizeValueType);
  /** Relaxation rounds of the last CUDA update (it varies with thread timing; the result does not); 0 on the CPU. */
  itkGetConstMacro(NumberOfRounds, SizeValueType);

  using Superclass::MakeOutput;
  DataObject::Pointer
  MakeOutput(DataObjectPointerArraySizeType idx) override;

protected:
  CudaImageForestingTransformImageFilter();
  ~CudaImageForestingTransformImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  bool          m_FullyConnected{ false };
  ArcWeightEnum m_ArcWeight{ ArcWeightEnum::Target };
  SizeValueType m_MaximumNumberOfRounds{ 0 };
  SizeValueType m_SeedCount{ 0 };
  SizeValueType m_NumberOfRounds{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaImageForestingTransformImageFilter.hxx"
#endif

#endif
