// The two implementations of include/chs/AttributeHierarchy.h's operations, the CUDA backend and the sequential CPU
// reference (one definition, the same results), and the one entry that runs either as its execution context says.
// Internal: the entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsAttributeHierarchyBackends_h
#define chsAttributeHierarchyBackends_h

#include "chs/AttributeHierarchy.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TNode>
SingleLinkageResult
WatershedHierarchyCPU(const DendrogramInputT<TNode> &  in,
                      RegionAttribute                  attribute,
                      const DendrogramArraysT<TNode> & out);

template <typename TNode>
SingleLinkageResult
WatershedHierarchyCUDA(const DendrogramInputT<TNode> &  in,
                       RegionAttribute                  attribute,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info = nullptr);

/** The one entry (include/chs/AttributeHierarchy.h): the backend that `context` names. */
template <typename TNode>
SingleLinkageResult
WatershedHierarchy(const DendrogramInputT<TNode> &  in,
                   RegionAttribute                  attribute,
                   const DendrogramArraysT<TNode> & out,
                   const ExecutionContext &         context,
                   RunInfo *                        info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return WatershedHierarchyCUDA(in, attribute, out, context, info); },
    [&] { return WatershedHierarchyCPU(in, attribute, out); });
}
#define CHS_INSTANTIATE_ENTRY_WATERSHED_HIERARCHY(TNode)                                                               \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult WatershedHierarchy<TNode>(                          \
    const DendrogramInputT<TNode> &,                                                                                   \
    RegionAttribute,                                                                                                   \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

template <typename TNode>
SingleLinkageResult
FilterRegionsCPU(const DendrogramInputT<TNode> &  in,
                 RegionAttribute                  attribute,
                 double                           threshold,
                 const DendrogramArraysT<TNode> & out);

template <typename TNode>
SingleLinkageResult
FilterRegionsCUDA(const DendrogramInputT<TNode> &  in,
                  RegionAttribute                  attribute,
                  double                           threshold,
                  const DendrogramArraysT<TNode> & out,
                  const ExecutionContext &         context,
                  RunInfo *                        info = nullptr);

/** The one entry (include/chs/AttributeHierarchy.h): the backend that `context` names. */
template <typename TNode>
SingleLinkageResult
FilterRegions(const DendrogramInputT<TNode> &  in,
              RegionAttribute                  attribute,
              double                           threshold,
              const DendrogramArraysT<TNode> & out,
              const ExecutionContext &         context,
              RunInfo *                        info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return FilterRegionsCUDA(in, attribute, threshold, out, context, info); },
    [&] { return FilterRegionsCPU(in, attribute, threshold, out); });
}
#define CHS_INSTANTIATE_ENTRY_FILTER_REGIONS(TNode)                                                                    \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult FilterRegions<TNode>(                               \
    const DendrogramInputT<TNode> &,                                                                                   \
    RegionAttribute,                                                                                                   \
    double,                                                                                                            \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *)

template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegionsCPU(const TNode *                    parent,
                          const double *                   level,
                          uint64_t                         nodes,
                          const Grid &                     grid,
                          bool                             fullyConnected,
                          RegionAttribute                  attribute,
                          double                           threshold,
                          const DendrogramArraysT<TNode> & out,
                          const ExecutionContext &         context);

template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegionsCUDA(const TNode *                    parent,
                           const double *                   level,
                           uint64_t                         nodes,
                           const Grid &                     grid,
                           bool                             fullyConnected,
                           RegionAttribute                  attribute,
                           double                           threshold,
                           const DendrogramArraysT<TNode> & out,
                           const ExecutionContext &         context,
                           RunInfo *                        info = nullptr);

} // namespace chs

#endif
