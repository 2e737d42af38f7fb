/*=========================================================================
 *  CudaHierarchicalSegmentation: connected-components labeling, ITK-free API.
 *
 *  One operation, LabelConnectedComponents, with two implementations of one definition: the CUDA backend
 *  (src/ConnectedComponents/) and the sequential CPU reference (src/ConnectedComponents/chsConnectedComponentsCPU.cxx),
 *  chosen by the ExecutionContext's backend (include/chs/Execution.h). For the same input they return identical label
 *  arrays, counts and statistics.
 *=========================================================================*/
#ifndef chsConnectedComponents_h
#define chsConnectedComponents_h

#include "chs/Execution.h"

#include <cstdint>
#include <vector>

namespace chs
{

enum class ConnectedComponentMode
{
  /** ITK's ConnectedComponentImageFilter: voxels with a non-zero value (and inside the mask) are foreground;
   * foreground neighbours are connected whatever their values. */
  Binary,
  /** Flat zones: every voxel inside the mask belongs to a component; neighbours with equal values (operator==)
   * are connected. */
  FlatZones,
  /** Multilabel images as cc3d (connected-components-3d) defines them: voxels with a non-zero value (and inside the
   * mask) are foreground; foreground neighbours with equal values (or values within `delta`) are connected. Zero is
   * background whatever its neighbours. */
  NonZeroZones,
  /** An explicit graph (cc3d.color_connectivity_graph): every voxel inside the mask is active, and the input, of an
   * integer type, holds for each voxel one bit per backward neighbour of the connectivity (bit o for the o-th
   * offset, the offsets ordered by dz, dy, dx ascending: 2 or 4 in 2D, 3, 9 or 13 in 3D); a voxel is joined to its
   * o-th backward neighbour when bit o is set. */
  Graph
};

struct ConnectedComponentParameters
{
  ConnectedComponentMode mode = ConnectedComponentMode::Binary;
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool fullyConnected = false;
  /** With fullyConnected false: face and edge neighbours, 18-connectivity in 3D (8 in 2D, where every neighbour
   * shares an edge). Ignored when fullyConnected is true. */
  bool edgeConnected = false;
  /** FlatZones and NonZeroZones: neighbours a and b are connected when |a - b| <= delta instead of a == b. Integers:
   * the exact difference, and delta rounded down and clamped to the range of the pixel type's width; floating
   * point: |a - b| evaluated in the pixel type and compared with delta converted to it (cc3d's rule). The relation is
   * not transitive: a component is every voxel reached by a chain of connected neighbours. 0 (default): equality.
   * Must be >= 0 (not NaN). */
  double delta = 0;
  /** Periodic boundaries on every axis: the image is a torus, and the neighbourhood of a voxel on a face wraps
   * around to the opposite face (all offsets of the connectivity, diagonals included, each taken modulo the
   * extent). An axis of extent 1 has no neighbours along it. */
  bool periodic = false;
  /** Label written to background (and masked-out) voxels. As in ITK, object labels count up from 0 and skip
   * this value, so the default 0 gives objects 1..N. */
  int64_t backgroundLabel = 0;
  /** Largest value the label type can hold; a larger object count is an error and nothing is written. */
  uint64_t maximumLabel = 0;
  /** Testing only: use 64-bit union-find indices even for small images (the path taken above 2^32 voxels). */
  bool forceWideIndex = false;
  /** Testing only: on binary images, take the arrangement of 2^31 to 2^32 runs (32-bit runs, labels stored above the
   * run count, 64-bit voxel indices) even for small images. */
  bool forceOffsetLabels = false;
  /** Fill ConnectedComponentStatistics. */
  bool computeStatistics = false;
  /** With computeStatistics: only voxelCount (the size filters' need; no boxes or sums to accumulate and move). */
  bool onlyVoxelCounts = false;
  /** Internal, left false by callers: the CUDA backend labels signed integer images as the unsigned integers of the
   * same bits and sets it there, so that differences (delta) are taken as the signed values'. */
  bool signedBits = false;
};

/** Per-object statistics, indexed by object rank k = 0..count-1 (raster order of the object's first voxel). */
struct ConnectedComponentStatistics
{
  std::vector<uint64_t> voxelCount;
  /** Bounding boxes, inclusive, in voxel coordinates of the grid: entry 3*k + d. */
  std::vector<uint32_t> minimum;
  std::vector<uint32_t> maximum;
  /** Sums of the voxel coordinates (entry 3*k + d), exact in 64 bits: the centroid is sum / voxelCount. */
  std::vector<uint64_t> coordinateSum;
};

/** Thrown, before anything is written, when the object count does not fit the label type. */
class LabelOverflowError : public std::runtime_error
{
public:
  LabelOverflowError(uint64_t count, uint64_t maximum);
  uint64_t objectCount;
};

/** Label the components of `input` (and `mask`, nullable: 0 = outside) into `labels`. Objects are numbered in
 * raster order of their first voxel (see backgroundLabel for the values). Returns the number of objects. */
template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponents(const TPixel *                       input,
                         const uint8_t *                      mask,
                         TLabel *                             labels,
                         const Grid &                         grid,
                         const ConnectedComponentParameters & parameters,
                         ConnectedComponentStatistics *       statistics,
                         const ExecutionContext &             context = ExecutionContext(),
                         RunInfo *                            info    = nullptr);

/** Per-label statistics of a label image, as cc3d.statistics reports them: for every value v = 0..N, N the largest
 * label (found by the backend), entry v of voxelCount and entries 3*v + d of minimum, maximum and coordinateSum (d:
 * the grid's axes). A value without voxels has count 0, minimum 0xffffffff and maximum 0. Returns N, which must not
 * exceed the number of voxels (cc3d's bound; it bounds the tables' memory): std::invalid_argument otherwise, before
 * anything is written. */
template <typename TLabel>
uint64_t
ComputeLabelStatistics(const TLabel *                 labels,
                       const Grid &                   grid,
                       ConnectedComponentStatistics & statistics,
                       const ExecutionContext &       context = ExecutionContext(),
                       RunInfo *                      info    = nullptr);

/** A per-label table gathered over a label image: out[i] = table[labels[i]] (cc3d's largest_k renumbering, or a
 * mask with a 0/1 table). Every label must be below tableSize: std::invalid_argument otherwise, before anything is
 * written. */
template <typename TLabel, typename TOut>
void
MapLabels(const TLabel *           labels,
          const Grid &             grid,
          const TOut *             table,
          uint64_t                 tableSize,
          TOut *                   out,
          const ExecutionContext & context = ExecutionContext(),
          RunInfo *                info    = nullptr);

/** The image where the label's entry of `keep` is non-zero, 0 elsewhere: out[i] = keep[labels[i]] ? image[i] : 0
 * (cc3d's dust). Every label must be below tableSize: std::invalid_argument otherwise, before anything is written.
 * `out` may be `image`. */
template <typename TPixel, typename TLabel>
void
KeepLabels(const TPixel *           image,
           const TLabel *           labels,
           const Grid &             grid,
           const uint8_t *          keep,
           uint64_t                 tableSize,
           TPixel *                 out,
           const ExecutionContext & context = ExecutionContext(),
           RunInfo *                info    = nullptr);

/** Maps an object rank k (0-based) to its label value, ITK's rule: count up from 0, skipping the background. */
inline uint64_t
ObjectLabel(uint64_t k, int64_t backgroundLabel)
{
  return (backgroundLabel >= 0 && k >= static_cast<uint64_t>(backgroundLabel)) ? k + 1 : k;
}

} // namespace chs

#endif
