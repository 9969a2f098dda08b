// Block-scaled int8 projections for decode steps (a few rows against every weight).
//
// Why: a decode step streams every weight once, so its time is the weight bytes over memory
// bandwidth. bf16 weights are 2 bytes each; these are 1 byte plus a float32 scale per kGroup (1.03
// bytes). The activations are quantised to int8 too, per row and per group of kGroup inputs (a scale
// each, so one outlier spoils only its own group), and every group's dot product is exact int32
// arithmetic; only the per-group scaling and the sum over groups are float32.
//
// Kernels (chosen per call by `isa`, dispatched in inference/layers/int8_blocks.py):
// - AMX: tdpbssd on [rows x 64] activation tiles and pre-tiled [64 x 16] weight tiles.
// - AVX512-VNNI: vpdpbusd on the same weight tiles, 16 weight rows per register (see block_avx512).
// - AVX2: vpmaddubsw on |w| and x with w's sign (|w|, |x| <= 127, so the 16-bit pair sums cannot
//   saturate), then vpmaddwd by ones, on row-major weights.
// All give the same int32 group sums; only the float32 summation order differs from the reference
// (tests/inference/test_int8_blocks.py).

#include "int8_blocks.h"

#include <ATen/Parallel.h>
#include <immintrin.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace int8_blocks {
namespace {

// x's rows quantised: q = round_half_even(x * 127 / amax) per group, scale = amax / 127,
// correction = -128 * sum(q) per group (for the VNNI kernel's unsigned weights).
struct Activations {
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> correction;
  int64_t rows, k, groups;
};

// One group of kGroup inputs: q = round_half_even(x * 127 / amax); returns amax and sets *sum = sum(q).
template <typename T>
float quantize_group(const T* src, int8_t* q, int32_t* sum) {
  float wide[kGroup];
  float amax = 0.f;
  for (int64_t i = 0; i < kGroup; ++i) {
    wide[i] = static_cast<float>(src[i]);
    amax = std::max(amax, std::fabs(wide[i]));
  }
  const float inv = amax > 0.f ? 127.f / amax : 0.f;
  int32_t total = 0;
  for (int64_t i = 0; i < kGroup; ++i) {
    q[i] = static_cast<int8_t>(std::nearbyint(wide[i] * inv));
    total += q[i];
  }
  *sum = total;
  return amax;
}

#if defined(__AVX512F__) && defined(__AVX512BW__)
// The same in 16-lane registers (prefill chunks quantise hundreds of rows per call); cvtps_epi32 rounds
// half to even under the default MXCSR, as nearbyint does.
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const at::BFloat16* p) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
}

template <typename T>
float quantize_group_avx512(const T* src, int8_t* q, int32_t* sum) {
  constexpr int kLanes = 16, kVectors = kGroup / kLanes;
  __m512 v[kVectors];
  __m512 amax = _mm512_setzero_ps();
  for (int i = 0; i < kVectors; ++i) {
    v[i] = load16(src + i * kLanes);
    amax = _mm512_max_ps(amax, _mm512_abs_ps(v[i]));
  }
  const float top = _mm512_reduce_max_ps(amax);
  const __m512 inv = _mm512_set1_ps(top > 0.f ? 127.f / top : 0.f);
  __m512i total = _mm512_setzero_si512();
  for (int i = 0; i < kVectors; ++i) {
    const __m512i qi = _mm512_cvtps_epi32(_mm512_mul_ps(v[i], inv));
    total = _mm512_add_epi32(total, qi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i * kLanes), _mm512_cvtepi32_epi8(qi));
  }
  *sum = _mm512_reduce_add_epi32(total);
  return top;
}
#endif

// `avx512`: the AVX-512 group quantiser (the AVX2 kernel takes the plain one, so forcing it tests that too).
template <typename T>
Activations quantize(const T* x, int64_t rows, int64_t k, bool avx512) {
  const int64_t groups = k / kGroup;
  Activations a{std::vector<int8_t>(rows * k), std::vector<float>(rows * groups),
                std::vector<int32_t>(rows * groups), rows, k, groups};
  at::parallel_for(0, rows * groups, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {  // i = r * groups + g: group g of row r
      int32_t sum;
#if defined(__AVX512F__) && defined(__AVX512BW__)
      const float amax = avx512 ? quantize_group_avx512(x + i * kGroup, a.q.data() + i * kGroup, &sum)
                              : quantize_group(x + i * kGroup, a.q.data() + i * kGroup, &sum);
#else
      const float amax = quantize_group(x + i * kGroup, a.q.data() + i * kGroup, &sum);
#endif
      a.scale[i] = amax / 127.f;
      a.correction[i] = -128 * sum;
    }
  });
  return a;
}

