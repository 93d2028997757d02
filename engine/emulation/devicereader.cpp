#include "engine/emulation/devicereader.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "engine/emulation/catalogreader.h"
#include "engine/util/keypath.h"

namespace trainbench::engine::catalog {

namespace {

constexpr double kTera = 1e12, kGiga = 1e9, kGiB = 1073741824.0, kMicro = 1e-6, kMega = 1e6;
constexpr const char* kCalibration = "calibration";

bool validId(const std::string& id) {
    for (char c : id)
        if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
              c == '_' || c == '.'))
            return false;
    return !id.empty();
}

bool validDate(const std::string& d) {
    if (d.size() != 7 && d.size() != 10) return false;
    for (std::size_t i = 0; i < d.size(); ++i) {
        const bool dash = i == 4 || i == 7;
        if (dash ? d[i] != '-' : !std::isdigit(static_cast<unsigned char>(d[i]))) return false;
    }
    return true;
}

// Reads one device; `figures` collects the key paths (relative to the device) that need a source.
class DeviceReader {
public:
    DeviceReader(const std::string& path, std::vector<CatalogIssue>& issues) : path_(path), issues_(issues) {}

    DeviceSpec read(const json& node);

private:
    // A group object of the device ("compute", "memory", ...), or an issue if it is missing.
    ObjectReader group(ObjectReader& device, const std::string& key, std::vector<std::string> known,
                       const std::string& what) {
        static const json missing;  // a null: the reader reports "expected an object" only if the key exists
        const json* v = device.required(key, what);
        return ObjectReader(v ? *v : missing, device.pathOf(key), std::move(known), v ? issues_ : scratch_);
    }
    std::string local(const ObjectReader& g, const std::string& key) const {
        return g.pathOf(key).substr(path_.size() + 1);  // "devices[3].memory.x" -> "memory.x"
    }
    std::optional<double> figure(ObjectReader& g, const std::string& key, const std::string& what, Bound bound,
                                 double scale) {
        figures_.push_back(local(g, key));
        const auto v = g.number(key, what, bound);
        return v ? std::optional<double>(*v * scale) : std::nullopt;
    }
    std::optional<int> whole(ObjectReader& g, const std::string& key, const std::string& what, int minimum) {
        figures_.push_back(local(g, key));
        return g.integer(key, what, minimum);
    }
    // A rate the device may not have (null), in TFLOP/s.
    std::optional<double> nullableRate(ObjectReader& g, const std::string& key, const std::string& what) {
        figures_.push_back(local(g, key));
        const json* v = g.required(key, what);
        if (!v || v->is_null()) return std::nullopt;
        const auto r =
            readNumber(*v, g.pathOf(key), what + ", or null when the device has none", Bound::Positive, issues_);
        return r ? std::optional<double>(*r * kTera) : std::nullopt;
    }
    // A figure a cpu device may leave to the host's calibration ("calibration").
    std::optional<double> calibratable(ObjectReader& g, const std::string& key, const std::string& what, double scale) {
        const json* v = g.has(key) ? g.required(key, what) : nullptr;
        if (v && v->is_string() && v->get<std::string>() == kCalibration) {
            figures_.push_back(local(g, key));
            if (kind_ != DeviceKind::Cpu)
                g.issue(g.pathOf(key), "\"calibration\" is only for a cpu device (this host's measured figures)");
            ++calibrated_;
            return std::nullopt;
        }
        if (v) ++fixed_;
        return figure(g, key, kind_ == DeviceKind::Cpu ? what + ", or \"calibration\"" : what, Bound::Positive, scale);
    }

