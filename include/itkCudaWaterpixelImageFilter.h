/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWaterpixelImageFilter_h
#define itkCudaWaterpixelImageFilter_h

#include "itkImageToImageFilter.h"
#include "itkCudaSegmentationFilter.h"

namespace itk
{

/** \class CudaWaterpixelImageFilter
 * \brief Waterpixels (compact watershed superpixels) on the GPU: the Image Foresting Transform of a regularised
 * gradient from one seed per cell of a regular grid.
 *
 * The image is cut into cells of GridStep pixels per axis (sigma; the last cell of an axis may be shorter). The
 * border image is B = |grad I| + k E: |grad I| is the Sobel gradient magnitude of the input (in float, scaled so
 * that a ramp of slope 1 has magnitude 1), E = (2 / sigma) times the distance to the nearest grid seed (the middle
 * pixel of a cell; a sigma per axis), and k is the Compactness. Each cell has one seed, at its grid seed or, with
 * GradientMinimumSeeds, at its pixel of smallest gradient (E keeps the grid seeds); the superpixels are the Image
 * Foresting Transform of B from those seeds (w(p, q) = B(q), f_max), with the exact tie rule of
 * CudaImageForestingTransformImageFilter. Labels are the cells' numbers in raster order, 1..GetNumberOfSuperpixels().
 *
 * Compactness: small k follows the image's edges, large k gives the grid's cells (the Voronoi cells of the grid
 * seeds). The default (a negative value) is automatic: 0.04 times the input's range (largest minus smallest
 * value), for example about 10 for an 8-bit image that uses its whole range, about 2600 for a 16-bit one. The paper
 * used k = 1000 on its CT data. GetCompactnessUsed() returns the value of the last update.
 *
 * The CUDA backend computes the gradient, the border image and the seeds on the GPU and runs the CUDA Image
 * Foresting Transform there; the CPU backend is the sequential reference. Both give the same labels, bit for bit.
 *
 * V. Machairas, M. Faessel, D. Cardenas-Pena, T. Chabardes, T. Walter, E. Decenciere, "Waterpixels", IEEE TIP 2015;
 * H. M. Goncalves et al., "cudaIFT: 180x Faster Image Foresting Transform for Waterpixel Estimation using CUDA",
 * VISAPP 2019.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaWaterpixelImageFilter
  : public CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaWaterpixelImageFilter);

  using Self         = CudaWaterpixelImageFilter;
  using Superclass   = CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;

  using InputImageType  = TInputImage;
  using OutputImageType = TOutputImage;
  using InputPixelType  = typename TInputImage::PixelType;
  using OutputPixelType = typename TOutputImage::PixelType;
  using SizeType        = typename TInputImage::SizeType;
  using RegionType      = typename TInputImage::RegionType;
  using BackendEnum     = typename Superclass::BackendEnum;

  itkNewMacro(Self);
  chsTypeMacro(CudaWaterpixelImageFilter, ImageToImageFilter);

  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D images and 3D volumes are supported");
  static_assert(static_cast<unsigned>(TOutputImage::ImageDimension) == ImageDimension,
                "the label image has the dimension of the input");
  static_assert(std::is_arithmetic<InputPixelType>::value &&
                  (std::is_floating_point<InputPixelType>::value || sizeof(InputPixelType) <= 4),
                "the input must be a scalar image of 8-, 16- or 32-bit integers, float or double");
  static_assert(std::is_integral<OutputPixelType>::value, "the output pixel type must be an integer type");

  /** Cell size (sigma) per axis, in pixels; default 10. */
  itkSetMacro(GridStep, SizeType);
  itkGetConstReferenceMacro(GridStep, SizeType);
  /** The same cell size along every axis. */
  void
  SetGridStep(SizeValueType step)
  {
    SizeType s;
    s.Fill(step);
    this->SetGridStep(s);
  }

  /** k; negative (default): automatic, 0.04 times the input's range. */
  itkSetMacro(Compactness, double);
  itkGetConstMacro(Compactness, double);

  /** Seed each cell at its smallest gradient instead of its centre. */
  itkSetMacro(GradientMinimumSeeds, bool);
  itkGetConstReferenceMacro(GradientMinimumSeeds, bool);
  itkBooleanMacro(GradientMinimumSeeds);

  /** Face connectivity (default) or full connectivity. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** Superpixels (grid cells) of the last update. */
  itkGetConstMacro(NumberOfSuperpixels, SizeValueType);
  /** The compactness k of the last update (the automatic value when Compactness is negative). */
  itkGetConstMacro(CompactnessUsed, double);
  /** Relaxation rounds of the last CUDA update; 0 on the CPU. */
  itkGetConstMacro(NumberOfRounds, SizeValueType);

protected:
  CudaWaterpixelImageFilter();
  ~CudaWaterpixelImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  SizeType      m_GridStep;
  double        m_Compactness{ -1.0 };
  bool          m_GradientMinimumSeeds{ false };
  bool          m_FullyConnected{ false };
  SizeValueType m_NumberOfSuperpixels{ 0 };
  double        m_CompactnessUsed{ 0.0 };
  SizeValueType m_NumberOfRounds{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaWaterpixelImageFilter.hxx"
#endif

#endif
