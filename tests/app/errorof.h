#pragma once
// The message of the exception a call throws, or a test failure when it throws none.
#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace trainbench::app::testing {

template <class Fn>
std::string messageOf(Fn fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an error";
    return {};
}

}  // namespace trainbench::app::testing
