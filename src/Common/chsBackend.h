// The one entry of every operation (include/chs/*.h) runs its CUDA backend or its CPU reference as its execution
// context says (include/chs/Execution.h, Backend); the two implementations are declared in each algorithm's
// chs<Algorithm>Backends.h, for the entries and the tests that set one against the other.
#ifndef chsBackend_h
#define chsBackend_h

#include "chs/Execution.h"

namespace chs
{
namespace detail
{

/** cuda() on the CUDA backend, cpu() on the CPU reference, as ResolveBackend(context) says. On the CPU, `info` (when
 * given) is zeroed and the context's progress callback, when it has one, receives the reference's progress
 * (CpuProgressScope) for the run. */
template <class FCuda, class FCpu>
auto
OnBackend(const ExecutionContext & context, RunInfo * info, FCuda && cuda, FCpu && cpu) -> decltype(cpu())
{
  if (ResolveBackend(context) == Backend::CUDA)
    return cuda();
  if (info)
    *info = RunInfo{};
  if (!context.progress)
    return cpu();
  const CpuProgressScope scope(context.progress);
  return cpu();
}

} // namespace detail
} // namespace chs

#endif
