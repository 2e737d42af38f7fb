// The waterpixels' border image in the functions both backends call (include/chs/Waterpixels.h states the
// definition). Every float operation is an explicitly rounded one (the _rn intrinsics on the device, plain operations
// on the host, where this file's users are compiled without contraction), in a fixed order, so that the CUDA and the
// CPU border images are identical bit for bit.
#ifndef chsWaterpixelRule_h
#define chsWaterpixelRule_h

#include "Common/chsHostDevice.h"
#include "Common/chsRoundedFloat.h"
#include "chs/Waterpixels.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace chs
{
namespace wp
{

/** One axis of the grid: n pixels in cells of s. */
struct Axis
{
  int64_t n, s;
  CHS_HOST_DEVICE int64_t
  Cells() const
  {
    return (n + s - 1) / s;
  }
  /** The seed pixel of cell i along this axis: the centre of its first and last pixel, rounded down. */
  CHS_HOST_DEVICE int64_t
  Middle(int64_t i) const
  {
    const int64_t first = i * s;
    const int64_t last  = (first + s < n ? first + s : n) - 1;
    return (first + last) / 2;
  }
  /** min over the grid's seeds c of ((p - c) / s)^2: the nearest is the seed of p's cell or of one next to it. */
  CHS_HOST_DEVICE float
  Term(int64_t p) const
  {
    const int64_t i    = p / s;
    float         best = INFINITY;
    for (int64_t j = i - 1; j <= i + 1; ++j)
    {
      if (j < 0 || j >= Cells())
        continue;
      const float t  = rn::Div(static_cast<float>(p - Middle(j)), static_cast<float>(s));
      const float t2 = rn::Mul(t, t);
      best           = t2 < best ? t2 : best;
    }
    return best;
  }
};

/** E(p) = 2 * sqrt(term x + term y + term z). */
CHS_HOST_DEVICE float
Distance(const Axis (&axes)[3], int64_t x, int64_t y, int64_t z, bool threeD)
{
  float sum = rn::Add(axes[0].Term(x), axes[1].Term(y));
  if (threeD)
    sum = rn::Add(sum, axes[2].Term(z));
  return rn::Mul(2.0f, rn::Sqrt(sum));
}

CHS_HOST_DEVICE int64_t
Clamp(int64_t v, int64_t n)
{
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

/** |grad I| at (x, y, z) by Sobel, I read through at(x, y, z) as float (coordinates already clamped). Each
 * derivative sums its weighted differences in raster order of the offsets; weights are powers of two, so only the
 * additions round. */
template <class At>
CHS_HOST_DEVICE float
Gradient(const At & at, int64_t x, int64_t y, int64_t z, int64_t nx, int64_t ny, int64_t nz, bool threeD)
{
  const int64_t xs[3] = { Clamp(x - 1, nx), x, Clamp(x + 1, nx) };
  const int64_t ys[3] = { Clamp(y - 1, ny), y, Clamp(y + 1, ny) };
  const int64_t zs[3] = { Clamp(z - 1, nz), z, Clamp(z + 1, nz) };
  const float   w[3]  = { 1.0f, 2.0f, 1.0f };
  float         gx = 0, gy = 0, gz = 0;
  if (!threeD)
  {
    for (int k = 0; k < 3; ++k)
    {
      gx = rn::Add(gx, rn::Mul(w[k], rn::Sub(at(xs[2], ys[k], z), at(xs[0], ys[k], z))));
      gy = rn::Add(gy, rn::Mul(w[k], rn::Sub(at(xs[k], ys[2], z), at(xs[k], ys[0], z))));
    }
    gx = rn::Mul(gx, 0.125f);
    gy = rn::Mul(gy, 0.125f);
    return rn::Sqrt(rn::Add(rn::Mul(gx, gx), rn::Mul(gy, gy)));
  }
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
    {
      const float ww = rn::Mul(w[a], w[b]);
      gx             = rn::Add(gx, rn::Mul(ww, rn::Sub(at(xs[2], ys[b], zs[a]), at(xs[0], ys[b], zs[a]))));
      gy             = rn::Add(gy, rn::Mul(ww, rn::Sub(at(xs[b], ys[2], zs[a]), at(xs[b], ys[0], zs[a]))));
      gz             = rn::Add(gz, rn::Mul(ww, rn::Sub(at(xs[b], ys[a], zs[2]), at(xs[b], ys[a], zs[0]))));
    }
  gx = rn::Mul(gx, 0.03125f);
  gy = rn::Mul(gy, 0.03125f);
  gz = rn::Mul(gz, 0.03125f);
  return rn::Sqrt(rn::Add(rn::Add(rn::Mul(gx, gx), rn::Mul(gy, gy)), rn::Mul(gz, gz)));
}

/** The automatic compactness from the input's float range. */
CHS_HOST_DEVICE float
AutomaticCompactness(float smallest, float largest)
{
  return rn::Mul(0.04f, rn::Sub(largest, smallest));
}

/** The gradient and the border image are computed in float: a pixel that is NaN, or infinite as a float (an infinity,
 * or a double beyond float's range), is refused. */
inline std::string
NonFiniteInputMessage(uint64_t pixel, bool isNaN)
{
  return "chs: the input image has " + std::string(isNaN ? "a NaN" : "an infinite value (as float)") +
         " at pixel index " + std::to_string(pixel);
}

inline void
CheckAxes(const Grid & grid, const WaterpixelParameters & parameters, Axis (&axes)[3])
{
  for (int d = 0; d < 3; ++d)
  {
    // The CUDA kernels index along an axis with 32-bit signed integers.
    if (grid.size[d] > 0x7fffffffull)
      throw std::invalid_argument("chs: waterpixels take at most 2^31 - 1 pixels along an axis; axis " +
                                  std::to_string(d) + " has " + std::to_string(grid.size[d]));
    const uint64_t step = d < int(grid.dimension) ? parameters.gridStep[d] : 1;
    if (step == 0 || step > 0xffffffffull)
      throw std::invalid_argument("chs: the waterpixel grid step along axis " + std::to_string(d) +
                                  " must be between 1 and 2^32 - 1; it is " + std::to_string(step));
    axes[d] = Axis{ int64_t(grid.size[d]), int64_t(step) };
  }
  if (std::isnan(parameters.compactness))
    throw std::invalid_argument("chs: the waterpixel compactness is NaN");
}

} // namespace wp
} // namespace chs

#endif
