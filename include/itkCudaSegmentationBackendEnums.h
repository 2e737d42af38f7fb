/*=========================================================================
 *  CudaHierarchicalSegmentation: the Backend property shared by the module's filters.
 *=========================================================================*/
#ifndef itkCudaSegmentationBackendEnums_h
#define itkCudaSegmentationBackendEnums_h

#include "itkMacro.h"
#include "itkIntTypes.h"
#include "CudaHierarchicalSegmentationExport.h"

#include <iosfwd>
#include <string>

// ITK 5.4 prefers itkOverrideGetNameOfClassMacro; ITK 5.2 only has itkTypeMacro.
#if defined(itkOverrideGetNameOfClassMacro)
#  define chsTypeMacro(thisClass, superclass) itkOverrideGetNameOfClassMacro(thisClass)
#else
#  define chsTypeMacro(thisClass, superclass) itkTypeMacro(thisClass, superclass)
#endif

namespace itk
{
/** \class CudaSegmentationBackendEnums
 * \brief Where a filter of this module runs.
 *
 * Auto: the CUDA backend when the requested device exists, else the CPU reference (with one warning per process).
 * CUDA: the CUDA backend, or an exception when no device is available. CPU: the sequential CPU reference, which
 * gives the same result bit for bit.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT CudaSegmentationBackendEnums
{
public:
  enum class Backend : uint8_t
  {
    Auto,
    CUDA,
    CPU
  };
};
extern CudaHierarchicalSegmentation_EXPORT std::ostream &
operator<<(std::ostream & out, const CudaSegmentationBackendEnums::Backend value);

/** Resolves Auto to CUDA or CPU for a device id; throws for CUDA without a device. Warns once per process when
 * Auto falls back to the CPU. */
CudaHierarchicalSegmentation_EXPORT CudaSegmentationBackendEnums::Backend
ResolveCudaSegmentationBackend(CudaSegmentationBackendEnums::Backend requested, int deviceId, const char * filterName);

} // namespace itk

#endif
