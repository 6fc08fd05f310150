#define VARIANT 0
#include "variants.cuh"
