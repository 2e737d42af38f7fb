// Internal to the .cu files: what the alpha-tree's image entry (one translation unit per pixel type,
// the generated chsAlphaTree_<pixel>.cu) calls after the construction. Implemented once, in
// src/AlphaTree/chsAlphaTreeCanonical.cu.
#ifndef chsAlphaTreeDevice_h
#define chsAlphaTreeDevice_h

#include "chs/AlphaTree.h"
#include "Common/chsCudaCommon.cuh"

#include <cuda_runtime.h>

namespace chs
{
namespace at
{

/** The number of bits that hold every index below `count` (at least 1): the smallest pixel's field in
 * the renumbering's sort keys, the edge index's bits in the sort of the slot ranks. */
inline int
IndexBits(uint64_t count)
{
  int bits = 1;
  while (bits < 64 && (uint64_t(1) << bits) < count)
    ++bits;
  return bits;
}

/** The device bytes CanonicaliseOnDevice allocates at most for a tree of `nodes` nodes over `pixels` pixels (a
 * canonical tree has at most pixels - 1 internal nodes) with ids of `idBytes`, and RenumberOnDevice. */
uint64_t
CanonicaliseBytes(uint64_t pixels, uint64_t nodes, bool binary, unsigned idBytes = 4);
uint64_t
RenumberBytes(uint64_t pixels, unsigned idBytes = 4);

/** Canonicalises and renumbers a constructed tree of `nodes` nodes whose first `pixels` are the leaves (dParent: all
 * nodes; dLevel: the other nodes' level codes, of at most `levelBits` significant bits; every parent after its child
 * in (level, id) order; no pixel is a parent), checks it, stops `timer`, asks `allocate` for the arrays, downloads
 * the tree into them and returns the number of nodes. `binary`: every internal node has exactly two children (the
 * spanning-tree construction), which spares counting children. dParent is overwritten. Node ids of TNode: 64-bit
 * ones for the binary tree only (the spanning-tree construction beyond 2^31 - 1 pixels, or forced). */
template <typename TNode>
uint64_t
CanonicaliseOnDevice(uint64_t                   pixels,
                     uint64_t                   nodes,
                     TNode *                    dParent,
                     const uint32_t *           dLevel,
                     bool                       binary,
                     bool                       isFloat,
                     int                        levelBits,
                     const AlphaTreeAllocator & allocate,
                     detail::EventTimer &       timer,
                     cudaStream_t               stream,
                     detail::MemoryTracker &    tracker,
                     const ExecutionContext &   context);

/** The same last stage for a tree that is canonical already (the level-synchronous construction): `internal`
 * internal nodes with ids pixels + slot, dNodeParent over all nodes, dNodeLevel and dNodeMin (level code and smallest
 * pixel) by slot; node ids of TNode (uint32_t or uint64_t). Renumbers by (level, smallest pixel), checks, stops
 * `timer`, allocates, downloads. */
template <typename TNode>
uint64_t
RenumberOnDevice(uint64_t                   pixels,
                 uint64_t                   internal,
                 TNode *                    dNodeParent,
                 const uint32_t *           dNodeLevel,
                 const TNode *              dNodeMin,
                 int                        levelBits,
                 bool                       isFloat,
                 const AlphaTreeAllocator & allocate,
                 detail::EventTimer &       timer,
                 cudaStream_t               stream,
                 detail::MemoryTracker &    tracker,
                 const ExecutionContext &   context);

} // namespace at
} // namespace chs

#endif
