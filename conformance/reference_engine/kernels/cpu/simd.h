/* The instruction set a kernel library is compiled for, and a few fp32 vector
 * operations over it, so that one kernel body serves every ISA.
 *
 * native.py builds each library once per variant, with that variant's -march (and
 * -DCONFORMANCE_PORTABLE for the portable one, since NEON is part of every AArch64
 * target); the first match below decides which code a build contains:
 *
 *   SIMD_AVX512  AVX-512F (+ SIMD_AVX512_BF16 where __AVX512BF16__): 16 lanes
 *   SIMD_AVX2    AVX2 + FMA + F16C: 8 lanes
 *   SIMD_NEON    AArch64 Advanced SIMD: 4 lanes (+ SIMD_NEON_BF16 where
 *                __ARM_FEATURE_BF16_VECTOR_ARITHMETIC: BFDOT)
 *   portable     GCC/Clang vector extensions of 8 lanes, which the compiler lowers to
 *                whatever the target has (SSE at x86-64-v2), so that even this build
 *                is vectorised rather than a scalar loop.
 *
 * vf holds VL fp32 lanes; vselect_ge(x, lo, a, b) is a where x >= lo, else b.
 * bf16 is widened by a 16-bit shift (exact), fp16 by the ISA's conversion;
 * products and sums are fp32.
 */
#ifndef CONFORMANCE_SIMD_H
#define CONFORMANCE_SIMD_H

#include <stdint.h>
#include <string.h>

#include "half.h"

#define ALWAYS_INLINE inline __attribute__((always_inline))

#if defined(CONFORMANCE_PORTABLE)
#define SIMD_NAME "portable"
#elif defined(__AVX512F__)
#define SIMD_AVX512 1
#if defined(__AVX512BF16__)
#define SIMD_AVX512_BF16 1
#define SIMD_NAME "avx512_bf16"
#else
#define SIMD_NAME "avx512f"
#endif
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SIMD_AVX2 1
#define SIMD_NAME "avx2"
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define SIMD_NEON 1
#if defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC)
#define SIMD_NEON_BF16 1
#define SIMD_NAME "neon_bf16"
#else
#define SIMD_NAME "neon"
#endif
#else
#define SIMD_NAME "portable"
#endif

#if defined(SIMD_AVX512) || defined(SIMD_AVX2)
#include <immintrin.h>
#elif defined(SIMD_NEON)
#include <arm_neon.h>
#endif

/* The instruction set this library was built for, for the loader to check a build
 * against the variant it asked for (each library is one translation unit). */
const char *kernel_isa(void) { return SIMD_NAME; }

/* Vector registers of the ISA: kernels size their register tiles by it. */
#if defined(SIMD_AVX512) || defined(SIMD_NEON)
#define SIMD_REGISTERS 32
#else
#define SIMD_REGISTERS 16
#endif

#if defined(SIMD_AVX512)
#define VL 16
typedef __m512 vf;
static ALWAYS_INLINE vf vzero(void) { return _mm512_setzero_ps(); }
static ALWAYS_INLINE vf vset1(float a) { return _mm512_set1_ps(a); }
static ALWAYS_INLINE vf vload(const float *p) { return _mm512_loadu_ps(p); }
static ALWAYS_INLINE void vstore(float *p, vf a) { _mm512_storeu_ps(p, a); }
static ALWAYS_INLINE vf vload_bf16(const uint16_t *p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p)), 16));
}
static ALWAYS_INLINE vf vload_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
static ALWAYS_INLINE vf vadd(vf a, vf b) { return _mm512_add_ps(a, b); }
static ALWAYS_INLINE vf vsub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static ALWAYS_INLINE vf vmul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static ALWAYS_INLINE vf vfma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static ALWAYS_INLINE vf vmax(vf a, vf b) { return _mm512_max_ps(a, b); }
static ALWAYS_INLINE float vsum(vf a) { return _mm512_reduce_add_ps(a); }
static ALWAYS_INLINE vf vpow2n(vf n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
}
static ALWAYS_INLINE float vmaxv(vf a) { return _mm512_reduce_max_ps(a); }
static ALWAYS_INLINE vf vselect_ge(vf x, vf lo, vf a, vf b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ), b, a);
}

