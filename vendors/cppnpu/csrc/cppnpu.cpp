// cppnpu: a PrivateUse1 backend for PyTorch written in C++, the kit's reference for vendors
// whose stack is a compiled library. One translation unit, so a fresh build is one compile.
//
// What a C++ backend has to give PyTorch, in the order of this file:
//   1. an allocator for the device's memory (registered for PrivateUse1);
//   2. a device guard (which device is current; PyTorch switches devices through it);
//   3. hooks (is the backend built and available; its pinned host memory);
//   4. the kernels PyTorch cannot do without on a new device: empty, empty_strided, the view
//      ops, resize_, copies between host and device, item();
//   5. native compute kernels for a few ops (add.Tensor, mul.Tensor, relu, and where.self and
//      index_select, which standard v2 requires to run natively), each of which can be told to
//      compute a wrong result (fault injection, set from Python: cppnpu.faults);
//   6. host detours for the few ops the plain fallback gets wrong (convolution, batch norm's
//      running statistics, group and layer norm);
//   7. a boxed fallback: every other op runs on the CPU (at::native::cpu_fallback copies the
//      device arguments to the host, calls the CPU kernel and copies results back);
//   8. a few custom ops (torch.ops.cppnpu.*) through which the Python package talks to this
//      library, so it needs no Python bindings of its own.
//
// The "device" is host memory in an arena of its own: each device allocation is a separate
// malloc tracked in a table, so a device tensor's data_ptr is never a CPU tensor's, and every
// kernel here checks that the device tensors it touches live in the arena.

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/OpMathType.h>
#include <ATen/TensorIterator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/BinaryOps.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DynamicCast.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace cppnpu {
namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

// --- 1. device memory ------------------------------------------------------------------------

// The arena: every live device allocation and its size. A real backend would call its driver
// here; what matters for the kit is that device memory is the backend's own.
class Arena {
 public:
  void* allocate(size_t nbytes) {
    // malloc(0) may return nullptr; a one-byte block keeps every data_ptr distinct.
    void* ptr = std::malloc(nbytes == 0 ? 1 : nbytes);
    TORCH_CHECK(ptr != nullptr, "cppnpu: out of device memory allocating ", nbytes, " bytes");
    std::lock_guard<std::mutex> lock(mutex_);
    blocks_[reinterpret_cast<uintptr_t>(ptr)] = nbytes;
    in_use_ += nbytes;
    return ptr;
  }

  void release(void* ptr) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
      TORCH_INTERNAL_ASSERT(found != blocks_.end(), "cppnpu: freeing memory it never allocated");
      in_use_ -= found->second;
      blocks_.erase(found);
    }
    std::free(ptr);
  }

  // Whether [ptr, ptr + nbytes) lies inside one live allocation (a view may start mid-block):
  // the block starting at or before ptr is the only candidate.
  bool owns(const void* ptr, size_t nbytes) const {
    auto address = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> lock(mutex_);
    auto after = blocks_.upper_bound(address);
    if (after == blocks_.begin()) {
      return false;
    }
    auto [start, size] = *std::prev(after);
    return address + nbytes <= start + std::max<size_t>(size, 1);
  }

  int64_t in_use() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int64_t>(in_use_);
  }

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> blocks_;  // by start address
  size_t in_use_ = 0;
};

Arena& arena() {
  // Never destroyed: tensors freed while the process exits must still find it.
  static auto* instance = new Arena();
  return *instance;
}

// Pinned host memory, what a copy off the device with non_blocking=True lands in (and
// tensor.pin_memory() makes): host memory the backend tracks, as a driver tracks page-locked
// pages, so that is_pinned() says which is which. Its own arena, never the device's.
Arena& pinned_arena() {
  static auto* instance = new Arena();
  return *instance;
}

