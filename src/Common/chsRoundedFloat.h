// Float operations rounded to nearest, one at a time, on the device and the host alike: the _rn intrinsics on the
// device (which nvcc never contracts into fused multiply-adds) and plain operations on the host, where the files
// that use these are compiled with -ffp-contract=off (src/CMakeLists.txt). Expressions written with them in a fixed
// order give the same bits on both backends (waterpixels' border image, single linkage's vector distances).
#ifndef chsRoundedFloat_h
#define chsRoundedFloat_h

#include "Common/chsHostDevice.h"

#include <cmath>

namespace chs
{
namespace rn
{

CHS_HOST_DEVICE float
Add(float a, float b)
{
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
CHS_HOST_DEVICE float
Sub(float a, float b)
{
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
CHS_HOST_DEVICE float
Mul(float a, float b)
{
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CHS_HOST_DEVICE float
Div(float a, float b)
{
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
CHS_HOST_DEVICE float
Sqrt(float a)
{
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

} // namespace rn
} // namespace chs

#endif
