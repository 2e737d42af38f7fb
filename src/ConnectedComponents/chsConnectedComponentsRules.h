// The rules of connected-components labeling that both backends compile (the CUDA kernels of the general path and
// the CPU reference): which voxels are active, when two active neighbours are connected (delta), and the
// neighbourhood (face, edge or full connectivity, with periodic boundaries). include/chs/ConnectedComponents.h states
// them; this file is their one implementation.
#ifndef chsConnectedComponentsRules_h
#define chsConnectedComponentsRules_h

#include "chs/ConnectedComponents.h"
#include "Common/chsHostDevice.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace chs
{
namespace cc
{

/** The unsigned type of a pixel type's width: the type in which integer differences are exact. */
template <typename T, bool = std::is_integral<T>::value>
struct DeltaType
{
  using Type = T; // floating point: the pixel type itself
};
template <typename T>
struct DeltaType<T, true>
{
  using Type = typename std::make_unsigned<T>::type;
};

/** delta in the type DeltaType<T>: integers rounded down and clamped to the unsigned range, floats converted. */
template <typename T>
inline typename DeltaType<T>::Type
DeltaOf(double delta)
{
  using D = typename DeltaType<T>::Type;
  if constexpr (std::is_integral<T>::value)
  {
    const double top = static_cast<double>(std::numeric_limits<D>::max());
    return delta >= top ? std::numeric_limits<D>::max() : static_cast<D>(std::floor(delta));
  }
  else
    return static_cast<D>(delta);
}

/** Graph mode: whether a voxel's permissions `bits` join it to its o-th backward neighbour. */
template <typename T>
CHS_HOST_DEVICE bool
GraphJoins(T bits, int o)
{
  if constexpr (std::is_integral<T>::value)
    return (static_cast<uint64_t>(bits) >> o) & 1u;
  else
    return false; // refused before (CheckModeAndPixel)
}

/** The pixel types a mode takes: Graph needs integers. */
template <typename T>
inline void
CheckModeAndPixel(const ConnectedComponentParameters & p)
{
  if (!(p.delta >= 0))
    throw std::invalid_argument("chs: delta must be >= 0");
  if (p.mode == ConnectedComponentMode::Graph && !std::is_integral<T>::value)
    throw std::invalid_argument("chs: the graph mode takes integer permission bits, not floating-point pixels");
}

/** Whether values a and b are within d of each other (ConnectedComponentParameters::delta). */
template <typename T>
CHS_HOST_DEVICE bool
WithinDelta(T a, T b, typename DeltaType<T>::Type d)
{
  if constexpr (std::is_integral<T>::value)
  {
    using D = typename DeltaType<T>::Type;
    // Two's complement: the difference of the larger and the smaller, taken modulo 2^bits, is exact.
    const D diff = a > b ? static_cast<D>(static_cast<D>(a) - static_cast<D>(b))
                         : static_cast<D>(static_cast<D>(b) - static_cast<D>(a));
    return diff <= d;
  }
  else
  {
    const T diff = a > b ? T(a - b) : T(b - a);
    return diff <= d;
  }
}

/** Whether the general path (any delta, edge connectivity, periodic boundaries) labels the image; the fast path's
 * skips rely on the transitivity of equality and on the face and full neighbourhoods. */
inline bool
NeedsGeneralPath(const Grid & grid, const ConnectedComponentParameters & p)
{
  const bool edge = !p.fullyConnected && p.edgeConnected && grid.size[2] > 1;
  return edge || p.periodic || p.mode == ConnectedComponentMode::Graph ||
         (p.delta != 0 && p.mode != ConnectedComponentMode::Binary);
}

/** Whether the tiled merges take the full neighbourhood: full connectivity, or edge connectivity in 2D (where every
 * neighbour shares an edge). */
inline bool
FullNeighbourhood(const Grid & grid, const ConnectedComponentParameters & p)
{
  return p.fullyConnected || (p.edgeConnected && grid.size[2] == 1);
}

/** The connectivity's backward offsets (earlier in raster order without wrapping): 2/4 in 2D, 3/9/13 in 3D. */
struct Neighbourhood
{
  int count = 0;
  int dx[13], dy[13], dz[13];
};

inline Neighbourhood
BackwardNeighbourhood(const Grid & grid, const ConnectedComponentParameters & p)
{
  const int     maxNonZero = p.fullyConnected ? 3 : p.edgeConnected ? 2 : 1;
  Neighbourhood h;
  const int     zr = grid.size[2] > 1 ? 1 : 0;
  for (int dz = -zr; dz <= 0; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int  nonzero  = (dx != 0) + (dy != 0) + (dz != 0);
        const bool backward = dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx < 0)));
        if (backward && nonzero <= maxNonZero)
        {
          h.dx[h.count] = dx;
          h.dy[h.count] = dy;
          h.dz[h.count] = dz;
          ++h.count;
        }
      }
  return h;
}

/** The neighbour of coordinate c at offset d on an axis of extent n: -1 when outside (no periodic boundary), the
 * wrapped coordinate with one; an axis of extent 1 has no neighbours along it. */
CHS_HOST_DEVICE int64_t
NeighbourCoordinate(int64_t c, int d, int64_t n, bool periodic)
{
  const int64_t q = c + d;
  if (d == 0)
    return q;
  if (n == 1)
    return -1;
  if (q >= 0 && q < n)
    return q;
  return periodic ? (q < 0 ? q + n : q - n) : -1;
}

} // namespace cc
} // namespace chs

#endif
