#include "dev/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/str_cat.h"
#include "kernels/cpu/quantize.h"

namespace strata {
namespace {

// Far above any header a model has (a few hundred KB for thousands of
// tensors); bounds what a corrupt length can make the reader allocate.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

size_t element_bytes(const std::string& dtype) {
  if (dtype == "F32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  return 0;
}

std::vector<std::byte> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error(str_cat(path, ": cannot open"));
  const auto size = static_cast<size_t>(in.tellg());
  std::vector<std::byte> bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    throw std::runtime_error(str_cat(path, ": cannot read"));
  }
  return bytes;
}

}  // namespace

SafetensorsReader::SafetensorsReader(const std::string& path) {
  if (!std::filesystem::is_directory(path)) {
    read_file(path);
    return;
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path().string());
  }
  if (files.empty()) throw std::runtime_error(str_cat(path, ": no .safetensors files"));
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) read_file(file);
}

void SafetensorsReader::read_file(const std::string& path) {
  const std::vector<std::byte> bytes = read_all(path);
  uint64_t header_bytes = 0;
  if (bytes.size() < 8) throw std::runtime_error(str_cat(path, ": shorter than a header"));
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | static_cast<uint8_t>(bytes[i]);
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes.size() - 8) {
    throw std::runtime_error(
        str_cat(path, ": header length ", header_bytes, " runs past the file"));
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()) + 8,
                                   reinterpret_cast<const char*>(bytes.data()) + 8 + header_bytes);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(str_cat(path, ": header: ", e.what()));
  }
  if (!header.is_object()) throw std::runtime_error(str_cat(path, ": header is not an object"));
  const std::span<const std::byte> data(bytes.data() + 8 + header_bytes,
                                        bytes.size() - 8 - header_bytes);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    SafetensorsTensor tensor;
    uint64_t begin = 0, end = 0;
    try {
      tensor.dtype = info.at("dtype").get<std::string>();
      tensor.shape = info.at("shape").get<std::vector<uint64_t>>();
      begin = info.at("data_offsets").at(0).get<uint64_t>();
      end = info.at("data_offsets").at(1).get<uint64_t>();
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(str_cat(path, ": tensor ", name, ": ", e.what()));
    }
    const size_t elem = element_bytes(tensor.dtype);
    if (elem == 0) {
      throw std::runtime_error(str_cat(path, ": tensor ", name, " has dtype ", tensor.dtype,
                                       "; expected F32, F16 or BF16"));
    }
    uint64_t n = 1;
    for (uint64_t d : tensor.shape) n *= d;
    if (begin > end || end > data.size() || end - begin != n * elem) {
      throw std::runtime_error(str_cat(path, ": tensor ", name, ": bytes [", begin, ", ", end,
                                       ") do not hold ", n, " ", tensor.dtype, " values"));
    }
    tensor.bytes.assign(data.begin() + static_cast<ptrdiff_t>(begin),
                        data.begin() + static_cast<ptrdiff_t>(end));
    ranges.emplace_back(begin, end);
    if (!tensors_.emplace(name, std::move(tensor)).second) {
      throw std::runtime_error(str_cat(path, ": tensor ", name, " is also in another file"));
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].first < ranges[i - 1].second) {
      throw std::runtime_error(str_cat(path, ": tensors' bytes overlap"));
    }
  }
}

std::vector<float> SafetensorsReader::values(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::runtime_error(str_cat("no tensor ", name));
  const SafetensorsTensor& t = it->second;
  std::vector<float> out(t.bytes.size() / element_bytes(t.dtype));
  // GGUF's F32, F16 and BF16 elements are laid out as safetensors' are.
  const WeightType type = t.dtype == "F32"   ? WeightType::kF32
                          : t.dtype == "F16" ? WeightType::kF16
                                             : WeightType::kBF16;
  dequantize(type, t.bytes, out);
  return out;
}

}  // namespace strata
