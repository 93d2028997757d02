#include "ui/charts/refreshthrottle.h"

#include <algorithm>

namespace trainbench::ui {

RefreshThrottle::RefreshThrottle(std::function<void()> refresh, int maxHz, QObject* parent)
    : QObject(parent), refresh_(std::move(refresh)), intervalMs_(1000 / std::max(maxHz, 1)) {
    timer_.setSingleShot(true);
    connect(&timer_, &QTimer::timeout, this, &RefreshThrottle::run);
}

void RefreshThrottle::request() {
    pending_ = true;
    if (timer_.isActive()) return;
    const qint64 since = last_.isValid() ? last_.elapsed() : intervalMs_;
    timer_.start(int(std::max<qint64>(0, intervalMs_ - since)));
}

void RefreshThrottle::flush() {
    if (!pending_) return;
    timer_.stop();
    run();
}

void RefreshThrottle::run() {
    if (!pending_) return;
    pending_ = false;
    last_.start();
    refresh_();
}

}  // namespace trainbench::ui
