/* y = x @ W.T for bf16 / fp16 weights and a few rows of x (decode steps).
 *
 * Why a kernel of our own: at a handful of rows the product is bound by how fast W
 * streams from memory, and torch's bf16 matrix-vector path reaches about two thirds
 * of the machine's bandwidth. Here each thread takes blocks of ROWS output rows,
 * streams those rows of W from memory once, and multiplies up to MTILE rows of x
 * against each 64-byte piece while it sits in a register; further rows of x take
 * further passes over the block, which then comes from L1, while the next block is
 * prefetched. Accumulation is fp32 and the result is rounded once to the input
 * dtype, as torch does.
 *
 * x is [M, K] with row stride ldx (elements), W is [N, K] contiguous, y is [M, N]
 * contiguous. Both dtypes are passed as raw 16-bit words.
 */
#include <stdint.h>
#include <string.h>

#include "half.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#define ROWS 4   /* rows of W per block: 4 independent streams keep the prefetchers busy */
#define MTILE 4  /* rows of x per pass over a block: 16 accumulators fit the 32 registers */
#define SPREAD_MAX_K 2048 /* longest rows whose prefetch is spread over passes: prefetch_plan */

#if defined(__AVX512F__)
/* Rows [0, npf) of next at column j into L1; npf is a constant in every caller. */
static inline __attribute__((always_inline)) void prefetch_rows(
    const uint16_t *next, int64_t k, const int npf, int64_t j) {
    for (int r = 0; r < npf; r++) _mm_prefetch((const char *)(next + r * k + j), _MM_HINT_T0);
}
#endif

#if !defined(__AVX512BF16__) || !defined(__AVX512F__)
/* One block of nr rows of W against mt rows of x, one product at a time: the
 * fallback where the vector tiles below cannot be built. */
static inline void tile_portable(
    const uint16_t *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, const int npf,
    float (*to_f32)(uint16_t), uint16_t (*from_f32)(float)) {
    (void)next, (void)npf;
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) {
            float sum = 0.0f;
            for (int64_t j = 0; j < k; j++) sum += to_f32(x[i * ldx + j]) * to_f32(w[r * k + j]);
            y[i * ldy + r] = from_f32(sum);
        }
}
#endif

#if defined(__AVX512BF16__)
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
static inline __attribute__((always_inline)) void bf16_tile(
    const uint16_t *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, const int npf) {
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
#define BF16_TILE bf16_tile
#else
#define BF16_TILE(...) tile_portable(__VA_ARGS__, bf16_to_f32, f32_to_bf16)
#endif

#if defined(__AVX512F__)
static inline __attribute__((always_inline)) void f16_tile(
    const uint16_t *x, int64_t ldx, const uint16_t *w, const uint16_t *next, uint16_t *y,
    int64_t ldy, int64_t k, const int nr, const int mt, const int npf) {
    __m512 acc[MTILE][ROWS];
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) acc[i][r] = _mm512_setzero_ps();
    for (int64_t j = 0; j < k; j += 16) {
        __mmask16 mask = k - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - j)) - 1);
        __m512 wv[ROWS];
        for (int r = 0; r < nr; r++)
            wv[r] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, w + r * k + j));
        if ((j & 31) == 0) /* once per 64-byte line */
            prefetch_rows(next, k, npf, j);
        for (int i = 0; i < mt; i++) {
            __m512 xv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, x + i * ldx + j));
            for (int r = 0; r < nr; r++) acc[i][r] = _mm512_fmadd_ps(xv, wv[r], acc[i][r]);
        }
    }
    for (int i = 0; i < mt; i++)
        for (int r = 0; r < nr; r++) y[i * ldy + r] = f32_to_f16(_mm512_reduce_add_ps(acc[i][r]));
}
#define F16_TILE f16_tile
#else
#define F16_TILE(...) tile_portable(__VA_ARGS__, f16_to_f32, f32_to_f16)
#endif

/* Expands a tile function for every (nr, mt, npf) so each call sees constants. */
#define DISPATCH_PF(TILE, NR, MT)                                                    \
    switch (npf) {                                                                   \
    case 0: TILE(xs, ldx, wr, next, ys, n, k, NR, MT, 0); break;                     \
    case 1: TILE(xs, ldx, wr, next, ys, n, k, NR, MT, 1); break;                     \
    case 2: TILE(xs, ldx, wr, next, ys, n, k, NR, MT, 2); break;                     \
    default: TILE(xs, ldx, wr, next, ys, n, k, NR, MT, ROWS); break;                 \
    }

#define DISPATCH_MT(TILE, NR)                                                        \
    switch (mt) {                                                                    \
    case 1: DISPATCH_PF(TILE, NR, 1); break;                                         \
    case 2: DISPATCH_PF(TILE, NR, 2); break;                                         \
    case 3: DISPATCH_PF(TILE, NR, 3); break;                                         \
    default: DISPATCH_PF(TILE, NR, 4); break;                                        \
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

#define DEFINE_LINEAR(NAME, TILE)                                                    \
    void NAME(const uint16_t *x, int64_t ldx, const uint16_t *w, uint16_t *y,       \
              int64_t m, int64_t n, int64_t k, int threads) {                        \
        int64_t blocks = (n + ROWS - 1) / ROWS;                                      \
        _Pragma("omp parallel for num_threads(threads) schedule(static)")            \
        for (int64_t b = 0; b < blocks; b++) {                                       \
            int64_t row = b * ROWS;                                                  \
            int nr = n - row < ROWS ? (int)(n - row) : ROWS;                         \
            const uint16_t *wr = w + row * k;                                        \
            /* later passes over the same rows of W find them in L1 */               \
            for (int64_t i0 = 0; i0 < m; i0 += MTILE) {                              \
                int mt = m - i0 < MTILE ? (int)(m - i0) : MTILE;                     \
                const uint16_t *xs = x + i0 * ldx;                                   \
                int first = 0;                                                       \
                int npf = n - row >= 2 * ROWS                                        \
                    ? prefetch_plan((int)(i0 / MTILE), (int)((m + MTILE - 1) / MTILE), k, &first) \
                    : 0;                                                             \
                const uint16_t *next = wr + (ROWS + first) * k;                      \
                uint16_t *ys = y + i0 * n + row;                                     \
                switch (nr) {                                                        \
                case 1: DISPATCH_MT(TILE, 1); break;                                 \
                case 2: DISPATCH_MT(TILE, 2); break;                                 \
                case 3: DISPATCH_MT(TILE, 3); break;                                 \
                default: DISPATCH_MT(TILE, 4); break;                                \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }

DEFINE_LINEAR(linear_bf16, BF16_TILE)
DEFINE_LINEAR(linear_f16, F16_TILE)

/* 1 when the bf16 path uses the AVX-512 BF16 dot product, 0 on the portable loop. */
int linear_bf16_native(void) {
#if defined(__AVX512BF16__)
    return 1;
#else
    return 0;
#endif
}
