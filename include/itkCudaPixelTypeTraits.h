/*=========================================================================
 *  CudaHierarchicalSegmentation: maps ITK pixel types onto the fixed-width types the backends are compiled for.
 *=========================================================================*/
#ifndef itkCudaPixelTypeTraits_h
#define itkCudaPixelTypeTraits_h

#include <cstdint>
#include <type_traits>

namespace itk
{

/** The backends are instantiated for uint8..int64, float and double; `char`, `long`, `long long` and friends are
 * passed as the fixed-width type of the same size and signedness (the same bits). */
template <typename T>
struct CudaCanonicalPixel
{
  static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value,
                "the module's filters take scalar pixel types (integers, float, double)");
  using Type = typename std::conditional<
    std::is_floating_point<T>::value,
    T,
    typename std::conditional<
      std::is_signed<T>::value,
      typename std::conditional<
        sizeof(T) == 1,
        int8_t,
        typename std::conditional<sizeof(T) == 2,
                                  int16_t,
                                  typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type>::type>::type,
      typename std::conditional<
        sizeof(T) == 1,
        uint8_t,
        typename std::
          conditional<sizeof(T) == 2, uint16_t, typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::
            type>::type>::type>::type;
  static_assert(sizeof(Type) == sizeof(T), "unexpected pixel size");
};

/** Labels are written as the unsigned type of the same size (a signed label type keeps its own maximum). */
template <typename T>
struct CudaCanonicalLabel
{
  static_assert(std::is_integral<T>::value, "label types are integers");
  using Type = typename std::conditional<
    sizeof(T) == 1,
    uint8_t,
    typename std::conditional<sizeof(T) == 2,
                              uint16_t,
                              typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type>::type>::type;
};

} // namespace itk

#endif
