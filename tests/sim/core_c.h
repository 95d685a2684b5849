// The runtime's C headers, with C linkage for the simulator's C++ (they
// carry no extern "C" guards of their own). Include this, never them.
#pragma once

extern "C" {
#include "core/core.h"
#include "util/mbuf.h"
#include "wire/frame.h"
}
