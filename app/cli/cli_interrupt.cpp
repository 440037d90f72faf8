#include "cli_interrupt.h"

#include "forward_runner.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

namespace headlight::app {
namespace {

volatile std::sig_atomic_t interrupted = 0;

void onInterrupt(int) {
    interrupted = 1;
}

// Why SA_RESETHAND: the first Ctrl-C asks the pass to stop; a second one gets the default action.
void installInterruptHandler() {
    static const bool installed = [] {
        struct sigaction action = {};
        action.sa_handler = onInterrupt;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND;
        return sigaction(SIGINT, &action, nullptr) == 0;
    }();
    (void)installed;
}
} // namespace

PassControl interruptiblePass(const char* who, int64_t tokens) {
    installInterruptHandler();
    PassControl control;
    // Why: a pass stopped mid-way leaves its progress line open; the refusal starts a new one.
    auto openLine = std::make_shared<bool>(false);
    control.cancelled = [openLine] {
        if (interrupted == 0) return false;
        if (*openLine) std::fputc('\n', stderr);
        *openLine = false;
        return true;
    };
    if (tokens < ForwardRunner::kLongPassTokens) return control;
    control.progress = [name = std::string(who), openLine](int done, int total) {
        std::fprintf(stderr, "\r%s: layer %d of %d", name.c_str(), done, total);
        *openLine = done != total;
        if (done == total) std::fputc('\n', stderr);
        std::fflush(stderr);
    };
    return control;
}
} // namespace headlight::app
