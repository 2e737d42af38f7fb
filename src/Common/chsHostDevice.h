// CHS_HOST_DEVICE marks the functions that state a definition once for both backends: nvcc compiles them for the
// device (CUDA backend), the host compiler for the CPU reference, so the two cannot drift apart.
#ifndef chsHostDevice_h
#define chsHostDevice_h

#if defined(__CUDACC__)
#  define CHS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#  define CHS_HOST_DEVICE inline
#endif

#endif
