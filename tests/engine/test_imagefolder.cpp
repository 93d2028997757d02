// listImageFolder (class and file order, what is skipped, errors) and image folders end to end:
// listed, read through Storage, decoded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/data/sources/imagefolder.h"
#include "engine/data/storage/storage.h"
#include "imagewriters.h"
#include "tempdirtest.h"

namespace trainbench::engine {
namespace {

namespace fs = std::filesystem;
using test::errorOf;
using test::writeText;
using ImageFolderTest = test::TempDirTest;
using Bytes = std::vector<uint8_t>;

TEST_F(ImageFolderTest, ClassesAndFilesSortedHiddenAndNestedSkipped) {
    const Bytes px(4, 9);
    const std::string png = encodePng(px.data(), 1, 2, 2);
    for (const char* dir : {"cat", "ant", ".git", "cat/nested"}) fs::create_directories(dir_ / dir);
    for (const char* file : {"cat/b.png", "cat/a.jpg", "cat/.DS_Store", "cat/nested/deep.png", "ant/z.png",
                             ".git/x.png", "notes.txt"})
        writeText(dir_ / file, png);
    fs::create_directory_symlink(dir_ / "ant", dir_ / "bee");  // a linked class folder counts
    fs::create_symlink(dir_ / "cat" / "b.png", dir_ / "cat" / "c.png");
    fs::create_symlink(dir_ / "missing.png", dir_ / "cat" / "dangling.png");

    const ImageFolderIndex index = listImageFolder(dir_.string());
    EXPECT_EQ(index.classes, (std::vector<std::string>{"ant", "bee", "cat"}));
    EXPECT_EQ(index.files, (std::vector<std::string>{path("ant/z.png"), path("bee/z.png"), path("cat/a.jpg"),
                                                     path("cat/b.png"), path("cat/c.png")}));
    EXPECT_EQ(index.labels, (std::vector<int32_t>{0, 1, 2, 2, 2}));
}

TEST_F(ImageFolderTest, EmptyClassFolderKeepsItsLabel) {
    const Bytes px(1, 0);
    fs::create_directories(dir_ / "a");
    fs::create_directories(dir_ / "b");
    writeText(dir_ / "b" / "1.png", encodePng(px.data(), 1, 1, 1));
    const ImageFolderIndex index = listImageFolder(dir_.string() + "/");
    EXPECT_EQ(index.classes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(index.labels, (std::vector<int32_t>{1}));
}

TEST_F(ImageFolderTest, Errors) {
    EXPECT_EQ(errorOf([&] { listImageFolder(path("nope")); }),
              path("nope") + ": image folder not found: No such file or directory");
    writeText(dir_ / "file", "x");
    EXPECT_EQ(errorOf([&] { listImageFolder(path("file")); }),
              path("file") + ": not a folder (an image folder holds one sub-folder of images per class)");
    EXPECT_EQ(errorOf([&] { listImageFolder(dir_.string()); }),
              dir_.string() + ": no class sub-folders (an image folder holds one sub-folder of images per class)");
    fs::create_directories(dir_ / "a" / "inner");
    fs::create_directories(dir_ / "b");
    writeText(dir_ / "b" / ".hidden.png", "x");
    EXPECT_EQ(errorOf([&] { listImageFolder(dir_.string()); }),
              dir_.string() + ": no image files in its 2 class folders");
}

// PNGs and JPEGs of both classes, read through an emulated storage and decoded to RGB.
TEST_F(ImageFolderTest, ListReadDecodeEndToEnd) {
    const int h = 10, w = 12;
    std::vector<Bytes> chw;
    for (int i = 0; i < 4; ++i) {
        Bytes px(3 * h * w);
        for (size_t k = 0; k < px.size(); ++k) px[k] = static_cast<uint8_t>(60 + 40 * i + (k % 13));
        chw.push_back(px);
    }
    fs::create_directories(dir_ / "shirt");
    fs::create_directories(dir_ / "boot");
    writeText(dir_ / "boot" / "0.png", encodePng(chw[0].data(), 3, h, w));
    writeText(dir_ / "boot" / "1.jpeg", test::encodeJpeg(test::toHwc(chw[1], 3, h, w).data(), w, h, 3, 98));
    writeText(dir_ / "shirt" / "2.png", encodePng(chw[2].data(), 3, h, w));
    writeText(dir_ / "shirt" / "3.png", test::encodeJpeg(test::toHwc(chw[3], 3, h, w).data(), w, h, 3, 98));

    const ImageFolderIndex index = listImageFolder(dir_.string());
    ASSERT_EQ(index.files.size(), 4u);
    EXPECT_EQ(index.labels, (std::vector<int32_t>{0, 0, 1, 1}));
    StorageConfig cfg;
    cfg.request_latency_ms = 0.1;
    Storage storage(cfg);
    DecodedImage img;
    for (size_t i = 0; i < index.files.size(); ++i) {
        const std::vector<uint8_t> bytes = storage.open(index.files[i])->readAll();
        decodeImage(bytes.data(), bytes.size(), 3, img, index.files[i]);
        ASSERT_EQ(img.channels, 3);
        ASSERT_EQ(img.height, h);
        ASSERT_EQ(img.width, w);
        int worst = 0;
        for (size_t k = 0; k < img.pixels.size(); ++k)
            worst = std::max(worst, std::abs(int(img.pixels[k]) - int(chw[i][k])));
        EXPECT_LE(worst, i % 2 == 0 ? 0 : 8) << index.files[i];  // PNG exact, JPEG close
    }
    EXPECT_EQ(storage.stats().opens, 4);
    EXPECT_EQ(storage.stats().requests, 4) << "one request per small file";
}

TEST_F(ImageFolderTest, BrokenFilesNameTheirPath) {
    const Bytes px(3 * 16 * 16, 77);
    fs::create_directories(dir_ / "c");
    const std::string png = encodePng(px.data(), 3, 16, 16);
    const std::string jpg = test::encodeJpeg(px.data(), 16, 16, 3, 90);
    writeText(dir_ / "c" / "cut.png", png.substr(0, png.size() / 2));
    writeText(dir_ / "c" / "cut.jpg", jpg.substr(0, jpg.size() / 2));
    writeText(dir_ / "c" / "x.png", "this is text, named like an image\n");
    Storage storage;
    std::vector<std::string> messages;
    for (const std::string& file : listImageFolder(dir_.string()).files) {
        const std::vector<uint8_t> bytes = storage.open(file)->readAll();
        DecodedImage img;
        messages.push_back(errorOf([&] { decodeImage(bytes.data(), bytes.size(), 0, img, file); }));
    }
    ASSERT_EQ(messages.size(), 3u);
    EXPECT_EQ(messages[0], path("c/cut.jpg") + ": corrupt or truncated JPEG: Premature end of JPEG file");
    EXPECT_EQ(messages[1].rfind(path("c/cut.png") + ": corrupt or truncated PNG: ", 0), 0u) << messages[1];
    EXPECT_EQ(messages[2], path("c/x.png") + ": not a PNG or JPEG image");
}

}  // namespace
}  // namespace trainbench::engine
