// device_launch_parameters.h: everything the emulator offers comes with emu.h.
#pragma once
#include "emu.h"
