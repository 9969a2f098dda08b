// One decode step through every decoder layer, in C++: the CPU fast path for decode-only steps.
//
// Why: a batch-1 decode step of the 0.5B default model is ~45 ms of weight streaming and, in eager
// PyTorch, ~20 ms more of small ops (norms, rotary, cache writes, attention, SwiGLU) and the Python
// that calls them, ~60 per layer. Here each layer is four projection calls (the same oneDNN, fbgemm or
// ATen kernels the Python path uses, layers/linear.py) and plain loops for everything between them.
//
// The numerics follow the Python reference path (inference/layers, models/decoder.py) step by step:
// float32 math, rounded to the model dtype exactly where the reference rounds, so the two paths agree
// to float32 summation order. tests/inference/test_fused_decode.py pins that.

#include "int8_blocks.h"

#include <torch/extension.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

// How the projections' weights are stored (layers/linear.py): plain, oneDNN-prepacked, or fbgemm int8.
enum Layout : int64_t { kDense = 0, kPacked = 1, kInt8 = 2 };

// The tensors of one decoder layer, in the order the Python side passes them; under int8 the four
// weight tensors are empty and `int8` points at the layer's four prepacked weights (qkv, o, gate_up, down).
// Then, per projection, its block-scaled int8 weight and scales (int8_blocks.h; empty when the layer has none).
constexpr int64_t kTensorsPerLayer = 17;
constexpr int64_t kInt8PerLayer = 4;
struct Layer {
  const torch::Tensor& input_norm;
  const torch::Tensor& qkv_weight;
  const torch::Tensor& qkv_bias;  // empty when the model has no q/k/v bias
  const torch::Tensor& o_weight;
  const torch::Tensor& post_norm;
  const torch::Tensor& gate_up_weight;
  const torch::Tensor& down_weight;
  const torch::Tensor& k_cache;  // [num_blocks, block_size, num_kv_heads, head_dim]
  const torch::Tensor& v_cache;
  const torch::Tensor* blocks;  // qkv q, qkv scales, o q, o scales, gate_up q, ..., down scales
  const c10::IValue* int8;
};

struct Shape {
  int64_t num_heads, num_kv_heads, head_dim, block_size;
  double eps;
  Layout layout;
  int64_t blocks_isa, blocks_max_rows;  // int8 block kernel (int8_blocks::Isa; -1: none) and its row limit
};

torch::Tensor call_boxed(const c10::OperatorHandle& op, torch::jit::Stack stack) {
  op.callBoxed(&stack);
  return stack[0].toTensor();
}

// layers/linear.py's int8_linear: per-token activation scales around fbgemm's per-tensor quantisation.
torch::Tensor int8_linear(const torch::Tensor& x, const c10::IValue& packed, const std::optional<torch::Tensor>& bias) {
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_dynamic", "");
  torch::Tensor y;
  if (x.numel() == x.size(-1)) {
    y = call_boxed(op, {x, packed, true});
  } else {
    const auto row_max = x.abs().amax(-1, true).clamp_min(1e-12);
    y = call_boxed(op, {x / row_max, packed, true}).mul_(row_max);
  }
  return bias ? y.add_(*bias) : y;
}

// x @ W.T (+ bias) with projection `which` (0 qkv, 1 o, 2 gate_up, 3 down) as layers/linear.py stores it.
torch::Tensor linear(const torch::Tensor& x, const Layer& layer, int which, const Shape& s) {
  const torch::Tensor* weights[] = {&layer.qkv_weight, &layer.o_weight, &layer.gate_up_weight, &layer.down_weight};
  const std::optional<torch::Tensor> bias =
      which == 0 && layer.qkv_bias.numel() ? std::optional<torch::Tensor>(layer.qkv_bias) : std::nullopt;
  const torch::Tensor& q = layer.blocks[2 * which];
  if (s.blocks_isa >= 0 && q.numel() && x.size(0) <= s.blocks_max_rows)
    return int8_blocks::linear(x, q, layer.blocks[2 * which + 1], bias, s.blocks_isa);
  switch (s.layout) {
    case kInt8:
      return int8_linear(x, layer.int8[which], bias);
    case kPacked: {
      static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("mkldnn::_linear_pointwise", "");
      return call_boxed(op, {x, *weights[which], bias, std::string("none"), c10::List<std::optional<at::Scalar>>(),
                             std::string("")});
    }
    default:
      return at::linear(x, *weights[which], bias);
  }
}

