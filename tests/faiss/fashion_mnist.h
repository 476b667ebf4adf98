/**
 * fashion_mnist.h: reads Fashion-MNIST images (Debian's
 * `dataset-fashion-mnist`, idx3-ubyte.gz files) as float vectors, for the
 * HNSW tests and benchmark. Header-only; needs zlib.
 */

#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fashion_mnist {

/// kDir: where Debian's package puts the files.
constexpr const char* kDir = "/usr/share/datasets/fashion-mnist";

/// Images: n vectors of d = rows * cols floats (pixel values 0..255).
struct Images {
    int n = 0;
    int d = 0;
    std::vector<float> x;
};

/// path: kDir + "/" + name, e.g. "train-images-idx3-ubyte.gz".
inline std::string path(const std::string& name) {
    return std::string(kDir) + "/" + name;
}

/// load_images: the first `max_images` images (all of them if fewer) of an
/// idx3-ubyte.gz file. Returns n == 0 when the file cannot be opened;
/// throws std::runtime_error, naming the file, on a malformed one.
inline Images load_images(const std::string& file, int max_images) {
    Images out;
    std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(
            gzopen(file.c_str(), "rb"),
            gzclose);
    if (!gz) {
        return out;
    }
    auto read_exact = [&](void* buf, unsigned bytes) {
        if (gzread(gz.get(), buf, bytes) != int(bytes)) {
            throw std::runtime_error(file + ": truncated or not gzip");
        }
    };
    auto read_be32 = [&]() {
        unsigned char b[4];
        read_exact(b, 4);
        return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 |
                uint32_t(b[2]) << 8 | uint32_t(b[3]);
    };
    if (read_be32() != 0x00000803) {
        throw std::runtime_error(file + ": not an idx3-ubyte file");
    }
    const uint32_t count = read_be32();
    const uint32_t rows = read_be32();
    const uint32_t cols = read_be32();
    if (rows == 0 || cols == 0 || rows * cols > (1u << 20)) {
        throw std::runtime_error(file + ": bad image shape");
    }
    out.n = int(std::min<uint32_t>(count, uint32_t(max_images)));
    out.d = int(rows * cols);
    std::vector<unsigned char> pixels(size_t(out.n) * out.d);
    read_exact(pixels.data(), unsigned(pixels.size()));
    out.x.assign(pixels.begin(), pixels.end());
    return out;
}

} // namespace fashion_mnist
