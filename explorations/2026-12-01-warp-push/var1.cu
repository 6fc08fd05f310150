#define VARIANT 1
#include "variants.cuh"
