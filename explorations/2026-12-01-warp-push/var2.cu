#define VARIANT 2
#include "variants.cuh"
