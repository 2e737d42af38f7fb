#include "itkCudaSegmentationBackendEnums.h"
#include "chs/Execution.h"

#include "itkOutputWindow.h"

#include <atomic>
#include <ostream>
#include <sstream>

namespace itk
{

std::ostream &
operator<<(std::ostream & out, const CudaSegmentationBackendEnums::Backend value)
{
  switch (value)
  {
    case CudaSegmentationBackendEnums::Backend::Auto:
      return out << "itk::CudaSegmentationBackendEnums::Backend::Auto";
    case CudaSegmentationBackendEnums::Backend::CUDA:
      return out << "itk::CudaSegmentationBackendEnums::Backend::CUDA";
    case CudaSegmentationBackendEnums::Backend::CPU:
      return out << "itk::CudaSegmentationBackendEnums::Backend::CPU";
  }
  return out << "INVALID VALUE FOR itk::CudaSegmentationBackendEnums::Backend";
}

CudaSegmentationBackendEnums::Backend
ResolveCudaSegmentationBackend(CudaSegmentationBackendEnums::Backend requested, int deviceId, const char * filterName)
{
  using Backend = CudaSegmentationBackendEnums::Backend;
  if (requested == Backend::CPU)
  {
    return Backend::CPU;
  }
  std::string why;
  const int   count = chs::CudaDeviceCount(&why);
  if (deviceId >= 0 && deviceId < count)
  {
    return Backend::CUDA;
  }
  if (count > 0)
  {
    why = "the machine has " + std::to_string(count) + " CUDA device(s)";
  }
  std::ostringstream message;
  message << filterName << ": no CUDA device " << deviceId << " (" << why << ")";
  if (requested == Backend::CUDA)
  {
    itkGenericExceptionMacro(<< message.str() << "; the CUDA backend was requested. Use Backend CPU or Auto to run "
                             << "the CPU reference.");
  }
  static std::atomic<bool> warned{ false };
  if (!warned.exchange(true))
  {
    std::ostringstream warning;
    warning << "WARNING: " << message.str() << "; running the CPU reference instead (warned once per process).\n";
    OutputWindowDisplayWarningText(warning.str().c_str());
  }
  return Backend::CPU;
}

} // namespace itk
