// The device catalog: the shipped file loads (embedded and from disk), every figure has a source,
// the TPU figures agree with each other, and every kind of mistake in a user's copy is named by
// file and key path, all of them at once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "engine/emulation/devicecatalog.h"
#include "tests/engine/catalogdevices.h"

namespace trainbench::engine {
namespace {

using test::kGiB;

using nlohmann::json;

// A valid one-GPU catalog the malformed cases start from.
json minimalCatalog() {
    return json::parse(R"({
      "format": 1,
      "devices": [{
        "id": "gpu-a", "kind": "gpu", "name": "A GPU",
        "compute": {"peak_fp32_tflops": 10, "peak_tf32_tflops": null, "peak_bf16_tflops": 100},
        "memory": {"capacity_gib": 16, "bandwidth_gbs": 900},
        "overheads": {"per_op_us": 5, "per_step_us": 100},
        "interconnect": {"nvlink_gbs": 300, "pcie_gbs": 32, "latency_us": 2},
        "price": {"usd_per_hour": 3.0, "unit": "gpu-hour", "provider": "X", "region": "r1", "date": "2023-06"},
        "sources": {
          "compute.peak_fp32_tflops": {"status": "published", "ref": "r"},
          "compute.peak_tf32_tflops": {"status": "published", "ref": "r"},
          "compute.peak_bf16_tflops": {"status": "published", "ref": "r"},
          "memory.capacity_gib": {"status": "published", "ref": "r"},
          "memory.bandwidth_gbs": {"status": "published", "ref": "r"},
          "overheads.per_op_us": {"status": "assumed", "ref": "r"},
          "overheads.per_step_us": {"status": "assumed", "ref": "r"},
          "interconnect.nvlink_gbs": {"status": "published", "ref": "r"},
          "interconnect.pcie_gbs": {"status": "published", "ref": "r"},
          "interconnect.latency_us": {"status": "assumed", "ref": "r"},
          "price.usd_per_hour": {"status": "published", "ref": "r"}
        }
      }]})");
}

// The issues of parsing `text` as "test.json", one "file: path: message" line each.
std::vector<std::string> errorsOf(const std::string& text) {
    try {
        DeviceCatalog::parse(text, "test.json");
    } catch (const DeviceCatalogError& e) {
        std::vector<std::string> lines;
        std::istringstream in(e.what());
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        EXPECT_EQ(lines.size(), e.issues().size());
        return lines;
    }
    ADD_FAILURE() << "expected DeviceCatalogError";
    return {};
}
std::vector<std::string> errorsOf(const json& catalog) { return errorsOf(catalog.dump(2)); }
std::vector<std::string> errorsOf(const char* text) { return errorsOf(std::string(text)); }

TEST(DeviceCatalog, ShipsInt8RatesWherePublished) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    EXPECT_EQ(*c.get("a100-sxm4-40gb").peak_int8_ops, 624e12);
    EXPECT_EQ(*c.get("h100-sxm5-80gb").peak_int8_ops, 1979e12);
    EXPECT_EQ(*c.get("tpu-v4").peak_int8_ops, 275e12);
    for (const char* none : {"cpu-host", "v100-sxm2-16gb", "tpu-v2", "tpu-v3"}) {
        SCOPED_TRACE(none);
        EXPECT_FALSE(c.get(none).peak_int8_ops.has_value());
    }
    // A v4 chip is one replica: its int8 matrix rate is the chip's; a v3 core has none.
    EXPECT_EQ(c.get("tpu-v4").replicaMatrixFlops(Precision::Int8), 275e12);
    EXPECT_THROW(c.get("tpu-v3").replicaMatrixFlops(Precision::Int8), std::invalid_argument);
}

