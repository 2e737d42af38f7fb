/*=========================================================================
 *  CudaHierarchicalSegmentation: the algorithm and plateau-resolution properties of CudaWatershedImageFilter and
 *  CudaWaterfallImageFilter.
 *=========================================================================*/
#ifndef itkCudaWatershedEnums_h
#define itkCudaWatershedEnums_h

#include "itkIntTypes.h"
#include "itkMacro.h"

#include <ostream>

namespace itk
{

/** \class CudaWatershedEnums
 * \brief How the CUDA watershed runs (Yeghiazaryan, Gabrielyan and Voiculescu).
 *
 * Algorithm: PRUF (default; path reduction with RR jumps per synchronisation, then union-find on the minimal
 * plateaux), APRUF (every pixel follows its path to the end in one launch; faster on small images) or PRW (path
 * reduction, then iterated min-label merging). The three give the same partition.
 *
 * PlateauResolution: Balanced (default; block-local relaxation to exact plateau distances, the fair split),
 * Synchronous (one relaxation step per global synchronisation; the same result, slower on long plateaux) or
 * BlockAsynchronous (distances are not corrected once set: the same basins' minima and count, but non-minimal
 * plateaux may be split differently, and the CPU reference gives the balanced result for it).
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaWatershedEnums
{
public:
  enum class Algorithm : uint8_t
  {
    PRUF,
    APRUF,
    PRW
  };
  enum class PlateauResolution : uint8_t
  {
    Balanced,
    Synchronous,
    BlockAsynchronous
  };
};

inline std::ostream &
operator<<(std::ostream & out, const CudaWatershedEnums::Algorithm value)
{
  switch (value)
  {
    case CudaWatershedEnums::Algorithm::PRUF:
      return out << "itk::CudaWatershedEnums::Algorithm::PRUF";
    case CudaWatershedEnums::Algorithm::APRUF:
      return out << "itk::CudaWatershedEnums::Algorithm::APRUF";
    case CudaWatershedEnums::Algorithm::PRW:
      return out << "itk::CudaWatershedEnums::Algorithm::PRW";
  }
  return out << "INVALID VALUE FOR itk::CudaWatershedEnums::Algorithm";
}

inline std::ostream &
operator<<(std::ostream & out, const CudaWatershedEnums::PlateauResolution value)
{
  switch (value)
  {
    case CudaWatershedEnums::PlateauResolution::Balanced:
      return out << "itk::CudaWatershedEnums::PlateauResolution::Balanced";
    case CudaWatershedEnums::PlateauResolution::Synchronous:
      return out << "itk::CudaWatershedEnums::PlateauResolution::Synchronous";
    case CudaWatershedEnums::PlateauResolution::BlockAsynchronous:
      return out << "itk::CudaWatershedEnums::PlateauResolution::BlockAsynchronous";
  }
  return out << "INVALID VALUE FOR itk::CudaWatershedEnums::PlateauResolution";
}

} // namespace itk

#endif
