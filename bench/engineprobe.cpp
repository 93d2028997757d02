// trainbench-bench: measures, side by side in one process,
//  * `step-vs-primitives`: a full W1 (fmnist-mlp) training step against the same step's oneDNN
//    inner-product primitives alone (fwd, bwd-weights, bwd-data of every Dense layer) — the ceiling
//    for this model on this machine; the ratio says how lean the rest of the step is;
//  * `roofs`: peak fp32 GFLOP/s of a large oneDNN matmul and STREAM-triad GB/s (the roofline's roofs);
//  * `csv-parse`, `image-decode`: input-pipeline sources on one thread (bench/sourcesprobe.cpp).
//  * `crc32c`, `tfrecord-read`: the input pipeline's record layer (recordsprobe.cpp).
//  * `mirrored`: the mirrored strategy against one device (strategybench.cpp).
//  * `allreduce`: raw Gloo all-reduce vs GlooCollective::allReduceSum between local processes
//    (allreducebench.cpp).
//  * `allreduce-mpi`: raw MPI_Allreduce vs MpiCollective vs GlooCollective under mpirun
//    (mpiallreducebench.cpp).
//  * `step-loop`, `instrumentation-cost`: what the profiler's instrumentation costs W1's training
//    loop, compiled out vs always-on vs tracing every step, in child processes (steploop.cpp,
//    instrumentationcost.cpp); `classify`: reclassifying a stored 10,000-step run (classifybench.cpp).
//  * `serving-batching`, `serving-idle`: the inference server's dynamic batching and its behaviour
//    under many idle connections (servingbench.cpp).
//  * `onnx-import`: reading an ONNX model with its weights against python3-onnx's onnx.load
//    (onnximportbench.cpp).
//  * `scaling`: the scaling sweep of multi_worker (sync) and parameter_server (async) over 1, 2, 4
//    workers on W1 and W2, through trainbench-cli into a run store (scalingbench.cpp).
// Timings alternate A, B, A, B ... and report medians, so machine drift hits both sides alike.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/allreducebench.h"
#include "bench/mpiallreducebench.h"
#include "bench/benchutil.h"
#include "bench/classifybench.h"
#include "bench/inputbench.h"
#include "bench/scalingbench.h"
#include "bench/servedmodelbench.h"
#include "bench/servingbench.h"
#include "bench/sourcesprobe.h"
#include "bench/hostmodelbench.h"
#include "bench/encoderbench.h"
#include "bench/importedmodelbench.h"
#include "bench/inferencebench.h"
#include "bench/kernelfitbench.h"
#include "bench/onnximportbench.h"
#include "bench/steploop.h"
#include "bench/strategybench.h"
#include "engine/data/batcher.h"
#include "engine/data/imagedataset.h"
#include "engine/device/cpudevice.h"
#include "engine/layers/dense.h"
#include "engine/layers/softmaxcrossentropy.h"
#include "engine/model/model.h"
#include "engine/optim/optimizer.h"
#include "recordsprobe.h"

using namespace trainbench::engine;
using Clock = std::chrono::steady_clock;

