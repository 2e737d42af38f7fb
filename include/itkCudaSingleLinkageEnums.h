/*=========================================================================
 *  CudaHierarchicalSegmentation: the vector distance property of the single-linkage filters.
 *=========================================================================*/
#ifndef itkCudaSingleLinkageEnums_h
#define itkCudaSingleLinkageEnums_h

#include "itkMacro.h"
#include "itkIntTypes.h"

#include <ostream>

namespace itk
{
/** \class CudaSingleLinkageEnums
 * \brief The dissimilarity of neighbouring vector pixels in CudaImageToSingleLinkageDendrogramFilter: the L1, L2
 * or L-infinity norm of the per-component differences (computed in float). Scalar pixels use |a - b|.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaSingleLinkageEnums
{
public:
  enum class VectorDistance : uint8_t
  {
    L1,
    L2,
    LInfinity
  };
};

inline std::ostream &
operator<<(std::ostream & out, const CudaSingleLinkageEnums::VectorDistance value)
{
  switch (value)
  {
    case CudaSingleLinkageEnums::VectorDistance::L1:
      return out << "itk::CudaSingleLinkageEnums::VectorDistance::L1";
    case CudaSingleLinkageEnums::VectorDistance::L2:
      return out << "itk::CudaSingleLinkageEnums::VectorDistance::L2";
    case CudaSingleLinkageEnums::VectorDistance::LInfinity:
      return out << "itk::CudaSingleLinkageEnums::VectorDistance::LInfinity";
  }
  return out << "INVALID VALUE FOR itk::CudaSingleLinkageEnums::VectorDistance";
}

} // namespace itk

#endif