#elif defined(SIMD_AVX2)
#define VL 8
typedef __m256 vf;
static ALWAYS_INLINE vf vzero(void) { return _mm256_setzero_ps(); }
static ALWAYS_INLINE vf vset1(float a) { return _mm256_set1_ps(a); }
static ALWAYS_INLINE vf vload(const float *p) { return _mm256_loadu_ps(p); }
static ALWAYS_INLINE void vstore(float *p, vf a) { _mm256_storeu_ps(p, a); }
static ALWAYS_INLINE vf vload_bf16(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
static ALWAYS_INLINE vf vload_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
static ALWAYS_INLINE vf vadd(vf a, vf b) { return _mm256_add_ps(a, b); }
static ALWAYS_INLINE vf vsub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static ALWAYS_INLINE vf vmul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static ALWAYS_INLINE vf vfma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static ALWAYS_INLINE vf vmax(vf a, vf b) { return _mm256_max_ps(a, b); }
static ALWAYS_INLINE float vsum(vf a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static ALWAYS_INLINE vf vpow2n(vf n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
}
static ALWAYS_INLINE float vmaxv(vf a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}
static ALWAYS_INLINE vf vselect_ge(vf x, vf lo, vf a, vf b) { return _mm256_blendv_ps(b, a, _mm256_cmp_ps(x, lo, _CMP_GE_OQ)); }

#elif defined(SIMD_NEON)
#define VL 4
typedef float32x4_t vf;
static ALWAYS_INLINE vf vzero(void) { return vdupq_n_f32(0.f); }
static ALWAYS_INLINE vf vset1(float a) { return vdupq_n_f32(a); }
static ALWAYS_INLINE vf vload(const float *p) { return vld1q_f32(p); }
static ALWAYS_INLINE void vstore(float *p, vf a) { vst1q_f32(p, a); }
static ALWAYS_INLINE vf vload_bf16(const uint16_t *p) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16)); }
static ALWAYS_INLINE vf vload_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
static ALWAYS_INLINE vf vadd(vf a, vf b) { return vaddq_f32(a, b); }
static ALWAYS_INLINE vf vsub(vf a, vf b) { return vsubq_f32(a, b); }
static ALWAYS_INLINE vf vmul(vf a, vf b) { return vmulq_f32(a, b); }
static ALWAYS_INLINE vf vfma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
static ALWAYS_INLINE vf vmax(vf a, vf b) { return vmaxq_f32(a, b); }
static ALWAYS_INLINE float vsum(vf a) { return vaddvq_f32(a); }
static ALWAYS_INLINE vf vpow2n(vf n) {
    return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23));
}
static ALWAYS_INLINE float vmaxv(vf a) { return vmaxvq_f32(a); }
static ALWAYS_INLINE vf vselect_ge(vf x, vf lo, vf a, vf b) { return vbslq_f32(vcgeq_f32(x, lo), a, b); }

#else /* portable: vector extensions; casts between same-size vectors keep the bits */
#define VL 8
typedef float vf __attribute__((vector_size(4 * VL)));
typedef int32_t vi __attribute__((vector_size(4 * VL)));
typedef uint16_t vh __attribute__((vector_size(2 * VL)));
static ALWAYS_INLINE vf vzero(void) { return (vf){0}; }
static ALWAYS_INLINE vf vset1(float a) { return a - (vf){0}; }
static ALWAYS_INLINE vf vload(const float *p) {
    vf a;
    memcpy(&a, p, sizeof a);
    return a;
}
static ALWAYS_INLINE void vstore(float *p, vf a) { memcpy(p, &a, sizeof a); }
static ALWAYS_INLINE vf vload_bf16(const uint16_t *p) {
    vh h;
    memcpy(&h, p, sizeof h);
    return (vf)(__builtin_convertvector(h, vi) << 16);
}
/* fp16 by integer operations (a target without F16C or NEON would convert each
 * element in a library call): the exponent and mantissa shifted into fp32's place
 * and rebiased by one exact product (2^112), which also scales subnormals right;
 * infinities and NaNs keep an all-ones exponent. */
