#include "model/gguf/gguf_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "common/str_cat.h"
#include "kernels/cpu/quantize.h"
#include "model/gguf/gguf_file.h"

namespace strata {
namespace {

constexpr char kAlignmentKey[] = "general.alignment";

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

template <typename T>
void append(std::vector<std::byte>& out, T value) {
  static_assert(std::endian::native == std::endian::little, "GGUF is written little endian");
  const auto* bytes = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

void append_string(std::vector<std::byte>& out, const std::string& text) {
  append<uint64_t>(out, text.size());
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  out.insert(out.end(), bytes, bytes + text.size());
}

// The value without its type id (array items carry none of their own).
void append_value(std::vector<std::byte>& out, const GgufValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          append<uint8_t>(out, v ? 1 : 0);
        } else if constexpr (std::is_arithmetic_v<T>) {
          append<T>(out, v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          append_string(out, v);
        } else {
          append<uint32_t>(out, static_cast<uint32_t>(v.element_type));
          append<uint64_t>(out, v.items.size());
          for (const GgufValue& item : v.items) append_value(out, item);
        }
      },
      value.storage());
}

// An array built by hand (GgufArray is an aggregate) can mix item types; the
// file format cannot hold that.
void check_array_items(const std::string& key, const GgufValue& value) {
  const GgufArray* array = value.as_array();
  if (array == nullptr) return;
  for (size_t i = 0; i < array->items.size(); ++i) {
    const GgufValue& item = array->items[i];
    if (item.type() != array->element_type) {
      throw std::invalid_argument(str_cat("gguf key '", key, "': array of ",
                                          gguf_type_name(array->element_type), " has item ", i,
                                          " of type ", gguf_type_name(item.type())));
    }
    check_array_items(key, item);
  }
}

uint64_t element_count(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (uint64_t dim : dims) n *= dim;  // callers checked it cannot overflow
  return n;
}

void write_all(int fd, std::span<const std::byte> bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(str_cat("cannot write ", path, ": ", std::strerror(errno)));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

// Makes the rename itself durable. Best effort: a failure here leaves a
// complete file that may not survive a power cut, which the caller cannot fix.
void sync_directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version, uint64_t alignment)
    : version_(version), alignment_(alignment) {
  if (version != 2 && version != 3) {
    throw std::invalid_argument(str_cat("gguf writer: version ", version, " (only 2 and 3)"));
  }
  // The format stores general.alignment as uint32.
  if (!std::has_single_bit(alignment) || alignment > std::numeric_limits<uint32_t>::max()) {
    throw std::invalid_argument(
        str_cat("gguf writer: alignment ", alignment, " is not a power of two that fits uint32"));
  }
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  if (key == kAlignmentKey) {
    throw std::invalid_argument("gguf writer: general.alignment comes from the constructor");
  }
  check_array_items(key, value);
  for (auto& [existing, old_value] : metadata_) {
    if (existing == key) {
      old_value = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::check_new_tensor(const std::string& name, const std::vector<uint64_t>& dims,
                                  WeightType type) const {
  auto fail = [&](const std::string& problem) {
    throw std::invalid_argument(str_cat("gguf writer: tensor '", name, "' ", problem));
  };
  if (name.empty()) fail("has an empty name");
  for (const Tensor& tensor : tensors_) {
    if (tensor.name == name) fail("is added twice");
  }
  if (dims.empty() || dims.size() > GgufFile::kMaxDims) {
    fail(str_cat("has ", dims.size(), " dimensions (expected 1 to ", GgufFile::kMaxDims, ")"));
  }
  uint64_t n_elems = 1;
  for (uint64_t dim : dims) {
    if (dim == 0) fail("has a zero dimension");
    if (__builtin_mul_overflow(n_elems, dim, &n_elems) ||
        n_elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("has too many elements");
    }
  }
  const WeightTypeInfo* info = find_weight_type(static_cast<uint32_t>(type));
  if (info == nullptr) fail(str_cat("has unknown type id ", static_cast<uint32_t>(type)));
  if (dims[0] % info->block_elems != 0) {
    fail(str_cat("has rows of ", dims[0], " elements, not a whole number of ", info->name,
                 " blocks (", info->block_elems, " elements)"));
  }
}

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> dims, WeightType type,
                            std::span<const float> values) {
  check_new_tensor(name, dims, type);
  if (!weight_type_info(type).supported) {
    throw std::invalid_argument(
        str_cat("gguf writer: tensor '", name, "': cannot quantize to ", weight_type_name(type)));
  }
  if (values.size() != element_count(dims)) {
    throw std::invalid_argument(str_cat("gguf writer: tensor '", name, "' has ", values.size(),
                                        " values for ", element_count(dims), " elements"));
  }
  tensors_.push_back({name, std::move(dims), type, quantize(type, values)});
}

void GgufWriter::add_tensor_bytes(const std::string& name, std::vector<uint64_t> dims,
                                  WeightType type, std::vector<std::byte> bytes) {
  check_new_tensor(name, dims, type);
  uint64_t expected = weight_bytes(type, element_count(dims)).value();
  if (bytes.size() != expected) {
    throw std::invalid_argument(str_cat("gguf writer: tensor '", name, "' has ", bytes.size(),
                                        " bytes, ", weight_type_name(type), " needs ", expected));
  }
  tensors_.push_back({name, std::move(dims), type, std::move(bytes)});
}

std::vector<std::byte> GgufWriter::encode_header() const {
  const bool write_alignment = alignment_ != GgufFile::kDefaultAlignment;
  std::vector<std::byte> out;
  append<uint32_t>(out, GgufFile::kMagic);
  append<uint32_t>(out, version_);
  append<uint64_t>(out, tensors_.size());
  append<uint64_t>(out, metadata_.size() + (write_alignment ? 1 : 0));

  if (write_alignment) {
    append_string(out, kAlignmentKey);
    append<uint32_t>(out, static_cast<uint32_t>(GgufType::kUint32));
    append<uint32_t>(out, static_cast<uint32_t>(alignment_));
  }
  for (const auto& [key, value] : metadata_) {
    append_string(out, key);
    append<uint32_t>(out, static_cast<uint32_t>(value.type()));
    append_value(out, value);
  }

  uint64_t offset = 0;  // from the start of the data section
  for (const Tensor& tensor : tensors_) {
    append_string(out, tensor.name);
    append<uint32_t>(out, static_cast<uint32_t>(tensor.dims.size()));
    for (uint64_t dim : tensor.dims) append<uint64_t>(out, dim);
    append<uint32_t>(out, static_cast<uint32_t>(tensor.type));
    append<uint64_t>(out, offset);
    offset += align_up(tensor.bytes.size(), alignment_);
  }
  return out;
}

void GgufWriter::emit(const Sink& sink) const {
  static constexpr std::array<std::byte, 4096> kZeros{};
  auto pad_to_alignment = [&](uint64_t size) {
    for (uint64_t n = align_up(size, alignment_) - size; n > 0;) {
      uint64_t chunk = std::min<uint64_t>(n, kZeros.size());
      sink(std::span(kZeros.data(), chunk));
      n -= chunk;
    }
  };
  std::vector<std::byte> header = encode_header();
  sink(header);
  pad_to_alignment(header.size());
  for (const Tensor& tensor : tensors_) {
    sink(tensor.bytes);
    pad_to_alignment(tensor.bytes.size());
  }
}

std::vector<std::byte> GgufWriter::serialize() const {
  std::vector<std::byte> out;
  emit([&out](std::span<const std::byte> piece) {
    out.insert(out.end(), piece.begin(), piece.end());
  });
  return out;
}

void GgufWriter::write(const std::string& path) const {
  // mkstemp's template: it replaces the X's with a unique suffix.
  std::string temp_path = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(temp_path.data());
  if (fd < 0) {
    throw std::runtime_error(
        str_cat("cannot create a temporary file beside ", path, ": ", std::strerror(errno)));
  }
  try {
    // mkstemp makes the file 0600; a model is read by the service's user too.
    if (::fchmod(fd, 0644) != 0) {
      throw std::runtime_error(str_cat("cannot chmod ", temp_path, ": ", std::strerror(errno)));
    }
    emit([&](std::span<const std::byte> piece) { write_all(fd, piece, temp_path); });
    if (::fsync(fd) != 0) {
      throw std::runtime_error(str_cat("cannot sync ", temp_path, ": ", std::strerror(errno)));
    }
    int closed = ::close(fd);
    fd = -1;
    if (closed != 0) {
      throw std::runtime_error(str_cat("cannot close ", temp_path, ": ", std::strerror(errno)));
    }
    if (::rename(temp_path.c_str(), path.c_str()) != 0) {
      throw std::runtime_error(
          str_cat("cannot rename ", temp_path, " to ", path, ": ", std::strerror(errno)));
    }
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp_path.c_str());
    throw;
  }
  sync_directory_of(path);
}

}  // namespace strata
