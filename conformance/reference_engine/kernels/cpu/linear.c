/* y = x @ W.T for bf16 / fp16 weights and a few rows of x (decode steps).
 *
 * Why a kernel of our own: at a handful of rows the product is bound by how fast W
 * streams from memory, and torch's bf16 matrix-vector path reaches about two thirds
 * of the machine's bandwidth. Here each thread takes blocks of ROWS output rows,
 * streams those rows of W from memory once, and multiplies up to MTILE rows of x
 * against each piece while it sits in a register; further rows of x take further
 * passes over the block, which then comes from L1, while the next block is
 * prefetched. Accumulation is fp32 and the result is rounded once to the input
 * dtype, as torch does.
 *
 * Two tiles, by what the ISA has (simd.h): with AVX-512 BF16 or Arm's BF16 extension,
 * bf16 pairs multiply and add into fp32 lanes in one instruction (vdpbf16ps, BFDOT:
 * bf16_tile); everywhere else, and for
 * fp16, x is widened to fp32 once per call (it is small, and read once per block of
 * W) and each piece of W is widened in registers (vec_tile): bf16 by a shift, fp16
 * by the ISA's conversion. The products of two 16-bit floats are exact in fp32, so
 * the two tiles differ only in the order of the fp32 sums.
 *
 * x is [M, K] with row stride ldx (elements), W is [N, K] contiguous, y is [M, N]
 * contiguous. Both dtypes are passed as raw 16-bit words. Returns 0, or -1 when
 * memory for the widened x cannot be had.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd.h"

#define ROWS 4   /* rows of W per block: 4 independent streams keep the prefetchers busy */
/* Rows of x per pass over a block: ROWS x MTILE accumulators, the ROWS pieces of W
 * and one of x must fit the register file. */
#define MTILE (SIMD_REGISTERS >= 32 ? 4 : 2)
#define SPREAD_MAX_K 2048 /* longest rows whose prefetch is spread over passes: prefetch_plan */

/* Rows [0, npf) of next at column j into L1. */
static ALWAYS_INLINE void prefetch_rows(const uint16_t *next, int64_t k, int npf, int64_t j) {
    for (int r = 0; r < npf; r++) __builtin_prefetch(next + r * k + j, 0, 3);
}

/* One block of nr (<= ROWS) rows of W against mt (<= MTILE) rows of the widened x,
 * VL elements at a time. Inlined with constant nr, mt and dtype so the accumulators
 * live in registers. A row's last partial vector is read from zero-padded copies:
 * no load runs past the end of W, and the padding adds nothing. */
static ALWAYS_INLINE void vec_tile(
    const float *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, int npf, const int dtype) {
    vf acc[MTILE][ROWS];
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) acc[i][r] = vzero();
    int64_t j = 0;
    for (; j + VL <= k; j += VL) {
        vf wv[ROWS];
        for (int r = 0; r < nr; r++) wv[r] = vload_as(w + r * k, j, dtype);
        if ((j & 31) == 0) /* once per 64-byte line */
            prefetch_rows(next, k, npf, j);
        for (int i = 0; i < mt; i++) {
            const vf xv = vload(x + i * ldx + j);
            for (int r = 0; r < nr; r++) acc[i][r] = vfma(xv, wv[r], acc[i][r]);
        }
    }
    if (j < k) {
        uint16_t w_tail[ROWS][VL] = {{0}};
        float x_tail[VL] = {0};
        vf wv[ROWS];
        for (int r = 0; r < nr; r++) {
            memcpy(w_tail[r], w + r * k + j, sizeof(uint16_t) * (k - j));
            wv[r] = vload_as(w_tail[r], 0, dtype);
        }
        for (int i = 0; i < mt; i++) {
            memcpy(x_tail, x + i * ldx + j, sizeof(float) * (k - j));
            const vf xv = vload(x_tail);
            for (int r = 0; r < nr; r++) acc[i][r] = vfma(xv, wv[r], acc[i][r]);
        }
    }
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) {
            const float sum = vsum(acc[i][r]);
            y[i * ldy + r] = dtype == DT_BF16 ? f32_to_bf16(sum) : f32_to_f16(sum);
        }
}

#define VEC_TILE_BF16(...) vec_tile(__VA_ARGS__, DT_BF16)
#define VEC_TILE_F16(...) vec_tile(__VA_ARGS__, DT_F16)

#if defined(SIMD_AVX512_BF16)
/* Pairwise sums of two vectors' halves, in pairs of lanes: 3 instructions per pair
 * instead of a full reduction of each (about 8 apiece, most of them shuffles, which
 * compete with the dot products at 16 rows of x). */
static inline __m512 fold_pairs(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
}

static inline __m512 fold_quads(__m512 a, __m512 b) {
    __m512d ad = _mm512_castps_pd(a), bd = _mm512_castps_pd(b);
    return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(ad, bd)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(ad, bd)));
}

