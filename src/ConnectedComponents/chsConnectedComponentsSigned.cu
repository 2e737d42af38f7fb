// Connected components of signed integer images: LabelConnectedComponentsCUDA labels their bits as the unsigned
// integers of the same width (chsConnectedComponents.cuh says why that gives the same components), whose
// instantiations the generated units chsConnectedComponents_uint*_t.cu compile; declared extern here, so that this
// unit compiles no kernel.
#include "ConnectedComponents/chsConnectedComponents.cuh"
#include "ConnectedComponents/chsConnectedComponentsBackends.h"

#define CHS_CC_LABELS(MACRO, TPixel)                                                                                   \
  MACRO(TPixel, uint8_t);                                                                                              \
  MACRO(TPixel, uint16_t);                                                                                             \
  MACRO(TPixel, uint32_t);                                                                                             \
  MACRO(TPixel, uint64_t)

CHS_CC_LABELS(CHS_EXTERN_CC_CUDA, uint8_t);
CHS_CC_LABELS(CHS_EXTERN_CC_CUDA, uint16_t);
CHS_CC_LABELS(CHS_EXTERN_CC_CUDA, uint32_t);
CHS_CC_LABELS(CHS_EXTERN_CC_CUDA, uint64_t);

CHS_CC_LABELS(CHS_INSTANTIATE_CC_CUDA, int8_t);
CHS_CC_LABELS(CHS_INSTANTIATE_CC_CUDA, int16_t);
CHS_CC_LABELS(CHS_INSTANTIATE_CC_CUDA, int32_t);
CHS_CC_LABELS(CHS_INSTANTIATE_CC_CUDA, int64_t);