TEST(DeviceCatalog, Int8RateIsOptionalButSourcedWhenGiven) {
    json catalog = minimalCatalog();
    EXPECT_FALSE(DeviceCatalog::parse(catalog.dump(), "test.json").get("gpu-a").peak_int8_ops.has_value());
    catalog["devices"][0]["compute"]["peak_int8_tops"] = 400;
    EXPECT_EQ(errorsOf(catalog), (std::vector<std::string>{
                                     "test.json: devices[0].sources: missing source for 'compute.peak_int8_tops'"}));
    catalog["devices"][0]["sources"]["compute.peak_int8_tops"] = {{"status", "published"}, {"ref", "r"}};
    EXPECT_EQ(*DeviceCatalog::parse(catalog.dump(), "test.json").get("gpu-a").peak_int8_ops, 400e12);
    catalog["devices"][0]["compute"]["peak_int8_tops"] = -1;
    ASSERT_EQ(errorsOf(catalog).size(), 1u);
    EXPECT_NE(errorsOf(catalog)[0].find("devices[0].compute.peak_int8_tops"), std::string::npos);
}

TEST(DeviceCatalog, ShipsTheBriefsDevicesEachFigureWithASource) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    EXPECT_EQ(c.ids(), (std::vector<std::string>{"cpu-host", "v100-sxm2-16gb", "a100-sxm4-40gb", "a100-sxm4-80gb",
                                                 "h100-sxm5-80gb", "tpu-v2", "tpu-v3", "tpu-v4", "rpi4-4gb",
                                                 "snapdragon-8-gen-2", "edge-tpu-usb"}));
    for (const DeviceSpec& d : c.devices()) {
        SCOPED_TRACE(d.id);
        std::set<std::string> expected = {
            "compute.peak_fp32_tflops", "compute.peak_tf32_tflops", "compute.peak_bf16_tflops", "compute.peak_int8_tops",
            "memory.capacity_gib",      "memory.bandwidth_gbs",     "overheads.per_op_us",      "overheads.per_step_us"};
        // A bought device is priced by its purchase, life and power (ownershipcost.h), a rented one by the hour.
        if (d.ownership)
            expected.insert({"price.purchase_usd", "price.service_life_years", "price.power_w"});
        else
            expected.insert("price.usd_per_hour");
        if (d.kind == DeviceKind::Npu) expected.insert("npu.host_link_gbs");
        if (d.kind == DeviceKind::Gpu)
            expected.insert({"interconnect.nvlink_gbs", "interconnect.pcie_gbs", "interconnect.latency_us"});
        if (d.kind == DeviceKind::Tpu)
            expected.insert({"tpu.tensorcores_per_chip", "tpu.mxus_per_tensorcore", "tpu.mxu_size", "tpu.clock_mhz",
                             "tpu.replica", "ici.links_per_chip", "ici.link_gbs", "ici.latency_us", "ici.topology",
                             "ici.pod_chips", "ici.slices"});
        std::set<std::string> got;
        for (const auto& [key, source] : d.sources) {
            got.insert(key);
            EXPECT_GT(source.ref.size(), 20u) << key << ": a source names its publication or rationale";
        }
        EXPECT_EQ(got, expected);
        // Overheads are assumptions and must say so.
        EXPECT_EQ(d.sources.at("overheads.per_op_us").status, FigureSource::Status::Assumed);
        EXPECT_EQ(d.sources.at("overheads.per_step_us").status, FigureSource::Status::Assumed);
        EXPECT_GT(d.price_per_hour, 0.0);
        EXPECT_FALSE(d.price_provider.empty());
        EXPECT_FALSE(d.price_date.empty());
        if (d.kind == DeviceKind::Gpu || d.kind == DeviceKind::Tpu) {
            EXPECT_GT(d.peak_fp32_flops, 0.0);
            EXPECT_GT(d.memory_bytes, 0.0);
            EXPECT_GT(d.memory_bandwidth_bytes_per_s, 0.0);
            EXPECT_TRUE(d.peak_bf16_flops.has_value());
        }
    }
}

