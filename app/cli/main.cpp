// trainbench-cli: everything trainbench does, headless. See docs/cli.md.
#include <CLI/CLI.hpp>

#include "app/cli/commands.h"
#include "app/cli/exitcodes.h"
#include "app/cli/stopsignals.h"
#include "app/run/paths.h"

int main(int argc, char** argv) {
    using namespace trainbench;
    cli::StopSignals signals;  // before any thread starts, so every thread inherits the blocked mask
    CLI::App app{"trainbench-cli: train, profile and compare models from the command line"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "trainbench 0.1.0");
    const std::string defaultDb = app::defaultRunStorePath();

    cli::RunArgs run;
    auto* runCmd = app.add_subcommand("run", "Train an experiment file and record it in the run store");
    runCmd->add_option("file", run.file, "Experiment file (JSON), see docs/experiment-format.md")->required();
    runCmd->add_option("--db", run.db, "Run store (SQLite file)")->default_str(defaultDb);
    runCmd->add_option("--set", run.overrides, "Override a key: --set train.epochs=2 (repeatable)")
        ->allow_extra_args(false);
    runCmd->add_flag("-q,--quiet", run.quiet, "No progress output; print only the summary");

    std::string validateFile;
    std::vector<std::string> validateOverrides;
    auto* validateCmd = app.add_subcommand("validate", "Check an experiment file without running it");
    validateCmd->add_option("file", validateFile, "Experiment file (JSON)")->required();
    validateCmd->add_option("--set", validateOverrides, "Override a key (repeatable)")->allow_extra_args(false);

    std::string db = defaultDb, status;
    int limit = 0;
    auto* runsCmd = app.add_subcommand("runs", "List the runs in the store, newest first");
    runsCmd->add_option("--db", db, "Run store (SQLite file)")->default_str(defaultDb);
    runsCmd->add_option("--status", status, "Only runs with this status (running, completed, failed, interrupted, stopped)");
    runsCmd->add_option("-n,--limit", limit, "Show at most N runs");

    std::string showRun;
    auto* showCmd = app.add_subcommand("show", "Summary and evaluation curve of one run");
    showCmd->add_option("run", showRun, "Run id or name")->required();
    showCmd->add_option("--db", db, "Run store (SQLite file)")->default_str(defaultDb);

    cli::ExportArgs exp;
    bool csv = false;
    auto* exportCmd = app.add_subcommand("export", "Export a run's series");
    exportCmd->add_option("run", exp.run, "Run id or name")->required();
    exportCmd->add_option("--db", exp.db, "Run store (SQLite file)")->default_str(defaultDb);
    exportCmd->add_flag("--csv", csv, "CSV output (the only format so far)")->required();
    exportCmd->add_option("--series", exp.what, "steps or evals")->check(CLI::IsMember({"steps", "evals"}));
    exportCmd->add_option("-o,--output", exp.output, "Write to this file instead of standard output");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? cli::kExitOk : cli::kExitUsage;
    }
    if (run.db.empty()) run.db = defaultDb;
    if (exp.db.empty()) exp.db = defaultDb;
    if (db.empty()) db = defaultDb;

    if (*runCmd) return cli::runCommand(run, signals);
    if (*validateCmd) return cli::validateCommand(validateFile, validateOverrides);
    if (*runsCmd) return cli::runsCommand(db, status, limit);
    if (*showCmd) return cli::showCommand(db, showRun);
    if (*exportCmd) return cli::exportCommand(exp);
    return cli::kExitUsage;
}
