#pragma once
// trainbench-bench subcommands for the record layer of the input pipeline:
//  * `crc32c`: CRC-32C throughput, hardware instruction vs the portable tables, on one big buffer
//    and in record-sized pieces;
//  * `tfrecord-read`: TFRecord reading alone, and reading + decodeExample, of Fashion-MNIST written
//    as tf.train.Example records, from the page cache.
#include <string>

namespace trainbench::bench {

int crc32cThroughput(int rounds, int mib);
int tfrecordRead(int rounds, int threads, bool zlib, const std::string& file);

}  // namespace trainbench::bench