TEST(DeviceCatalog, EmbeddedCopyIsTheShippedFile) {
    const std::string path = std::string(TRAINBENCH_SOURCE_DIR) + "/resources/devices.json";
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(std::string(DeviceCatalog::builtinText()), text.str());
    EXPECT_EQ(DeviceCatalog::load(path).ids(), DeviceCatalog::builtin().ids());
}

TEST(DeviceCatalog, TpuChipPeakIsCoresTimesMxusTimes128SquaredTimes2TimesClock) {
    int tpus = 0;
    for (const DeviceSpec& d : DeviceCatalog::builtin().devices()) {
        if (d.kind != DeviceKind::Tpu) continue;
        ++tpus;
        SCOPED_TRACE(d.id);
        ASSERT_TRUE(d.tpu.has_value());
        EXPECT_EQ(d.tpu->mxu_size, 128);
        const double chip =
            d.tpu->tensorcores_per_chip * d.tpu->mxus_per_tensorcore * 128.0 * 128.0 * 2.0 * d.tpu->clock_hz;
        EXPECT_NEAR(*d.peak_bf16_flops / chip, 1.0, 0.01);
    }
    EXPECT_EQ(tpus, 3);
}

TEST(DeviceCatalog, PublishedFiguresInSiUnits) {
    const DeviceCatalog& c = DeviceCatalog::builtin();
    const DeviceSpec& v3 = c.get("tpu-v3");
    EXPECT_EQ(*v3.peak_bf16_flops, 123e12);
    EXPECT_EQ(v3.memory_bytes, 32 * kGiB);
    EXPECT_EQ(v3.memory_bandwidth_bytes_per_s, 900e9);
    EXPECT_EQ(v3.tpu->clock_hz, 940e6);
    EXPECT_EQ(v3.tpu->ici_links_per_chip, 4);
    EXPECT_EQ(v3.tpu->topology, TorusTopology::Torus2D);
    EXPECT_EQ(v3.tpu->pod_chips, 1024);
    EXPECT_EQ(v3.tpu->slices.front(), "v3-8");
    EXPECT_EQ(v3.tpu->slices.back(), "v3-2048");
    EXPECT_EQ(v3.price_unit, "chip-hour");
    // A v3 replica is one TensorCore: half the chip's HBM and bandwidth, 2 MXUs.
    EXPECT_EQ(v3.replicasPerDevice(), 2);
    EXPECT_EQ(v3.replicaMemoryBytes(), 16 * kGiB);
    EXPECT_EQ(v3.replicaBandwidthBytesPerS(), 450e9);
    EXPECT_EQ(v3.replicaMxus(), 2);
    EXPECT_EQ(v3.replicaLabel(), "tpu-v3 core");
    // v4's megacore: one replica per chip, all 8 MXUs and 32 GiB.
    const DeviceSpec& v4 = c.get("tpu-v4");
    EXPECT_EQ(v4.tpu->topology, TorusTopology::Torus3D);
    EXPECT_EQ(v4.replicaMxus(), 8);
    EXPECT_EQ(v4.replicaMemoryBytes(), 32 * kGiB);
    EXPECT_EQ(v4.replicaLabel(), "tpu-v4 chip");
    const DeviceSpec& a100 = c.get("a100-sxm4-40gb");
    EXPECT_EQ(*a100.peak_tf32_flops, 156e12);
    EXPECT_EQ(a100.links->nvlink_bytes_per_s, 600e9);
    EXPECT_FALSE(c.get("v100-sxm2-16gb").peak_tf32_flops.has_value());
}