static inline __m512 fold_lanes(__m512 a, __m512 b) {
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Lane t of the result is the sum of all lanes of v[t / ROWS][t % ROWS]. */
static inline __m512 sum16(__m512 v[MTILE][ROWS]) {
    __m512 q[4];
    for (int i = 0; i < 4; i++)
        q[i] = fold_quads(fold_pairs(v[i][0], v[i][1]), fold_pairs(v[i][2], v[i][3]));
    return fold_lanes(fold_lanes(q[0], q[1]), fold_lanes(q[2], q[3]));
}

/* One block of nr (<= ROWS) rows of W against mt (<= MTILE) rows of x. Inlined with
 * constant nr and mt so the accumulators live in registers. */
static ALWAYS_INLINE void bf16_tile(
    const uint16_t *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, int npf) {
    __m512 acc[MTILE][ROWS];
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) acc[i][r] = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 32 <= k; j += 32) {
        __m512bh wv[ROWS];
        for (int r = 0; r < nr; r++) wv[r] = (__m512bh)_mm512_loadu_si512(w + r * k + j);
        prefetch_rows(next, k, npf, j);
        for (int i = 0; i < mt; i++) {
            __m512bh xv = (__m512bh)_mm512_loadu_si512(x + i * ldx + j);
            for (int r = 0; r < nr; r++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], xv, wv[r]);
        }
    }
    if (j < k) { /* masked loads read zeros past the end: they add nothing */
        __mmask32 mask = (__mmask32)((1ull << (k - j)) - 1);
        __m512bh wv[ROWS];
        for (int r = 0; r < nr; r++) wv[r] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + r * k + j);
        for (int i = 0; i < mt; i++) {
            __m512bh xv = (__m512bh)_mm512_maskz_loadu_epi16(mask, x + i * ldx + j);
            for (int r = 0; r < nr; r++) acc[i][r] = _mm512_dpbf16_ps(acc[i][r], xv, wv[r]);
        }
    }
    if (mt == MTILE && nr == ROWS) {
        /* lane i*ROWS + r holds sum(acc[i][r]): y's rows of this tile are 4 lanes each */
        __m256i out = (__m256i)_mm512_cvtneps_pbh(sum16(acc));
        for (int i = 0; i < MTILE; i++)
            memcpy(y + i * ldy, (const uint16_t *)&out + i * ROWS, ROWS * sizeof(uint16_t));
        return;
    }
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) y[i * ldy + r] = f32_to_bf16(_mm512_reduce_add_ps(acc[i][r]));
}
#elif defined(SIMD_NEON_BF16)
/* bf16_tile of Arm's BF16 extension: BFDOT adds the products of 8 bf16 pairs into 4
 * fp32 lanes. A row's last partial vector is read from zero-padded copies, as in
 * vec_tile. */
static ALWAYS_INLINE bfloat16x8_t load_bf16x8(const uint16_t *p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

static ALWAYS_INLINE void bf16_tile(
    const uint16_t *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, int npf) {
    float32x4_t acc[MTILE][ROWS];
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) acc[i][r] = vdupq_n_f32(0.f);
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        bfloat16x8_t wv[ROWS];
        for (int r = 0; r < nr; r++) wv[r] = load_bf16x8(w + r * k + j);
        if ((j & 31) == 0) /* once per 64-byte line */
            prefetch_rows(next, k, npf, j);
        for (int i = 0; i < mt; i++) {
            const bfloat16x8_t xv = load_bf16x8(x + i * ldx + j);
            for (int r = 0; r < nr; r++) acc[i][r] = vbfdotq_f32(acc[i][r], xv, wv[r]);
        }
    }
    if (j < k) {
        uint16_t w_tail[ROWS][8] = {{0}}, x_tail[8] = {0};
        bfloat16x8_t wv[ROWS];
        for (int r = 0; r < nr; r++) {
            memcpy(w_tail[r], w + r * k + j, sizeof(uint16_t) * (k - j));
            wv[r] = load_bf16x8(w_tail[r]);
        }
        for (int i = 0; i < mt; i++) {
            memcpy(x_tail, x + i * ldx + j, sizeof(uint16_t) * (k - j));
            const bfloat16x8_t xv = load_bf16x8(x_tail);
            for (int r = 0; r < nr; r++) acc[i][r] = vbfdotq_f32(acc[i][r], xv, wv[r]);
        }
    }
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) y[i * ldy + r] = f32_to_bf16(vaddvq_f32(acc[i][r]));
}
#endif

/* Expands a tile function for every (nr, mt) so each call sees constants (npf, the
 * rows prefetched, is one loop's bound: a constant there would quadruple the code). */
