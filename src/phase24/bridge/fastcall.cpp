// A call decided once per shape, made again from C++: the host's cost of a short call as low as a
// torch operation's.
//
// A lab implementation f(x, out=None) of a "same-shape" operation (the output has x's shape and
// dtype) decides in Python, on a shape's first call, which kernels to launch and how
// (bridge/replay.py for CUDA C, softmax/triton/common.py for Triton). That Python costs more on
// the host than a short kernel costs on the GPU. `Plans` keeps what was decided, per key, as the
// driver's own launch parameters, and `Plans.call(x, out)` makes those launches again with the
// new tensors' addresses: the argument checks, the output and the launches happen here, in one
// call from Python, as they do inside torch.softmax.
//
// `call` returns None, and Python takes the call in full, for anything it does not handle
// itself: a key it has no plan for, an input that is not a plain contiguous CUDA tensor of a
// supported dtype on the current device, a given `out` that does not match, or another CUDA
// context current. So it never refuses an input and never launches anything Python would not.
//
// Key: (rows, row length, dtype, device, x's address mod 16, out's address mod 16): for
// contiguous tensors the shape and strides follow from the first two.
//
// A plan may have a scratch tensor of int64 words, its launches' third tensor: "fresh" (made for
// each call, as Python makes it) or "exchange" (words through which the programs of one launch
// trade partial results; one kept per device, stream and size, zeroed when made, as
// softmax/triton/common.py keeps its own: a launch leaves them ready for the next on its stream).
// A stream being captured into a graph gets a fresh zeroed one from Python: `call` declines.

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstring>
#include <map>
#include <tuple>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace py = pybind11;

namespace {

// The driver's entry points, looked up once in libcuda (as Triton's launcher does): nothing to
// link against, so the extension builds on any machine with torch's headers.
struct Driver {
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **) = nullptr;
  CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **) = nullptr;
  CUresult (*current)(CUcontext *) = nullptr;
  CUresult (*error_name)(CUresult, const char **) = nullptr;
  CUresult (*capturing)(CUstream, CUstreamCaptureStatus *) = nullptr;

  Driver() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) throw std::runtime_error("libcuda.so.1 could not be opened");
    launch = reinterpret_cast<decltype(launch)>(dlsym(lib, "cuLaunchKernel"));
    launch_ex = reinterpret_cast<decltype(launch_ex)>(dlsym(lib, "cuLaunchKernelEx"));
    current = reinterpret_cast<decltype(current)>(dlsym(lib, "cuCtxGetCurrent"));
    error_name = reinterpret_cast<decltype(error_name)>(dlsym(lib, "cuGetErrorName"));
    capturing = reinterpret_cast<decltype(capturing)>(dlsym(lib, "cuStreamIsCapturing"));
    if (!launch || !launch_ex || !current || !error_name || !capturing)
      throw std::runtime_error("libcuda.so.1 lacks cuLaunchKernel, cuLaunchKernelEx, ...");
  }
};

const Driver &driver() {
  static const Driver d;
  return d;
}

// One kernel parameter: a pointer `bits` bytes into tensor `which` (0: x, 1: out, 2: the
// scratch), or, with
// which == -1, a scalar whose bytes are the low bytes of `bits` (the driver reads as many bytes
// as the kernel's parameter has; the machine is little-endian).
struct Param {
  int which;
  uint64_t bits;
};

struct Launch {
  std::string name;
  CUfunction function;
  CUcontext context;
  unsigned grid, block, shared;
  bool cooperative;
  std::vector<Param> params;
};

enum Scratch { NONE = 0, FRESH = 1, EXCHANGE = 2 };

struct Plan {
  std::vector<Launch> launches;
  Scratch scratch;
  int64_t words;  // the scratch's size in int64 words
};

struct Key {
  int64_t rows, cols;
  int dtype, device, x_align, out_align;
  bool operator==(const Key &o) const {
    return rows == o.rows && cols == o.cols && dtype == o.dtype && device == o.device &&
           x_align == o.x_align && out_align == o.out_align;
  }
};

struct KeyHash {
  size_t operator()(const Key &k) const {
    size_t h = std::hash<int64_t>()(k.rows) * 1000003u ^ std::hash<int64_t>()(k.cols);
    return h * 31u + ((k.dtype * 64 + k.device) * 16 + k.x_align) * 16 + k.out_align;
  }
};