// An allocator over one arena, its blocks tagged with the device they belong to.
template <Arena& (*arena_of)(), c10::DeviceType kType>
struct ArenaAllocator final : c10::Allocator {
  static void release(void* ptr) {
    arena_of().release(ptr);
  }

  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = arena_of().allocate(nbytes);
    return {ptr, ptr, &release, c10::Device(kType, kType == kDevice ? 0 : -1)};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }

  // A copy of raw bytes within the arena (used when a storage is cloned).
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

ArenaAllocator<arena, kDevice> g_allocator;
REGISTER_ALLOCATOR(kDevice, &g_allocator);
ArenaAllocator<pinned_arena, c10::DeviceType::CPU> g_pinned_allocator;

// A device tensor's bytes, checked to be the arena's: a kernel handed a CPU pointer under a
// device tensor would compute on memory that is not the device's.
void check_on_device(const at::Tensor& tensor) {
  if (tensor.device().type() != kDevice || tensor.numel() == 0) {
    return;
  }
  TORCH_INTERNAL_ASSERT(
      arena().owns(tensor.storage().data(), tensor.storage().nbytes()),
      "cppnpu: a device tensor whose storage is not device memory");
}

// The host's view of a device tensor (same bytes, sizes and strides) for the copy kernels: the
// simulated device's memory is host-addressable, as a real driver's mapped memory would be.
// The view keeps the tensor's lazy conjugate and negative bits: bytes alone would copy a
// conjugated view (x.conj(), what hfft hands its c2r transform) unconjugated.
at::Tensor host_alias(const at::Tensor& tensor) {
  if (tensor.device().type() != kDevice) {
    return tensor;
  }
  check_on_device(tensor);
  at::Tensor alias = at::from_blob(
      tensor.data_ptr(), tensor.sizes(), tensor.strides(),
      tensor.options().device(at::kCPU));
  alias._set_conj(tensor.is_conj());
  alias._set_neg(tensor.is_neg());
  return alias;
}

// --- 2. device guard -------------------------------------------------------------------------

// One device (index 0); the current device is per thread, as with CUDA.
thread_local c10::DeviceIndex current_device = 0;

struct DeviceGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kDevice;
  }

  c10::Device exchangeDevice(c10::Device device) const override {
    auto previous = getDevice();
    setDevice(device);
    return previous;
  }

  c10::Device getDevice() const override {
    return c10::Device(kDevice, current_device);
  }

  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.type() == kDevice, "cppnpu: not a cppnpu device: ", device);
    TORCH_CHECK(device.index() == 0, "cppnpu: invalid device index ", int(device.index()),
                " (one device: 0)");
    current_device = device.index();
  }

  void uncheckedSetDevice(c10::Device device) const noexcept override {
    current_device = device.index();
  }

  // No streams: every kernel completes before it returns, so one default stream suffices.
  c10::Stream getStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::DEFAULT, device);
  }

  c10::Stream exchangeStream(c10::Stream stream) const override {
    return stream;
  }

  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }

  void synchronizeDevice(const c10::DeviceIndex /*device_index*/) const override {}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, DeviceGuard);

// --- 3. hooks --------------------------------------------------------------------------------

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return true;
  }
  bool hasPrimaryContext(c10::DeviceIndex /*device_index*/) const override {
    return true;
  }
  c10::Allocator* getPinnedMemoryAllocator() const override {
    return &g_pinned_allocator;
  }
  bool isPinnedPtr(const void* data) const override {
    return pinned_arena().owns(data, 1);
  }
};

// Registered when the library loads (a static initializer): PyTorch asks for the hooks before
// the first device tensor exists (torch.accelerator, autograd's device checks).
const bool hooks_registered = [] {
  static Hooks hooks;
  at::RegisterPrivateUse1HooksInterface(&hooks);
  return true;
}();

// --- 4. the kernels a device needs -----------------------------------------------------------

