// The volume of a dendrogram's nodes computed exactly and rounded once (include/chs/AttributeHierarchy.h states the
// definition), for both backends: the CUDA backend sums the terms by a prefix sum over the preorder, the CPU reference
// from the leaves up; both in this fixed point, both round with Round(), so the order of the sums cannot matter.
//
// The weights are integers times 2^q: q is the exponent of the lowest set bit over the weights (ScaleOf), so every
// weight is exact in it; the difference of two weights, its product by an area (< 2^33) and every sum of the terms
// (the terms telescope: any sum of them is at most n times the weights' range) are exact in Words 64-bit words, two's
// complement. Weights spanning more than kMaxSpan bits (T - q, |weight| < 2^T) are first rounded to multiples of
// 2^(T - kMaxSpan), to nearest, ties to even: only doubles get there (float32 weights below 2^73 never do).
#ifndef chsExactVolume_h
#define chsExactVolume_h

#include "Common/chsHostDevice.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace chs
{
namespace ah
{

/** The widest span (T - q) of the weights in 256 bits: |m| < 2^span, a term below 2^(33 + span + 1). */
constexpr int kMaxSpan = 222;
/** The widest span in 128 bits. */
constexpr int kMaxNarrowSpan = 94;
/** No nonzero weight: LowExponent's reduction starts here. */
constexpr int kNoExponent = INT_MAX;

template <unsigned Words>
struct Fixed
{
  uint64_t w[Words];
};

template <unsigned Words>
CHS_HOST_DEVICE Fixed<Words>
                operator+(const Fixed<Words> & a, const Fixed<Words> & b)
{
  Fixed<Words> r;
  uint64_t     carry = 0;
  for (unsigned i = 0; i < Words; ++i)
  {
    const uint64_t s = a.w[i] + b.w[i];
    const uint64_t t = s + carry;
    carry            = uint64_t(s < a.w[i]) + uint64_t(t < s);
    r.w[i]           = t;
  }
  return r;
}

template <unsigned Words>
CHS_HOST_DEVICE Fixed<Words>
                operator-(const Fixed<Words> & a, const Fixed<Words> & b)
{
  Fixed<Words> r;
  uint64_t     borrow = 0;
  for (unsigned i = 0; i < Words; ++i)
  {
    const uint64_t d = a.w[i] - b.w[i];
    const uint64_t t = d - borrow;
    borrow           = uint64_t(a.w[i] < b.w[i]) + uint64_t(d < borrow);
    r.w[i]           = t;
  }
  return r;
}

/** The high 64 bits of a * b. */
CHS_HOST_DEVICE uint64_t
MulHigh(uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return uint64_t((unsigned __int128)a * b >> 64);
#endif
}

/** a * k for a nonnegative a (the product stays below 2^(64 Words - 1) by the span's bound). */
template <unsigned Words>
CHS_HOST_DEVICE Fixed<Words>
                operator*(const Fixed<Words> & a, uint64_t k)
{
  Fixed<Words> r;
  uint64_t     carry = 0;
  for (unsigned i = 0; i < Words; ++i)
  {
    const uint64_t low = a.w[i] * k, high = MulHigh(a.w[i], k);
    r.w[i] = low + carry;
    carry  = high + uint64_t(r.w[i] < low);
  }
  return r;
}

struct FixedSum
{
  template <unsigned Words>
  CHS_HOST_DEVICE Fixed<Words>
                  operator()(const Fixed<Words> & a, const Fixed<Words> & b) const
  {
    return a + b;
  }
};

CHS_HOST_DEVICE uint64_t
DoubleBits(double v)
{
#if defined(__CUDA_ARCH__)
  return uint64_t(__double_as_longlong(v));
#else
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
#endif
}

/** A finite double as mantissa * 2^exponent, mantissa below 2^53. */
CHS_HOST_DEVICE void
Split(double v, uint64_t & mantissa, int & exponent)
{
  const uint64_t bits   = DoubleBits(v);
  const int      biased = int((bits >> 52) & 0x7ff);
  mantissa              = bits & ((uint64_t(1) << 52) - 1);
  if (biased)
    mantissa |= uint64_t(1) << 52;
  exponent = (biased ? biased : 1) - 1075;
}

CHS_HOST_DEVICE int
TrailingZeros(uint64_t x)
{
#if defined(__CUDA_ARCH__)
  return __ffsll((long long)x) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

CHS_HOST_DEVICE int
LeadingBit(uint64_t x)
{
#if defined(__CUDA_ARCH__)
  return 63 - __clzll((long long)x);
#else
  return 63 - __builtin_clzll(x);
#endif
}

/** The exponent of the lowest set bit of v (v = odd * 2^e); kNoExponent for 0. */
CHS_HOST_DEVICE int
LowExponent(double v)
{
  uint64_t m;
  int      e;
  Split(v, m, e);
  return m ? e + TrailingZeros(m) : kNoExponent;
}

/** The smallest T with |v| < 2^T; INT_MIN for 0. */
CHS_HOST_DEVICE int
TopExponent(double v)
{
  uint64_t m;
  int      e;
  Split(v, m, e);
  return m ? e + LeadingBit(m) + 1 : INT_MIN;
}

/** v / 2^q in two's complement, rounded to nearest, ties to even, where v is not a multiple of 2^q. */
template <unsigned Words>
CHS_HOST_DEVICE Fixed<Words>
                ToFixed(double v, int q)
{
  Fixed<Words> r{};
  uint64_t     m;
  int          e;
  Split(v, m, e);
  const int shift = e - q;
  if (shift >= 0)
  {
    const unsigned word = unsigned(shift / 64), bit = unsigned(shift % 64);
    if (word < Words)
      r.w[word] = m << bit;
    if (bit && word + 1 < Words)
      r.w[word + 1] = m >> (64 - bit);
  }
  else
  {
    const int s = -shift; // bits dropped, m < 2^53
    if (s <= 53)
    {
      const uint64_t kept = m >> s, rest = m & ((uint64_t(1) << s) - 1), half = uint64_t(1) << (s - 1);
      r.w[0] = kept + uint64_t(rest > half || (rest == half && (kept & 1)));
    }
  }
  if (v < 0)
    r = Fixed<Words>{} - r;
  return r;
}

/** The double nearest to value * 2^q (ties to even) for a nonnegative value. */
template <unsigned Words>
CHS_HOST_DEVICE double
Round(const Fixed<Words> & value, int q)
{
  int top = -1;
  for (unsigned i = Words; i-- > 0;)
    if (value.w[i])
    {
      top = int(64 * i) + LeadingBit(value.w[i]);
      break;
    }
  if (top < 0)
    return 0.0;
  const int ulp  = top + q - 52 > -1074 ? top + q - 52 : -1074; // the result's unit in the last place
  const int drop = ulp - q;
  if (drop <= 0) // at most 53 significant bits: exact
    return ldexp(double(value.w[0]), q);
  // The kept bits (at most 53, so within two words), then round on the first dropped bit and the ones below it.
  const unsigned word = unsigned(drop / 64), shift = unsigned(drop % 64);
  uint64_t       kept = value.w[word] >> shift;
  if (shift && word + 1 < Words)
    kept |= value.w[word + 1] << (64 - shift);
  const unsigned halfWord = unsigned((drop - 1) / 64), halfBit = unsigned((drop - 1) % 64);
  const bool     half   = (value.w[halfWord] >> halfBit) & 1;
  bool           sticky = (value.w[halfWord] & ((uint64_t(1) << halfBit) - 1)) != 0;
  for (unsigned i = 0; i < halfWord; ++i)
    sticky = sticky || value.w[i] != 0;
  if (half && (sticky || (kept & 1)))
    ++kept;
  return ldexp(double(kept), ulp);
}

/** The fixed point of a dendrogram's weights: 2^q their unit, Words the width of every sum. */
struct VolumeScale
{
  int      q     = 0;
  unsigned words = 2;
};

/** The scale from the lowest set bit over the weights (kNoExponent: all zero) and the top exponent of the largest
 * magnitude (the first or last weight). */
inline VolumeScale
ScaleOf(int low, int top)
{
  VolumeScale s;
  if (low == kNoExponent)
    return s;
  s.q     = top - low > kMaxSpan ? top - kMaxSpan : low;
  s.words = top - s.q > kMaxNarrowSpan ? 4 : 2;
  return s;
}

/** ScaleOf the `count` weights of a dendrogram (nondecreasing: the largest magnitude is the first's or the last's), on
 * the host. */
inline VolumeScale
ScaleOfWeights(const double * weight, uint64_t count)
{
  int low = kNoExponent;
  for (uint64_t k = 0; k < count; ++k)
  {
    const int e = LowExponent(weight[k]);
    low         = e < low ? e : low;
  }
  if (low == kNoExponent)
    return VolumeScale();
  const int first = TopExponent(weight[0]), last = TopExponent(weight[count - 1]);
  return ScaleOf(low, first > last ? first : last);
}

} // namespace ah
} // namespace chs

#endif