// The one place a key is made: Python's plan-learning (`key_of`) and `call` both use it.
Key make_key(const at::Tensor &x, const at::Tensor &out) {
  const auto xa = reinterpret_cast<uintptr_t>(x.data_ptr());
  const auto oa = reinterpret_cast<uintptr_t>(out.data_ptr());
  return Key{x.numel() / x.size(-1), x.size(-1), static_cast<int>(x.scalar_type()), x.get_device(),
             static_cast<int>(xa % 16), static_cast<int>(oa % 16)};
}

bool supported(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

const at::Tensor *plain_tensor(py::handle h) {
  if (h.is_none() || !THPVariable_CheckExact(h.ptr())) return nullptr;
  return &THPVariable_Unpack(h.ptr());
}

constexpr size_t MAX_PARAMS = 32;

Key key_from(py::handle xh, py::handle outh) {
  const at::Tensor *x = plain_tensor(xh), *out = plain_tensor(outh);
  if (!x || !out || x->dim() == 0 || x->numel() == 0)
    throw std::invalid_argument("a key needs two plain tensors with values");
  return make_key(*x, *out);
}

// The key as a tuple (Python keeps each plan's kernels alive under it), or None where `call`
// would never find one: a subclass, an empty tensor.
py::object key_of(py::handle xh, py::handle outh) {
  const at::Tensor *x = plain_tensor(xh), *out = plain_tensor(outh);
  if (!x || !out || x->dim() == 0 || x->numel() == 0) return py::none();
  const Key k = make_key(*x, *out);
  return py::make_tuple(k.rows, k.cols, k.dtype, k.device, k.x_align, k.out_align);
}

class Plans {
 public:
  // max_row: rows of this many values or more are refused by Python (with its message).
  // max_keys: plans kept; all are dropped beyond (a model whose shapes keep changing).
  Plans(int64_t max_row, size_t max_keys) : max_row_(max_row), max_keys_(max_keys) {}

  // x, out: the tensors of the call in Python that decided `launches`; they give the key.
  void add(py::handle xh, py::handle outh, py::list launches, int scratch, int64_t words) {
    const Key k = key_from(xh, outh);
    if (scratch < NONE || scratch > EXCHANGE || (scratch != NONE && words <= 0))
      throw std::invalid_argument("scratch must be 0 (none), 1 (fresh) or 2 (exchange), with words");
    Plan plan{{}, static_cast<Scratch>(scratch), words};
    for (py::handle item : launches) {
      auto t = item.cast<py::tuple>();
      Launch l{t[0].cast<std::string>(),
               reinterpret_cast<CUfunction>(t[1].cast<uintptr_t>()),
               reinterpret_cast<CUcontext>(t[2].cast<uintptr_t>()),
               t[3].cast<unsigned>(), t[4].cast<unsigned>(), t[5].cast<unsigned>(),
               t[6].cast<bool>(), {}};
      for (py::handle p : t[7].cast<py::list>()) {
        auto pt = p.cast<py::tuple>();
        l.params.push_back(Param{pt[0].cast<int>(), pt[1].cast<uint64_t>()});
      }
      if (l.params.size() > MAX_PARAMS) throw std::invalid_argument("too many kernel parameters");
      plan.launches.push_back(std::move(l));
    }
    std::unique_lock lock(mutex_);
    if (plans_.size() >= max_keys_) plans_.clear();
    plans_[k] = std::move(plan);
  }

  void clear() {
    std::unique_lock lock(mutex_);
    plans_.clear();
    std::lock_guard exchange_lock(exchange_mutex_);
    exchange_.clear();
  }

  size_t size() const {
    std::shared_lock lock(mutex_);
    return plans_.size();
  }

  py::object call(py::handle xh, py::handle outh) const {
    const at::Tensor *xp = plain_tensor(xh);
    if (!xp) return py::none();
    const at::Tensor &x = *xp;
    if (!x.is_cuda() || x.layout() != at::kStrided || x.dim() == 0 || !supported(x.scalar_type()) ||
        x.requires_grad() || !x.is_contiguous())
      return py::none();
    const int64_t cols = x.size(-1), numel = x.numel();
    if (numel == 0 || cols >= max_row_) return py::none();
    const int device = x.get_device();
    if (device != c10::cuda::current_device()) return py::none();

    at::Tensor out;
    if (outh.is_none()) {
      out = at::empty(x.sizes(), x.options());
    } else {
      const at::Tensor *op = plain_tensor(outh);
      if (!op || !op->is_cuda() || op->scalar_type() != x.scalar_type() ||
          op->get_device() != device || op->sizes() != x.sizes() || !op->is_contiguous())
        return py::none();
      out = *op;
    }
    const Key k = make_key(x, out);

    std::shared_lock lock(mutex_);
    auto it = plans_.find(k);
    if (it == plans_.end() || it->second.launches.empty()) return py::none();
    const Plan &plan = it->second;
    const Driver &drv = driver();
    CUcontext context = nullptr;
    drv.current(&context);
    if (context != plan.launches.front().context) return py::none();
    const CUstream stream = c10::cuda::getCurrentCUDAStream(device).stream();
    at::Tensor scratch;
    if (plan.scratch == FRESH) {
      scratch = at::empty({plan.words}, x.options().dtype(at::kLong));
    } else if (plan.scratch == EXCHANGE) {
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      if (drv.capturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE)
        return py::none();
      scratch = exchange(x, stream, plan.words);
    }
    const uint64_t base[3] = {reinterpret_cast<uint64_t>(x.data_ptr()),
                              reinterpret_cast<uint64_t>(out.data_ptr()),
                              scratch.defined() ? reinterpret_cast<uint64_t>(scratch.data_ptr()) : 0};
    for (const Launch &l : plan.launches) {
      uint64_t values[MAX_PARAMS];
      void *params[MAX_PARAMS];
      for (size_t i = 0; i < l.params.size(); ++i) {
        const Param &p = l.params[i];
        values[i] = p.which < 0 ? p.bits : base[p.which] + p.bits;
        params[i] = &values[i];
      }
      CUresult rc;
      if (l.cooperative) {
        CUlaunchAttribute attr;
        std::memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        CUlaunchConfig config;
        std::memset(&config, 0, sizeof config);
        config.gridDimX = l.grid;
        config.gridDimY = config.gridDimZ = 1;
        config.blockDimX = l.block;
        config.blockDimY = config.blockDimZ = 1;
        config.sharedMemBytes = l.shared;
        config.hStream = stream;
        config.attrs = &attr;
        config.numAttrs = 1;
        rc = drv.launch_ex(&config, l.function, params, nullptr);
      } else {
        rc = drv.launch(l.function, l.grid, 1, 1, l.block, 1, 1, l.shared, stream, params, nullptr);
      }
      if (rc != CUDA_SUCCESS) {
        const char *name = nullptr;
        drv.error_name(rc, &name);
        throw std::runtime_error("launch of " + l.name + " on cuda:" + std::to_string(device) +
                                 " failed (grid=" + std::to_string(l.grid) + ", block=" +
                                 std::to_string(l.block) + ", shared=" + std::to_string(l.shared) +
                                 " B): " + (name ? name : "CUDA error " + std::to_string(rc)));
      }
    }
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(out)));
  }

 private:
  // The exchange words of (device, stream, size), made zeroed on that stream on first use.
  at::Tensor exchange(const at::Tensor &x, CUstream stream, int64_t words) const {
    const auto key = std::make_tuple(x.get_device(), reinterpret_cast<uintptr_t>(stream), words);
    std::lock_guard lock(exchange_mutex_);
    auto it = exchange_.find(key);
    if (it != exchange_.end()) return it->second;
    if (exchange_.size() >= 64) exchange_.clear();  // (a dropped buffer is freed in stream order)
    return exchange_[key] = at::zeros({words}, x.options().dtype(at::kLong));
  }

  int64_t max_row_;
  size_t max_keys_;
  mutable std::shared_mutex mutex_;
  std::unordered_map<Key, Plan, KeyHash> plans_;
  mutable std::mutex exchange_mutex_;
  mutable std::map<std::tuple<int, uintptr_t, int64_t>, at::Tensor> exchange_;
};

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  py::class_<Plans>(m, "Plans")
      .def(py::init<int64_t, size_t>())
      .def("add", &Plans::add)
      .def("clear", &Plans::clear)
      .def("__len__", &Plans::size)
      .def("call", &Plans::call);
  m.def("key_of", &key_of);
}
