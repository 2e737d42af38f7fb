/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkImageHierarchy.h"

namespace itk
{

void
ImageHierarchy::SetImageGeometry(unsigned              dimension,
                                 const SizeValueType * size,
                                 const double *        spacing,
                                 const double *        origin,
                                 const double *        direction)
{
  if (dimension > 3)
  {
    itkExceptionMacro(<< "Image graphs have at most three dimensions, not " << dimension << '.');
  }
  std::array<SizeValueType, 3> s{ { 1, 1, 1 } };
  std::array<double, 3>        sp{ { 1, 1, 1 } }, o{ { 0, 0, 0 } };
  std::array<double, 9>        d{ { 1, 0, 0, 0, 1, 0, 0, 0, 1 } };
  for (unsigned r = 0; r < dimension; ++r)
  {
    s[r]  = size[r];
    sp[r] = spacing[r];
    o[r]  = origin[r];
    for (unsigned c = 0; c < dimension; ++c)
      d[r * 3 + c] = direction[r * dimension + c];
  }
  if (dimension == m_ImageDimension && s == m_ImageSize && sp == m_ImageSpacing && o == m_ImageOrigin &&
      d == m_ImageDirection)
    return;
  m_ImageDimension = dimension;
  m_ImageSize      = s;
  m_ImageSpacing   = sp;
  m_ImageOrigin    = o;
  m_ImageDirection = d;
  this->Modified();
}

void
ImageHierarchy::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "ImageDimension: " << m_ImageDimension << std::endl;
  if (m_ImageDimension > 0)
  {
    os << indent << "ImageSize:";
    for (unsigned r = 0; r < m_ImageDimension; ++r)
      os << ' ' << m_ImageSize[r];
    os << std::endl;
  }
}

} // namespace itk