struct Weights {
  const int8_t* q;
  const float* scale;
  int64_t n, k, groups;
};

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define INT8_BLOCKS_AVX512 1
// AVX512-VNNI on the tiled layout (the AMX kernel's, tile_weights in layers/int8_blocks.py): a tile row
// of 64 bytes holds 4 consecutive inputs of each of 16 weight rows, so one zmm of weights times one
// activation quad broadcast to all lanes gives 16 weight rows' partial dot products at once, lane j for
// weight row j. After a group's 32 tile rows each lane holds a whole group's dot product, so the scaling
// costs one convert and two multiplies per 16 outputs (the row-major layout needed them per output and
// a horizontal sum at the end), and the weights of one 16-row block are read from memory once for all
// activation rows (they stay in L1/L2 while MT-row slices of the activations pass).
// vpdpbusd multiplies unsigned by signed bytes: weights are flipped to w + 128 (one xor per load) and
// every lane's group sum starts at -128 * sum(x), which makes it exactly sum(w * x).
template <int MT>
void block_avx512(const Activations& a, int64_t m0, const Weights& w, int64_t nb, float* out) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const int64_t chunks = w.k / 64;
  const int8_t* tiles = w.q + nb * chunks * 1024;
  const float* wscale = w.scale + nb * w.groups * 16;
  __m512 acc[MT];
  for (int m = 0; m < MT; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    __m512i isum[MT];
    for (int m = 0; m < MT; ++m) isum[m] = _mm512_set1_epi32(a.correction[(m0 + m) * a.groups + g]);
    const int8_t* wrow = tiles + g * (kGroup / 64) * 1024;
    const int8_t* xg = a.q.data() + m0 * a.k + g * kGroup;
    for (int64_t quad = 0; quad < kGroup / 4; ++quad) {
      const __m512i wv = _mm512_xor_si512(_mm512_loadu_si512(wrow + quad * 64), flip);
      for (int m = 0; m < MT; ++m) {
        int32_t xq;
        std::memcpy(&xq, xg + m * a.k + quad * 4, 4);
        isum[m] = _mm512_dpbusd_epi32(isum[m], wv, _mm512_set1_epi32(xq));
      }
    }
    const __m512 ws = _mm512_loadu_ps(wscale + g * 16);
    for (int m = 0; m < MT; ++m) {
      const __m512 s = _mm512_mul_ps(_mm512_set1_ps(a.scale[(m0 + m) * a.groups + g]), ws);
      acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[m]), s, acc[m]);
    }
  }
  for (int m = 0; m < MT; ++m) _mm512_storeu_ps(out + (m0 + m) * w.n + nb * 16, acc[m]);
}

constexpr int kAvx512Rows = 8;  // 8 int32 + 8 float32 accumulators: well within the 32 zmm registers

void gemm_avx512(const Activations& a, const Weights& w, float* out) {
  at::parallel_for(0, w.n / 16, 2, [&](int64_t begin, int64_t end) {
    for (int64_t nb = begin; nb < end; ++nb) {
      int64_t m = 0;
      for (; m + kAvx512Rows <= a.rows; m += kAvx512Rows) block_avx512<kAvx512Rows>(a, m, w, nb, out);
      switch (a.rows - m) {
        case 7: block_avx512<7>(a, m, w, nb, out); break;
        case 6: block_avx512<6>(a, m, w, nb, out); break;
        case 5: block_avx512<5>(a, m, w, nb, out); break;
        case 4: block_avx512<4>(a, m, w, nb, out); break;
        case 3: block_avx512<3>(a, m, w, nb, out); break;
        case 2: block_avx512<2>(a, m, w, nb, out); break;
        case 1: block_avx512<1>(a, m, w, nb, out); break;
        default: break;
      }
    }
  });
}
#endif

