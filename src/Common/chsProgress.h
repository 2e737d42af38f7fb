// Progress of the CPU references (include/chs/Execution.h, CpuProgressScope): what the reference code calls.
#ifndef chsProgress_h
#define chsProgress_h

#include <cstdint>

namespace chs
{
namespace detail
{

/** Reports `fraction` to this thread's innermost CpuProgressScope; nothing without one. May throw what the scope's
 * callback throws (RunAborted). */
void
CpuProgress(float fraction);

/** Maps what is reported during its lifetime (0 to 1, by a reference that one calls from another) onto [from, to]
 * of the enclosing progress. */
class CpuSubRange
{
public:
  CpuSubRange(float from, float to);
  ~CpuSubRange();
  CpuSubRange(const CpuSubRange &) = delete;
  CpuSubRange &
  operator=(const CpuSubRange &) = delete;

private:
  const void * m_Scope; // a CpuProgressScope, installed only when there is an enclosing callback
};

/** A CPU reference's progress over its phases: the part [from, to] of the run is cut into `phases` equal parts;
 * Start(k, count) begins phase k, a loop of `count` steps, At(i) reports step i about ten times along it (one
 * comparison per call otherwise), and Done() reports `to`. */
class CpuPhases
{
public:
  explicit CpuPhases(unsigned phases, float from = 0.0f, float to = 1.0f)
    : m_Phases(phases)
    , m_From(from)
    , m_To(to)
  {
  }
  void
  Start(unsigned phase, uint64_t count)
  {
    m_Phase = phase;
    m_Count = count ? count : 1;
    m_Step  = m_Count / 10 + 1;
    m_Next  = m_Step;
    Report(float(phase) / float(m_Phases));
  }
  void
  At(uint64_t i)
  {
    if (i >= m_Next)
    {
      m_Next = i + m_Step;
      Report((float(m_Phase) + float(i) / float(m_Count)) / float(m_Phases));
    }
  }
  void
  Done()
  {
    CpuProgress(m_To);
  }

private:
  void
  Report(float part)
  {
    CpuProgress(m_From + (m_To - m_From) * part);
  }

  unsigned m_Phases;
  float    m_From, m_To;
  unsigned m_Phase = 0;
  uint64_t m_Count = 1, m_Step = 1, m_Next = 1;
};

} // namespace detail
} // namespace chs

#endif