    void readCompute(ObjectReader& device, DeviceSpec& spec);
    void readMemoryAndOverheads(ObjectReader& device, DeviceSpec& spec);
    void readGpuLinks(ObjectReader& device, DeviceSpec& spec);
    void readTpu(ObjectReader& device, DeviceSpec& spec);
    void readNpu(ObjectReader& device, DeviceSpec& spec);
    void readPrice(ObjectReader& device, DeviceSpec& spec);
    void readOwnership(ObjectReader& price, DeviceSpec& spec);
    void readSources(ObjectReader& device, DeviceSpec& spec);
    void checkMxuRate(const DeviceSpec& spec);

    std::string path_;
    std::vector<CatalogIssue>& issues_;
    std::vector<CatalogIssue> scratch_;  // issues of a group that is itself missing (already reported)
    std::vector<std::string> figures_;
    DeviceKind kind_ = DeviceKind::Cpu;
    bool kindKnown_ = false;
    int calibrated_ = 0, fixed_ = 0;
};

DeviceSpec DeviceReader::read(const json& node) {
    DeviceSpec spec;
    ObjectReader device(
        node, path_,
        {"id", "kind", "name", "compute", "memory", "overheads", "interconnect", "tpu", "ici", "npu", "price",
         "sources"},
        issues_);
    if (!device.isObject()) return spec;
    if (const auto id = device.string("id", "a unique name such as 'tpu-v3'")) {
        if (validId(*id))
            spec.id = *id;
        else
            device.issue(device.pathOf("id"),
                         "'" + *id + "' is not a valid id: use lower-case letters, digits, '-', '_' and '.'");
    }
    const auto kind = device.string("kind", "what the device is", {"cpu", "gpu", "tpu", "npu"});
    kindKnown_ = kind.has_value();
    kind_ = !kind            ? DeviceKind::Cpu
            : *kind == "gpu" ? DeviceKind::Gpu
            : *kind == "tpu" ? DeviceKind::Tpu
            : *kind == "npu" ? DeviceKind::Npu
                             : DeviceKind::Cpu;
    spec.kind = kind_;
    spec.name = device.string("name", "a name for people").value_or("");
    readCompute(device, spec);
    readMemoryAndOverheads(device, spec);
    if (calibrated_ > 0 && fixed_ > 0)
        device.issue(path_,
                     "compute.peak_fp32_tflops, memory.capacity_gib and memory.bandwidth_gbs must be all "
                     "\"calibration\" or all numbers");
    spec.needs_calibration = calibrated_ > 0 && fixed_ == 0;
    if (kind && kind_ == DeviceKind::Gpu)
        readGpuLinks(device, spec);
    else if (kind && device.has("interconnect"))
        device.issue(device.pathOf("interconnect"), "applies only to kind 'gpu' (NVLink and PCIe)");
    if (kind && kind_ == DeviceKind::Tpu) {
        readTpu(device, spec);
    } else if (kind) {
        for (const char* key : {"tpu", "ici"})
            if (device.has(key)) device.issue(device.pathOf(key), "applies only to kind 'tpu'");
    }
    if (kind && kind_ == DeviceKind::Npu)
        readNpu(device, spec);
    else if (kind && device.has("npu"))
        device.issue(device.pathOf("npu"), "applies only to kind 'npu' (an int8 inference accelerator)");
    readPrice(device, spec);
    readSources(device, spec);
    device.finish();
    if (kind_ == DeviceKind::Tpu) checkMxuRate(spec);
    return spec;
}

