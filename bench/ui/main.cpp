// trainbench-ui-bench: chart redraw timings on the offscreen platform (see bench/README.md).
#include "bench/ui/latencybench.h"
#include "bench/ui/redrawbench.h"
#include "bench/ui/startupbench.h"

#include <CLI/CLI.hpp>
#include <QApplication>

int main(int argc, char** argv) {
    // Timings of the widgets themselves: no display needed, and none used if there is one.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    CLI::App cli{"trainbench-ui-bench: how fast the GUI's charts redraw"};
    cli.require_subcommand(1);
    trainbench::bench::RedrawOptions redraw;
    auto* cmd = cli.add_subcommand("redraw", "zoom a 1,000,000-point series: re-bucket + replace + render, median and p95");
    cmd->add_option("--points", redraw.points, "points in the series")->check(CLI::Range(2, 100'000'000));
    cmd->add_option("-R,--repetitions", redraw.repetitions, "zooms timed")->check(CLI::Range(1, 10'000));
    cmd->add_option("--width", redraw.width, "chart width (px)")->check(CLI::Range(200, 8000));
    cmd->add_option("--height", redraw.height, "chart height (px)")->check(CLI::Range(150, 8000));
    cmd->add_option("--comparator-points", redraw.comparatorPoints, "series length for the no-downsampling comparator (0: skip)")
        ->check(CLI::Range(0, 10'000'000));
    cmd->add_option("--comparator-repetitions", redraw.comparatorRepetitions, "zooms timed for the comparator")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--seed", redraw.seed, "zoom ranges and data noise");
    trainbench::bench::StartupOptions startup;
    auto* start = cli.add_subcommand("startup", "start the trainbench program on a store of 1,000 runs until its window "
                                                "lists them: median and p95, against an empty store");
    start->add_option("--runs", startup.runs, "runs in the generated store")->check(CLI::Range(1, 1'000'000));
    start->add_option("--steps", startup.stepsPerRun, "steps per generated run")->check(CLI::Range(1, 1'000'000));
    start->add_option("-R,--repetitions", startup.repetitions, "starts timed")->check(CLI::Range(1, 1000));
    start->add_option("--db", startup.db, "start on this store instead of a generated one");
    start->add_option("--program", startup.program, "the trainbench binary (default: the one built alongside)");
    trainbench::bench::LatencyOptions latency;
    auto* lat = cli.add_subcommand("latency", "event-loop latency of the window following a live W1 run: p50, p99, "
                                              "max, against an idle window");
    lat->add_option("--seconds", latency.seconds, "measured per case")->check(CLI::Range(1, 3600));
    lat->add_option("--run-threads", latency.runThreads, "the run's compute threads")->check(CLI::Range(1, 256));
    lat->add_flag("!--no-interact", latency.interact, "do not zoom the loss chart during the measurement");
    CLI11_PARSE(cli, argc, argv);

    QApplication app(argc, argv);
    if (start->parsed()) return trainbench::bench::runStartupBench(startup);
    if (lat->parsed()) return trainbench::bench::runLatencyBench(latency);
    return trainbench::bench::runRedrawBench(redraw);
}
