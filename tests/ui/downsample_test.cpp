// Display decimation: what a chart draws instead of every point must keep what the eye needs
// (every bucket's extremes, both ends, lines to the edges) and stay small.
#include "ui/charts/bandseries.h"
#include "ui/charts/breakdowndata.h"
#include "ui/charts/downsample.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <random>

using namespace trainbench::ui;

namespace {

std::vector<QPointF> noisy(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::vector<QPointF> p;
    for (int i = 0; i < n; ++i) p.emplace_back(i, std::sin(i / 500.0) + 0.3 * noise(rng));
    return p;
}

bool contains(const QList<QPointF>& list, const QPointF& p) { return list.contains(p); }

}  // namespace

class DownsampleTest : public QObject {
    Q_OBJECT
private slots:
    void keepsEveryBucketsMinAndMaxAndBothEnds() {
        const auto points = noisy(100'000, 1);
        const int buckets = 200;
        const double x0 = 10'000, x1 = 60'000;
        const QList<QPointF> out = minMaxDownsample(points, x0, x1, buckets);
        QVERIFY(out.size() <= 2 * buckets + 4);
        QVERIFY(std::is_sorted(out.begin(), out.end(), [](auto& a, auto& b) { return a.x() < b.x(); }));
        // The first and last point of the range, and one point beyond each end.
        QVERIFY(contains(out, points[10'000]));
        QVERIFY(contains(out, points[60'000]));
        QCOMPARE(out.front(), points[9'999]);
        QCOMPARE(out.back(), points[60'001]);
        // Each bucket's extremes, found by brute force.
        const double width = (x1 - x0) / buckets;
        for (int b = 0; b < buckets; ++b) {
            const QPointF *lo = nullptr, *hi = nullptr;
            for (const QPointF& p : points) {
                if (p.x() < x0 || p.x() > x1) continue;
                if (std::min(int((p.x() - x0) / width), buckets - 1) != b) continue;
                if (!lo || p.y() < lo->y()) lo = &p;
                if (!hi || p.y() > hi->y()) hi = &p;
            }
            QVERIFY(lo && hi);
            QVERIFY2(contains(out, *lo), qPrintable(QString("bucket %1 lost its minimum").arg(b)));
            QVERIFY2(contains(out, *hi), qPrintable(QString("bucket %1 lost its maximum").arg(b)));
        }
    }

    void fewPointsComeBackInFull() {
        const auto points = noisy(1'000, 2);
        const QList<QPointF> out = minMaxDownsample(points, 100, 199, 1200);
        QCOMPARE(out.size(), 100 + 2);  // the range plus a neighbour each side
        for (int i = 99; i <= 200; ++i) QCOMPARE(out[i - 99], points[size_t(i)]);
    }

    void emptyOneAndOutsideRanges() {
        QVERIFY(minMaxDownsample({}, 0, 1, 10).isEmpty());
        const std::vector<QPointF> one{{5, 2}};
        QCOMPARE(minMaxDownsample(one, 0, 10, 10), QList<QPointF>{QPointF(5, 2)});
        // A view between two points still gets both, so the line crosses it.
        const std::vector<QPointF> two{{0, 1}, {10, 3}};
        QCOMPARE(minMaxDownsample(two, 4, 6, 10), (QList<QPointF>{QPointF(0, 1), QPointF(10, 3)}));
        // Reversed bounds mean the same range.
        QCOMPARE(minMaxDownsample(two, 12, -1, 10), minMaxDownsample(two, -1, 12, 10));
    }

    void nanPointsAreSkipped() {
        auto points = noisy(50'000, 3);
        for (size_t i = 0; i < points.size(); i += 7) points[i].setY(std::nan(""));
        points[0].setY(std::nan(""));
        const QList<QPointF> out = minMaxDownsample(points, 0, 49'999, 100);
        QVERIFY(!out.isEmpty());
        QVERIFY(out.size() <= 2 * 100 + 4);
        for (const QPointF& p : out) QVERIFY(std::isfinite(p.y()));
        QCOMPARE(out.front(), points[1]);  // the first drawable point
        const std::vector<QPointF> allNan{{0, std::nan("")}, {1, std::nan("")}};
        QVERIFY(minMaxDownsample(allNan, 0, 1, 4).isEmpty());
    }

    void visibleRangeIsInclusive() {
        const std::vector<QPointF> p{{1, 0}, {2, 0}, {2, 1}, {3, 0}, {5, 0}};
        const IndexRange r = visibleRange(p, 2, 3);
        QCOMPARE(r.begin, size_t(1));
        QCOMPARE(r.end, size_t(4));
    }

    void bandIsMeanMinMaxOnTheCommonGrid() {
        const std::vector<Series> seeds = {Series::make("a", {{0, 1}, {10, 3}, {20, 5}}),
                                           Series::make("b", {{0, 3}, {10, 5}, {20, 7}}),
                                           Series::make("c", {{0, 2}, {5, 2}, {20, 2}})};
        const BandSeries band = aggregateBand("cfg", seeds);
        QCOMPARE(band.members, 3);
        QCOMPARE(band.mean->size(), size_t(4));  // x = 0, 5, 10, 20
        // x = 5: a and b interpolated (2 and 4), c exact (2).
        QCOMPARE((*band.mean)[1], QPointF(5, (2.0 + 4.0 + 2.0) / 3));
        QCOMPARE((*band.lower)[1], QPointF(5, 2.0));
        QCOMPARE((*band.upper)[1], QPointF(5, 4.0));
        QCOMPARE((*band.mean)[3], QPointF(20, (5.0 + 7.0 + 2.0) / 3));
        QCOMPARE((*band.upper)[3], QPointF(20, 7.0));
    }

    void bandCountsOnlyMembersCoveringAnX() {
        const std::vector<Series> seeds = {Series::make("short", {{0, 1}, {10, 1}}), Series::make("long", {{0, 3}, {30, 3}})};
        const BandSeries band = aggregateBand("g", seeds);
        QCOMPARE(band.mean->back(), QPointF(30, 3.0));  // only "long" reaches x = 30
        QCOMPARE((*band.mean)[1], QPointF(10, 2.0));
    }

    void windowMeansAverageEachCategory() {
        BreakdownData d;
        BreakdownCategory input{"input", {}}, forward{"forward", {}};
        for (int s = 1; s <= 100; ++s) {
            d.steps.push_back(s);
            input.seconds.push_back(s <= 50 ? 0.01 : 0.03);
            forward.seconds.push_back(0.02);
        }
        d.categories = {input, forward};
        const auto w = windowMeans(d, 1, 100, 4);
        QCOMPARE(w.size(), size_t(4));
        QCOMPARE(w[0].steps, size_t(25));
        QCOMPARE(w[0].firstStep, 1.0);
        QCOMPARE(w[0].lastStep, 25.0);
        QCOMPARE(w[0].xEnd, 26.0);
        QVERIFY(qFuzzyCompare(w[0].means[0], 0.01));
        QVERIFY(qFuzzyCompare(w[3].means[0], 0.03));
        QVERIFY(qFuzzyCompare(w[1].total(), 0.03));
        // Fewer steps than windows: a window per step.
        QCOMPARE(windowMeans(d, 10, 14, 50).size(), size_t(5));
        QVERIFY(windowMeans(d, 200, 300, 10).empty());
    }
};

QTEST_MAIN(DownsampleTest)
#include "downsample_test.moc"
