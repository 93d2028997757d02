#pragma once
// Shared by the input-pipeline tests: a fresh temp dir per test, file writing, and the message of
// the DataError a call throws.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "engine/util/errors.h"

namespace trainbench::engine::test {

namespace fs = std::filesystem;

inline void writeText(const fs::path& p, std::string_view bytes) {
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good()) << p;
}

inline std::string readText(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// The message of the exception E (DataError unless named) that fn() throws, or a failure if it throws
// none. The one errorOf of the engine's tests.
template <class E = DataError, class Fn>
std::string errorOf(Fn fn) {
    try {
        fn();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an exception";
    return {};
}

class TempDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("trainbench-" + std::string(info->test_suite_name()) + "-" +
                                            info->name() + "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

}  // namespace trainbench::engine::test