#define DISPATCH_MT(TILE, NR)                                                        \
    switch (mt) {                                                                    \
    case 1: TILE(xs, ldx_, wr, next, ys, n, k, NR, 1, npf); break;                   \
    case 2: TILE(xs, ldx_, wr, next, ys, n, k, NR, 2, npf); break;                   \
    case 3: TILE(xs, ldx_, wr, next, ys, n, k, NR, MTILE > 2 ? 3 : MTILE, npf); break; \
    default: TILE(xs, ldx_, wr, next, ys, n, k, NR, MTILE, npf); break;              \
    }

/* Which rows of the next block pass `pass` of `passes` over this block prefetches:
 * all in the first pass when there is one (or rows are too long to hold two blocks
 * and the x tiles in L1: measured 15% slower at K=2816), else split 2+2 or 2+1+1 or
 * one per pass, so memory stays busy through every pass rather than the first. */
static inline int prefetch_plan(int pass, int passes, int64_t k, int *first) {
    static const int split[4][4] = {{4, 0, 0, 0}, {2, 2, 0, 0}, {2, 1, 1, 0}, {1, 1, 1, 1}};
    static const int start[4][4] = {{0, 4, 4, 4}, {0, 2, 4, 4}, {0, 2, 3, 4}, {0, 1, 2, 3}};
    if (k > SPREAD_MAX_K) passes = 1;
    if (passes > 4) passes = 4;
    if (pass >= 4) return 0;
    *first = start[passes - 1][pass];
    return split[passes - 1][pass];
}

/* Every block of ROWS rows of W against all rows of x (row stride LDX), the blocks
 * shared out over the threads of the enclosing parallel region. */
#define LINEAR_BLOCKS(TILE, X, LDX)                                                  \
    _Pragma("omp for schedule(static)")                                              \
    for (int64_t b = 0; b < (n + ROWS - 1) / ROWS; b++) {                            \
        const int64_t row = b * ROWS, ldx_ = (LDX);                                  \
        const int nr = n - row < ROWS ? (int)(n - row) : ROWS;                       \
        const uint16_t *wr = w + row * k;                                            \
        /* later passes over the same rows of W find them in L1 */                   \
        for (int64_t i0 = 0; i0 < m; i0 += MTILE) {                                  \
            const int mt = m - i0 < MTILE ? (int)(m - i0) : MTILE;                   \
            const __typeof__(*(X)) *xs = (X) + i0 * ldx_;                            \
            int first = 0;                                                           \
            const int npf = n - row >= 2 * ROWS                                      \
                ? prefetch_plan((int)(i0 / MTILE), (int)((m + MTILE - 1) / MTILE), k, &first) \
                : 0;                                                                 \
            const uint16_t *next = wr + (ROWS + first) * k;                          \
            uint16_t *ys = y + i0 * n + row;                                         \
            switch (nr) {                                                            \
            case 1: DISPATCH_MT(TILE, 1); break;                                     \
            case 2: DISPATCH_MT(TILE, 2); break;                                     \
            case 3: DISPATCH_MT(TILE, 3); break;                                     \
            default: DISPATCH_MT(TILE, 4); break;                                    \
            }                                                                        \
        }                                                                            \
    }

/* y = x @ W.T through vec_tile: the rows of x widened to fp32 first, in parallel,
 * then the blocks of W. */
static ALWAYS_INLINE int widened_linear(const uint16_t *x, int64_t ldx, const uint16_t *w, uint16_t *y,
                                        int64_t m, int64_t n, int64_t k, int threads, const int dtype) {
    float *xf = malloc(sizeof(float) * (size_t)(m * k));
    if (!xf) return -1;
    #pragma omp parallel num_threads(threads)
    {
        #pragma omp for schedule(static)
        for (int64_t i = 0; i < m; i++) {
            int64_t j = 0;
            for (; j + VL <= k; j += VL) vstore(xf + i * k + j, vload_as(x + i * ldx, j, dtype));
            for (; j < k; j++)
                xf[i * k + j] = dtype == DT_BF16 ? bf16_to_f32(x[i * ldx + j]) : f16_to_f32(x[i * ldx + j]);
        }
        if (dtype == DT_BF16)
            LINEAR_BLOCKS(VEC_TILE_BF16, xf, k)
        else
            LINEAR_BLOCKS(VEC_TILE_F16, xf, k)
    }
    free(xf);
    return 0;
}

int linear_bf16(const uint16_t *x, int64_t ldx, const uint16_t *w, uint16_t *y,
                int64_t m, int64_t n, int64_t k, int threads) {
#if defined(SIMD_AVX512_BF16) || defined(SIMD_NEON_BF16)
    #pragma omp parallel num_threads(threads)
    LINEAR_BLOCKS(bf16_tile, x, ldx)
    return 0;
#else
    return widened_linear(x, ldx, w, y, m, n, k, threads, DT_BF16);
#endif
}

int linear_f16(const uint16_t *x, int64_t ldx, const uint16_t *w, uint16_t *y,
               int64_t m, int64_t n, int64_t k, int threads) {
    return widened_linear(x, ldx, w, y, m, n, k, threads, DT_F16);
}
