#pragma once
#include <algorithm>
#include <omp.h>

namespace trainbench::engine::kernels {

template <typename Fn>
void parallelFor(size_t n, size_t grain, Fn&& fn) {
    const size_t maxThreads = static_cast<size_t>(omp_get_max_threads());
    const size_t threads = std::max<size_t>(1, std::min(maxThreads, n / std::max<size_t>(grain, 1)));
    if (threads <= 1) {
        fn(size_t{0}, n);
        return;
    }
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
        const size_t t = static_cast<size_t>(omp_get_thread_num());
        const size_t nt = static_cast<size_t>(omp_get_num_threads());
        // Chunks rounded to 16 floats (one cache line) so threads never share a line.
        const size_t chunk = ((n + nt - 1) / nt + 15) / 16 * 16;
        const size_t b = std::min(n, t * chunk), e = std::min(n, b + chunk);
        if (b < e) fn(b, e);
    }
}

}  // namespace trainbench::engine::kernels