at::Tensor empty_memory_format(
    c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
    std::optional<at::Layout> layout, std::optional<at::Device> device,
    std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!pin_memory.value_or(false), "cppnpu: device memory cannot be pinned");
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
              "cppnpu: only strided tensors are supported");
  return at::detail::empty_generic(
      size, &g_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(
    c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
    std::optional<at::Layout> layout, std::optional<at::Device> device,
    std::optional<bool> pin_memory) {
  TORCH_CHECK(!pin_memory.value_or(false), "cppnpu: device memory cannot be pinned");
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided,
              "cppnpu: only strided tensors are supported");
  return at::detail::empty_strided_generic(
      size, stride, &g_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
      c10::dtype_or_default(dtype));
}

// Copies between host and device in either direction, and device to device: the host's copy_
// does the work on host aliases (dtype conversion, broadcasting, any strides).
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
  TORCH_CHECK(self.defined() && dst.defined(), "cppnpu: copy of an undefined tensor");
  at::Tensor target = host_alias(dst);
  at::Tensor source = host_alias(self).expand_as(target);
  // An expanded destination (stride 0) holds several elements per memory location; the
  // fallback copies an in-place op's result back into it (x.expand(...).fill_(1) is legal on
  // the CPU): each location is written once, from the first of its elements.
  for (int64_t dim = 0; dim < target.dim(); ++dim) {
    if (target.stride(dim) == 0 && target.size(dim) > 1) {
      target = target.narrow(dim, 0, 1);
      source = source.narrow(dim, 0, 1);
    }
  }
  target.copy_(source);
  return dst;
}

// What the CPU fallback calls to hand an out= argument its result. An out= tensor of the wrong
// shape takes the CPU result's shape and strides, as the CPU kernel gives its own out tensor.
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) {
    at::native::resize_impl_cpu_(dst.unsafeGetTensorImpl(), self.sizes(), self.strides());
  }
  return copy_from(self, dst, false);
}

// tensor.item(): read the one element on the host.
at::Scalar local_scalar_dense(const at::Tensor& self) {
  return host_alias(self).item();
}

// Views share their base's storage: these must be native, a fallback would return copies.
// ATen's own implementations only rearrange metadata, so they serve any device.
at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

// resize_ grows a storage through the storage's own allocator (this one) and copies the old
// bytes with memcpy, which the host-addressable arena allows.
const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memory_format) {
  return at::native::resize_(self, size, memory_format);
}

// --- 5. native compute kernels and their faults ----------------------------------------------

// The ops told to compute wrong results (set by cppnpu.faults from CPPNPU_FAULTS).
std::mutex faults_mutex;
std::set<std::string> faulty_ops;

bool is_faulty(const std::string& op) {
  std::lock_guard<std::mutex> lock(faults_mutex);
  return faulty_ops.count(op) > 0;
}

void set_faults(std::vector<std::string> ops) {
  std::lock_guard<std::mutex> lock(faults_mutex);
  faulty_ops = std::set<std::string>(ops.begin(), ops.end());
}

// A wrong result far outside any tolerance: floating x*1.25 + 1, integers + 1, booleans
// flipped. Non-finite values stay non-finite.
template <typename T>
T perturb(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return !value;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(value + 1);
  } else {
    return static_cast<T>(value * T(1.25) + T(1));
  }
}

// Runs `compute(inputs...)` elementwise over a built TensorIterator in the common dtype's
// opmath type (float for float16/bfloat16, like the CPU kernels), reading each input in its
// own dtype and writing the output's: TensorIterator promotes dtypes by itself only on CPU.
template <typename scalar_t, int N, typename Compute>
void elementwise(at::TensorIteratorBase& iter, bool faulty, Compute compute) {
  using opmath_t = at::opmath_type<scalar_t>;
  std::array<at::ScalarType, N> in_dtypes;
  for (int i = 0; i < N; ++i) {
    in_dtypes[i] = iter.input_dtype(i);
  }
  at::ScalarType out_dtype = iter.dtype(0);
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      std::array<opmath_t, N> args;
      for (int i = 0; i < N; ++i) {
        args[i] = static_cast<opmath_t>(
            c10::fetch_and_cast<scalar_t>(in_dtypes[i], data[i + 1] + k * strides[i + 1]));
      }
      opmath_t result = std::apply(compute, args);
      if (faulty) {
        result = perturb(result);
      }
      c10::cast_and_store<scalar_t>(out_dtype, data[0] + k * strides[0],
                                    static_cast<scalar_t>(result));
    }
  });
}