namespace {

using trainbench::bench::median;
template <typename F>
double timeIt(F&& f) {
    auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

int stepVsPrimitives(int threads, int rounds, int stepsPerRound, int block, bool unfused) {
    CpuDevice dev(threads);
    DataConfig data;
    ImageDataset train = loadIdxDataset(data, true);
    const int64_t batch = 128;
    ModelSpec spec;
    spec.preset = "mlp";
    spec.layers = presetLayers("mlp");
    Model model(spec, {1, 28, 28}, 10, dev, 42);
    OptimizerConfig oc;
    auto opt = Optimizer::create(oc, model.paramCount());
    Batcher batcher(train, batch, true, true, 42);
    AlignedBuffer x(static_cast<size_t>(batch * 784));
    std::vector<int32_t> y(batch);
    Tensor grad(Tensor::plainDesc({batch, 10}), dev.engine());
    int64_t step = 0;
    auto fullStep = [&] {
        if (batcher.next(x.data(), y.data()) == 0) {
            batcher.startEpoch(batcher.epoch() + 1);
            batcher.next(x.data(), y.data());
        }
        ++step;
        Tensor& logits = model.forward(x.data(), batch, true);
        batcher.prefetchNext();
        SoftmaxCrossEntropy::compute(logits, y.data(), &grad);
        if (unfused) {
            model.backward(grad);
            opt->step(model.params(), model.grads(), model.paramCount(), step);
            return;
        }
        // Exactly as the trainer does it: each layer updated as soon as its gradients are final.
        model.backward(grad, [&](int64_t first, int64_t count) {
            opt->update(model.params(), model.grads(), first, first + count, step);
        });
    };

    // The same inner-product primitives, standalone: Dense layers of W1's shapes, same flags.
    AlignedBuffer p(static_cast<size_t>(model.paramCount())), g(static_cast<size_t>(model.paramCount()));
    std::vector<std::unique_ptr<Dense>> dense;
    std::vector<Tensor> inputs, gradsOut;
    int64_t off = 0;
    for (auto [in, out] : {std::pair<int64_t, int64_t>{784, 512}, {512, 256}, {256, 10}}) {
        auto d = std::make_unique<Dense>(dev, Dims{in}, out, true);
        d->setNeedsInputGrad(in != 784);
        d->bindParams(p.data() + off, g.data() + off);
        off += d->paramCount();
        inputs.emplace_back(Tensor::plainDesc({batch, in}), dev.engine());
        gradsOut.emplace_back(Tensor::plainDesc({batch, out}), dev.engine());
        dense.push_back(std::move(d));
    }
    auto primitivesOnly = [&] {
        for (size_t i = 0; i < dense.size(); ++i) dense[i]->forward(inputs[i], true);
        for (size_t i = dense.size(); i-- > 0;) dense[i]->backward(gradsOut[i]);
    };

    for (int i = 0; i < 30; ++i) { fullStep(); primitivesOnly(); }  // warm up plans and caches

    // Where the full step's time goes, phase by phase (medians over the same number of steps).
    std::vector<double> tb, tf, tl, tbw, to;
    for (int i = 0; i < rounds * stepsPerRound; ++i) {
        auto t0 = Clock::now();
        if (batcher.next(x.data(), y.data()) == 0) {
            batcher.startEpoch(batcher.epoch() + 1);
            batcher.next(x.data(), y.data());
        }
        auto t1 = Clock::now();
        Tensor& logits = model.forward(x.data(), batch, true);
        batcher.prefetchNext();
        auto t2 = Clock::now();
        SoftmaxCrossEntropy::compute(logits, y.data(), &grad);
        auto t3 = Clock::now();
        ++step;
        double optSeconds = 0.0;
        model.backward(grad, [&](int64_t first, int64_t count) {
            auto u0 = Clock::now();
            opt->update(model.params(), model.grads(), first, first + count, step);
            optSeconds += std::chrono::duration<double>(Clock::now() - u0).count();
        });
        auto t4 = Clock::now();
        auto d = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count() * 1e3; };
        tb.push_back(d(t0, t1)); tf.push_back(d(t1, t2)); tl.push_back(d(t2, t3));
        tbw.push_back(d(t3, t4) - optSeconds * 1e3);
        to.push_back(optSeconds * 1e3);
    }
    std::printf("  phases (median ms): batch %.3f  forward %.3f  loss %.3f  backward %.3f  optimizer (in backward) %.3f\n",
                median(tb), median(tf), median(tl), median(tbw), median(to));
    // Alternate blocks of `block` steps (A x block, B x block, ...) so drift of this shared machine hits
    // both alike. Within a block each side runs back to back as training does; the first two steps
    // after a switch refill the caches the other side used and are not counted (with --block 1 every
    // step alternates and all are counted: each side then starts cold, which training never does).
    // Report medians of per-step times and the median of per-block-pair ratios.
    const int warm = block > 2 ? 2 : 0;
    std::vector<double> full, prim, ratio;
    for (int done = 0; done < rounds * stepsPerRound; done += block) {
        std::vector<double> a, b;
        for (int i = 0; i < block; ++i) {
            const double t = timeIt(fullStep);
            if (i >= warm) a.push_back(t);
        }
        for (int i = 0; i < block; ++i) {
            const double t = timeIt(primitivesOnly);
            if (i >= warm) b.push_back(t);
        }
        full.insert(full.end(), a.begin(), a.end());
        prim.insert(prim.end(), b.begin(), b.end());
        ratio.push_back(median(a) / median(b));
    }
    const double f = median(full), q = median(prim);
    std::printf("W1 step vs its inner-product primitives, %d thread(s), batch %lld, %d x %d steps each, alternating in "
                "blocks of %d (medians)\n",
                threads, static_cast<long long>(batch), rounds, stepsPerRound, block);
    std::printf("  full training step        %8.3f ms  (%.0f samples/s)\n", f * 1e3, batch / f);
    std::printf("  inner-product primitives  %8.3f ms  (%.0f samples/s)\n", q * 1e3, batch / q);
    std::printf("  ratio step / primitives   %8.3f  (median of per-block ratios %.3f; goal <= 1.20)\n", f / q,
                median(ratio));
    return 0;
}

int roofs(int threads, int rounds) {
    CpuDevice dev(threads);
    const int64_t n = 2048;
    dnnl::memory::desc md = Tensor::plainDesc({n, n});
    Tensor a(md, dev.engine()), b(md, dev.engine()), c(md, dev.engine());
    std::fill(a.data(), a.data() + n * n, 0.5f);
    std::fill(b.data(), b.data() + n * n, 0.25f);
    dnnl::matmul mm(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), dev.engine()));
    auto runMm = [&] {
        mm.execute(dev.stream(), {{DNNL_ARG_SRC, a.mem()}, {DNNL_ARG_WEIGHTS, b.mem()}, {DNNL_ARG_DST, c.mem()}});
        dev.stream().wait();
    };
    // STREAM triad a = b + s*c over arrays far larger than the caches.
    const size_t m = size_t{1} << 25;  // 32 Mi floats = 128 MiB per array
    AlignedBuffer ta(m), tb(m), tc(m);
    std::fill(tb.data(), tb.data() + m, 1.0f);
    std::fill(tc.data(), tc.data() + m, 2.0f);
    auto triad = [&] {
        float* pa = ta.data();
        const float* pb = tb.data();
        const float* pc = tc.data();
#pragma omp parallel for simd schedule(static) num_threads(threads)
        for (size_t i = 0; i < m; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    };
    runMm();
    triad();
    std::vector<double> mmT, trT;
    for (int r = 0; r < rounds; ++r) {
        mmT.push_back(timeIt(runMm));
        trT.push_back(timeIt(triad));
    }
    const double gflops = 2.0 * n * n * n / median(mmT) / 1e9;
    const double gbs = 3.0 * m * sizeof(float) / median(trT) / 1e9;
    std::printf("machine roofs, %d thread(s): matmul %lldx%lld fp32 %.1f GFLOP/s, STREAM triad %.1f GB/s\n", threads,
                static_cast<long long>(n), static_cast<long long>(n), gflops, gbs);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"trainbench-bench: engine micro benchmarks, side by side"};
    app.require_subcommand(1);
    int threads = 2, rounds = 15, steps = 50;
    bool unfused = false;
    auto* svp = app.add_subcommand("step-vs-primitives", "W1 training step vs its inner-product primitives alone");
    svp->add_option("-t,--threads", threads);
    svp->add_option("-r,--rounds", rounds);
    svp->add_option("-s,--steps", steps, "steps per round");
    int block = 25;
    svp->add_option("--block", block, "steps per side before switching (1: alternate every step, all counted)")
        ->check(CLI::Range(1, 100000));
    svp->add_flag("--unfused", unfused, "optimizer after the whole backward pass instead of layer by layer");
    auto* rf = app.add_subcommand("roofs", "peak matmul GFLOP/s and STREAM-triad GB/s");
    rf->add_option("-t,--threads", threads);
    rf->add_option("-r,--rounds", rounds);
    std::string dir = "/tmp";
    int csvRounds = 3, images = 10000;
    auto* csv = app.add_subcommand("csv-parse", "CSV read + parse throughput, 60000 x 785 (Fashion-MNIST-like), 1 thread");
    csv->add_option("--dir", dir, "where to write the temporary CSV file");
    csv->add_option("-r,--rounds", csvRounds);
    auto* img = app.add_subcommand("image-decode", "decode time of a 28x28 grey PNG, 1 thread");
    img->add_option("-n,--images", images);
    img->add_option("-r,--rounds", csvRounds);
    int mib = 64;
    auto* crc = app.add_subcommand("crc32c", "CRC-32C GB/s: hardware instruction vs portable tables");
    crc->add_option("-r,--rounds", rounds);
    crc->add_option("--mib", mib, "buffer size in MiB");
    bool zlib = false;
    std::string file;
    int readThreads = 1;
    auto* tfr = app.add_subcommand("tfrecord-read", "TFRecord read and read + decodeExample of Fashion-MNIST");
    tfr->add_option("-t,--threads", readThreads, "readers, each over the whole file");
    tfr->add_option("-r,--rounds", rounds);
    tfr->add_flag("--zlib", zlib, "write and read the file zlib-compressed");
    tfr->add_option("--file", file, "where to write the TFRecord file (kept); default a temp file");
    std::string dataDir = "data";
    int64_t limit = 0;
    int streams = 8;
    auto* ir = app.add_subcommand("input-read", "TFRecord shards vs gzip IDX: read + parse to batches, page cache");
    ir->add_option("-t,--threads", threads);
    int inputRounds = 5;
    ir->add_option("-r,--rounds", inputRounds);
    ir->add_option("--data", dataDir, "folder made by scripts/prepare-io-data.sh");
    std::string side = "both";
    ir->add_option("--side", side, "tfrecord, idx or both (for profiling one side)");
    trainbench::bench::InputReadKnobs knobs;
    ir->add_option("--batch", knobs.batch, "batch size (default 128, W1's)");
    ir->add_option("--cycle", knobs.cycle, "files read at once (default: threads)");
    ir->add_option("--map", knobs.map, "map_parallel_calls (default: threads)");
    ir->add_option("--prefetch", knobs.prefetch, "prefetch depth (default 2)");
    auto* sf = app.add_subcommand("small-files", "one file per example vs 16 shards on the emulated cloud store");
    sf->add_option("--streams", streams, "parallel reads for both layouts");
    sf->add_option("--limit", limit, "read only the first N one-example files (0 = all)");
    sf->add_option("--data", dataDir, "folder made by scripts/prepare-io-data.sh");
    std::string preset = "cnn";
    int replicas = 2;
    int64_t batch = 128;
    auto* mir = app.add_subcommand("mirrored", "mirrored replicas x 1 thread vs one device with 1 and with N threads");
    mir->add_option("--model", preset, "model preset (cnn = W2, mlp = W1)");
    mir->add_option("--replicas", replicas);
    mir->add_option("-r,--rounds", rounds);
    mir->add_option("-s,--steps", steps, "steps per round");
    mir->add_option("--batch", batch, "global batch");
    int ranks = 2, rank = 0;
    double allreduceSeconds = 2.0;
    std::string store;
    auto* ar = app.add_subcommand("allreduce", "raw Gloo all-reduce vs GlooCollective::allReduceSum, local processes");
    ar->add_option("-n,--ranks", ranks, "processes (default 2)");
    ar->add_option("-s,--seconds", allreduceSeconds, "about how long each size runs (default 2)");
    auto* arw = app.add_subcommand("allreduce-worker", "one rank of `allreduce` (started by it)");
    arw->group("");  // internal: not listed in --help
    arw->add_option("--rank", rank)->required();
    arw->add_option("--size", ranks)->required();
    arw->add_option("--store", store)->required();
    arw->add_option("-s,--seconds", allreduceSeconds);
    auto* arm = app.add_subcommand("allreduce-mpi", "raw MPI_Allreduce vs MpiCollective vs GlooCollective, local processes under mpirun");
    arm->add_option("-n,--ranks", ranks, "processes (default 2)");
    arm->add_option("-s,--seconds", allreduceSeconds, "about how long each size runs (default 2)");
    auto* armw = app.add_subcommand("allreduce-mpi-worker", "one rank of `allreduce-mpi` (started by mpirun)");
    armw->group("");
    armw->add_option("-s,--seconds", allreduceSeconds);
    trainbench::bench::ScalingOptions scaling;
