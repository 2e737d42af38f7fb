// The two implementations of include/chs/SingleLinkage.h's operations, the CUDA backend and the sequential CPU
// reference (one definition, the same results), and the one entry that runs either as its execution context says.
// Internal: the entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsSingleLinkageBackends_h
#define chsSingleLinkageBackends_h

#include "chs/SingleLinkage.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkageCPU(const TPixel *                   pixels,
                      const Grid &                     grid,
                      const ImageGraphParameters &     parameters,
                      const DendrogramArraysT<TNode> & out);

template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkageCUDA(const TPixel *                   pixels,
                       const Grid &                     grid,
                       const ImageGraphParameters &     parameters,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info = nullptr);

/** The one entry (include/chs/SingleLinkage.h): the backend that `context` names. */
template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkage(const TPixel *                   pixels,
                   const Grid &                     grid,
                   const ImageGraphParameters &     parameters,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context,
                   RunInfo *                        info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return ImageSingleLinkageCUDA(pixels, grid, parameters, out, context, info); },
    [&] { return ImageSingleLinkageCPU(pixels, grid, parameters, out); });
}
#define CHS_INSTANTIATE_ENTRY_IMAGE_SINGLE_LINKAGE(TPixel, TNode)                                                      \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult ImageSingleLinkage<TPixel, TNode>(                  \
    const TPixel *,                                                                                                    \
    const Grid &,                                                                                                      \
    const ImageGraphParameters &,                                                                                      \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkageCPU(const uint32_t *                 u,
                      const uint32_t *                 v,
                      const TWeight *                  w,
                      uint64_t                         edgeCount,
                      uint64_t                         vertexCount,
                      bool                             inputIsTree,
                      const DendrogramArraysT<TNode> & out);

template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkageCUDA(const uint32_t *                 u,
                       const uint32_t *                 v,
                       const TWeight *                  w,
                       uint64_t                         edgeCount,
                       uint64_t                         vertexCount,
                       bool                             inputIsTree,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info = nullptr);

/** The one entry (include/chs/SingleLinkage.h): the backend that `context` names. */
template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkage(const uint32_t *                 u,
                   const uint32_t *                 v,
                   const TWeight *                  w,
                   uint64_t                         edgeCount,
                   uint64_t                         vertexCount,
                   bool                             inputIsTree,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context,
                   RunInfo *                        info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return GraphSingleLinkageCUDA(u, v, w, edgeCount, vertexCount, inputIsTree, out, context, info); },
    [&] { return GraphSingleLinkageCPU(u, v, w, edgeCount, vertexCount, inputIsTree, out); });
}
#define CHS_INSTANTIATE_ENTRY_GRAPH_SINGLE_LINKAGE(TWeight, TNode)                                                     \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult GraphSingleLinkage<TWeight, TNode>(                 \
    const uint32_t *,                                                                                                  \
    const uint32_t *,                                                                                                  \
    const TWeight *,                                                                                                   \
    uint64_t,                                                                                                          \
    uint64_t,                                                                                                          \
    bool,                                                                                                              \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

} // namespace chs

#endif