void check_operands(const at::TensorIteratorBase& iter) {
  for (int i = 0; i < iter.ntensors(); ++i) {
    check_on_device(iter.tensor(i));
  }
}

// add.Tensor: self + alpha * other, with PyTorch's broadcasting and type promotion
// (TensorIterator works both out and allocates the result on this device).
at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  at::Tensor out;
  auto iter = at::TensorIterator::binary_op(out, self, other);
  at::native::alpha_check(iter.common_dtype(), alpha);
  check_operands(iter);
  bool faulty = is_faulty("add");
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, iter.common_dtype(),
                             "cppnpu_add", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    auto a = alpha.to<opmath_t>();
    elementwise<scalar_t, 2>(iter, faulty, [a](opmath_t x, opmath_t y) {
      if constexpr (std::is_same_v<opmath_t, bool>) {
        return x || (a && y);
      } else {
        return static_cast<opmath_t>(x + a * y);
      }
    });
  });
  return iter.output();
}

at::Tensor mul(const at::Tensor& self, const at::Tensor& other) {
  at::Tensor out;
  auto iter = at::TensorIterator::binary_op(out, self, other);
  check_operands(iter);
  bool faulty = is_faulty("mul");
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, iter.common_dtype(),
                             "cppnpu_mul", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    elementwise<scalar_t, 2>(iter, faulty, [](opmath_t x, opmath_t y) {
      if constexpr (std::is_same_v<opmath_t, bool>) {
        return x && y;
      } else {
        return static_cast<opmath_t>(x * y);
      }
    });
  });
  return iter.output();
}

// relu: max(x, 0), NaN kept (as CPU's clamp_min does); booleans refused as on CPU.
at::Tensor relu(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool, "Boolean inputs not supported for relu");
  at::Tensor out;
  auto iter = at::TensorIterator::unary_op(out, self);
  check_operands(iter);
  bool faulty = is_faulty("relu");
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, iter.common_dtype(), "cppnpu_relu", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    elementwise<scalar_t, 1>(iter, faulty, [](opmath_t x) {
      return x != x ? x : (x > opmath_t(0) ? x : opmath_t(0));  // x != x: NaN
    });
  });
  return iter.output();
}

// where.self: condition ? self : other, elementwise with broadcasting over all three. The
// result takes the promoted dtype of self and other (not the condition's); each value is read
// in its own dtype and converted to the result's, so no promoted copy of an input is made.
// A 0-dim host tensor is accepted as any operand, as CUDA's kernel accepts one: the device's
// memory is host-addressable, so the loop reads it where it lies.
at::Tensor where(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  // uint8 conditions are deprecated but still accepted by the CPU kernel; read as bool.
  TORCH_CHECK(condition.scalar_type() == at::kBool || condition.scalar_type() == at::kByte,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              condition.scalar_type());
  at::ScalarType result_type = at::result_type(self, other);
  at::Tensor out;
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .allow_cpu_scalars(true)
                  .declare_static_dtype(result_type)
                  .add_output(out)
                  .add_const_input(condition)
                  .add_const_input(self)
                  .add_const_input(other)
                  .build();
  check_operands(iter);
  bool faulty = is_faulty("where");
  // By operand: 0 the output, 1 the condition, 2 self, 3 other.
  std::array<at::ScalarType, 4> dtypes{iter.dtype(0), iter.dtype(1), iter.dtype(2),
                                       iter.dtype(3)};
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, result_type,
                             "cppnpu_where", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        bool condition_holds = c10::fetch_and_cast<bool>(dtypes[1], data[1] + k * strides[1]);
        int picked = condition_holds ? 2 : 3;
        auto value = c10::fetch_and_cast<scalar_t>(dtypes[picked],
                                                   data[picked] + k * strides[picked]);
        if (faulty) {
          value = static_cast<scalar_t>(perturb(static_cast<opmath_t>(value)));
        }
        *reinterpret_cast<scalar_t*>(data[0] + k * strides[0]) = value;
      }
    });
  });
  return iter.output();
}