#ifdef TRAINBENCH_CLI_PATH
    scaling.cli = TRAINBENCH_CLI_PATH;
#endif
    scaling.experiments = std::string(TRAINBENCH_SOURCE_DIR) + "/experiments";
    std::string workload = "both", asyncBatch = "split";
    auto* sc = app.add_subcommand("scaling", "scaling sweep: sync (multi_worker) vs async (parameter_server)");
    sc->add_option("--workload", workload, "w1, w2 or both")->check(CLI::IsMember({"w1", "w2", "both"}));
    sc->add_option("--workers", scaling.workers, "worker counts (default 1,2,4)")->delimiter(',');
    sc->add_option("--modes", scaling.modes, "single, sync, async, sync-mpi, mirrored (default sync,async)")->delimiter(',');
    sc->add_option("--db", scaling.db, "run store the runs are recorded in (default scaling.db)");
    sc->add_option("--max-epochs", scaling.maxEpochs, "epoch cap of a run that does not reach the target (default 10)");
    sc->add_option("--servers", scaling.servers, "async: parameter servers (default 1)");
    sc->add_option("--threads", scaling.threads, "compute threads per worker (default 1)");
    sc->add_option("--async-batch", asyncBatch, "async worker batch: split (batch / N, default) or full (batch)")
        ->check(CLI::IsMember({"split", "full"}));
    sc->add_option("-r,--repeats", scaling.repeats, "rounds over all points; medians (default 1)");
    sc->add_flag("--quick", scaling.quick, "smoke test: a step limit, no evaluation, no target");
    sc->add_option("--steps", scaling.quickSteps, "step limit of --quick (default 200)");
    sc->add_option("--cli", scaling.cli, "trainbench-cli to run (default: the one built with this tool)");
    sc->add_option("--experiments", scaling.experiments, "folder with fmnist-mlp.json and fmnist-cnn.json");
    trainbench::bench::StepLoopOptions loop;
    auto* sl = app.add_subcommand("step-loop", "W1 trained by the real Trainer loop, timed (one JSON line out)");
    sl->add_option("-t,--threads", loop.threads, "compute threads (default 1)");
    sl->add_option("-s,--steps", loop.steps, "training steps (default 2000)");
    sl->add_option("--skip", loop.skip, "warm-up steps not timed (default 20)");
    sl->add_flag("--trace", loop.trace, "trace every step (Chrome trace, drained every step; needs profiling)");
    sl->add_option("--trace-out", loop.traceOut, "keep the trace in this file (default: a temp file, removed)");
    trainbench::bench::InstrumentationCostOptions cost;
    cost.noprof = std::string(TRAINBENCH_SOURCE_DIR) + "/build/noprof/bench/trainbench-bench";
    auto* ic = app.add_subcommand("instrumentation-cost",
                                  "step-loop compiled out vs always-on profiling vs tracing, alternating child processes");
    ic->add_option("--noprof", cost.noprof, "trainbench-bench of the noprof preset (default: build/noprof in the source tree)");
    ic->add_option("-t,--threads", cost.threads, "thread counts (default 1; e.g. 1,2)")->delimiter(',');
    ic->add_option("-r,--rounds", cost.rounds, "rounds of A, B, C (default 5)");
    ic->add_option("-s,--steps", cost.steps, "steps per child process (default 2000)");
    trainbench::bench::ClassifyBenchOptions cls;
    auto* cb = app.add_subcommand("classify", "reclassify a stored 10,000-step run: open, profileInput, classify, saveVerdict");
    cb->add_option("-s,--steps", cls.steps, "steps of the stored run (default 10000)");
    cb->add_option("-r,--reps", cls.reps, "repetitions (default 7)");
    cb->add_option("--dir", cls.dir, "folder for the temporary run store (default: the temp folder)");
    cb->add_flag("--keep", cls.keep, "keep the run store");
    trainbench::bench::HostModelBenchOptions hostModel;
    hostModel.cli = scaling.cli;
    hostModel.experiments = scaling.experiments;
    std::string hostWorkload = "both";
    auto* hm = app.add_subcommand("host-model", "emulator as this host (cpu-host) vs real single/mirrored/multi_worker runs");
    hm->add_option("--workload", hostWorkload, "w1, w2 or both")->check(CLI::IsMember({"w1", "w2", "both"}));
    hm->add_option("-r,--rounds", hostModel.rounds, "calibration + real run pairs per configuration (default 5)");
    hm->add_option("-s,--steps", hostModel.steps, "steps per real run (default 200)");
    hm->add_option("--db", hostModel.db, "run store for the real runs (default: a fresh one; calibrations go to fresh stores beside it)");
    hm->add_option("--cli", hostModel.cli, "trainbench-cli to run (default: the one built with this tool)");
    trainbench::bench::KernelFitBenchOptions kernelFit;
    auto* kf = app.add_subcommand("kernel-fit", "host model's kernel probes and fit, sample by sample; W1/W2 op by op against it");
    kf->add_option("-t,--threads", kernelFit.threads, "threads per copy (default 1)");
    kf->add_option("-c,--copies", kernelFit.copies, "copies side by side, as replicas (default 1)");
    kf->add_option("--check", kernelFit.check, "workloads timed against the fit (default w1,w2)")->delimiter(',');
    kf->add_option("--batch", kernelFit.batch, "their batch per copy (default 128 / copies)");
    kf->add_flag("!--no-samples", kernelFit.samples, "leave out the probe samples");
    trainbench::bench::ServingBenchOptions serving;
    auto* sb = app.add_subcommand("serving-batching", "inference server: closed-loop clients, max_batch_size 1 vs N");
    sb->add_option("-c,--clients", serving.clients, "closed-loop clients (default 16)");
    sb->add_option("-s,--seconds", serving.seconds, "per side per round (default 3)");
    sb->add_option("-r,--rounds", serving.rounds, "rounds (default 3)");
    sb->add_option("--max-batch", serving.maxBatch, "the batching side's max_batch_size (default 32)");
    sb->add_option("--overhead", serving.overhead, "the servable's per-call work, iterations (default 400000)");
    sb->add_option("--per-example", serving.perExample, "its per-example work (default 4000)");
    auto* si = app.add_subcommand("serving-idle", "inference server: request latency without and with N idle connections");
    si->add_option("-n,--idle", serving.idle, "idle connections (default 10000)");
    si->add_option("--requests", serving.requests, "requests timed per side (default 300)");
    si->add_option("--model", serving.model, "dense (the tests' servable), w1 or w2 (default dense)")
        ->check(CLI::IsMember({"dense", "w1", "w2"}));
    si->add_option("--data", serving.data, "Fashion-MNIST folder, for w1/w2's test images");
    trainbench::bench::InferenceBenchOptions inference;
    inference.peer = std::string(TRAINBENCH_SOURCE_DIR) + "/bench/pytorch_infer.py";
    auto* inf = app.add_subcommand("inference", "fp32 inference of W1 and W2: CompiledGraph vs PyTorch (jit frozen), side by side");
    inf->add_option("--workloads", inference.workloads, "w1, w2 (default both)")->delimiter(',');
    inf->add_option("-t,--threads", inference.threads, "threads of both sides (default 2)");
    inf->add_option("-r,--rounds", inference.rounds, "pairs per workload (default 3)");
    inf->add_option("-q,--queries", inference.queries, "batch-1 queries per side and round (default 2000)");
    inf->add_option("--passes", inference.passes, "timed batch-256 passes over the test set (default 3, best counts)");
    inf->add_option("--peer-arg", inference.peerArgs, "argument for bench/pytorch_infer.py (repeatable)");
    inf->add_option("--python", inference.python, "interpreter with torch (default /usr/bin/python3)");
    inf->add_flag("--unfolded", inference.unfolded, "run the graph as built (no BN folding or ReLU fusion)");
    trainbench::bench::ImportedModelBenchOptions imported;
    auto* im = app.add_subcommand("imported-model", "W1/W2 exported by PyTorch to ONNX and imported vs the presets: train and infer");
    im->add_option("--workloads", imported.workloads, "w1, w2 (default both)")->delimiter(',');
    im->add_option("-t,--threads", imported.threads, "threads of both sides (default 2)");
    im->add_option("-r,--rounds", imported.rounds, "pairs per workload (default 5)");
    im->add_option("--steps", imported.trainSteps, "timed training steps per side and round (default 60)");
    im->add_option("-q,--queries", imported.queries, "batch-1 queries per side and round (default 1000)");
    im->add_option("--onnx-dir", imported.onnxDir, "where w1.onnx and w2.onnx are (written there by bench/export_workloads_onnx.py when missing)");
    im->add_option("--python", imported.python, "interpreter with torch (default /usr/bin/python3)");
    im->add_flag("--accuracy", imported.accuracy, "train W1/W2 to the end with the CLI, preset vs import, final accuracies");
    im->add_option("--seeds", imported.seeds, "--accuracy: runs per side and workload (default 3)");
    im->add_option("--epochs-w1", imported.epochsW1, "--accuracy: W1's epochs (default 5)");
    im->add_option("--epochs-w2", imported.epochsW2, "--accuracy: W2's epochs (default 3)");