static ALWAYS_INLINE vf vload_f16(const uint16_t *p) {
    vh h;
    memcpy(&h, p, sizeof h);
    const vi x = __builtin_convertvector(h, vi), magnitude = (x & 0x7fff) << 13;
    const vi finite = (vi)((vf)magnitude * 0x1p112f), special = magnitude >= 0x0f800000;
    return (vf)(((x & 0x8000) << 16) | (special & (magnitude | 0x7f800000)) | (~special & finite));
}
static ALWAYS_INLINE vf vadd(vf a, vf b) { return a + b; }
static ALWAYS_INLINE vf vsub(vf a, vf b) { return a - b; }
static ALWAYS_INLINE vf vmul(vf a, vf b) { return a * b; }
static ALWAYS_INLINE vf vfma(vf a, vf b, vf c) { return a * b + c; }

static ALWAYS_INLINE float vsum(vf a) {
    float s = 0.f;
    for (int i = 0; i < VL; i++) s += a[i];
    return s;
}
static ALWAYS_INLINE vf vpow2n(vf n) { return (vf)((__builtin_convertvector(n, vi) + 127) << 23); }
static ALWAYS_INLINE float vmaxv(vf a) {
    float m = a[0];
    for (int i = 1; i < VL; i++) m = m > a[i] ? m : a[i];
    return m;
}
static ALWAYS_INLINE vf vselect_ge(vf x, vf lo, vf a, vf b) {
    const vi keep_a = x >= lo;
    return (vf)((keep_a & (vi)a) | (~keep_a & (vi)b));
}
static ALWAYS_INLINE vf vmax(vf a, vf b) { return vselect_ge(a, b, a, b); }
#endif

/* The dtype codes of the kernels' arguments (cpu_attn.NATIVE_DTYPES). */
enum { DT_F32 = 0, DT_BF16 = 1, DT_F16 = 2 };

/* VL elements of a tensor of `dtype` from element i, as fp32; dtype is a constant
 * in every caller. */
static ALWAYS_INLINE vf vload_as(const void *base, int64_t i, const int dtype) {
    if (dtype == DT_F32) return vload((const float *)base + i);
    if (dtype == DT_BF16) return vload_bf16((const uint16_t *)base + i);
    return vload_f16((const uint16_t *)base + i);
}

/* exp(x) for x <= 0 (and -inf), 0 below -87.3 (where 2^n would leave the normal
 * range): 2^n * e^r with n = round(x / ln 2), |r| <= ln2 / 2, e^r by its Taylor
 * series to r^7 (relative error < 1e-8 there). n is rounded by adding and taking
 * away 1.5 * 2^23, which every ISA does in two plain adds. */
static ALWAYS_INLINE vf vexp(vf x) {
    const vf lo = vset1(-87.3f), magic = vset1(12582912.f);
    const vf clamped = vmax(x, lo);
    const vf n = vsub(vfma(clamped, vset1(1.44269504088896341f), magic), magic);
    vf r = vfma(n, vset1(-0.693145751953125f), clamped);
    r = vfma(n, vset1(-1.428606765330187e-06f), r);
    vf y = vset1(1.f / 5040);
    y = vfma(y, r, vset1(1.f / 720));
    y = vfma(y, r, vset1(1.f / 120));
    y = vfma(y, r, vset1(1.f / 24));
    y = vfma(y, r, vset1(1.f / 6));
    y = vfma(y, r, vset1(0.5f));
    y = vfma(y, r, vset1(1.f));
    y = vfma(y, r, vset1(1.f));
    return vselect_ge(x, lo, vmul(y, vpow2n(n)), vzero());
}

#endif