TEST(DeviceCatalog, HostFiguresComeFromCalibration) {
    const DeviceSpec& host = DeviceCatalog::builtin().get("cpu-host");
    EXPECT_TRUE(host.needs_calibration);
    EXPECT_THROW(host.replicaMatrixFlops(Precision::Fp32), std::invalid_argument);
    const DeviceSpec calibrated = host.withCalibration(50.0, 10.0, 8 * kGiB);
    EXPECT_FALSE(calibrated.needs_calibration);
    EXPECT_EQ(calibrated.peak_fp32_flops, 50e9);
    EXPECT_EQ(calibrated.memory_bandwidth_bytes_per_s, 10e9);
    EXPECT_EQ(calibrated.memory_bytes, 8 * kGiB);
    EXPECT_EQ(calibrated.price_per_hour, host.price_per_hour);
    EXPECT_THROW(host.withCalibration(0.0, 10.0, 1.0), std::invalid_argument);
    EXPECT_THROW(DeviceCatalog::builtin().get("tpu-v3").withCalibration(1.0, 1.0, 1.0), std::invalid_argument);
}

TEST(DeviceCatalog, UnknownDeviceSuggestsTheClosestId) {
    try {
        DeviceCatalog::builtin().get("tpu-v5");
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("unknown device 'tpu-v5'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("did you mean 'tpu-v2'?"), std::string::npos) << e.what();
    }
    EXPECT_EQ(DeviceCatalog::builtin().find("nope"), nullptr);
}

TEST(DeviceCatalogErrors, WrongTypeAndNegativeNameTheKeyPath) {
    json c = minimalCatalog();
    c["devices"][0]["memory"]["bandwidth_gbs"] = "fast";
    EXPECT_EQ(errorsOf(c),
              (std::vector<std::string>{
                  "test.json: devices[0].memory.bandwidth_gbs: expected a number > 0 (memory bandwidth, GB/s), "
                  "got a string \"fast\""}));
    c["devices"][0]["memory"]["bandwidth_gbs"] = -900;
    EXPECT_EQ(
        errorsOf(c),
        (std::vector<std::string>{
            "test.json: devices[0].memory.bandwidth_gbs: expected a number > 0 (memory bandwidth, GB/s), got -900"}));
}

TEST(DeviceCatalogErrors, MissingAndUnknownKeysAllReported) {
    json c = minimalCatalog();
    c["devices"][0]["memory"].erase("capacity_gib");
    c["devices"][0]["overheads"]["per_op_s"] = 1;  // misspelt, and per_op_us is still there
    c["devices"][0]["colour"] = "green";
    EXPECT_EQ(errorsOf(c),
              (std::vector<std::string>{
                  "test.json: devices[0].memory: missing key 'capacity_gib' (memory per device, GiB)",
                  "test.json: devices[0].overheads.per_op_s: unknown key; did you mean 'per_op_us'?",
                  "test.json: devices[0].colour: unknown key; known keys here: 'id', 'kind', 'name', 'compute', "
                  "'memory', 'overheads', 'interconnect', 'tpu', 'ici', 'npu', 'price', 'sources'"}));
}

TEST(DeviceCatalogErrors, DuplicateIdNamesBothPlaces) {
    json c = minimalCatalog();
    c["devices"].push_back(c["devices"][0]);
    c["devices"].push_back(c["devices"][0]);
    c["devices"][1]["id"] = "gpu-b";
    EXPECT_EQ(errorsOf(c),
              (std::vector<std::string>{"test.json: devices[2].id: duplicate id 'gpu-a' (first at devices[0])"}));
}

TEST(DeviceCatalogErrors, TruncatedJsonGivesTheByteOffset) {
    const std::string text = minimalCatalog().dump(2);
    const std::string cut = text.substr(0, 200);
    const std::vector<std::string> errors = errorsOf(cut);
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0].rfind("test.json: byte 200 (line ", 0), 0u) << errors[0];
    EXPECT_NE(errors[0].find("invalid JSON: syntax error"), std::string::npos) << errors[0];
    const std::string bracket = errorsOf("{\"format\": 1,\n \"devices\": [}")[0];
    EXPECT_EQ(bracket.rfind("test.json: byte 27 (line 2, column 14): invalid JSON: syntax error", 0), 0u) << bracket;
}

