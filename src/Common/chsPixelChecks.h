// The message of the image graphs' pixel check (alpha-trees, single linkage), shared by the CPU references and the
// CUDA backends so that both name a bad pixel alike.
#ifndef chsPixelChecks_h
#define chsPixelChecks_h

#include <cstdint>
#include <string>

namespace chs
{
/** Edge weights |a - b| need finite pixels: a NaN, or an infinity (inf - inf is NaN), is refused. */
inline std::string
NonFinitePixelMessage(uint64_t pixel, bool isNaN)
{
  return "pixel " + std::to_string(pixel) + (isNaN ? " is NaN" : " is infinite") +
         " (edge weights |a - b| need finite pixel values)";
}
} // namespace chs

#endif