void DeviceReader::readCompute(ObjectReader& device, DeviceSpec& spec) {
    ObjectReader g =
        group(device, "compute", {"peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops", "peak_int8_tops"},
              "peak rates, TFLOP/s");
    if (kind_ == DeviceKind::Npu) {
        // An int8 accelerator: its int8 rate is required and it has no floating-point one.
        for (const char* key : {"peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops"})
            if (nullableRate(g, key, "a floating-point rate: null on an npu"))
                g.issue(g.pathOf(key), "an npu computes int8 only: expected null");
        spec.peak_int8_ops = nullableRate(g, "peak_int8_tops", "int8 rate, TOPS (dense)");
        if (!spec.peak_int8_ops && g.has("peak_int8_tops"))
            g.issue(g.pathOf("peak_int8_tops"), "an npu needs its int8 rate (TOPS)");
        g.finish();
        return;
    }
    spec.peak_fp32_flops =
        calibratable(g, "peak_fp32_tflops", "fp32 and non-matrix rate, TFLOP/s", kTera).value_or(0.0);
    spec.peak_tf32_flops = nullableRate(g, "peak_tf32_tflops", "TF32 tensor-core rate, TFLOP/s");
    spec.peak_bf16_flops = nullableRate(g, "peak_bf16_tflops", "16-bit tensor-core / MXU rate, TFLOP/s");
    // Optional (catalogs written before inference had none), but sourced like every figure when given.
    if (g.has("peak_int8_tops"))
        spec.peak_int8_ops = nullableRate(g, "peak_int8_tops", "int8 tensor-core / MXU rate, TOPS (dense)");
    if (kind_ == DeviceKind::Tpu && g.has("peak_bf16_tflops") && g.required("peak_bf16_tflops", "")->is_null())
        g.issue(g.pathOf("peak_bf16_tflops"), "a tpu needs its MXU rate (peak bf16 per chip, TFLOP/s)");
    g.finish();
}

void DeviceReader::readMemoryAndOverheads(ObjectReader& device, DeviceSpec& spec) {
    ObjectReader m = group(device, "memory", {"capacity_gib", "bandwidth_gbs"}, "capacity and bandwidth");
    spec.memory_bytes = calibratable(m, "capacity_gib", "memory per device, GiB", kGiB).value_or(0.0);
    spec.memory_bandwidth_bytes_per_s = calibratable(m, "bandwidth_gbs", "memory bandwidth, GB/s", kGiga).value_or(0.0);
    m.finish();
    ObjectReader o = group(device, "overheads", {"per_op_us", "per_step_us"}, "fixed costs, microseconds");
    spec.per_op_overhead_s =
        figure(o, "per_op_us", "fixed cost per op call, microseconds", Bound::NonNegative, kMicro).value_or(0.0);
    spec.per_step_overhead_s =
        figure(o, "per_step_us", "fixed cost per step, microseconds", Bound::NonNegative, kMicro).value_or(0.0);
    o.finish();
}

void DeviceReader::readGpuLinks(ObjectReader& device, DeviceSpec& spec) {
    ObjectReader g = group(device, "interconnect", {"nvlink_gbs", "pcie_gbs", "latency_us"}, "NVLink and PCIe");
    GpuLinks links;
    links.nvlink_bytes_per_s =
        figure(g, "nvlink_gbs", "NVLink bandwidth, all links, GB/s", Bound::NonNegative, kGiga).value_or(0.0);
    links.pcie_bytes_per_s = figure(g, "pcie_gbs", "PCIe bandwidth, GB/s", Bound::Positive, kGiga).value_or(0.0);
    links.latency_s =
        figure(g, "latency_us", "latency per message, microseconds", Bound::NonNegative, kMicro).value_or(0.0);
    g.finish();
    spec.links = links;
}

