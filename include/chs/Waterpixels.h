/*=========================================================================
 *  CudaHierarchicalSegmentation: Waterpixels (Machairas et al.), ITK-free API.
 *
 *  One operation, Waterpixels, with two implementations of one definition, chosen by the ExecutionContext's backend
 *  (include/chs/Execution.h): the CUDA backend (src/Waterpixels/chsWaterpixels.cu: the border image and the seeds on
 *  the GPU, then the CUDA Image Foresting Transform) and the sequential CPU reference
 *  (src/Waterpixels/chsWaterpixelsCPU.cxx). For the same input they return identical labels and border images: every
 *  float operation of the border image is the same correctly rounded operation, in the same order, on both.
 *
 *  The definition:
 *  - Grid: the image is cut into cells of gridStep[d] pixels along axis d (the last cell of an axis may be shorter).
 *    A cell's grid seed along an axis is the middle of its first and last pixel coordinate, rounded down. Cells are
 *    numbered in raster order from 1: those numbers are the superpixel labels.
 *  - Gradient |grad I|: Sobel derivatives (3 x 3 in 2D, 3 x 3 x 3 in 3D) of the input converted to float, replicated
 *    at the borders, scaled so that a ramp of slope 1 has magnitude 1.
 *  - Distance E(p) = 2 * sqrt(sum over d of min over the grid seeds c_d of ((p_d - c_d) / gridStep[d])^2): the
 *    paper's (2 / sigma) * distance to the nearest seed of the grid, with a sigma per axis.
 *  - Border image B = |grad I| + k E, k the compactness.
 *  - Seeds: one a cell, at its grid seed, or with gradientMinimumSeeds at the pixel of the cell with the smallest
 *    |grad I| (the first in raster order among equal ones). E stays the distance to the grid seeds then: the spatial
 *    regularisation is the regular grid's, as in Machairas et al., whose markers also move to gradient minima.
 *  - Superpixels: the Image Foresting Transform of B from the seeds with w(p, q) = B(q) and its tie rule
 *    (include/chs/ForestingTransform.h).
 *=========================================================================*/
#ifndef chsWaterpixels_h
#define chsWaterpixels_h

#include "chs/Execution.h"

#include <cstdint>

namespace chs
{

struct WaterpixelParameters
{
  /** Cell size (sigma) along x, y and z, in pixels, at least 1. */
  uint64_t gridStep[3] = { 10, 10, 10 };
  /** k; negative: automatic, 0.04 * (largest - smallest input value), so that an edge between the image's extreme
   * values weighs as much as 12 times the distance term's largest value (about 1, at cell borders). */
  float compactness = -1.0f;
  /** Seeds at the gradient minimum of each cell instead of its centre. */
  bool gradientMinimumSeeds = false;
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool fullyConnected = false;
  /** Testing only: the transform's 64-bit voxel indices (ForestingTransformParameters::forceWideIndex), the path
   * taken from 2^32 - 1 pixels on, even for small images. The result is the same. */
  bool forceWideIndex = false;
};

struct WaterpixelResult
{
  /** Number of superpixels: the number of grid cells. Labels are 1..superpixels. */
  uint64_t superpixels = 0;
  /** The compactness k used (the automatic value when the parameter was negative). */
  float compactness = 0.0f;
  /** CUDA: relaxation rounds of the transform; CPU: 0. */
  uint64_t rounds = 0;
};

/** Waterpixels of `image` into `labels`; `border`, when not null, receives B. Any number of pixels, each axis below
 * 2^31 (from 2^32 - 1 pixels on, the transform takes 64-bit voxel indices). Throws std::invalid_argument, before
 * anything is written, for an empty image, 2^31 pixels or more along an axis, a grid step of 0, a NaN compactness, an
 * input pixel that is NaN or infinite as a float, or more cells than the label type holds. */
template <typename TPixel, typename TLabel>
WaterpixelResult
Waterpixels(const TPixel *               image,
            const Grid &                 grid,
            const WaterpixelParameters & parameters,
            TLabel *                     labels,
            float *                      border,
            const ExecutionContext &     context = ExecutionContext(),
            RunInfo *                    info    = nullptr);

} // namespace chs

#endif
