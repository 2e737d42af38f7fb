// Order-preserving 32-bit codes of non-negative weights and costs, the same on the device and the host: the value
// for integers, the IEEE bits for floats (the bit patterns of non-negative floats order as the floats do). Used by
// the Image Foresting Transform's keys and the single-linkage graphs' edge weights.
#ifndef chsOrderedCode_h
#define chsOrderedCode_h

#include "Common/chsHostDevice.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace chs
{

/** Order-preserving code of a non-negative weight or cost: the value for integers, the bits for floats (where
 * -0 is coded as +0, so that equal values have equal codes). */
template <typename T>
CHS_HOST_DEVICE uint32_t
EncodeOrdered(T v)
{
  if constexpr (std::is_floating_point<T>::value)
  {
    const float f = v == 0 ? 0.0f : static_cast<float>(v);
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return bits;
#endif
  }
  else
  {
    return static_cast<uint32_t>(v);
  }
}

/** The value that a code stands for. */
template <typename T>
CHS_HOST_DEVICE T
DecodeOrdered(uint32_t code)
{
  if constexpr (std::is_floating_point<T>::value)
  {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(code);
#else
    float f;
    std::memcpy(&f, &code, sizeof(f));
    return f;
#endif
  }
  else
  {
    return code;
  }
}

} // namespace chs

#endif