void DeviceReader::readTpu(ObjectReader& device, DeviceSpec& spec) {
    TpuSpec tpu;
    ObjectReader t =
        group(device, "tpu", {"tensorcores_per_chip", "mxus_per_tensorcore", "mxu_size", "clock_mhz", "replica"},
              "the chip's matrix units");
    tpu.tensorcores_per_chip = whole(t, "tensorcores_per_chip", "TensorCores per chip", 1).value_or(0);
    tpu.mxus_per_tensorcore = whole(t, "mxus_per_tensorcore", "MXUs per TensorCore", 1).value_or(0);
    tpu.mxu_size = whole(t, "mxu_size", "MXU side, multiply-accumulators (128)", 1).value_or(0);
    tpu.clock_hz = figure(t, "clock_mhz", "clock, MHz", Bound::Positive, kMega).value_or(0.0);
    figures_.push_back("tpu.replica");
    tpu.replica_is_chip =
        t.string("replica", "what one replica runs on", {"tensorcore", "chip"}).value_or("") == "chip";
    t.finish();
    ObjectReader i =
        group(device, "ici", {"links_per_chip", "link_gbs", "latency_us", "topology", "pod_chips", "slices"},
              "the inter-chip interconnect");
    tpu.ici_links_per_chip = whole(i, "links_per_chip", "ICI links per chip", 1).value_or(0);
    tpu.ici_link_bytes_per_s =
        figure(i, "link_gbs", "bandwidth per ICI link, GB/s", Bound::Positive, kGiga).value_or(0.0);
    tpu.ici_latency_s =
        figure(i, "latency_us", "latency per hop, microseconds", Bound::NonNegative, kMicro).value_or(0.0);
    figures_.push_back("ici.topology");
    tpu.topology = i.string("topology", "the pod's torus", {"torus-2d", "torus-3d"}).value_or("") == "torus-3d"
                       ? TorusTopology::Torus3D
                       : TorusTopology::Torus2D;
    tpu.pod_chips = whole(i, "pod_chips", "chips in a full pod", 1).value_or(0);
    figures_.push_back("ici.slices");
    if (const json* slices = i.required("slices", "accelerator types offered, e.g. [\"v3-8\", \"v3-32\"]")) {
        if (!slices->is_array() || slices->empty())
            i.issue(i.pathOf("slices"), "expected a non-empty array of slice names, got " + describe(*slices));
        else
            for (std::size_t k = 0; k < slices->size(); ++k) {
                const json& s = (*slices)[k];
                if (s.is_string() && !s.get<std::string>().empty())
                    tpu.slices.push_back(s.get<std::string>());
                else
                    i.issue(keyPathElement(i.pathOf("slices"), k),
                            "expected a slice name such as \"v3-8\", got " + describe(s));
            }
    }
    i.finish();
    spec.tpu = tpu;
}

void DeviceReader::readNpu(ObjectReader& device, DeviceSpec& spec) {
    ObjectReader n = group(device, "npu", {"host_link_gbs"}, "the accelerator's link to its host");
    NpuSpec npu;
    npu.host_link_bytes_per_s =
        figure(n, "host_link_gbs", "host link bandwidth, GB/s, one direction", Bound::Positive, kGiga).value_or(0.0);
    n.finish();
    spec.npu = npu;
}

// A bought device: purchase price over its service life plus the power it draws (ownershipcost.h).
void DeviceReader::readOwnership(ObjectReader& p, DeviceSpec& spec) {
    OwnershipCost own;
    own.purchase_usd = figure(p, "purchase_usd", "purchase price, US dollars", Bound::NonNegative, 1.0).value_or(0.0);
    own.service_life_years =
        figure(p, "service_life_years", "years the purchase is spread over", Bound::Positive, 1.0).value_or(1.0);
    own.power_w = figure(p, "power_w", "power drawn while predicting, watts", Bound::NonNegative, 1.0).value_or(0.0);
    if (p.has("usd_per_hour"))
        p.issue(p.pathOf("usd_per_hour"), "a bought device (purchase_usd) has no hourly price: it is derived from "
                                          "purchase_usd / service_life_years + power_w x electricity price");
    spec.ownership = own;
    spec.price_per_hour = own.usdPerHour();
}