TEST(DeviceCatalogErrors, SourcesMustCoverEveryFigureAndOnlyFigures) {
    json c = minimalCatalog();
    c["devices"][0]["sources"].erase("memory.bandwidth_gbs");
    c["devices"][0]["sources"]["memory.bandwidth"] = {{"status", "published"}, {"ref", "r"}};
    c["devices"][0]["sources"]["price.usd_per_hour"]["status"] = "guessed";
    EXPECT_EQ(
        errorsOf(c),
        (std::vector<std::string>{
            "test.json: devices[0].sources.price.usd_per_hour.status: unknown value 'guessed' (how the figure was "
            "obtained); must be one of 'published', 'derived', 'assumed'",
            "test.json: devices[0].sources: missing source for 'memory.bandwidth_gbs'",
            "test.json: devices[0].sources.memory.bandwidth: unknown key; did you mean 'memory.bandwidth_gbs'?"}));
}

TEST(DeviceCatalogErrors, KindSpecificKeysAndValues) {
    json c = minimalCatalog();
    c["devices"][0]["ici"] = json::object();
    c["devices"][0]["price"]["unit"] = "chip-hour";
    c["devices"][0]["compute"]["peak_fp32_tflops"] = "calibration";
    c["devices"][0]["price"]["date"] = "June 2023";
    EXPECT_EQ(
        errorsOf(c),
        (std::vector<std::string>{
            "test.json: devices[0].compute.peak_fp32_tflops: \"calibration\" is only for a cpu device (this host's "
            "measured figures)",
            "test.json: devices[0]: compute.peak_fp32_tflops, memory.capacity_gib and memory.bandwidth_gbs must be all "
            "\"calibration\" or all numbers",
            "test.json: devices[0].ici: applies only to kind 'tpu'",
            "test.json: devices[0].price.unit: unknown value 'chip-hour' (what the price is per: 'gpu-hour' for a "
            "gpu); must be one of 'gpu-hour'",
            "test.json: devices[0].price.date: expected YYYY-MM or YYYY-MM-DD (when the price was listed), "
            "got \"June 2023\""}));
    json k = minimalCatalog();
    k["devices"][0]["kind"] = "gpus";
    EXPECT_EQ(errorsOf(k)[0],
              "test.json: devices[0].kind: unknown value 'gpus' (what the device is); must be one of 'cpu', 'gpu', "
              "'tpu', 'npu'; did you mean 'gpu'?");
}

TEST(DeviceCatalogErrors, TpuPeakThatContradictsItsMxusIsRejected) {
    json c = json::parse(DeviceCatalog::builtinText());
    json& v3 = c["devices"][6];
    ASSERT_EQ(v3["id"], "tpu-v3");
    v3["tpu"]["clock_mhz"] = 1940;  // a typo: the chip would do 254 TFLOP/s, not the 123 given
    EXPECT_EQ(errorsOf(c),
              (std::vector<std::string>{
                  "test.json: devices[6].compute.peak_bf16_tflops: 123 TFLOP/s disagrees by 52 % with "
                  "tensorcores_per_chip x mxus_per_tensorcore x mxu_size^2 x 2 x clock = 254.3 TFLOP/s (the figures "
                  "the timing uses)"}));
}

TEST(DeviceCatalogErrors, FormatAndTopLevel) {
    json c = minimalCatalog();
    c["format"] = 2;
    c["device"] = json::array();
    EXPECT_EQ(errorsOf(c),
              (std::vector<std::string>{"test.json: format: this build reads catalog format 1, got a number 2",
                                        "test.json: device: unknown key; did you mean 'devices'?"}));
    EXPECT_EQ(errorsOf("[]"),
              (std::vector<std::string>{"test.json: (top level): expected an object, got an empty array"}));
}

