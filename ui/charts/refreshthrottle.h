#pragma once
// Coalesces redraw requests: a chart fed by a live run (or a wheel spinning) redraws at most
// maxHz times a second, always from the event loop, never inside the caller's stack.
#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <functional>

namespace trainbench::ui {

class RefreshThrottle : public QObject {
    Q_OBJECT
public:
    explicit RefreshThrottle(std::function<void()> refresh, int maxHz = 30, QObject* parent = nullptr);

    // Asks for one run of the callback: as soon as the event loop gets to it when the last run
    // is older than 1/maxHz, otherwise at the end of that interval. Requests in between merge.
    void request();
    // Runs the callback now if a request is pending (before an export, in tests).
    void flush();
    bool pending() const { return pending_; }
    int intervalMs() const { return intervalMs_; }

private:
    void run();

    std::function<void()> refresh_;
    int intervalMs_;
    bool pending_ = false;
    QTimer timer_;
    QElapsedTimer last_;
};

}  // namespace trainbench::ui
