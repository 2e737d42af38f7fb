// Kernel time from CUDA events (RunInfo::kernelMilliseconds).
#include "chsCudaCommon.cuh"

namespace chs
{
namespace detail
{

EventTimer::EventTimer(cudaStream_t stream)
  : m_Stream(stream)
{
  CHS_CUDA_CHECK(cudaEventCreate(&m_Start));
  try
  {
    CHS_CUDA_CHECK(cudaEventCreate(&m_Stop));
  }
  catch (...)
  {
    cudaEventDestroy(m_Start);
    throw;
  }
}

EventTimer::~EventTimer()
{
  cudaEventDestroy(m_Start);
  cudaEventDestroy(m_Stop);
}

void
EventTimer::Start()
{
  CHS_CUDA_CHECK(cudaEventRecord(m_Start, m_Stream));
}

void
EventTimer::Stop()
{
  CHS_CUDA_CHECK(cudaEventRecord(m_Stop, m_Stream));
}

double
EventTimer::Milliseconds()
{
  CHS_CUDA_CHECK(cudaEventSynchronize(m_Stop));
  float ms = 0.f;
  CHS_CUDA_CHECK(cudaEventElapsedTime(&ms, m_Start, m_Stop));
  return ms;
}

} // namespace detail

} // namespace chs
