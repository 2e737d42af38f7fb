/*=========================================================================
 *  CudaHierarchicalSegmentation: what every filter of the module does around its backend call.
 *=========================================================================*/
#ifndef itkCudaSegmentationRun_h
#define itkCudaSegmentationRun_h

#include "itkCudaSegmentationBackendEnums.h"
#include "itkProcessObject.h"
#include "itkMultiThreaderBase.h"
#include "chs/Execution.h"

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <sstream>

namespace itk
{

/** Throws unless `image`'s largest possible region is not empty and is all buffered: the module's filters are
 * global and read whole images. */
template <class TImage>
void
CheckWholeImage(const TImage * image, const char * what, const ProcessObject * filter)
{
  const auto         region = image->GetLargestPossibleRegion();
  std::ostringstream message;
  if (region.GetNumberOfPixels() == 0)
    message << "The " << what << "'s largest possible region is empty (size " << region.GetSize() << ").";
  else if (image->GetBufferedRegion() != region)
    message << "The " << what << " must be buffered over its largest possible region " << region
            << ", but its buffered region is " << image->GetBufferedRegion() << '.';
  else
    return;
  throw ExceptionObject(__FILE__, __LINE__, std::string(filter->GetNameOfClass()) + ": " + message.str(), ITK_LOCATION);
}

/** The backends' grid of a region's size (unused dimensions 1). */
template <class TRegion>
chs::Grid
CudaGridOf(const TRegion & region)
{
  chs::Grid grid;
  grid.dimension = TRegion::ImageDimension;
  for (unsigned d = 0; d < TRegion::ImageDimension; ++d)
  {
    grid.size[d] = region.GetSize(d);
  }
  return grid;
}

/** Calls run(context, info) with the execution context of `backend` (CUDA or CPU, as the filter resolved it), the
 * filter's device, stream and host threads, and its progress: the module's operations (include/chs/) take the
 * context and run the backend it names, the CPU reference reporting through the same progress. Both backends report
 * their phases through the filter's progress (ProgressEvent), and stop at the next report once AbortGenerateData is
 * set: the run frees what it holds, `outputs` are released, and itk::ProcessAborted is thrown, as ITK's own filters
 * do. A failure releases `outputs` too (nothing of a failed run is left behind) and becomes an ExceptionObject that
 * names the backend and the reason. Returns what the CUDA run measured (zero on the CPU). */
template <class FRun>
chs::RunInfo
RunOnBackend(ProcessObject *                       filter,
             CudaSegmentationBackendEnums::Backend backend,
             int                                   device,
             unsigned long long                    stream,
             FRun &&                               run,
             std::initializer_list<DataObject *>   outputs)
{
  chs::RunInfo info;
  const bool   onCuda = backend == CudaSegmentationBackendEnums::Backend::CUDA;
  try
  {
    chs::ExecutionContext context;
    context.backend  = onCuda ? chs::Backend::CUDA : chs::Backend::CPU;
    context.device   = device;
    context.stream   = reinterpret_cast<void *>(static_cast<std::uintptr_t>(stream));
    context.progress = [filter](float f)
    {
      filter->UpdateProgress(f);
      if (filter->GetAbortGenerateData())
        throw chs::RunAborted("AbortGenerateData");
    };
    context.hostThreads = filter->GetMultiThreader()->GetMaximumNumberOfThreads();
    run(static_cast<const chs::ExecutionContext &>(context), info);
    context.progress(1.0f); // for the backends whose last phase does not report it
  }
  catch (const chs::RunAborted &)
  {
    for (DataObject * output : outputs)
      output->Initialize();
    ProcessAborted aborted(__FILE__, __LINE__);
    aborted.SetDescription(std::string(filter->GetNameOfClass()) +
                           ": the update was aborted (AbortGenerateData) on the " + (onCuda ? "CUDA" : "CPU") +
                           " backend; its outputs were released.");
    throw aborted;
  }
  catch (const std::exception & e)
  {
    for (DataObject * output : outputs)
      output->Initialize();
    throw ExceptionObject(__FILE__,
                          __LINE__,
                          std::string(filter->GetNameOfClass()) + ": " + (onCuda ? "CUDA" : "CPU") +
                            " backend failed: " + e.what(),
                          ITK_LOCATION);
  }
  return info;
}

} // namespace itk

#endif
