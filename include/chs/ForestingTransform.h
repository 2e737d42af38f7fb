/*=========================================================================
 *  CudaHierarchicalSegmentation: the Image Foresting Transform by seed competition, ITK-free API.
 *
 *  One operation, ImageForestingTransform, with two implementations of one definition, chosen by the
 *  ExecutionContext's backend (include/chs/Execution.h): the CUDA backend (src/Engines/ForestingTransform/, block-local
 *  relaxation rounds) and the sequential CPU reference (src/Engines/ForestingTransform/chsForestingTransformCPU.cxx,
 *Dijkstra with a binary heap). For the same input they return identical labels, costs and predecessors.
 *
 *  The definition (docs/image-foresting-transform.md):
 *  - Arc weight w(p, q) from the weight image B: B(q) (Target, the paper's), max(B(p), B(q)) or |B(p) - B(q)|.
 *  - Path cost f_max: 0 for the trivial path of a seed, the largest arc weight along any other path. V(q) is the
 *    smallest f_max over all paths from any seed to q.
 *  - Ties: every pixel also gets D(q), the number of arcs of its optimum path since the path last rose to V(q)
 *    (0 at the seeds and at a pixel entered by an arc of weight V(q) from a pixel of lower cost), minimised. The
 *    pair (V, D), compared lexicographically, is the key. A neighbour p "offers" q the key (w, 0) when w > V(p),
 *    else (V(p), D(p) + 1); the key of q is the smallest offer (seeds keep (0, 0)). Plateaux of V are therefore
 *    split by geodesic distance from where each was entered, as a FIFO priority queue would split them.
 *  - Predecessor P(q) of a non-seed pixel: among the neighbours whose offer equals q's key, the one with the
 *    smallest key, then the smallest raster index. Seeds are the roots. L(q) is the label of q's root.
 *  The keys are the unique fixed point of the offers, so any order of relaxation (sequential heap, parallel rounds)
 *  reaches them, and P and L follow from them by local rules: the result does not depend on the backend, the block
 *  size, the thread order or the run.
 *=========================================================================*/
#ifndef chsForestingTransform_h
#define chsForestingTransform_h

#include "chs/Execution.h"

#include <cstdint>
#include <type_traits>

namespace chs
{

enum class ArcWeightFunction
{
  /** w(p, q) = B(q): the weight of the pixel entered (the paper's, for waterpixels). */
  Target,
  /** w(p, q) = max(B(p), B(q)). */
  Maximum,
  /** w(p, q) = |B(p) - B(q)| (computed in float for float weights, exactly for integers). */
  AbsoluteDifference
};

/** The cost type of weights of type T: float for float, uint32_t for integers of up to 32 bits (every non-negative
 * value and every absolute difference fits). */
template <typename T>
struct ForestingCost
{
  static_assert(sizeof(T) <= 4, "the Image Foresting Transform takes weights of up to 32 bits");
  using Type = typename std::conditional<std::is_floating_point<T>::value, float, uint32_t>::type;
};

struct ForestingTransformParameters
{
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool              fullyConnected = false;
  ArcWeightFunction arcWeight      = ArcWeightFunction::Target;
  /** CUDA: the largest number of relaxation rounds (the last, unchanged one included) before the run stops with an
   * error; 0: the number of voxels plus one, a bound the rounds never reach (each round makes final every pixel whose
   * optimum path crosses one more tile border). */
  uint64_t maximumRounds = 0;
  /** Testing only: 64-bit voxel indices for the predecessors on the device, and the CPU reference's 64-bit path, even
   * for small images (the path taken from 2^32 - 1 voxels on). The result is the same. */
  bool forceWideIndex = false;
};

struct ForestingTransformResult
{
  /** Number of seed pixels (non-zero in the seed image). */
  uint64_t seedCount = 0;
  /** CUDA: relaxation rounds until no tile changed, the last (unchanged) one included; it varies from run to run
   * with the thread timing, the result does not. CPU: 0. */
  uint64_t rounds = 0;
};

/** The IFT of `weights` (non-negative, no NaN) from the seeds (`seeds[i] != 0`: a seed with that label). Writes
 * the labels, and when not null the cost map V and the predecessor map P (linear indices, -1 at the seeds).
 * Any number of voxels: from 2^32 - 1 voxels on the CUDA backend keeps the predecessors as 64-bit voxel indices (4
 * bytes a voxel more). D stays 32-bit: a run where an optimum path takes 2^32 - 2 arcs or more at one cost (a plateau
 * of V that long) throws std::runtime_error naming it, after the keys (only images of 2^32 - 1 voxels or more can).
 * Throws std::invalid_argument for an empty image, no seed, or a negative or NaN weight (naming the first such
 * pixel), before anything is written. */
template <typename TWeight, typename TLabel>
ForestingTransformResult
ImageForestingTransform(const TWeight *                         weights,
                        const TLabel *                          seeds,
                        const Grid &                            grid,
                        const ForestingTransformParameters &    parameters,
                        TLabel *                                labels,
                        typename ForestingCost<TWeight>::Type * cost,
                        int64_t *                               predecessor,
                        const ExecutionContext &                context = ExecutionContext(),
                        RunInfo *                               info    = nullptr);

} // namespace chs

#endif
