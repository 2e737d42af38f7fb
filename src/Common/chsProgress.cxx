// The CPU references' progress callback, one per thread (include/chs/Execution.h, src/Common/chsProgress.h).
#include "chsProgress.h"

#include "chs/Execution.h"

#include <utility>

namespace chs
{
namespace
{
thread_local const std::function<void(float)> * t_Progress = nullptr;
} // namespace

CpuProgressScope::CpuProgressScope(std::function<void(float)> progress)
  : m_Progress(std::move(progress))
  , m_Previous(t_Progress)
{
  t_Progress = &m_Progress;
}

CpuProgressScope::~CpuProgressScope()
{
  t_Progress = m_Previous;
}

namespace detail
{
void
CpuProgress(float fraction)
{
  if (t_Progress && *t_Progress)
    (*t_Progress)(fraction);
}

CpuSubRange::CpuSubRange(float from, float to)
  : m_Scope(nullptr)
{
  if (const std::function<void(float)> * outer = t_Progress)
    m_Scope = new CpuProgressScope([outer, from, to](float f) { (*outer)(from + (to - from) * f); });
}

CpuSubRange::~CpuSubRange()
{
  delete static_cast<const CpuProgressScope *>(m_Scope);
}
} // namespace detail

} // namespace chs
