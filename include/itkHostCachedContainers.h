/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkHostCachedContainers_h
#define itkHostCachedContainers_h

#include "itkImportImageContainer.h"
#include "itkObjectFactory.h"
#include "itkVectorContainer.h"
#include "chs/HostCache.h"

#include <algorithm>
#include <vector>

namespace itk
{

/** \class HostCachedVectorContainer
 * \brief A VectorContainer whose storage comes from, and goes back to, the module's host array cache
 * (include/chs/HostCache.h): the arrays of the tree objects (AlphaTree, Dendrogram).
 *
 * It is a VectorContainer for every user (the trees return it as one); only its allocation differs. Allocate(n)
 * sizes it to n elements of unspecified values, in storage whose pages are mapped; its storage returns to the cache
 * when the container is destroyed or Release()d.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TElementIdentifier, typename TElement>
class ITK_TEMPLATE_EXPORT HostCachedVectorContainer : public VectorContainer<TElementIdentifier, TElement>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(HostCachedVectorContainer);
  using Self         = HostCachedVectorContainer;
  using Superclass   = VectorContainer<TElementIdentifier, TElement>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  itkNewMacro(Self);
  itkTypeMacro(HostCachedVectorContainer, VectorContainer);

  void
  Allocate(SizeValueType n)
  {
    chs::AcquireHostVector(this->CastToSTLContainer(), n);
    this->Modified();
  }
  void
  Release()
  {
    chs::ReleaseHostVector(this->CastToSTLContainer());
    this->Modified();
  }

protected:
  HostCachedVectorContainer() = default;
  ~HostCachedVectorContainer() override { chs::ReleaseHostVector(this->CastToSTLContainer()); }
};

/** \class HostCachedImageContainer
 * \brief The pixel container of the module's output images: an ImportImageContainer whose buffers come from the
 * module's host array cache (include/chs/HostCache.h) and go back to it when released.
 *
 * Images allocate through it as through their default container: uninitialised unless asked, value-initialised
 * otherwise. A pointer imported with SetImportPointer is handled as ImportImageContainer does.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TElementIdentifier, typename TElement>
class ITK_TEMPLATE_EXPORT HostCachedImageContainer : public ImportImageContainer<TElementIdentifier, TElement>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(HostCachedImageContainer);
  using Self              = HostCachedImageContainer;
  using Superclass        = ImportImageContainer<TElementIdentifier, TElement>;
  using Pointer           = SmartPointer<Self>;
  using ConstPointer      = SmartPointer<const Self>;
  using ElementIdentifier = TElementIdentifier;
  itkNewMacro(Self);
  itkTypeMacro(HostCachedImageContainer, ImportImageContainer);

  /** New buffers page-locked for the CUDA driver (set for the outputs of a CUDA update): see chs/HostCache.h. */
  itkSetMacro(Pinned, bool);
  itkGetConstMacro(Pinned, bool);

protected:
  HostCachedImageContainer() = default;
  ~HostCachedImageContainer() override
  {
    // The base destructor calls its own DeallocateManagedMemory, which must not delete[] a cached buffer.
    this->DeallocateManagedMemory();
  }

  TElement *
  AllocateElements(ElementIdentifier size, bool useDefaultConstructor = false) const override
  {
    m_Buffers.reserve(m_Buffers.size() + 1); // so that keeping the buffer below cannot fail and lose it
    Storage storage;
    try
    {
      chs::AcquireHostVector(storage, size, m_Pinned);
    }
    catch (...)
    {
      throw MemoryAllocationError(__FILE__, __LINE__, "Failed to allocate memory for image.", ITK_LOCATION);
    }
    if (useDefaultConstructor)
      std::fill(storage.begin(), storage.end(), TElement());
    m_Buffers.push_back(std::move(storage));
    return m_Buffers.back().data();
  }

  void
  DeallocateManagedMemory() override
  {
    TElement * p  = this->GetImportPointer();
    const auto it = std::find_if(
      m_Buffers.begin(), m_Buffers.end(), [p](const Storage & s) { return p != nullptr && s.data() == p; });
    if (it == m_Buffers.end())
    {
      Superclass::DeallocateManagedMemory(); // not one of ours: an imported pointer, or none
      return;
    }
    chs::ReleaseHostVector(*it);
    m_Buffers.erase(it);
    this->SetImportPointer(nullptr);
    this->SetCapacity(0);
    this->SetSize(0);
  }

private:
  using Storage = std::vector<TElement, chs::DefaultInitAllocator<TElement>>;
  /** Buffers handed out by AllocateElements and not yet deallocated (Reserve holds two for a moment). */
  mutable std::vector<Storage> m_Buffers;
  bool                         m_Pinned = false;
};

/** Allocates `image` over its buffered region in a HostCachedImageContainer (Image::Allocate with the cached
 * container); `pinned`: a new buffer is page-locked (for an output of the CUDA backend). */
template <typename TImage>
void
AllocateHostCached(TImage * image, bool pinned = false)
{
  using Container  = HostCachedImageContainer<typename TImage::PixelContainer::ElementIdentifier,
                                             typename TImage::PixelContainer::Element>;
  auto * container = dynamic_cast<Container *>(image->GetPixelContainer());
  if (container == nullptr)
  {
    auto made = Container::New();
    container = made.GetPointer();
    image->SetPixelContainer(made);
  }
  container->SetPinned(pinned);
  image->Allocate();
}

} // namespace itk

#endif
