/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaConnectedComponentImageFilterFactory_h
#define itkCudaConnectedComponentImageFilterFactory_h

#include "CudaHierarchicalSegmentationExport.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkObjectFactoryBase.h"
#include "itkProgressAccumulator.h"
#include "itkVersion.h"

namespace itk
{

/** \class CudaConnectedComponentImageFilterOverride
 * \brief What itk::ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::New() returns once
 * CudaConnectedComponentImageFilterFactory is registered: an itk::ConnectedComponentImageFilter (same properties,
 * same inputs, same output, same GetObjectCount()) whose update runs CudaConnectedComponentImageFilter, on the GPU
 * when there is one (its Backend, Auto by default, decides: the module's CPU reference otherwise).
 *
 * The labels are the same: both filters number the objects in raster order of their first pixel, counting up from 0
 * and skipping BackgroundValue.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
class ITK_TEMPLATE_EXPORT CudaConnectedComponentImageFilterOverride
  : public ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentImageFilterOverride);

  using Self         = CudaConnectedComponentImageFilterOverride;
  using Superclass   = ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using LabelType    = typename Superclass::LabelType;
  using CudaFilter   = CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>;
  using BackendEnum  = typename CudaFilter::BackendEnum;

  /** Not through the factory (which maps the superclass's name to this class). */
  itkFactorylessNewMacro(Self);
  itkTypeMacro(CudaConnectedComponentImageFilterOverride, ConnectedComponentImageFilter);

  /** Objects found by the last update. */
  const LabelType &
  GetObjectCount() const override
  {
    return m_ObjectCount;
  }

  /** Where the update runs (CudaSegmentationBackendEnums: Auto, the default, CUDA or CPU). */
  itkSetMacro(Backend, BackendEnum);
  itkGetConstMacro(Backend, BackendEnum);
  /** Where the last update ran. */
  itkGetConstMacro(LastBackend, BackendEnum);

protected:
  CudaConnectedComponentImageFilterOverride()           = default;
  ~CudaConnectedComponentImageFilterOverride() override = default;

  void
  GenerateData() override
  {
    m_ObjectCount = 0;
    auto filter   = CudaFilter::New();
    filter->SetInput(this->GetInput());
    filter->SetMaskImage(this->GetMaskImage());
    filter->SetFullyConnected(this->GetFullyConnected());
    filter->SetBackgroundValue(this->GetBackgroundValue());
    filter->SetBackend(m_Backend);
    auto progress = ProgressAccumulator::New();
    progress->SetMiniPipelineFilter(this);
    progress->RegisterInternalFilter(filter, 1.0f);
    filter->GraftOutput(this->GetOutput());
    filter->Update();
    this->GraftOutput(filter->GetOutput());
    m_ObjectCount = filter->GetObjectCount();
    m_LastBackend = filter->GetLastBackend();
  }

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    os << indent << "Backend: " << m_Backend << std::endl;
    os << indent << "LastBackend: " << m_LastBackend << std::endl;
  }

private:
  LabelType   m_ObjectCount{ 0 };
  BackendEnum m_Backend{ BackendEnum::Auto };
  BackendEnum m_LastBackend{ BackendEnum::Auto };
};

/** \class CudaConnectedComponentImageFilterFactory
 * \brief An opt-in object factory, as ITK's FFT backends have: once registered, ConnectedComponentImageFilter::New()
 * returns CudaConnectedComponentImageFilterOverride for the registered types, so that an existing pipeline runs on
 * the GPU without a change to its code.
 *
 *   itk::CudaConnectedComponentImageFilterFactory::RegisterOneFactory();
 *
 * RegisterOneFactory registers 2D and 3D images of unsigned char, unsigned short and short input pixels (the mask of
 * the input's type, ITK's default) and unsigned short, unsigned int, unsigned long and unsigned long long labels (24
 * overrides: 1.7 MB of code and data in the library); RegisterOverride<TInputImage, TOutputImage, TMaskImage>() adds
 * other types to a factory (it instantiates them in the caller's code). ObjectFactoryBase::UnRegisterFactory takes the
 * factory back out.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT CudaConnectedComponentImageFilterFactory : public ObjectFactoryBase
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaConnectedComponentImageFilterFactory);

  using Self         = CudaConnectedComponentImageFilterFactory;
  using Superclass   = ObjectFactoryBase;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  const char *
  GetITKSourceVersion() const override
  {
    return ITK_SOURCE_VERSION;
  }
  const char *
  GetDescription() const override
  {
    return "CUDA connected components (CudaHierarchicalSegmentation) for itk::ConnectedComponentImageFilter";
  }

  itkFactorylessNewMacro(Self);
  itkTypeMacro(CudaConnectedComponentImageFilterFactory, ObjectFactoryBase);

  /** Creates a factory with the default types and registers it first (ahead of any other override). Returns it. */
  static Pointer
  RegisterOneFactory();

  /** Makes ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::New() return the override. */
  template <typename TInputImage, typename TOutputImage, typename TMaskImage = TInputImage>
  void
  RegisterOverride()
  {
    using Base     = ConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>;
    using Override = CudaConnectedComponentImageFilterOverride<TInputImage, TOutputImage, TMaskImage>;
    this->Superclass::RegisterOverride(typeid(Base).name(),
                                       typeid(Override).name(),
                                       "CUDA connected components",
                                       true,
                                       CreateObjectFunction<Override>::New());
  }

protected:
  CudaConnectedComponentImageFilterFactory()           = default;
  ~CudaConnectedComponentImageFilterFactory() override = default;
};

} // namespace itk

#endif
