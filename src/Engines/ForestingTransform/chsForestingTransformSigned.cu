// The Image Foresting Transform of signed integer weights: ImageForestingTransformCUDA runs them as the unsigned
// integers of the same width, a set top bit counted as a negative weight (chsForestingTransform.cuh says why that
// gives the same transform). Those runs are compiled by the generated units chsForestingTransform_uint*_t.cu and
// declared extern here, so that this unit compiles no kernel.
#include "Engines/ForestingTransform/chsForestingTransform.cuh"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"

#define CHS_IFT_LABELS(MACRO, ...)                                                                                     \
  MACRO(__VA_ARGS__, uint8_t);                                                                                         \
  MACRO(__VA_ARGS__, uint16_t);                                                                                        \
  MACRO(__VA_ARGS__, uint32_t);                                                                                        \
  MACRO(__VA_ARGS__, uint64_t)

CHS_IFT_LABELS(CHS_IFT_TRANSFORM, extern, uint8_t);
CHS_IFT_LABELS(CHS_IFT_TRANSFORM, extern, uint16_t);
CHS_IFT_LABELS(CHS_IFT_TRANSFORM, extern, uint32_t);

CHS_IFT_LABELS(CHS_INSTANTIATE_IFT_CUDA_ENTRY, int8_t);
CHS_IFT_LABELS(CHS_INSTANTIATE_IFT_CUDA_ENTRY, int16_t);
CHS_IFT_LABELS(CHS_INSTANTIATE_IFT_CUDA_ENTRY, int32_t);