#ifdef TRAINBENCH_CLI_PATH
    imported.cli = TRAINBENCH_CLI_PATH;
#endif
    im->add_option("--cli", imported.cli, "trainbench-cli to run (default: the one built alongside)");
    trainbench::bench::EncoderBenchOptions encoder;
    auto* en = app.add_subcommand("encoder", "a BERT-style encoder exported by PyTorch to ONNX, imported, vs PyTorch on the same ids");
    en->add_option("-t,--threads", encoder.threads, "threads of both sides (default 2)");
    en->add_option("-r,--rounds", encoder.rounds, "pairs (default 5)");
    en->add_option("-b,--batch", encoder.batch, "sequences per call (default 32, at most 256)");
    en->add_option("--calls", encoder.calls, "timed calls per pass (default 10)");
    en->add_option("--dir", encoder.dir, "where encoder.onnx and ids.bin are (written by bench/pytorch_encoder.py when missing)");
    en->add_option("--python", encoder.python, "interpreter with torch (default /usr/bin/python3)");
    trainbench::bench::ServedModelBenchOptions served;
    auto* sm = app.add_subcommand("served-model", "W1/W2 served over loopback vs the in-process call; W2 QPS with and without batching");
    sm->add_option("--workloads", served.workloads, "w1, w2 (default both) for the latency figure")->delimiter(',');
    sm->add_option("-r,--rounds", served.rounds, "pairs (default 3)");
    sm->add_option("-q,--queries", served.queries, "batch-1 queries per side and round (default 2000)");
    sm->add_flag("!--no-batching", served.batching, "skip the W2 QPS search");
    sm->add_option("--p99", served.p99ms, "the search's p99 bound, ms (default 20)");
    sm->add_option("--probe-seconds", served.minSeconds, "each probe's minimum duration (default 2)");
    sm->add_option("--max-batch", served.maxBatch, "the batching side's max_batch_size (default 64)");
    sm->add_option("--timeout-micros", served.timeoutMicros, "its batch_timeout_micros (default 1000)");
    sm->add_option("--client-threads", served.clientThreads, "load generator threads (default 1)");
    trainbench::bench::OnnxImportBenchOptions onnxImport;
    onnxImport.peer = std::string(TRAINBENCH_SOURCE_DIR) + "/bench/onnx_load_peer.py";
    auto* oi = app.add_subcommand("onnx-import", "readOnnx of a model with weights vs python3-onnx's onnx.load: time, peak memory");
    oi->add_option("--model", onnxImport.model, "the .onnx file (bench/make_resnet50_onnx.py writes ResNet-50's)")->required();
    oi->add_option("-r,--repeats", onnxImport.repeats, "rounds of (trainbench, onnx.load) (default 5)")->check(CLI::PositiveNumber);
    oi->add_option("--python", onnxImport.python, "interpreter with python3-onnx (default /usr/bin/python3)");
    bool noPeer = false;
    oi->add_flag("--no-peer", noPeer, "leave out the onnx.load comparator");
    CLI11_PARSE(app, argc, argv);
    if (*oi) {
        if (noPeer) onnxImport.peer.clear();
        return trainbench::bench::onnxImportBench(onnxImport);
    }
    if (*sm) return trainbench::bench::servedModelBench(served);
    if (*im) return trainbench::bench::importedModelBench(imported);
    if (*en) return trainbench::bench::encoderBench(encoder);
    if (*sb) return trainbench::bench::servingBatchingBench(serving);
    if (*si) return trainbench::bench::servingIdleBench(serving);
    if (*inf) return trainbench::bench::inferenceBench(inference);
    if (*kf) return trainbench::bench::kernelFitBench(kernelFit);
    if (*hm) {
        if (hostWorkload != "both") hostModel.workloads = {hostWorkload};
        return trainbench::bench::hostModelBench(hostModel);
    }
    if (*sl) return trainbench::bench::stepLoop(loop);
    if (*ic) return trainbench::bench::instrumentationCost(cost);
    if (*cb) return trainbench::bench::classifyBench(cls);
    if (*sc) {
        scaling.workloads = {workload};
        if (workload == "both") scaling.workloads = {"w1", "w2"};
        scaling.asyncFullBatch = asyncBatch == "full";
        return trainbench::bench::scalingSweep(scaling);
    }
    if (*ar) return trainbench::bench::allreduceBench(ranks, allreduceSeconds);
    if (*arw) return trainbench::bench::allreduceWorker(rank, ranks, store, allreduceSeconds);
    if (*arm) return trainbench::bench::mpiAllreduceBench(ranks, allreduceSeconds);
    if (*armw) return trainbench::bench::mpiAllreduceWorker(allreduceSeconds);
    if (*mir) return trainbench::bench::mirroredScaling(preset, replicas, rounds, steps, batch);
    if (*svp) return stepVsPrimitives(threads, rounds, steps, block, unfused);
    if (*csv) return csvParseBench(dir, csvRounds);
    if (*img) return imageDecodeBench(images, csvRounds);
    if (*crc) return trainbench::bench::crc32cThroughput(rounds, mib);
    if (*tfr) return trainbench::bench::tfrecordRead(rounds, readThreads, zlib, file);
    if (*ir) return trainbench::bench::inputRead(dataDir, threads, inputRounds, side, knobs);
    if (*sf) return trainbench::bench::smallFiles(dataDir, streams, limit);
    return roofs(threads, rounds);
}