// Every index must name a slice of self, checked before any output is written, as the CPU
// kernel does: an IndexError, never a read outside self's memory.
void check_indices(const at::Tensor& index, int64_t size) {
  at::Tensor values = host_alias(index).reshape({-1});  // host-side: only the check reads it
  AT_DISPATCH_INDEX_TYPES(values.scalar_type(), "cppnpu_check_indices", [&] {
    auto read = values.accessor<index_t, 1>();
    for (int64_t i = 0; i < read.size(0); ++i) {
      TORCH_CHECK_INDEX(read[i] >= 0 && read[i] < size, "index out of range in self");
    }
  });
}

// index_select: out.select(dim, i) = self.select(dim, index[i]). The loop runs over the output
// with TensorIterator (any strides of self and index), pairing each output element with the
// self element at the same position outside `dim` and the index element along `dim`: self is
// restrided to stride 0 along `dim` and index to stride 0 along every other dim, so the kernel
// adds index * stride(dim) to the self pointer (the way ATen's own index kernels restride).
at::Tensor index_select(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  TORCH_CHECK_INDEX(index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  TORCH_CHECK(index.scalar_type() == at::kLong || index.scalar_type() == at::kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  TORCH_CHECK(index.device() == self.device(),
              "index_select(): expected self and index on the same device, got ",
              self.device(), " and ", index.device());
  int64_t numel = index.numel();
  TORCH_CHECK(self.dim() > 0 || numel == 1,
              "index_select(): Index to scalar can have only 1 value, got ", numel,
              " value(s)");
  dim = c10::maybe_wrap_dim(dim, self.dim());
  // A 0-dim self acts as a one-element vector (the CPU kernel's rule): index must be 0.
  int64_t dim_size = self.dim() == 0 ? 1 : self.size(dim);
  int64_t dim_stride = self.dim() == 0 ? 0 : self.stride(dim);
  check_indices(index, dim_size);

  std::vector<int64_t> sizes = self.sizes().vec();
  if (self.dim() > 0) {
    sizes[dim] = numel;
  }
  at::Tensor out = at::empty(sizes, self.options());
  std::vector<int64_t> self_strides = self.strides().vec();
  std::vector<int64_t> index_strides(sizes.size(), 0);
  if (self.dim() > 0) {
    self_strides[dim] = 0;
    index_strides[dim] = index.dim() == 0 ? 0 : index.stride(0);
  }
  at::Tensor self_restrided = self.as_strided(sizes, self_strides);
  at::Tensor index_restrided = index.as_strided(sizes, index_strides);
  auto iter = at::TensorIteratorConfig()
                  .check_all_same_dtype(false)
                  .resize_outputs(false)
                  .add_output(out)
                  .add_const_input(self_restrided)
                  .add_const_input(index_restrided)
                  .build();
  check_operands(iter);
  bool faulty = is_faulty("index_select");
  int64_t step = dim_stride * static_cast<int64_t>(self.element_size());
  at::ScalarType index_dtype = index.scalar_type();
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, self.scalar_type(),
                             "cppnpu_index_select", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        auto position = c10::fetch_and_cast<int64_t>(index_dtype, data[2] + k * strides[2]);
        auto value = *reinterpret_cast<const scalar_t*>(data[1] + k * strides[1] +
                                                        position * step);
        if (faulty) {
          value = static_cast<scalar_t>(perturb(static_cast<opmath_t>(value)));
        }
        *reinterpret_cast<scalar_t*>(data[0] + k * strides[0]) = value;
      }
    });
  });
  return out;
}

// --- 6. host detours: ops the boxed fallback cannot serve as they are ------------------------