TEST(DeviceCatalogErrors, LoadNamesTheFile) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("devcat-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "mine.json").string();
    {
        json c = minimalCatalog();
        c["devices"][0]["memory"]["capacity_gib"] = 0;
        std::ofstream(path) << c.dump(2);
    }
    try {
        DeviceCatalog::load(path);
        ADD_FAILURE() << "expected DeviceCatalogError";
    } catch (const DeviceCatalogError& e) {
        EXPECT_EQ(e.source(), path);
        EXPECT_EQ(std::string(e.what()),
                  path + ": devices[0].memory.capacity_gib: expected a number > 0 (memory per device, GiB), got 0");
    }
    try {
        DeviceCatalog::load((dir / "absent.json").string());
        ADD_FAILURE() << "expected DeviceCatalogError";
    } catch (const DeviceCatalogError& e) {
        EXPECT_EQ(std::string(e.what()),
                  (dir / "absent.json").string() +
                      ": cannot open the device catalog for reading: No such file or directory");
    }
    std::filesystem::remove_all(dir);
    // The unchanged minimal catalog is valid: the cases above fail for their one change only.
    EXPECT_EQ(DeviceCatalog::parse(minimalCatalog().dump(), "test.json").ids(), std::vector<std::string>{"gpu-a"});
}

// Limits (docs/devices.md): nesting and size are checked before the text is parsed, and named by
// file, byte offset and key path; a catalog just within them is read as usual.
TEST(DeviceCatalogErrors, NestingDeeperThanTheLimitIsRefusedBeforeParsing) {
    const std::string valid = minimalCatalog().dump();
    const auto withAbout = [&](std::size_t levels) {
        return "{\"about\": " + std::string(levels, '[') + std::string(levels, ']') + ", " + valid.substr(1);
    };
    const std::size_t depth = kDeviceCatalogLimits.maxDepth;
    const std::size_t offset = std::string("{\"about\": ").size() + depth - 1;  // the '[' opening level depth + 1
    std::string path = "about";
    for (std::size_t i = 0; i + 1 < depth; ++i) path += "[0]";
    for (const std::size_t levels : {depth, std::size_t{500'000}})
        EXPECT_EQ(errorsOf(withAbout(levels)),
                  (std::vector<std::string>{"test.json: byte " + std::to_string(offset) + " (line 1, column " +
                                            std::to_string(offset + 1) + "): nesting deeper than " +
                                            std::to_string(depth) + " levels of { and [ (at " + path + ")"}));
    // A key is shown as written but on one line (fuzz_devicecatalog found a newline splitting the message).
    const std::vector<std::string> oneLine = errorsOf("{\"a\nb\xff\": " + std::string(depth, '['));
    ASSERT_EQ(oneLine.size(), 1u);
    EXPECT_NE(oneLine[0].find("(at a?b?[0]"), std::string::npos) << oneLine[0];
    EXPECT_EQ(errorsOf(withAbout(depth - 1)),
              (std::vector<std::string>{"test.json: about: expected a string (a description for people), got an array"}));
}

TEST(DeviceCatalogErrors, ACatalogOverTheSizeLimitIsRefusedBeforeItIsRead) {
    const std::size_t limit = kDeviceCatalogLimits.maxBytes;
    const std::string valid = minimalCatalog().dump();
    const std::string path = ::testing::TempDir() + "catalog-limit-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path, std::ios::binary) << valid << std::string(limit - valid.size(), ' ');
    EXPECT_EQ(DeviceCatalog::load(path).ids(), std::vector<std::string>{"gpu-a"});  // exactly at the limit
    std::ofstream(path, std::ios::binary | std::ios::app) << ' ';
    const std::string over = std::to_string(limit + 1) + " bytes, over the limit of " + std::to_string(limit) + " bytes";
    try {
        DeviceCatalog::load(path);
        ADD_FAILURE() << "expected DeviceCatalogError";
    } catch (const DeviceCatalogError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": is " + over);
    }
    EXPECT_EQ(errorsOf(valid + std::string(limit + 1 - valid.size(), ' ')),
              (std::vector<std::string>{"test.json: is " + over}));
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace trainbench::engine
