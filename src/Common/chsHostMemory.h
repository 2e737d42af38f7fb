// Host arrays that a backend fills: sized with their pages mapped by several threads. A fresh allocation of
// hundreds of megabytes is mapped page by page on first write, in the one thread that writes it; for an alpha-tree of
// a 4096^2 image (24M nodes: parents and levels, 285 MB) std::vector::resize took 115 to 180 ms on the H200
// machine's host (a virtual machine), ten times the tree's kernels, and 90 to 100 ms with the pages mapped first by
// 16 threads (transparent huge pages made no difference there). Used by the tree objects' Allocate (itk::AlphaTree,
// itk::Dendrogram).
#ifndef chsHostMemory_h
#define chsHostMemory_h

#include <cstdint>
#include <vector>

namespace chs
{

/** Maps the pages of [p, p + bytes) without changing their contents (Linux: madvise MADV_POPULATE_WRITE, in chunks
 * on several threads); does nothing for small ranges or where the system lacks it. */
void
PopulatePages(void * p, uint64_t bytes);

/** v holds n value-initialised (zero) elements; new storage has its pages mapped in parallel first. */
template <typename T>
void
ResizeZeroed(std::vector<T> & v, uint64_t n)
{
  v.clear();
  if (v.capacity() < n)
  {
    std::vector<T>().swap(v);
    v.reserve(n);
    PopulatePages(v.data(), n * sizeof(T));
  }
  v.resize(n);
}

} // namespace chs

#endif