#if defined(__AVX2__)
#define INT8_BLOCKS_AVX2 1
inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int MT, int NT>
void tile_avx2(const Activations& a, int64_t m0, const Weights& w, int64_t n0, float* out, int64_t ldo) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[MT][NT];
  for (int m = 0; m < MT; ++m)
    for (int n = 0; n < NT; ++n) acc[m][n] = _mm256_setzero_ps();
  for (int64_t g = 0; g < w.groups; ++g) {
    __m256i isum[MT][NT];
    for (int m = 0; m < MT; ++m)
      for (int n = 0; n < NT; ++n) isum[m][n] = _mm256_setzero_si256();
    for (int64_t c = 0; c < kGroup; c += 32) {
      const int64_t off = g * kGroup + c;
      __m256i wv[NT], wabs[NT];
      for (int n = 0; n < NT; ++n) {
        wv[n] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.q + (n0 + n) * w.k + off));
        wabs[n] = _mm256_abs_epi8(wv[n]);
      }
      for (int m = 0; m < MT; ++m) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q.data() + (m0 + m) * a.k + off));
        for (int n = 0; n < NT; ++n) {
          const __m256i pairs = _mm256_maddubs_epi16(wabs[n], _mm256_sign_epi8(xv, wv[n]));
          isum[m][n] = _mm256_add_epi32(isum[m][n], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
    __m256 ws[NT];
    for (int n = 0; n < NT; ++n) ws[n] = _mm256_set1_ps(w.scale[(n0 + n) * w.groups + g]);
    for (int m = 0; m < MT; ++m) {
      const __m256 xs = _mm256_set1_ps(a.scale[(m0 + m) * a.groups + g]);
      for (int n = 0; n < NT; ++n)
        acc[m][n] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[m][n]), xs), ws[n], acc[m][n]);
    }
  }
  for (int m = 0; m < MT; ++m)
    for (int n = 0; n < NT; ++n) out[(m0 + m) * ldo + n0 + n] = hsum256(acc[m][n]);
}
#endif

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512F__)
#define INT8_BLOCKS_AMX 1
// AMX: tdpbssd multiplies a [rows x 64] int8 tile of activations by a [64 x 16] tile of weights into
// [rows x 16] int32, 16K products an instruction; each group's int32 tile is stored, widened, scaled by
// the activation row's and the 16 weight rows' scales, and summed in float32 registers.
// Weights come pre-tiled (tile_weights in layers/int8_blocks.py): for each 16 weight rows and each 64
// inputs, a 1 KiB tile whose row r holds inputs 4r..4r+3 of each of the 16 weight rows; the scales of
// each 16 weight rows lie group-major ([N / 16, groups, 16]).
struct TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

bool amx_permitted() {
  static const bool ok = [] {
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

void gemm_amx(const Activations& a, const Weights& w, float* out) {
  TORCH_CHECK(amx_permitted(), "the kernel refused AMX tile data (arch_prctl)");
  const int64_t col_blocks = w.n / 16, chunks = w.k / 64;
  // each job's 16 weight rows (16-140 KiB) stay in cache while every 16-row tile of activations passes
  at::parallel_for(0, col_blocks, 2, [&](int64_t begin, int64_t end) {
    alignas(64) int32_t c_tile[16 * 16];
    int configured = 0;
    for (int64_t nb = begin; nb < end; ++nb) {
      const int8_t* tiles = w.q + nb * chunks * 1024;
      const float* wscale = w.scale + nb * w.groups * 16;
      for (int64_t m0 = 0; m0 < a.rows; m0 += 16) {
        const int rows = static_cast<int>(std::min<int64_t>(16, a.rows - m0));
        if (rows != configured) {
          TileConfig cfg;
          cfg.rows[0] = cfg.rows[1] = static_cast<uint8_t>(rows);  // C, A
          cfg.rows[2] = 16;                                        // B
          cfg.colsb[0] = cfg.colsb[1] = cfg.colsb[2] = 64;
          // gcc's _tile_loadconfig tells the optimiser it reads one byte of cfg, so without this barrier
          // the stores to the rest may be dropped (an invalid configuration: ldtilecfg faults)
          asm volatile("" : : "r"(&cfg) : "memory");
          _tile_loadconfig(&cfg);
          configured = rows;
        }
        __m512 acc[16];
        for (int r = 0; r < 16; ++r) acc[r] = _mm512_setzero_ps();
        for (int64_t g = 0; g < w.groups; ++g) {
          _tile_zero(0);
          for (int64_t c = 0; c < kGroup / 64; ++c) {
            const int64_t chunk = g * (kGroup / 64) + c;
            _tile_loadd(1, a.q.data() + m0 * a.k + chunk * 64, a.k);
            _tile_loadd(2, tiles + chunk * 1024, 64);
            _tile_dpbssd(0, 1, 2);
          }
          _tile_stored(0, c_tile, 64);
          const __m512 ws = _mm512_loadu_ps(wscale + g * 16);
          for (int r = 0; r < rows; ++r) {
            const __m512 xs = _mm512_mul_ps(_mm512_set1_ps(a.scale[(m0 + r) * a.groups + g]), ws);
            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c_tile + r * 16)), xs, acc[r]);
          }
        }
        for (int r = 0; r < rows; ++r) _mm512_storeu_ps(out + (m0 + r) * w.n + nb * 16, acc[r]);
      }
    }
    if (configured) _tile_release();  // leave no configuration behind for oneDNN's AMX kernels in this thread
  });
}
#endif

