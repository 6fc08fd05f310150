// cuda_runtime.h: everything the emulator offers comes with emu.h.
#pragma once
#include "emu.h"