// Widen n values of T to float32.
template <typename T>
inline void to_float(const T* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

// a . b in float32 over 16 partial sums, so the compiler can vectorise it without -ffast-math.
inline float dot(const float* a, const float* b, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
  float sum = 0.f;
  for (; i < n; ++i) sum += a[i] * b[i];
  for (int64_t j = 0; j < kLanes; ++j) sum += lanes[j];
  return sum;
}

// Ask for the n values of T at p to be brought into the cache (Locality as __builtin_prefetch's: 3 is
// L1, 2 is L2).
constexpr int64_t kPrefetchAhead = 8;  // cache rows; 4 and 16 measured slower than 8
template <int Locality, typename T>
inline void prefetch(const T* p, int64_t n) {
  const char* bytes = reinterpret_cast<const char*>(p);
  for (int64_t b = 0; b < n * static_cast<int64_t>(sizeof(T)); b += 64) __builtin_prefetch(bytes + b, 0, Locality);
}

// RMSNorm as the reference: normalise in float32, round to T, multiply by the weight, round again.
template <typename T>
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t rows = x.size(0), n = x.size(1);
  auto out = torch::empty_like(x);
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.data_ptr<T>();
  T* op = out.data_ptr<T>();
  std::vector<float> wide(n);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = xp + r * n;
    to_float(row, wide.data(), n);
    const float inv = 1.f / std::sqrt(dot(wide.data(), wide.data(), n) / static_cast<float>(n) + static_cast<float>(eps));
    for (int64_t i = 0; i < n; ++i) {
      const T normed = static_cast<T>(static_cast<float>(row[i]) * inv);
      op[r * n + i] = static_cast<T>(static_cast<float>(wp[i]) * static_cast<float>(normed));
    }
  }
  return out;
}

// Rotate the q and k heads of each row of the fused qkv output in place ("rotate half" layout).
template <typename T>
void apply_rotary(torch::Tensor& qkv, const torch::Tensor& cos, const torch::Tensor& sin, const Shape& s) {
  const int64_t rows = qkv.size(0), width = qkv.size(1), d = s.head_dim, half = d / 2;
  const int64_t heads = s.num_heads + s.num_kv_heads;
  T* base = qkv.data_ptr<T>();
  const float* cp = cos.data_ptr<float>();
  const float* sp = sin.data_ptr<float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* c = cp + r * d;
    const float* sn = sp + r * d;
    for (int64_t h = 0; h < heads; ++h) {
      T* v = base + r * width + h * d;
      for (int64_t i = 0; i < half; ++i) {
        const float x1 = static_cast<float>(v[i]), x2 = static_cast<float>(v[i + half]);
        v[i] = static_cast<T>(x1 * c[i] - x2 * sn[i]);
        v[i + half] = static_cast<T>(x2 * c[i + half] + x1 * sn[i + half]);
      }
    }
  }
}

// Store each row's new key and value in its cache slot.
template <typename T>
void write_cache(const torch::Tensor& qkv, const Layer& layer, const torch::Tensor& slots, const Shape& s) {
  const int64_t rows = qkv.size(0), width = qkv.size(1), kv = s.num_kv_heads * s.head_dim;
  const int64_t q = s.num_heads * s.head_dim;
  const T* src = qkv.data_ptr<T>();
  T* kc = layer.k_cache.data_ptr<T>();
  T* vc = layer.v_cache.data_ptr<T>();
  const int64_t* sl = slots.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(src + r * width + q, kv, kc + sl[r] * kv);
    std::copy_n(src + r * width + q + kv, kv, vc + sl[r] * kv);
  }
}

// One layer's K or V cache as one job sees it: the rows of one sequence and one KV head, in order.
template <typename T>
struct PagedRows {
  const T* cache;
  const int64_t* table;  // the sequence's block table
  int64_t block_size, row_stride, head_offset;
  const T* operator[](int64_t p) const {
    return cache + (table[p / block_size] * block_size + p % block_size) * row_stride + head_offset;
  }
};

// One attention job: a row (sequence) and one KV head, whose query heads are [first_head, first_head +
// group); its scores start at `scores_offset` in the step's [rows, heads, longest context] buffer.
template <typename T>
struct AttentionJob {
  int64_t row, first_head, len, scores_offset;
  PagedRows<T> keys, values;
};

