#define VARIANT 4
#include "variants.cuh"
