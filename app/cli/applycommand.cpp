// `trainbench-cli apply RUN --action N`: turns one of a run's ranked actions into a new experiment
// file (the run's own experiment with the action's changes), validates it, and can run it.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/applyloadtest.h"
#include "app/cli/applyprediction.h"
#include "app/loadtest/servingrunverdict.h"
#include "app/cli/commands.h"
#include "app/run/exitcodes.h"
#include "app/cli/storeaccess.h"
#include "app/experiment/actionexperiment.h"
#include "app/experiment/experiment.h"
#include "app/experiment/experimenterror.h"
#include "engine/io/atomicfilewriter.h"
#include "engine/util/errors.h"
#include "profiler/store/storeerror.h"
#include "profiler/verdict/verdict.h"

namespace trainbench::cli {

int applyCommand(const ApplyArgs& args, const StopSignals& signals) {
    int code = kExitOk;
    auto store = openExisting(args.db, code, /*emptyIsOk=*/false);
    if (!store) return code;
    std::string output;
    try {
        auto r = findOrComplain(*store, args.run, code);
        if (!r) return code;
        if (r->kind == "serve") {  // a load test: its action is a new load test
            const profiler::ServingVerdict sv = app::servingVerdictOf(*store, *r);
            const int count = static_cast<int>(sv.actions.size());
            if (args.action < 1 || args.action > count) {
                std::fprintf(stderr, "load test %lld has %d action(s); --action %d is not one of them (trainbench-cli "
                             "profile %lld lists them)\n", static_cast<long long>(r->id.value), count, args.action,
                             static_cast<long long>(r->id.value));
                return kExitUsage;
            }
            const profiler::ServingAction& a = sv.actions[static_cast<size_t>(args.action - 1)];
            LoadTestArgs lt = loadtestForAction(*r, a, args.db, args.action);
            std::printf("%s\n", a.title.c_str());
            for (const profiler::FlagChange& c : a.changes)
                std::printf("  %s: %s -> %s\n", c.flag.c_str(), c.from.empty() ? "(default)" : c.from.c_str(), c.to.c_str());
            std::printf("  as a load test: %s\n", loadtestCommandLine(lt).c_str());
            if (!args.runNow) return kExitOk;
            lt.quiet = args.quiet;
            return loadtestCommand(lt, signals);
        }
        std::optional<profiler::Verdict> v = store->verdict(r->id);
        if (!v) {
            const profiler::ProfileInput in = store->profileInput(r->id);
            if (in.steps.empty()) {
                std::fprintf(stderr, "run %lld recorded no steps: there is no verdict and no action\n",
                             static_cast<long long>(r->id.value));
                return kExitUsage;
            }
            v = profiler::classify(in);
            keepVerdict(*store, r->id, *v);
        }
        const int count = static_cast<int>(v->actions.size());
        if (args.action < 1 || args.action > count) {
            std::fprintf(stderr, "run %lld has %d action(s); --action %d is not one of them (trainbench-cli profile %lld "
                         "lists them)\n", static_cast<long long>(r->id.value), count, args.action,
                         static_cast<long long>(r->id.value));
            return kExitUsage;
        }
        const profiler::Action& a = v->actions[static_cast<size_t>(args.action - 1)];
        if (a.changes.empty()) {
            std::fprintf(stderr, "action %d (%s) changes nothing in the experiment file (hardware or the "
                         "model's design): there is nothing to apply\n", args.action, a.title.c_str());
            return kExitUsage;
        }
        std::string refusal;
        if (std::optional<PredictArgs> p = predictionForAction(*store, *r, a, args.action, refusal)) {
            // A prediction run: the action is a new prediction, not an experiment file.
            std::printf("%s\n", a.title.c_str());
            for (const profiler::Change& c : a.changes) std::printf("  %s\n", app::changeText(c).c_str());
            std::printf("  as a prediction: %s\n", predictCommandLine(*p).c_str());
            if (!args.runNow) return kExitOk;
            p->quiet = args.quiet;
            return predictCommand(*p, signals);
        }
        if (!refusal.empty()) {
            std::fprintf(stderr, "run %lld is a prediction: %s\n", static_cast<long long>(r->id.value), refusal.c_str());
            return kExitUsage;
        }
        const nlohmann::json experiment = app::experimentForAction(*r, a, args.action);
        const std::string suffix = "-action" + std::to_string(args.action);
        output = args.output.empty() ? r->name + suffix + ".json" : args.output;
        const std::string text = experiment.dump(2) + "\n";
        // Nothing is written unless the result is a valid experiment.
        app::parseExperiment(text, output);
        try {
            engine::writeFileAtomically(output, text, {.what = "experiment file"});
        } catch (const engine::FileWriteError& e) {
            std::fprintf(stderr, "%s\n", e.what());
            return kExitIo;
        }
        std::printf("wrote %s: %s\n", output.c_str(), a.title.c_str());
        for (const profiler::Change& c : a.changes) std::printf("  %s\n", app::changeText(c).c_str());
        if (!a.expected.empty()) std::printf("  expected: %s\n", a.expected.c_str());
    } catch (const app::ExperimentError& e) {
        std::fprintf(stderr, "the changed experiment is not valid, nothing written:\n%s\n", e.what());
        return kExitUsage;
    } catch (const profiler::StoreError& e) {
        std::fprintf(stderr, "run store error: %s\n", e.what());
        return kExitStore;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "cannot apply the action: %s\n", e.what());
        return kExitUsage;
    }
    if (!args.runNow) return kExitOk;
    RunArgs run;
    run.file = output;
    run.db = args.db;
    run.quiet = args.quiet;
    return runCommand(run, signals);
}

}  // namespace trainbench::cli
