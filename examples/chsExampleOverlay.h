// Shared by the examples: a PNG of a 2D image (or of a 3D volume's middle slice) with the borders of a label
// image drawn on it.
#ifndef chsExampleOverlay_h
#define chsExampleOverlay_h

#include "itkImage.h"
#include "itkImageFileWriter.h"
#include "itkRGBPixel.h"

#include <algorithm>
#include <string>

namespace chs_example
{

inline itk::RGBPixel<unsigned char>
Rgb(unsigned char r, unsigned char g, unsigned char b)
{
  itk::RGBPixel<unsigned char> p;
  p.Set(r, g, b);
  return p;
}

/** Writes `file` (PNG): the grey values of `image` stretched to 0..255, with the pixels that have a face neighbour
 * of another label in `labels` drawn in red. For a 3D volume, its middle slice across z. With scale > 1, each pixel
 * becomes scale x scale pixels and the borders stay one pixel wide (between the enlarged pixels). */
template <typename TImage, typename TLabels>
void
WriteBorderOverlay(const TImage * image, const TLabels * labels, const std::string & file, unsigned scale = 1)
{
  using RGB         = itk::RGBPixel<unsigned char>;
  using Out         = itk::Image<RGB, 2>;
  const auto   size = image->GetLargestPossibleRegion().GetSize();
  const size_t nx = size[0], ny = size[1];
  const size_t z       = TImage::ImageDimension == 3 ? size[TImage::ImageDimension - 1] / 2 : 0;
  const auto * grey    = image->GetBufferPointer() + z * nx * ny;
  const auto * label   = labels->GetBufferPointer() + z * nx * ny;
  const auto [lo, hi]  = std::minmax_element(grey, grey + nx * ny);
  const double stretch = *hi > *lo ? 255.0 / (double(*hi) - double(*lo)) : 0.0;

  auto          out = Out::New();
  Out::SizeType outSize;
  const size_t  s = std::max(1u, scale), mx = nx * s, my = ny * s;
  outSize[0] = mx;
  outSize[1] = my;
  out->SetRegions(outSize);
  out->Allocate();
  for (size_t y = 0; y < my; ++y)
    for (size_t x = 0; x < mx; ++x)
    {
      const size_t i = (y / s) * nx + x / s;
      // The right or lower neighbour (in the enlarged picture) lies in another source pixel of another label.
      const bool border = (x + 1 < mx && (x + 1) % s == 0 && label[i + 1] != label[i]) ||
                          (y + 1 < my && (y + 1) % s == 0 && label[i + nx] != label[i]);
      const auto g                        = static_cast<unsigned char>((double(grey[i]) - double(*lo)) * stretch + 0.5);
      out->GetBufferPointer()[y * mx + x] = border ? Rgb(255, 40, 40) : Rgb(g, g, g);
    }
  auto writer = itk::ImageFileWriter<Out>::New();
  writer->SetInput(out);
  writer->SetFileName(file);
  writer->Update();
}

} // namespace chs_example

#endif
