#pragma once
// The GUI's one way to run work off the GUI thread (as KDAB hotspot's jobtracker.h): every job gets
// an id; its result comes back queued, as a call on the thread that made the tracker (the GUI
// thread), and is dropped if the job was cancelled first: by cancel(id), cancelAll(), a newer
// startLatest() or the tracker's end. Jobs must not touch widgets; cross with whole values.
#include <functional>
#include <mutex>
#include <set>
#include <type_traits>
#include <utility>

#include <QObject>
#include <QThreadPool>

namespace trainbench::ui {

using JobId = quint64;

class JobTracker {
public:
    // At most maxThreads jobs run at once; the others wait in order.
    explicit JobTracker(int maxThreads = 1);
    // Cancels every job and waits for those already running (they touch only their own values).
    ~JobTracker();
    JobTracker(const JobTracker&) = delete;
    JobTracker& operator=(const JobTracker&) = delete;

    // Runs job() on a worker thread, then deliver(result) on this tracker's thread unless the job
    // was cancelled before that call. Returns at once.
    template <class Job, class Deliver>
    JobId start(Job job, Deliver deliver);
    // The same, after cancelling every earlier job: only the newest request's result arrives.
    template <class Job, class Deliver>
    JobId startLatest(Job job, Deliver deliver) {
        cancelAll();
        return start(std::move(job), std::move(deliver));
    }

    void cancel(JobId id);
    void cancelAll();  // also drops the jobs that have not started
    // Neither delivered nor cancelled yet. Any thread.
    bool isPending(JobId id) const;
    bool idle() const;  // no job pending

private:
    JobId add();
    bool take(JobId id);  // on delivery: true (and no longer pending) if the job is still wanted
    void post(JobId id, std::function<void()> deliver);

    QObject receiver_;  // lives on the tracker's thread; queued deliveries die with it
    mutable std::mutex mutex_;
    JobId lastId_ = 0;
    std::set<JobId> pending_;
    QThreadPool pool_;  // last: destroyed (and so waited for) first
};

template <class Job, class Deliver>
JobId JobTracker::start(Job job, Deliver deliver) {
    using Result = std::invoke_result_t<Job&>;
    const JobId id = add();
    pool_.start([this, id, job = std::move(job), deliver = std::move(deliver)]() mutable {
        if (!isPending(id)) return;  // cancelled before it started
        Result result = job();
        post(id, [deliver = std::move(deliver), result = std::move(result)]() mutable { deliver(std::move(result)); });
    });
    return id;
}

}  // namespace trainbench::ui
