#pragma once
// `trainbench-ui-bench latency`: the window's event-loop latency while it follows a live run. The
// window launches a real W1 run (its own process) and shows its dashboard; a 5 ms precise timer
// measures how late each tick fires (the time the event loop was busy) while the user zooms a chart
// now and then. p50, p99 and max against the 50 ms goal; the same window with no run is the
// comparator.
namespace trainbench::bench {

struct LatencyOptions {
    int seconds = 20;      // measured while the run trains
    int runThreads = 1;    // the run's compute threads (the GUI keeps the other core)
    bool interact = true;  // zoom the loss chart every 250 ms
};

int runLatencyBench(const LatencyOptions& options);

}  // namespace trainbench::bench