// A few ops reach a new device on paths the plain fallback gets wrong: convolution goes to
// convolution_overrideable (whose generic kernel only raises), native_batch_norm updates its
// running statistics in place although its schema does not say so (the fallback would drop the
// update), native_group_norm has a generic kernel that cannot take channels-last inputs, and
// native_layer_norm's generic kernel rounds differently from the CPU's.
// Each is run on the host here, as the fallback would, with those facts handled.

std::optional<at::Tensor> to_host(const std::optional<at::Tensor>& tensor) {
  return tensor.has_value() && tensor->defined() ? std::optional<at::Tensor>(tensor->cpu())
                                                 : std::nullopt;
}

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight,
                       const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                       c10::IntArrayRef output_padding, int64_t groups) {
  at::Tensor result = at::convolution(input.cpu(), weight.cpu(), to_host(bias), stride, padding,
                                      dilation, transposed, output_padding, groups);
  return result.to(input.device());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
    bool transposed, c10::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask) {
  // The bias has one value per output channel.
  std::vector<int64_t> bias_sizes{transposed ? weight.size(1) * groups : weight.size(0)};
  auto [grad_input, grad_weight, grad_bias] = at::convolution_backward(
      grad_output.cpu(), input.cpu(), weight.cpu(), bias_sizes, stride, padding, dilation,
      transposed, output_padding, groups, output_mask);
  auto back = [&](const at::Tensor& t) { return t.defined() ? t.to(input.device()) : t; };
  return {back(grad_input), back(grad_weight), back(grad_bias)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> native_batch_norm(
    const at::Tensor& input, const std::optional<at::Tensor>& weight,
    const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
    const std::optional<at::Tensor>& running_var, bool training, double momentum, double eps) {
  auto host_mean = to_host(running_mean);
  auto host_var = to_host(running_var);
  auto [out, save_mean, save_invstd] = at::native_batch_norm(
      input.cpu(), to_host(weight), to_host(bias), host_mean, host_var, training, momentum, eps);
  if (host_mean.has_value()) {
    running_mean->copy_(*host_mean);  // the update the schema does not announce
  }
  if (host_var.has_value()) {
    running_var->copy_(*host_var);
  }
  auto device = input.device();
  return {out.to(device), save_mean.to(device), save_invstd.to(device)};
}

// --- 6b. fused recurrent cells ---------------------------------------------------------------
// ATen's LSTM and GRU cells take a fused path on every non-CPU tensor, and CPU has no kernel for
// it, so the CPU fallback cannot serve them: composed here from the device's own ops. The
// workspace is this backend's own: the LSTM's activated gates (input, forget, cell, output);
// the GRU's reset, update and new gates, the previous hidden state and the new gate's hidden part.

at::Tensor biased(const at::Tensor& gates, const std::optional<at::Tensor>& bias) {
  return bias.has_value() && bias->defined() ? gates + *bias : gates;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  auto gates = (biased(input_gates, input_bias) + biased(hidden_gates, hidden_bias)).chunk(4, 1);
  at::Tensor in = gates[0].sigmoid(), forget = gates[1].sigmoid(), cell = gates[2].tanh(),
             out = gates[3].sigmoid();
  at::Tensor cy = forget * cx + in * cell;
  return {out * cy.tanh(), cy, at::cat({in, forget, cell, out}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy_in, const std::optional<at::Tensor>& grad_cy_in,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  auto gates = workspace.chunk(4, 1);
  const at::Tensor &in = gates[0], &forget = gates[1], &cell = gates[2], &out = gates[3];
  at::Tensor grad_hy = grad_hy_in.has_value() && grad_hy_in->defined() ? *grad_hy_in
                                                                        : at::zeros_like(cy);
  at::Tensor grad_cy = grad_cy_in.has_value() && grad_cy_in->defined() ? *grad_cy_in
                                                                        : at::zeros_like(cy);
  at::Tensor tanh_cy = cy.tanh();
  at::Tensor grad_c = grad_hy * out * (1 - tanh_cy * tanh_cy) + grad_cy;
  at::Tensor grad_gates = at::cat({grad_c * cell * in * (1 - in),
                                   grad_c * cx * forget * (1 - forget),
                                   grad_c * in * (1 - cell * cell),
                                   grad_hy * tanh_cy * out * (1 - out)}, 1);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {grad_gates, grad_c * forget, grad_bias};
}

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  auto in = biased(input_gates, input_bias).chunk(3, 1);
  auto hid = biased(hidden_gates, hidden_bias).chunk(3, 1);
  at::Tensor reset = (in[0] + hid[0]).sigmoid(), update = (in[1] + hid[1]).sigmoid();
  at::Tensor fresh = (in[2] + reset * hid[2]).tanh();
  return {fresh + update * (hx - fresh), at::cat({reset, update, fresh, hx, hid[2]}, 1)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  auto parts = workspace.chunk(5, 1);
  const at::Tensor &reset = parts[0], &update = parts[1], &fresh = parts[2], &hx = parts[3],
                   &hid_new = parts[4];
  at::Tensor grad_new = grad_hy * (1 - update) * (1 - fresh * fresh);
  at::Tensor grad_update = grad_hy * (hx - fresh) * update * (1 - update);
  at::Tensor grad_reset = grad_new * hid_new * reset * (1 - reset);
  at::Tensor grad_input = at::cat({grad_reset, grad_update, grad_new}, 1);
  at::Tensor grad_hidden = at::cat({grad_reset, grad_update, grad_new * reset}, 1);
  return {grad_input, grad_hidden, grad_hy * update,
          has_bias ? grad_input.sum(0) : at::Tensor(), has_bias ? grad_hidden.sum(0) : at::Tensor()};
}

// --- 7. everything else: the CPU fallback ----------------------------------------------------

void fallback_to_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

// --- 8. the Python package's handles ---------------------------------------------------------

int64_t memory_allocated() {
  return arena().in_use();
}

// Whether `tensor`'s bytes are device memory from the arena (the tests check it).
bool is_device_memory(const at::Tensor& tensor) {
  return tensor.numel() > 0 &&
         arena().owns(tensor.storage().data(), tensor.storage().nbytes());
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("as_strided", as_strided);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  m.impl("unfold", at::native::unfold);
  m.impl("resize_", resize);
  m.impl("add.Tensor", add);
  m.impl("mul.Tensor", mul);
  m.impl("relu", relu);
  m.impl("where.self", where);
  m.impl("index_select", index_select);
  m.impl("convolution_overrideable", convolution);
  m.impl("convolution_backward_overrideable", convolution_backward);
  m.impl("native_batch_norm", native_batch_norm);
  m.impl("_thnn_fused_lstm_cell", fused_lstm_cell);
  m.impl("_thnn_fused_lstm_cell_backward_impl", fused_lstm_cell_backward);
  m.impl("_thnn_fused_gru_cell", fused_gru_cell);
  m.impl("_thnn_fused_gru_cell_backward", fused_gru_cell_backward);
  // The CPU kernels through the fallback, instead of the generic kernels (see section 6).
  m.impl("native_group_norm", torch::CppFunction::makeFromBoxedFunction<&fallback_to_cpu>());
  m.impl("native_layer_norm", torch::CppFunction::makeFromBoxedFunction<&fallback_to_cpu>());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&fallback_to_cpu>());
}

// A copy whose source is a lazily conjugated or negated view (hfft conjugates before its c2r
// transform) reaches the device's copy with its bit set: copy_from handles both bits itself
// (host_alias keeps them). Without these, the conjugate fallback materializes the source by a
// clone, which copies through _copy_from again, and so on until the stack overflows.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

// A catch-all kernel each: they take no device tensor or read only metadata and the arena.
TORCH_LIBRARY(cppnpu, m) {
  m.def("set_faults(str[] ops) -> ()", &set_faults);
  m.def("memory_allocated() -> int", &memory_allocated);
  m.def("is_device_memory(Tensor tensor) -> bool", &is_device_memory);
}

}  // namespace cppnpu
