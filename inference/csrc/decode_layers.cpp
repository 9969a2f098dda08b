// One decode step through every decoder layer, in C++: the CPU fast path for decode-only steps.
//
// Why: a batch-1 decode step of the 0.5B default model is ~45 ms of weight streaming and, in eager
// PyTorch, ~20 ms more of small ops (norms, rotary, cache writes, attention, SwiGLU) and the Python
// that calls them, ~60 per layer. Here each layer is four projection calls (the same oneDNN/ATen
// kernels the Python path uses) and plain loops for everything between them.
//
// The numerics follow the Python reference path (inference/layers, models/decoder.py) step by step:
// float32 math, rounded to the model dtype exactly where the reference rounds, so the two paths agree
// to float32 summation order. tests/inference/test_fused_decode.py pins that.

#include <torch/extension.h>

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

// The tensors of one decoder layer, in the order the Python side passes them.
constexpr int64_t kTensorsPerLayer = 9;
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
};

struct Shape {
  int64_t num_heads, num_kv_heads, head_dim, block_size;
  double eps;
};

// x @ W.T (+ bias) with the weight as layers/linear.py left it: oneDNN-prepacked or plain.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool packed) {
  std::optional<torch::Tensor> b = bias.numel() ? std::optional<torch::Tensor>(bias) : std::nullopt;
  if (!packed) return at::linear(x, weight, b);
  static const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("mkldnn::_linear_pointwise", "");
  torch::jit::Stack stack{x, weight, b, std::string("none"), c10::List<std::optional<at::Scalar>>(),
                          std::string("")};
  op.callBoxed(&stack);
  return stack[0].toTensor();
}

// RMSNorm as the reference: normalise in float32, round to T, multiply by the weight, round again.
template <typename T>
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t rows = x.size(0), n = x.size(1);
  auto out = torch::empty_like(x);
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.data_ptr<T>();
  T* op = out.data_ptr<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = xp + r * n;
    float sum = 0.f;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<float>(row[i]) * static_cast<float>(row[i]);
    const float inv = 1.f / std::sqrt(sum / static_cast<float>(n) + static_cast<float>(eps));
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

// One query per row against its sequence's cached keys, read through its block table.
template <typename T>
torch::Tensor attention(const torch::Tensor& qkv, const Layer& layer, const torch::Tensor& block_tables,
                        const torch::Tensor& context_lens, const Shape& s) {
  const int64_t rows = qkv.size(0), width = qkv.size(1), d = s.head_dim, bs = s.block_size;
  const int64_t group = s.num_heads / s.num_kv_heads, kv = s.num_kv_heads * d;
  const int64_t max_blocks = block_tables.size(1);
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  auto out = torch::empty({rows, s.num_heads * d}, qkv.options());
  const T* qp = qkv.data_ptr<T>();
  const T* kc = layer.k_cache.data_ptr<T>();
  const T* vc = layer.v_cache.data_ptr<T>();
  const int64_t* tables = block_tables.data_ptr<int64_t>();
  const int64_t* lens = context_lens.data_ptr<int64_t>();
  T* op = out.data_ptr<T>();
  at::parallel_for(0, rows * s.num_heads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores, acc(d), query(d);
    for (int64_t job = begin; job < end; ++job) {
      const int64_t r = job / s.num_heads, h = job % s.num_heads, kvh = h / group, len = lens[r];
      const int64_t* table = tables + r * max_blocks;
      for (int64_t i = 0; i < d; ++i) query[i] = static_cast<float>(qp[r * width + h * d + i]);
      scores.resize(len);
      float top = -INFINITY;
      for (int64_t p = 0; p < len; ++p) {
        const T* key = kc + (table[p / bs] * bs + p % bs) * kv + kvh * d;
        float dot = 0.f;
        for (int64_t i = 0; i < d; ++i) dot += query[i] * static_cast<float>(key[i]);
        scores[p] = dot * scale;
        top = std::max(top, scores[p]);
      }
      float total = 0.f;
      for (int64_t p = 0; p < len; ++p) total += (scores[p] = std::exp(scores[p] - top));
      std::fill(acc.begin(), acc.end(), 0.f);
      for (int64_t p = 0; p < len; ++p) {
        const T* value = vc + (table[p / bs] * bs + p % bs) * kv + kvh * d;
        const float w = scores[p] / total;
        for (int64_t i = 0; i < d; ++i) acc[i] += w * static_cast<float>(value[i]);
      }
      for (int64_t i = 0; i < d; ++i) op[r * s.num_heads * d + h * d + i] = static_cast<T>(acc[i]);
    }
  });
  return out;
}