// One query per row against its sequence's cached keys, read through its block table, in three phases:
// scores, softmax, weighted values. A job is one (row, KV head): each cached key and value is widened
// once for the query heads that share it (GQA).
// - Each job reads one head's half of every cached row, and the rows of consecutive blocks lie anywhere
//   in the cache, so the hardware prefetchers lose the stream at every block: the loops prefetch a few
//   rows ahead themselves. On the 2-core Zen 4 VM, 16 sequences x 256 keys x 24 layers with the cache
//   cold (as it is in a step) took 21-25 ms per step without that and 12-16 ms with it (warm: 11 ms).
// - The softmax is ATen's, over all rows and heads at once, for its vectorised exp (scalar std::exp was
//   about a fifth of the attention time at 1,024 keys); scores past a row's length stay -inf. Against
//   one pass per job with the values prefetched into L2 during the key loop, this measured 17-21 %
//   faster at 256 and at 1,024 keys (cold cache, same 16 x 24-layer setup).
// - `scores` is the step's [rows, heads, longest context] float32 buffer, -inf past each row's length:
//   every layer overwrites only the valid part, so run() fills one buffer once per step for all layers.
template <typename T>
torch::Tensor attention(const torch::Tensor& qkv, const Layer& layer, const torch::Tensor& block_tables,
                        const torch::Tensor& context_lens, torch::Tensor& scores, const Shape& s) {
  const int64_t rows = qkv.size(0), width = qkv.size(1), d = s.head_dim, max_len = scores.size(2);
  const int64_t group = s.num_heads / s.num_kv_heads, kv = s.num_kv_heads * d;
  const int64_t max_blocks = block_tables.size(1), jobs = rows * s.num_kv_heads;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  const T* qp = qkv.data_ptr<T>();
  const T* kc = layer.k_cache.data_ptr<T>();
  const T* vc = layer.v_cache.data_ptr<T>();
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  const int64_t* lens = context_lens.data_ptr<int64_t>();
  auto job_at = [&](int64_t job) {
    const int64_t r = job / s.num_kv_heads, kvh = job % s.num_kv_heads, first_head = kvh * group;
    const int64_t* table = tables + r * max_blocks;
    return AttentionJob<T>{r, first_head, lens[r], (r * s.num_heads + first_head) * max_len,
                           PagedRows<T>{kc, table, s.block_size, kv, kvh * d},
                           PagedRows<T>{vc, table, s.block_size, kv, kvh * d}};
  };

  float* score_base = scores.data_ptr<float>();
  at::parallel_for(0, jobs, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> query(group * d), key(d);
    for (int64_t j = begin; j < end; ++j) {
      const auto job = job_at(j);
      const int64_t len = job.len;
      float* sc = score_base + job.scores_offset;
      to_float(qp + job.row * width + job.first_head * d, query.data(), group * d);
      for (int64_t p = 0; p < len; ++p) {
        if (p + kPrefetchAhead < len) prefetch<3>(job.keys[p + kPrefetchAhead], d);
        to_float(job.keys[p], key.data(), d);
        for (int64_t g = 0; g < group; ++g) sc[g * max_len + p] = dot(query.data() + g * d, key.data(), d) * scale;
      }
    }
  });

  const auto probs = at::_softmax(scores, -1, false);
  const float* prob_base = probs.data_ptr<float>();

  auto out = torch::empty({rows, s.num_heads * d}, qkv.options());
  T* op = out.data_ptr<T>();
  at::parallel_for(0, jobs, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> value(d), acc(group * d);
    for (int64_t j = begin; j < end; ++j) {
      const auto job = job_at(j);
      const int64_t len = job.len;
      const float* pr = prob_base + job.scores_offset;
      std::fill(acc.begin(), acc.end(), 0.f);
      for (int64_t p = 0; p < len; ++p) {
        if (p + kPrefetchAhead < len) prefetch<3>(job.values[p + kPrefetchAhead], d);
        to_float(job.values[p], value.data(), d);
        for (int64_t g = 0; g < group; ++g) {
          const float w = pr[g * max_len + p];
          float* a = acc.data() + g * d;
          for (int64_t i = 0; i < d; ++i) a[i] += w * value[i];
        }
      }
      T* o = op + (job.row * s.num_heads + job.first_head) * d;
      for (int64_t i = 0; i < group * d; ++i) o[i] = static_cast<T>(acc[i]);
    }
  });
  return out;
}

// SwiGLU's middle with ATen's vectorised kernels: silu(gate) rounded to T, times up (as the reference).
torch::Tensor silu_mul(const torch::Tensor& gate_up) {
  const int64_t inter = gate_up.size(1) / 2;
  return at::silu(gate_up.narrow(1, 0, inter)).mul_(gate_up.narrow(1, inter, inter));
}

// x += y in T, as the reference's residual add.
template <typename T>
void add_(torch::Tensor& x, const torch::Tensor& y) {
  T* xp = x.data_ptr<T>();
  const T* yp = y.data_ptr<T>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i)
    xp[i] = static_cast<T>(static_cast<float>(xp[i]) + static_cast<float>(yp[i]));
}

