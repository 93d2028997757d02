#pragma once
// Input-pipeline source benchmarks of trainbench-bench (bench/sourcesprobe.cpp).
#include <string>

// `csv-parse`: single-thread CsvReader + decodeCsvLine throughput over a 60000 x 785 CSV
// (label first, pixels 0-255: Fashion-MNIST when installed, else synthetic), written to `dir`.
int csvParseBench(const std::string& dir, int rounds);
// `image-decode`: time per decodeImage of a 28x28 grey PNG (Fashion-MNIST images when installed).
int imageDecodeBench(int images, int rounds);
