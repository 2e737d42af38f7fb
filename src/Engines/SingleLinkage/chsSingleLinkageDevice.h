// Internal to the .cu files: the pieces of the CUDA single-linkage backend that the image entry (one translation
// unit per pixel type, the generated chsSingleLinkage_<pixel>.cu) and the graph entry
// (src/Engines/SingleLinkage/chsSingleLinkageGraph.cu) share. Implemented once, in
// src/Engines/SingleLinkage/chsSingleLinkageGraph.cu.
#ifndef chsSingleLinkageDevice_h
#define chsSingleLinkageDevice_h

#include "Common/chsCudaCommon.cuh"
#include "chs/SingleLinkage.h"

#include <cuda_runtime.h>

namespace chs
{
namespace sl
{

/** PANDORA's first level when the caller knows it: every vertex's lightest edge (its rank) and that edge's other
 * end (an image's tree finds both from its edge slots: ImageMinimumIncidentKernel). */
struct FirstLevel
{
  const uint32_t * minimum = nullptr;
  const uint32_t * far     = nullptr;
};

/** PANDORA: the dendrogram of the tree on n < 2^32 vertices whose edges, in rank order, are (dU[r], dV[r]); writes
 * the 2n - 1 parents to dParent. Returns the number of contraction levels. With `first` given, the first level takes
 * the vertices' lightest edges from it instead of atomics on randomly placed vertices. Vertices and ranks are 32-bit
 * at every level; node ids (the parents, and the chains of the expansion, which number the vertices of all levels
 * together: fewer than 2n) are of TNode: uint32_t below 2^31 vertices, uint64_t from there on (or to test it). */
template <typename TNode>
unsigned
PandoraOnDevice(const uint32_t *        dU,
                const uint32_t *        dV,
                uint64_t                n,
                TNode *                 dParent,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                int                     device,
                const FirstLevel &      first = FirstLevel());

/** After the minimum spanning tree (its ends, edge ids and weights by rank on the device, `mstTimer` stopped): runs
 * PANDORA, checks the dendrogram, downloads it and fills the result's and `info`'s timings. */
template <typename TNode>
void
FinishOnDevice(uint64_t                         n,
               const uint32_t *                 dU,
               const uint32_t *                 dV,
               const uint64_t *                 dEdge,
               const double *                   dWeight,
               const DendrogramArraysT<TNode> & out,
               detail::EventTimer &             mstTimer,
               SingleLinkageResult &            result,
               RunInfo *                        info,
               detail::MemoryTracker &          tracker,
               const ExecutionContext &         context);

/** Checks the invariants of itk::Dendrogram on the device arrays (parents after their children, the root its own,
 * two children per internal node, weights neither NaN nor decreasing, end vertices in range); throws
 * std::logic_error when one is broken. The CUDA entries call it, so the filters check only the CPU's on the host. */
template <typename TNode>
void
CheckDendrogramOnDevice(uint64_t                n,
                        const TNode *           dParent,
                        const double *          dWeight,
                        const uint32_t *        dU,
                        const uint32_t *        dV,
                        cudaStream_t            stream,
                        detail::MemoryTracker & tracker,
                        int                     device);

/** Sorts `count` keys ascending on their bits beginBit .. endBit - 1 (CUB radix sort, stable); returns where the
 * sorted keys are (`keys` or `spare`, a buffer of the same size). */
unsigned long long *
SortKeys(unsigned long long *    keys,
         unsigned long long *    spare,
         uint64_t                count,
         int                     endBit,
         cudaStream_t            stream,
         detail::MemoryTracker & tracker,
         int                     beginBit = 0);

/** Number of significant bits of the largest of `count` keys (a device reduction). */
int
SignificantBits(const unsigned long long * keys, uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker);

/** The scratch bytes of CUB's radix sorts on double buffers, as the runs ask for them: of `count` 64-bit keys, and of
 * `count` pairs of keys of `keyBytes` (1, 2, 4 or 8) bytes with values of `valueBytes` (4 or 8), on all their bits.
 * The value width matters: 64-bit values of 4.3e9 pairs took 4 MB more than 32-bit ones. */
uint64_t
SortKeysScratch(uint64_t count);
uint64_t
SortPairsScratch(uint64_t count, unsigned keyBytes, unsigned valueBytes = 4);

/** The device bytes PandoraOnDevice allocates at most for a tree of n vertices, with node ids of `nodeBytes`. */
uint64_t
PandoraBytes(uint64_t n, unsigned nodeBytes = sizeof(uint32_t));

/** The device bytes FinishOnDevice allocates at most for a tree of n vertices (the parents, PANDORA, the check). */
uint64_t
FinishBytes(uint64_t n, unsigned nodeBytes = sizeof(uint32_t));

/** Copies the dendrogram's device arrays into the caller's (null destinations are skipped, and so are the parents
 * for a null `dParent`; 32-bit end vertices are zero-extended into 64-bit arrays). */
template <typename TNode>
void
DownloadDendrogram(const DendrogramArraysT<TNode> & out,
                   uint64_t                         n,
                   const TNode *                    dParent,
                   const double *                   dWeight,
                   const uint64_t *                 dEdge,
                   const uint32_t *                 dU,
                   const uint32_t *                 dV,
                   cudaStream_t                     stream,
                   const ExecutionContext &         context);

} // namespace sl
} // namespace chs

#endif
