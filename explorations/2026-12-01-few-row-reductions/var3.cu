#define VARIANT 3
#include "variants.cuh"