template <typename T>
torch::Tensor run(torch::Tensor x, const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& slots,
                  const torch::Tensor& block_tables, const torch::Tensor& context_lens,
                  const std::vector<torch::Tensor>& tensors, const std::vector<c10::IValue>& int8, const Shape& s) {
  auto scores = torch::full({x.size(0), s.num_heads, context_lens.max().item<int64_t>()},
                            -std::numeric_limits<float>::infinity(), x.options().dtype(torch::kFloat));
  for (size_t i = 0, l = 0; i < tensors.size(); i += kTensorsPerLayer, ++l) {
    const Layer layer{tensors[i],     tensors[i + 1], tensors[i + 2], tensors[i + 3], tensors[i + 4],
                      tensors[i + 5], tensors[i + 6], tensors[i + 7], tensors[i + 8], &tensors[i + 9],
                      int8.empty() ? nullptr : &int8[l * kInt8PerLayer]};
    auto qkv = linear(rms_norm<T>(x, layer.input_norm, s.eps), layer, 0, s);
    apply_rotary<T>(qkv, cos, sin, s);
    write_cache<T>(qkv, layer, slots, s);
    add_<T>(x, linear(attention<T>(qkv, layer, block_tables, context_lens, scores, s), layer, 1, s));
    auto gate_up = linear(rms_norm<T>(x, layer.post_norm, s.eps), layer, 2, s);
    add_<T>(x, linear(silu_mul(gate_up), layer, 3, s));
  }
  return x;
}

}  // namespace

// x: [B, hidden] embedded tokens, one per sequence; cos/sin: [B, head_dim] float32 at each token's
// position; slots: [B] cache slot of each new token; block_tables: [B, max_blocks]; context_lens: [B]
// keys each token attends to (its own included); tensors: kTensorsPerLayer per layer (see Layer);
// int8_weights: kInt8PerLayer fbgemm-prepacked weights per layer when layout is kInt8, else empty;
// blocks_isa / blocks_max_rows: a projection with int8 blocks runs on that kernel when the step has at
// most blocks_max_rows rows (-1: never).
// Returns the hidden states after the last layer (before the final norm).
torch::Tensor decode_layers(torch::Tensor x, torch::Tensor cos, torch::Tensor sin, torch::Tensor slots,
                            torch::Tensor block_tables, torch::Tensor context_lens, std::vector<torch::Tensor> tensors,
                            const py::list& int8_weights, int64_t num_heads, int64_t num_kv_heads, int64_t head_dim,
                            double eps, int64_t layout, int64_t blocks_isa, int64_t blocks_max_rows) {
  TORCH_CHECK(tensors.size() % kTensorsPerLayer == 0, "expected ", kTensorsPerLayer, " tensors per layer");
  TORCH_CHECK(layout >= kDense && layout <= kInt8, "unknown weight layout ", layout);
  const int64_t layers = tensors.size() / kTensorsPerLayer;
  TORCH_CHECK(layout != kInt8 || static_cast<int64_t>(int8_weights.size()) == layers * kInt8PerLayer,
              "int8 layout needs ", kInt8PerLayer, " prepacked weights per layer");
  std::vector<c10::IValue> int8;
  if (layout == kInt8)
    for (const auto& w : int8_weights) int8.push_back(torch::jit::toIValue(w, c10::AnyType::get()));
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && !x.is_cuda(), "x must be a contiguous [B, hidden] CPU tensor");
  TORCH_CHECK(cos.scalar_type() == torch::kFloat && sin.scalar_type() == torch::kFloat, "cos/sin must be float32");
  TORCH_CHECK(cos.is_contiguous() && sin.is_contiguous(), "cos/sin must be contiguous");
  const int64_t block_size = tensors.empty() ? 1 : tensors[7].size(1);
  const Shape s{num_heads, num_kv_heads, head_dim, block_size, eps, static_cast<Layout>(layout), blocks_isa,
                blocks_max_rows};
  x = x.clone();  // the residual stream is updated in place
  switch (x.scalar_type()) {
    case torch::kFloat:
      return run<float>(x, cos, sin, slots, block_tables, context_lens, tensors, int8, s);
    case torch::kBFloat16:
      return run<at::BFloat16>(x, cos, sin, slots, block_tables, context_lens, tensors, int8, s);
    default:
      TORCH_CHECK(false, "decode_layers supports float32 and bfloat16, got ", x.scalar_type());
  }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("decode_layers", &decode_layers, "One decode step through every decoder layer (CPU).");
  m.def("int8_linear", &int8_blocks::linear, "x @ W.T (+ bias) with block-scaled int8 weights and activations (CPU).");
  m.def("int8_isas", &int8_blocks::compiled_isas, "The int8 block kernels this build has.");
}
