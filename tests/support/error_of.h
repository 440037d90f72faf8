#pragma once
// Tests of refusals compare whole messages, so they need the message of the exception an action
// throws, and must fail clearly when the action throws another type or nothing at all.

#include <QString>
#include <exception>

namespace headlight::test {

// The message of the `Error` that `action` throws, or a note saying what happened instead.
template <typename Error, typename Action> QString errorOf(Action&& action) {
    try {
        action();
    } catch (const Error& error) {
        return QString::fromStdString(error.what());
    } catch (const std::exception& error) {
        return "wrong exception type: " + QString::fromStdString(error.what());
    }
    return "no error";
}
} // namespace headlight::test
