// The one Qt-free number formatter: each style exactly as the CLI, the run messages, the run
// attributes and the report print it (their own tests compare whole outputs; these pin each style).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "profiler/format/numberformat.h"

using namespace trainbench::profiler;

TEST(NumberFormat, ShortestNumberReadsBackAsTheSameDouble) {
    EXPECT_EQ(shortestNumber(0.5), "0.5");
    EXPECT_EQ(shortestNumber(1000), "1000");
    EXPECT_EQ(shortestNumber(0.001), "0.001");
    EXPECT_EQ(shortestNumber(1e-7), "1e-07");
    EXPECT_EQ(shortestNumber(0.1 + 0.2), "0.30000000000000004");
    EXPECT_EQ(shortestNumber(-1.7976931348623157e308), "-1.7976931348623157e+308");  // the longest
}

TEST(NumberFormat, DurationPicksTheUnitOfItsSize) {
    EXPECT_EQ(formatDuration(0.00123), "1.23 ms");
    EXPECT_EQ(formatDuration(95), "95.0 s");
    EXPECT_EQ(formatDuration(5400), "90.0 min");
    EXPECT_EQ(formatDuration(3 * 3600.0), "3.0 h");
    EXPECT_EQ(formatDuration(2.1 * 86400), "2.1 days");
}

TEST(NumberFormat, MoneyKeepsSmallCostsApart) {
    EXPECT_EQ(formatMoney(0), "$0");
    EXPECT_EQ(formatMoney(0.0042), "$0.0042");
    EXPECT_EQ(formatMoney(0.000013), "$0.000013");
    EXPECT_EQ(formatMoney(1.254), "$1.25");
    EXPECT_EQ(formatMoney(1234.4), "$1234");
}

TEST(NumberFormat, MillisAndClockTime) {
    EXPECT_EQ(millis(0.00116), "1.16 ms");
    EXPECT_EQ(millis(0.00000571), "0.00571 ms");
    EXPECT_EQ(clockTime(75.4), "1:15");
    EXPECT_EQ(clockTime(3723), "1:02:03");
    EXPECT_EQ(clockTime(-1), "?");
    EXPECT_EQ(clockTime(std::numeric_limits<double>::infinity()), "?");
}

TEST(NumberFormat, TheReportsStyles) {
    EXPECT_EQ(fmtFixed(0.3571, 3), "0.357");
    EXPECT_EQ(fmtFixed(std::nan(""), 2), "NaN");
    EXPECT_EQ(fmtFixed(2.25, 1), "2.2");  // printf's rounding of an exact tie (to even), as before
    EXPECT_EQ(fmtPercent(0.8577), "85.77 %");
    EXPECT_EQ(fmtPercent(0.5, 0), "50 %");
    EXPECT_EQ(fmtSeconds(2.414), "2.41 s");
    EXPECT_EQ(fmtSeconds(75.3), "75.3 s (1:15)");
    EXPECT_EQ(fmtSeconds(3723), "3723.0 s (1:02:03)");
    EXPECT_EQ(fmtSeconds(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(fmtMs(0.0032141), "3.214 ms");
    EXPECT_EQ(fmtRate(42531.4), "42531");
    EXPECT_EQ(fmtRate(42.53), "42.5");
    EXPECT_EQ(fmtBytes(512), "512 B");
    EXPECT_EQ(fmtBytes(1536), "1.5 KiB");
    EXPECT_EQ(fmtBytes(1.5 * 1024 * 1024), "1.5 MiB");
    EXPECT_EQ(fmtBytes(15.8 * 1024 * 1024 * 1024), "15.80 GiB");
}
