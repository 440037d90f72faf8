#pragma once
// Ctrl-C (SIGINT) during a command's forward pass: the signal handler only raises a flag, which
// the pass reads between layers (PassControl), so the command stops after the layer it is in,
// prints one line ("headlight inspect: cancelled"), exits non-zero and writes no output file. A
// second Ctrl-C ends the process at once. Long passes also print their progress on stderr.

#include "model/pass_control.h"

#include <cstdint>

namespace headlight::app {

// The control of one pass of `tokens` tokens for the command `who` ("headlight inspect").
PassControl interruptiblePass(const char* who, int64_t tokens);
} // namespace headlight::app
