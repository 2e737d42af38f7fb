// The types the label maps are compiled for: labels and table entries of 8 to 64 unsigned bits, and the images
// cc3d's dust keeps (unsigned integers of 8 to 64 bits, which signed images are read as, and floating point).
#ifndef chsLabelMapsInstantiate_h
#define chsLabelMapsInstantiate_h

#include <cstdint>

#define CHS_LABEL_MAPS_OUT(MAP, TLabel)                                                                                \
  MAP(TLabel, uint8_t);                                                                                                \
  MAP(TLabel, uint16_t);                                                                                               \
  MAP(TLabel, uint32_t);                                                                                               \
  MAP(TLabel, uint64_t)
#define CHS_LABEL_MAPS_KEEP(KEEP, TLabel)                                                                              \
  KEEP(uint8_t, TLabel);                                                                                               \
  KEEP(uint16_t, TLabel);                                                                                              \
  KEEP(uint32_t, TLabel);                                                                                              \
  KEEP(uint64_t, TLabel);                                                                                              \
  KEEP(float, TLabel);                                                                                                 \
  KEEP(double, TLabel)
/** MAP(TLabel, TOut) and KEEP(TPixel, TLabel) for every combination. */
#define CHS_FOR_LABEL_MAPS(MAP, KEEP)                                                                                  \
  CHS_LABEL_MAPS_OUT(MAP, uint8_t);                                                                                    \
  CHS_LABEL_MAPS_OUT(MAP, uint16_t);                                                                                   \
  CHS_LABEL_MAPS_OUT(MAP, uint32_t);                                                                                   \
  CHS_LABEL_MAPS_OUT(MAP, uint64_t);                                                                                   \
  CHS_LABEL_MAPS_KEEP(KEEP, uint8_t);                                                                                  \
  CHS_LABEL_MAPS_KEEP(KEEP, uint16_t);                                                                                 \
  CHS_LABEL_MAPS_KEEP(KEEP, uint32_t);                                                                                 \
  CHS_LABEL_MAPS_KEEP(KEEP, uint64_t)

#endif
