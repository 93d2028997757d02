#include "engine/data/imagedataset.h"

#include "engine/data/idxreader.h"
#include "engine/util/errors.h"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isFile(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec) && !fs::is_directory(p, ec);
}

// "<stem>.gz" first because that is how the datasets are published and packaged; the plain name
// second for people who gunzipped them. `what` ("train images") only makes the message clearer.
std::string resolve(const std::string& folder, const std::string& stem, const char* what) {
    if (stem.empty()) throw DataError(std::string("no file name given for the ") + what);
    // operator/ keeps an absolute stem as it is, so "/data/x.idx" ignores the folder.
    const fs::path base = folder.empty() ? fs::path(stem) : fs::path(folder) / stem;
    std::vector<fs::path> tried;
    if (!endsWith(stem, ".gz")) tried.push_back(fs::path(base.string() + ".gz"));
    tried.push_back(base);
    for (const fs::path& p : tried)
        if (isFile(p)) return p.string();
    std::string msg = std::string(what) + " not found: tried " + tried[0].string();
    if (tried.size() > 1) msg += " and " + tried[1].string();
    throw DataError(msg);
}

}  // namespace

ImageDataset loadIdxDataset(const DataConfig& cfg, bool train) { return loadIdxDataset(cfg, train, nullptr); }

ImageDataset loadIdxDataset(const DataConfig& cfg, bool train, Storage& storage) {
    return loadIdxDataset(cfg, train, &storage);
}

ImageDataset loadIdxDataset(const DataConfig& cfg, bool train, Storage* storage) {
    const char* split = train ? "train" : "test";
    const int64_t limit = train ? cfg.train_limit : cfg.test_limit;
    if (limit < 0)
        throw DataError(std::string("data.") + split + "_limit must be >= 0 (0 = all), got " + std::to_string(limit));

    ImageDataset ds;
    ds.images_path = resolve(cfg.path, train ? cfg.train_images : cfg.test_images,
                             train ? "train images" : "test images");
    ds.labels_path = resolve(cfg.path, train ? cfg.train_labels : cfg.test_labels,
                             train ? "train labels" : "test labels");

    // Through the storage layer when there is one, so emulated slow storage applies to IDX too.
    auto read = [&](const std::string& path) {
        return storage ? readIdx(storage->open(path)->readAll(), path) : readIdx(path);
    };
    IdxArray images = read(ds.images_path);
    if (images.type != kIdxU8 || images.dims.size() != 3)
        throw DataError(ds.images_path + ": expected u8 images of shape N x height x width, found " +
                        idxTypeName(images.type) + " " + idxDimsString(images.dims));
    IdxArray labels = read(ds.labels_path);
    if (labels.type != kIdxU8 || labels.dims.size() != 1)
        throw DataError(ds.labels_path + ": expected u8 labels of shape N, found " + idxTypeName(labels.type) +
                        " " + idxDimsString(labels.dims));

    const int64_t n = images.dims[0];
    if (n != labels.dims[0])
        throw DataError("image/label count mismatch: " + ds.images_path + " holds " + std::to_string(n) +
                        " images but " + ds.labels_path + " holds " + std::to_string(labels.dims[0]) + " labels");
    if (n == 0) throw DataError(ds.images_path + ": holds no examples");
    constexpr int64_t kMaxSide = 1 << 20;  // keeps height and width (ints) and their product sane
    if (images.dims[1] < 1 || images.dims[2] < 1 || images.dims[1] > kMaxSide || images.dims[2] > kMaxSide)
        throw DataError(ds.images_path + ": unusable image size " + std::to_string(images.dims[1]) + "x" +
                        std::to_string(images.dims[2]) + " (each side must be 1 to " + std::to_string(kMaxSide) + ")");

    // Labels are u8, so every one is < 256 by construction; the class count comes from the whole
    // file, not the limited prefix, so a small train_limit does not shrink the model's output.
    const uint8_t maxLabel = *std::max_element(labels.data.begin(), labels.data.end());
    ds.num_classes = int{maxLabel} + 1;
    if (ds.num_classes < 2)
        throw DataError(ds.labels_path + ": every label is " + std::to_string(maxLabel) +
                        "; a classifier needs at least 2 classes");

    ds.count = limit > 0 ? std::min(n, limit) : n;
    ds.channels = 1;
    ds.height = static_cast<int>(images.dims[1]);
    ds.width = static_cast<int>(images.dims[2]);
    ds.pixels = std::move(images.data);  // no copy of the big buffer
    if (ds.count < n) {
        ds.pixels.resize(static_cast<size_t>(ds.count * ds.exampleSize()));
        ds.pixels.shrink_to_fit();  // a 1000-example run should not keep 47 MB alive
    }
    ds.labels.assign(labels.data.begin(), labels.data.begin() + ds.count);
    return ds;
}

std::string describe(const ImageDataset& ds) {
    return std::to_string(ds.count) + " examples, " + std::to_string(ds.channels) + "x" +
           std::to_string(ds.height) + "x" + std::to_string(ds.width) + " u8, " + std::to_string(ds.num_classes) +
           " classes (images " + ds.images_path + ", labels " + ds.labels_path + ")";
}

}  // namespace trainbench::engine
