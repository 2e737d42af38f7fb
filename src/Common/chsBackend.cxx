// The backend choice of every operation (include/chs/Execution.h).
#include "Common/chsBackend.h"

#include <stdexcept>
#include <string>

namespace chs
{

Backend
ResolveBackend(const ExecutionContext & context)
{
  switch (context.backend)
  {
    case Backend::CUDA:
    case Backend::CPU:
      return context.backend;
    case Backend::Auto:
      return CudaDeviceCount() > 0 ? Backend::CUDA : Backend::CPU;
  }
  throw std::invalid_argument("chs: the execution context's backend is " +
                              std::to_string(static_cast<int>(context.backend)) +
                              ", not one of Auto (0), CUDA (1), CPU (2)");
}

} // namespace chs
