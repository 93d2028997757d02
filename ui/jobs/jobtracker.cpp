#include "ui/jobs/jobtracker.h"

namespace trainbench::ui {

JobTracker::JobTracker(int maxThreads) { pool_.setMaxThreadCount(maxThreads); }

JobTracker::~JobTracker() {
    cancelAll();
    pool_.waitForDone();
    // receiver_ goes after this: a delivery still queued for it is discarded with it.
}

JobId JobTracker::add() {
    std::lock_guard lock(mutex_);
    pending_.insert(++lastId_);
    return lastId_;
}

void JobTracker::cancel(JobId id) {
    std::lock_guard lock(mutex_);
    pending_.erase(id);
}

void JobTracker::cancelAll() {
    {
        std::lock_guard lock(mutex_);
        pending_.clear();
    }
    pool_.clear();  // jobs that have not started never will
}

bool JobTracker::isPending(JobId id) const {
    std::lock_guard lock(mutex_);
    return pending_.count(id) > 0;
}

bool JobTracker::idle() const {
    std::lock_guard lock(mutex_);
    return pending_.empty();
}

bool JobTracker::take(JobId id) {
    std::lock_guard lock(mutex_);
    return pending_.erase(id) > 0;
}

void JobTracker::post(JobId id, std::function<void()> deliver) {
    // Checked again on the receiving thread: a cancel that comes after this post still wins.
    QMetaObject::invokeMethod(
        &receiver_,
        [this, id, deliver = std::move(deliver)] {
            if (take(id)) deliver();
        },
        Qt::QueuedConnection);
}

}  // namespace trainbench::ui
