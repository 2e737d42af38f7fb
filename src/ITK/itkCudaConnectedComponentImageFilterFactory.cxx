// The opt-in object factory that makes itk::ConnectedComponentImageFilter::New() run the module's filter
// (include/itkCudaConnectedComponentImageFilterFactory.h): the default types, instantiated here once. Compiled where
// ITK has its ConnectedComponents module (Debian's ITK, a full build); the minimal wrapped ITK of the Python tests
// has not, and the library is then built without the factory (it is not wrapped).
#if __has_include("itkConnectedComponentImageFilter.h")
#  include "itkCudaConnectedComponentImageFilterFactory.h"

namespace itk
{
namespace
{
template <unsigned D, typename TInput>
void
RegisterLabels(CudaConnectedComponentImageFilterFactory & factory)
{
  using In = Image<TInput, D>;
  factory.RegisterOverride<In, Image<unsigned short, D>>();
  factory.RegisterOverride<In, Image<unsigned int, D>>();
  factory.RegisterOverride<In, Image<unsigned long, D>>();
  factory.RegisterOverride<In, Image<unsigned long long, D>>();
}

template <unsigned D>
void
RegisterDimension(CudaConnectedComponentImageFilterFactory & factory)
{
  RegisterLabels<D, unsigned char>(factory);
  RegisterLabels<D, unsigned short>(factory);
  RegisterLabels<D, short>(factory);
}
} // namespace

CudaConnectedComponentImageFilterFactory::Pointer
CudaConnectedComponentImageFilterFactory::RegisterOneFactory()
{
  Pointer factory = Self::New();
  RegisterDimension<2>(*factory);
  RegisterDimension<3>(*factory);
  ObjectFactoryBase::RegisterFactory(factory, ObjectFactoryBase::InsertionPositionEnum::INSERT_AT_FRONT);
  return factory;
}

} // namespace itk
#endif
