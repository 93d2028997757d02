#include "app/run/progressprinter.h"

#include <cmath>

#include "profiler/format/numberformat.h"

namespace trainbench::app {

ProgressPrinter::ProgressPrinter(std::FILE* out, bool interactive, int64_t epochs)
    : out_(out), interactive_(interactive), epochs_(epochs) {}

void ProgressPrinter::onStart(const engine::TrainPlan& plan) { plan_ = plan; }

void ProgressPrinter::onStep(const engine::StepRecord& step) {
    last_ = step;
    emaRate_ = emaRate_ == 0.0 ? step.samples_per_second : 0.95 * emaRate_ + 0.05 * step.samples_per_second;
    draw(false);
}

void ProgressPrinter::onEval(const engine::EvalRecord& eval) {
    lastAccuracy_ = eval.accuracy;
    if (interactive_) {
        draw(true);
    } else {
        std::fprintf(out_, "step %lld  epoch %lld  loss %.4f  test loss %.4f  test accuracy %.2f%%  %.0f samples/s\n",
                     static_cast<long long>(eval.step), static_cast<long long>(eval.epoch + 1), last_.loss, eval.loss,
                     100.0 * eval.accuracy, emaRate_);
        std::fflush(out_);
    }
}

void ProgressPrinter::draw(bool force) {
    if (!interactive_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && drawn_ && now - lastDraw_ < std::chrono::milliseconds(100)) return;
    lastDraw_ = now;
    drawn_ = true;
    std::string epochText = std::to_string(last_.epoch + 1);
    if (epochs_ > 0) epochText += "/" + std::to_string(epochs_);
    std::string stepText = std::to_string(last_.step);
    if (plan_.total_steps > 0) stepText += "/" + std::to_string(plan_.total_steps);
    const double remaining = plan_.total_steps > last_.step && emaRate_ > 0 && last_.samples > 0
        ? static_cast<double>(plan_.total_steps - last_.step) * static_cast<double>(last_.samples) / emaRate_
        : 0.0;
    char acc[32] = "-";
    if (lastAccuracy_ >= 0) std::snprintf(acc, sizeof acc, "%.2f%%", 100.0 * lastAccuracy_);
    std::fprintf(out_, "\r\033[Kepoch %s  step %s  loss %.4f  accuracy %s  %.0f samples/s  ETA %s", epochText.c_str(),
                 stepText.c_str(), last_.loss, acc, emaRate_, profiler::clockTime(remaining).c_str());
    std::fflush(out_);
}

void ProgressPrinter::finish() {
    if (interactive_ && drawn_) {
        draw(true);
        std::fputc('\n', out_);
        std::fflush(out_);
    }
}

}  // namespace trainbench::app
