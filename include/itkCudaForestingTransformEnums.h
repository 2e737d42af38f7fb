/*=========================================================================
 *  CudaHierarchicalSegmentation: the arc weight property of the Image Foresting Transform filter.
 *=========================================================================*/
#ifndef itkCudaForestingTransformEnums_h
#define itkCudaForestingTransformEnums_h

#include "itkMacro.h"
#include "itkIntTypes.h"
#include "CudaHierarchicalSegmentationExport.h"

#include <ostream>

namespace itk
{
/** \class CudaForestingTransformEnums
 * \brief The arc weight w(p, q) of CudaImageForestingTransformImageFilter, from its weight image B.
 *
 * Target: B(q), the weight of the pixel entered (the paper's, and the waterpixels'). Maximum: max(B(p), B(q)).
 * AbsoluteDifference: |B(p) - B(q)|.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaForestingTransformEnums
{
public:
  enum class ArcWeight : uint8_t
  {
    Target,
    Maximum,
    AbsoluteDifference
  };
};

inline std::ostream &
operator<<(std::ostream & out, const CudaForestingTransformEnums::ArcWeight value)
{
  switch (value)
  {
    case CudaForestingTransformEnums::ArcWeight::Target:
      return out << "itk::CudaForestingTransformEnums::ArcWeight::Target";
    case CudaForestingTransformEnums::ArcWeight::Maximum:
      return out << "itk::CudaForestingTransformEnums::ArcWeight::Maximum";
    case CudaForestingTransformEnums::ArcWeight::AbsoluteDifference:
      return out << "itk::CudaForestingTransformEnums::ArcWeight::AbsoluteDifference";
  }
  return out << "INVALID VALUE FOR itk::CudaForestingTransformEnums::ArcWeight";
}

} // namespace itk

#endif
