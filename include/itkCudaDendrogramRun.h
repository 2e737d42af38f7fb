/*=========================================================================
 *  CudaHierarchicalSegmentation: what the dendrogram filters do around their backend call.
 *=========================================================================*/
#ifndef itkCudaDendrogramRun_h
#define itkCudaDendrogramRun_h

#include "itkCudaSegmentationRun.h"
#include "itkDendrogram.h"
#include "chsSingleLinkage.h"

namespace itk
{

/** Sizes `output` for n vertices, runs cuda(arrays, context, info) or cpu(arrays) through RunOnBackend (which empties
 * the output on failure), then checks the CPU dendrogram's invariants (the CUDA backend checks its own on the device).
 * Returns the backend's result and fills `info`. */
template <class FCuda, class FCpu>
chs::SingleLinkageResult
RunDendrogramBackend(ProcessObject *                       filter,
                     CudaSegmentationBackendEnums::Backend backend,
                     int                                   device,
                     Dendrogram *                          output,
                     SizeValueType                         n,
                     chs::RunInfo &                        info,
                     FCuda &&                              cuda,
                     FCpu &&                               cpu)
{
  chs::SingleLinkageResult result;
  chs::DendrogramArrays    arrays;
  auto                     prepare = [&]
  {
    output->Allocate(n);
    arrays.parent = output->GetParents()->CastToSTLContainer().data();
    arrays.weight = output->GetWeights()->CastToSTLContainer().data();
    arrays.edge   = output->GetEdgeIds()->CastToSTLContainer().data();
    arrays.u      = output->GetEdgeU()->CastToSTLContainer().data();
    arrays.v      = output->GetEdgeV()->CastToSTLContainer().data();
  };
  info = RunOnBackend(
    filter,
    backend,
    device,
    [&](const chs::ExecutionContext & context, chs::RunInfo & run)
    {
      prepare();
      result = cuda(arrays, context, run);
    },
    [&]
    {
      prepare();
      result = cpu(arrays);
    },
    { output });
  // The CUDA backend checks the same invariants on the device before the download (a pass over the arrays in
  // device memory instead of host memory); the CPU reference's are checked here.
  if (backend == CudaSegmentationBackendEnums::Backend::CPU)
  {
    try
    {
      output->CheckInvariants();
    }
    catch (...)
    {
      output->Initialize();
      throw;
    }
  }
  return result;
}

} // namespace itk

#endif