constexpr int kRowsPerTile = 4, kColsPerTile = 2;

// Every row of a tile kernel for the weight rows [n0, n0 + NT): full tiles of kRowsPerTile rows, then the rest.
template <template <int, int> class Kernel, int NT>
void all_rows(const Activations& a, const Weights& w, int64_t n0, float* out) {
  int64_t m = 0;
  for (; m + kRowsPerTile <= a.rows; m += kRowsPerTile) Kernel<kRowsPerTile, NT>::run(a, m, w, n0, out, w.n);
  switch (a.rows - m) {
    case 3: Kernel<3, NT>::run(a, m, w, n0, out, w.n); break;
    case 2: Kernel<2, NT>::run(a, m, w, n0, out, w.n); break;
    case 1: Kernel<1, NT>::run(a, m, w, n0, out, w.n); break;
    default: break;
  }
}

#ifdef INT8_BLOCKS_AVX2
template <int MT, int NT>
struct Avx2 {
  static void run(const Activations& a, int64_t m0, const Weights& w, int64_t n0, float* out, int64_t ldo) {
    tile_avx2<MT, NT>(a, m0, w, n0, out, ldo);
  }
};
#endif

template <template <int, int> class Kernel>
void gemm(const Activations& a, const Weights& w, float* out) {
  // 32 weight rows per job: ~28-280 KiB of weights, enough to amortise the job and keep the
  // hardware prefetchers on a few long streams
  at::parallel_for(0, w.n, 32, [&](int64_t begin, int64_t end) {
    int64_t n = begin;
    for (; n + kColsPerTile <= end; n += kColsPerTile) all_rows<Kernel, kColsPerTile>(a, w, n, out);
    if (n < end) all_rows<Kernel, 1>(a, w, n, out);
  });
}

}  // namespace

std::string compiled_isas() {
  std::string isas;
#ifdef INT8_BLOCKS_AMX
  isas += "amx ";
#endif
#ifdef INT8_BLOCKS_AVX512
  isas += "avx512_vnni ";
#endif
#ifdef INT8_BLOCKS_AVX2
  isas += "avx2";
#endif
  return isas;
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& qweight, const torch::Tensor& scales,
                     const std::optional<torch::Tensor>& bias, int64_t isa) {
  TORCH_CHECK(x.dim() == 2 && x.is_contiguous() && x.device().is_cpu(), "x must be a contiguous [M, K] CPU tensor");
  TORCH_CHECK(qweight.scalar_type() == torch::kChar && qweight.dim() == 2 && qweight.is_contiguous(),
              "qweight must be a contiguous [N, K] int8 tensor");
  const int64_t rows = x.size(0), k = x.size(1), n = qweight.size(0);
  TORCH_CHECK(qweight.size(1) == k && k % kGroup == 0, "K must match the weight and be a multiple of ", kGroup);
  TORCH_CHECK(scales.scalar_type() == torch::kFloat && scales.is_contiguous() && scales.size(0) == n &&
                  scales.size(1) == k / kGroup, "scales must be a contiguous float32 [N, K / ", kGroup, "] tensor");
  TORCH_CHECK(x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kBFloat16, "x must be float32 or bfloat16");
  const bool avx512 = isa != kAvx2;
  const Activations a = x.scalar_type() == torch::kBFloat16 ? quantize(x.data_ptr<at::BFloat16>(), rows, k, avx512)
                                                            : quantize(x.data_ptr<float>(), rows, k, avx512);
  const Weights w{qweight.data_ptr<int8_t>(), scales.data_ptr<float>(), n, k, k / kGroup};
  auto out = torch::empty({rows, n}, x.options().dtype(torch::kFloat));
  float* op = out.data_ptr<float>();
  switch (isa) {
#ifdef INT8_BLOCKS_AMX
    case kAmx:
      TORCH_CHECK(n % 16 == 0, "the AMX kernel takes weights of whole 16-row tiles");
      gemm_amx(a, w, op);
      break;
#endif
#ifdef INT8_BLOCKS_AVX512
    case kAvx512Vnni:
      TORCH_CHECK(n % 16 == 0, "the AVX512-VNNI kernel takes weights of whole 16-row tiles");
      gemm_avx512(a, w, op);
      break;
#endif
#ifdef INT8_BLOCKS_AVX2
    case kAvx2:
      gemm<Avx2>(a, w, op);
      break;
#endif
    default:
      TORCH_CHECK(false, "int8 block kernel ", isa, " is not in this build (compiled: '", compiled_isas(), "')");
  }
  if (bias) out.add_(*bias);
  return x.scalar_type() == torch::kFloat ? out : out.to(x.scalar_type());
}

}  // namespace int8_blocks
