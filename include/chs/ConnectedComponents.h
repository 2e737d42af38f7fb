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
  FlatZones
};

struct ConnectedComponentParameters
{
  ConnectedComponentMode mode = ConnectedComponentMode::Binary;
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool fullyConnected = false;
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
};

/** Per-object statistics, indexed by object rank k = 0..count-1 (raster order of the object's first voxel). */
struct ConnectedComponentStatistics
{
  std::vector<uint64_t> voxelCount;
  /** Bounding boxes, inclusive, in voxel coordinates of the grid: entry 3*k + d. */
  std::vector<uint32_t> minimum;
  std::vector<uint32_t> maximum;
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

/** Maps an object rank k (0-based) to its label value, ITK's rule: count up from 0, skipping the background. */
inline uint64_t
ObjectLabel(uint64_t k, int64_t backgroundLabel)
{
  return (backgroundLabel >= 0 && k >= static_cast<uint64_t>(backgroundLabel)) ? k + 1 : k;
}

} // namespace chs

#endif