void DeviceReader::readPrice(ObjectReader& device, DeviceSpec& spec) {
    ObjectReader p = group(device, "price",
                           {"usd_per_hour", "purchase_usd", "service_life_years", "power_w", "unit", "provider",
                            "region", "date"},
                           "price per device-hour, or purchase price");
    const bool bought = p.has("purchase_usd");
    if (bought)
        readOwnership(p, spec);
    else
        spec.price_per_hour =
            figure(p, "usd_per_hour", "US dollars per device-hour, on demand", Bound::NonNegative, 1.0).value_or(0.0);
    const char* unit = bought                      ? "device"
                       : kind_ == DeviceKind::Gpu ? "gpu-hour"
                       : kind_ == DeviceKind::Tpu ? "chip-hour"
                       : kind_ == DeviceKind::Npu ? "device-hour"
                                                  : "host-hour";
    spec.price_unit =
        kindKnown_
            ? p.string("unit", std::string("what the price is per: '") + unit + "' for a " + deviceKindName(kind_),
                       {unit})
                  .value_or("")
            : p.string("unit", "what the price is per").value_or("");
    spec.price_provider = p.string("provider", "who sells it at that price").value_or("");
    spec.price_region = p.string("region", "the provider's region").value_or("");
    if (const auto date = p.string("date", "when the price was listed, YYYY-MM or YYYY-MM-DD")) {
        if (validDate(*date))
            spec.price_date = *date;
        else
            p.issue(p.pathOf("date"),
                    "expected YYYY-MM or YYYY-MM-DD (when the price was listed), got \"" + *date + "\"");
    }
    p.finish();
}

void DeviceReader::readSources(ObjectReader& device, DeviceSpec& spec) {
    const json* node = device.required("sources", "where every figure comes from");
    if (!node) return;
    ObjectReader s(*node, device.pathOf("sources"), figures_, issues_);
    if (!s.isObject()) return;
    std::vector<std::string> missing;
    for (const std::string& figure : figures_) {
        if (!s.has(figure)) {
            missing.push_back(figure);
            continue;
        }
        ObjectReader entry(*s.required(figure, ""), s.pathOf(figure), {"status", "ref"}, issues_);
        FigureSource source;
        const auto status = entry.string("status", "how the figure was obtained", {"published", "derived", "assumed"});
        source.status = status == "derived"   ? FigureSource::Status::Derived
                        : status == "assumed" ? FigureSource::Status::Assumed
                                              : FigureSource::Status::Published;
        source.ref = entry.string("ref", "the publication, derivation or rationale").value_or("");
        entry.finish();
        spec.sources[figure] = source;
    }
    if (!missing.empty())
        s.issue(s.path(), std::string(missing.size() == 1 ? "missing source for " : "missing sources for ") +
                              quotedList(missing));
    s.finish();  // a source for a key that is not a figure of this device
}

void DeviceReader::checkMxuRate(const DeviceSpec& spec) {
    if (!spec.tpu || !spec.peak_bf16_flops || spec.tpu->clock_hz <= 0.0 || spec.tpu->mxu_size <= 0) return;
    const TpuSpec& t = *spec.tpu;
    const double chip =
        double(t.tensorcores_per_chip) * t.mxus_per_tensorcore * t.mxu_size * t.mxu_size * 2.0 * t.clock_hz;
    const double off = std::abs(*spec.peak_bf16_flops - chip) / chip;
    // The timing uses the MXU figures; a peak more than 2 % away (published peaks are rounded to the
    // TFLOP) means one of them was mistyped.
    if (off > 0.02) {
        char text[256];
        std::snprintf(
            text, sizeof text,
            "%.4g TFLOP/s disagrees by %.0f %% with tensorcores_per_chip x mxus_per_tensorcore x mxu_size^2 x 2 x "
            "clock = %.4g TFLOP/s (the figures the timing uses)",
            *spec.peak_bf16_flops / kTera, off * 100.0, chip / kTera);
        issues_.push_back({path_ + ".compute.peak_bf16_tflops", text});
    }
}

}  // namespace

DeviceSpec readDevice(const json& node, const std::string& path, std::vector<CatalogIssue>& issues) {
    return DeviceReader(path, issues).read(node);
}

}  // namespace trainbench::engine::catalog