// SwiGLU's middle: silu(gate) rounded to T, times up, rounded again (as two eager ops would).
template <typename T>
torch::Tensor silu_mul(const torch::Tensor& gate_up) {
  const int64_t rows = gate_up.size(0), inter = gate_up.size(1) / 2;
  auto out = torch::empty({rows, inter}, gate_up.options());
  const T* gp = gate_up.data_ptr<T>();
  T* op = out.data_ptr<T>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < inter; ++i) {
      const float g = static_cast<float>(gp[r * 2 * inter + i]);
      const T act = static_cast<T>(g / (1.f + std::exp(-g)));
      op[r * inter + i] = static_cast<T>(static_cast<float>(act) * static_cast<float>(gp[r * 2 * inter + inter + i]));
    }
  }
  return out;
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
                  const std::vector<torch::Tensor>& tensors, const Shape& s, bool packed) {
  for (size_t i = 0; i < tensors.size(); i += kTensorsPerLayer) {
    const Layer layer{tensors[i],     tensors[i + 1], tensors[i + 2], tensors[i + 3], tensors[i + 4],
                      tensors[i + 5], tensors[i + 6], tensors[i + 7], tensors[i + 8]};
    auto qkv = linear(rms_norm<T>(x, layer.input_norm, s.eps), layer.qkv_weight, layer.qkv_bias, packed);
    apply_rotary<T>(qkv, cos, sin, s);
    write_cache<T>(qkv, layer, slots, s);
    add_<T>(x, linear(attention<T>(qkv, layer, block_tables, context_lens, s), layer.o_weight, {}, packed));
    auto gate_up = linear(rms_norm<T>(x, layer.post_norm, s.eps), layer.gate_up_weight, {}, packed);
    add_<T>(x, linear(silu_mul<T>(gate_up), layer.down_weight, {}, packed));
  }
  return x;
}

}  // namespace

// x: [B, hidden] embedded tokens, one per sequence; cos/sin: [B, head_dim] float32 at each token's
// position; slots: [B] cache slot of each new token; block_tables: [B, max_blocks]; context_lens: [B]
// keys each token attends to (its own included); tensors: kTensorsPerLayer per layer (see Layer).
// Returns the hidden states after the last layer (before the final norm).
torch::Tensor decode_layers(torch::Tensor x, torch::Tensor cos, torch::Tensor sin, torch::Tensor slots,
                            torch::Tensor block_tables, torch::Tensor context_lens, std::vector<torch::Tensor> tensors,
                            int64_t num_heads, int64_t num_kv_heads, int64_t head_dim, double eps, bool packed) {
  TORCH_CHECK(tensors.size() % kTensorsPerLayer == 0, "expected ", kTensorsPerLayer, " tensors per layer");
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && !x.is_cuda(), "x must be a contiguous [B, hidden] CPU tensor");
  TORCH_CHECK(cos.scalar_type() == torch::kFloat && sin.scalar_type() == torch::kFloat, "cos/sin must be float32");
  TORCH_CHECK(cos.is_contiguous() && sin.is_contiguous(), "cos/sin must be contiguous");
  const int64_t block_size = tensors.empty() ? 1 : tensors[7].size(1);
  const Shape s{num_heads, num_kv_heads, head_dim, block_size, eps};
  x = x.clone();  // the residual stream is updated in place
  switch (x.scalar_type()) {
    case torch::kFloat:
      return run<float>(x, cos, sin, slots, block_tables, context_lens, tensors, s, packed);
    case torch::kBFloat16:
      return run<at::BFloat16>(x, cos, sin, slots, block_tables, context_lens, tensors, s, packed);
    default:
      TORCH_CHECK(false, "decode_layers supports float32 and bfloat16, got ", x.scalar_type());
  }
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("decode_layers", &decode_layers, "One decode step through every decoder layer (CPU).");
}
