/* One tile of keys against a work item's query rows: the inner loops of
 * paged_attention.c (see its header for the design), with the types they share.
 * Kept apart so the file that schedules work items reads on its own; everything
 * here is static inline and included by that one file. */
#ifndef CONFORMANCE_PAGED_ATTENTION_TILE_H
#define CONFORMANCE_PAGED_ATTENTION_TILE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "half.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

enum { DT_F32 = 0, DT_BF16 = 1, DT_F16 = 2 };

#define TILE 16        /* keys per tile */
#define ROWS 4         /* query rows per pass over a tile: 4 x D/16 accumulators fit */
#define MAX_ROWS 16    /* query rows per work item */
#define MAX_D 256
#define PREFETCH_TILES 1 /* tiles read ahead into L1 */
#define FAR_TILES 2    /* and into L2 (measured: 2 to 4 alike, on Zen 5) */
#define MIN_CHUNK 256  /* keys: the least worth a split of its own (a judgement, not measured) */

static inline float load_scalar(const void *p, int64_t i, int dtype) {
    if (dtype == DT_F32) return ((const float *)p)[i];
    if (dtype == DT_BF16) return bf16_to_f32(((const uint16_t *)p)[i]);
    return f16_to_f32(((const uint16_t *)p)[i]);
}

static inline void store_scalar(void *p, int64_t i, float v, int dtype) {
    if (dtype == DT_F32) ((float *)p)[i] = v;
    else if (dtype == DT_BF16) ((uint16_t *)p)[i] = f32_to_bf16(v);
    else ((uint16_t *)p)[i] = f32_to_f16(v);
}

/* What every work item shares. Strides are in elements. */
typedef struct {
    const void *query, *keys;
    void *output;
    const int32_t *block_table, *query_start, *seq_lens;
    int64_t q_stride, o_stride, bt_stride, row_stride; /* row_stride: one cache slot */
    int64_t values_delta; /* bytes from a key to its value */
    const void *new_keys, *new_values; /* the step's keys and values, or NULL */
    int64_t new_stride;
    int heads, kv_heads, d, block_size, q_dtype, kv_dtype, window;
    int bf16_pairs; /* the bf16 dot-product path, and the sum layout it leaves (below) */
    float scale, soft_cap;
} Problem;

/* One unit of work before splitting: query tokens [tok0, tok0 + ntok) of request
 * req, query heads [g0, g0 + ng) of every KV head's group, keys [k0, k1). All KV
 * heads in one unit, because a tile of the cache holds them interleaved: reading
 * one head's rows alone would leave the other heads' halves of the same cache pages
 * to be fetched again (and the hardware prefetcher fetches them anyway). */
typedef struct {
    int req, tok0, ntok, g0, ng, k0, k1, chunks, first_item;
} Unit;

/* The running softmax state of up to MAX_ROWS query rows of one KV head. */
typedef struct {
    float q[MAX_ROWS][MAX_D] __attribute__((aligned(64)));    /* scaled */
    uint16_t qb[MAX_ROWS][MAX_D] __attribute__((aligned(64))); /* bf16 bits, unscaled */
    float acc[MAX_ROWS][MAX_D] __attribute__((aligned(64)));
    float m[MAX_ROWS], l[MAX_ROWS];
    int pos[MAX_ROWS];
} State;

/* A score after the logits soft cap (when set). */
static inline float cap_score(const Problem *p, float s) {
    return p->soft_cap > 0.f ? p->soft_cap * tanhf(s / p->soft_cap) : s;
}

/* Whether the query at position pos may attend to key position key. */
static inline int visible(const Problem *p, int pos, int key) {
    return key <= pos && (p->window <= 0 || pos - key < p->window);
}

/* Keys read later, asked for while a tile is computed (see run_keys): next, the
 * rows computed right after it, into L1 (NULL: none); far, the same head's rows
 * FAR_TILES tiles ahead, only into L2 (NULL: none). */
typedef struct {
    const char *next, *far;
} Ahead;

/* Asks for the line at byte offset off of both. */
static inline __attribute__((always_inline)) void ask(Ahead pf, int64_t off) {
    __builtin_prefetch(pf.next + off, 0, 3);
    if (pf.far) __builtin_prefetch(pf.far + off, 0, 1);
}

/* Asks for row t of the tiles ahead, keys and values. Spread over the keys of the
 * current tile, a few lines at a time: a burst of hundreds of prefetches at once
 * would stall the loads the current tile needs behind them. */
static inline void prefetch_row(const Problem *p, Ahead pf, int t, int bytes) {
    if (!pf.next) return;
    const int64_t row = (int64_t)t * p->row_stride * (bytes / p->d);
    for (int b = 0; b < bytes; b += 64) {
        ask(pf, row + b);
        ask(pf, row + p->values_delta + b);
    }
}

#if defined(__AVX512F__)
static inline __attribute__((always_inline)) __m512 load16(const void *base, int64_t i, const int dtype) {
    if (dtype == DT_F32) return _mm512_loadu_ps((const float *)base + i);
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)base + i));
    if (dtype == DT_BF16) return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    return _mm512_cvtph_ps(h);
}

/* exp(x) for x <= 0 (and -inf): 2^n * e^r with n = round(x / ln 2), |r| <= ln2 / 2,
 * e^r by its Taylor series to r^7 (relative error < 1e-8 there). */
static inline __m512 exp16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(-104.f);
    __mmask16 tiny = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    x = _mm512_max_ps(x, lo);
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
    __m512 y = _mm512_set1_ps(1.f / 5040);
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f / 720));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f / 120));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f / 24));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f / 6));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(0.5f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f));
    y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(1.f));
    return _mm512_maskz_mov_ps(~tiny, _mm512_scalef_ps(y, n));
}

/* The sums of a[4 * key + row] (4 keys x 4 rows) as lane 4 * row + key of one
 * vector: a transpose-add tree, 15 adds for 16 sums. */
static inline __attribute__((always_inline)) __m512 sum16(const __m512 *a) {
    __m512 x[8], y[4], z[2];
    for (int i = 0; i < 8; i++)
        x[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44),
                             _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xEE));
    for (int i = 0; i < 4; i++)
        y[i] = _mm512_add_ps(_mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0x88),
                             _mm512_shuffle_f32x4(x[2 * i], x[2 * i + 1], 0xDD));
    for (int i = 0; i < 2; i++)
        z[i] = _mm512_add_ps(_mm512_unpacklo_ps(y[2 * i], y[2 * i + 1]), _mm512_unpackhi_ps(y[2 * i], y[2 * i + 1]));
    const __m512d z0 = _mm512_castps_pd(z[0]), z1 = _mm512_castps_pd(z[1]);
    return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(z0, z1)), _mm512_castpd_ps(_mm512_unpackhi_pd(z0, z1)));
}

/* The scores of rows [0, nr) from sums[g], which holds row i's keys 4g..4g+3 in its
 * 128-bit lane i (sum16): a transpose of the lanes. */
static inline __attribute__((always_inline)) void store_scores(const __m512 *sums, const int nr,
                                                               float s[ROWS][TILE]) {
    const __m512 t0 = _mm512_shuffle_f32x4(sums[0], sums[1], 0x44), t1 = _mm512_shuffle_f32x4(sums[0], sums[1], 0xEE);
    const __m512 t2 = _mm512_shuffle_f32x4(sums[2], sums[3], 0x44), t3 = _mm512_shuffle_f32x4(sums[2], sums[3], 0xEE);
    _mm512_store_ps(s[0], _mm512_shuffle_f32x4(t0, t2, 0x88));
    if (nr > 1) _mm512_store_ps(s[1], _mm512_shuffle_f32x4(t0, t2, 0xDD));
    if (nr > 2) _mm512_store_ps(s[2], _mm512_shuffle_f32x4(t1, t3, 0x88));
    if (nr > 3) _mm512_store_ps(s[3], _mm512_shuffle_f32x4(t1, t3, 0xDD));
}

/* Scores of rows [r0, r0 + nr) against the nk (<= 16) keys of one tile. Four keys
 * at a time against all rows, in nr x 4 accumulators: each key and each q chunk is
 * loaded once per four keys, where one key at a time loads q once per key and the
 * loads, not the FMAs, bound the loop. Keys past nk repeat the last one (slots
 * beyond it may be unowned or past the buffer); softmax masks their scores. */
static inline __attribute__((always_inline)) void tile_scores(
    const Problem *p, const State *st, int r0, const int nr, const void *k, int nk,
    float s[ROWS][TILE], Ahead pf, const int dtype) {
    const int esize = dtype == DT_F32 ? 4 : 2;
    const __m512 z = _mm512_setzero_ps();
    __m512 sums[TILE / 4];
    for (int g = 0; g < TILE / 4; g++) {
        if (4 * g >= nk) {
            sums[g] = z;
            continue;
        }
        int64_t row[4];
        for (int j = 0; j < 4; j++) row[j] = (int64_t)(4 * g + j < nk ? 4 * g + j : nk - 1) * p->row_stride;
        __m512 a[16];
        for (int i = 0; i < 16; i++) a[i] = z;
        for (int c = 0; c < p->d; c += 16) {
            /* The keys computed next (see run_keys), spread over the loop: a burst
             * of them at once would stall the loads this tile needs behind them. */
            if (pf.next && c * esize % 64 == 0)
                for (int j = 0; j < 4; j++) ask(pf, (row[j] + c) * esize);
            for (int j = 0; j < 4; j++) {
                const __m512 kv = load16(k, row[j] + c, dtype);
                for (int i = 0; i < nr; i++)
                    a[4 * j + i] = _mm512_fmadd_ps(_mm512_load_ps(&st->q[r0 + i][c]), kv, a[4 * j + i]);
            }
        }
        sums[g] = sum16(a);
    }
    store_scores(sums, nr, s);
}

/* acc[r][c, c + 16 nc) += sum_t w[r][t] * v_t: nr x nc accumulators stay in
 * registers over the tile's keys, so acc is read and written once per tile and
 * each value chunk loaded once for all rows. The values computed next are asked
 * for here rather than with their keys: issued then, they would wait in L1 through
 * a whole tile, and be the first lines evicted. */
static inline __attribute__((always_inline)) void values_block(
    const Problem *p, State *st, int r0, const int nr, const void *v, int nk,
    float w[ROWS][TILE], int c, const int nc, Ahead pf, const int dtype) {
    const int esize = dtype == DT_F32 ? 4 : 2;
    __m512 a[ROWS][4];
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) a[i][j] = _mm512_load_ps(&st->acc[r0 + i][c + 16 * j]);
    for (int t = 0; t < nk; t++) {
        __m512 vv[4];
        for (int j = 0; j < nc; j++) {
            const int64_t at = (int64_t)t * p->row_stride + c + 16 * j;
            if (pf.next && (c + 16 * j) * esize % 64 == 0) ask(pf, p->values_delta + at * esize);
            vv[j] = load16(v, at, dtype);
        }
        for (int i = 0; i < nr; i++) {
            const __m512 wt = _mm512_set1_ps(w[i][t]);
            for (int j = 0; j < nc; j++) a[i][j] = _mm512_fmadd_ps(wt, vv[j], a[i][j]);
        }
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) _mm512_store_ps(&st->acc[r0 + i][c + 16 * j], a[i][j]);
}

/* acc[r] += sum_t w[r][t] * v_t for rows [r0, r0 + nr) and the tile's nk values. */
static inline __attribute__((always_inline)) void tile_values(
    const Problem *p, State *st, int r0, const int nr, const void *v, int nk,
    float w[ROWS][TILE], Ahead pf, const int dtype) {
    int c = 0;
    for (; c + 64 <= p->d; c += 64) values_block(p, st, r0, nr, v, nk, w, c, 4, pf, dtype);
    switch ((p->d - c) / 16) {
    case 1: values_block(p, st, r0, nr, v, nk, w, c, 1, pf, dtype); break;
    case 2: values_block(p, st, r0, nr, v, nk, w, c, 2, pf, dtype); break;
    case 3: values_block(p, st, r0, nr, v, nk, w, c, 3, pf, dtype); break;
    default: break;
    }
}

/* Softmax update of one row with its 16 tile scores; leaves the weights in w. */
static inline void tile_softmax(const Problem *p, State *st, int r, int key0, int nk, float *sr, float *w) {
    const int pos = st->pos[r];
    __m512i lane = _mm512_add_epi32(_mm512_set1_epi32(key0), _mm512_setr_epi32(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
    __mmask16 ok = _mm512_cmple_epi32_mask(lane, _mm512_set1_epi32(pos)) & (__mmask16)((1u << nk) - 1);
    if (p->window > 0)
        ok &= _mm512_cmpgt_epi32_mask(lane, _mm512_set1_epi32(pos - p->window));
    if (!ok) {
        _mm512_storeu_ps(w, _mm512_setzero_ps());
        return;
    }
    if (p->soft_cap > 0.f)
        for (int t = 0; t < nk; t++) sr[t] = cap_score(p, sr[t]);
    __m512 s = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), ok, sr);
    float m_new = fmaxf(st->m[r], _mm512_reduce_max_ps(s));
    __m512 e = _mm512_maskz_mov_ps(ok, exp16(_mm512_sub_ps(s, _mm512_set1_ps(m_new))));
    float alpha = expf(st->m[r] - m_new);
    st->l[r] = st->l[r] * alpha + _mm512_reduce_add_ps(e);
    if (alpha != 1.f) {
        __m512 al = _mm512_set1_ps(alpha);
        for (int c = 0; c < p->d; c += 16)
            _mm512_store_ps(&st->acc[r][c], _mm512_mul_ps(al, _mm512_load_ps(&st->acc[r][c])));
    }
    st->m[r] = m_new;
    _mm512_storeu_ps(w, e);
}

static inline __attribute__((always_inline)) void tile_rows(
    const Problem *p, State *st, int r0, const int nr, const void *k, const void *v,
    int key0, int nk, Ahead pf, const int dtype) {
    float s[ROWS][TILE] __attribute__((aligned(64)));
    float w[ROWS][TILE] __attribute__((aligned(64)));
    tile_scores(p, st, r0, nr, k, nk, s, pf, dtype);
    for (int i = 0; i < nr; i++) tile_softmax(p, st, r0 + i, key0, nk, s[i], w[i]);
    tile_values(p, st, r0, nr, v, nk, w, pf, dtype);
}

static inline __attribute__((always_inline)) void tile_all_rows(
    const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
    Ahead pf, const int dtype) {
    int r = 0;
    for (; r + ROWS <= rows; r += ROWS, pf = (Ahead){NULL, NULL}) tile_rows(p, st, r, ROWS, k, v, key0, nk, pf, dtype);
    switch (rows - r) {
    case 1: tile_rows(p, st, r, 1, k, v, key0, nk, pf, dtype); break;
    case 2: tile_rows(p, st, r, 2, k, v, key0, nk, pf, dtype); break;
    case 3: tile_rows(p, st, r, 3, k, v, key0, nk, pf, dtype); break;
    default: break;
    }
}

#if defined(__AVX512BF16__)
/* bf16 queries and keys/values: vdpbf16ps multiplies pairs of bf16 and adds them into
 * fp32 lanes, half the instructions of converting and using FMAs. Products of two
 * bf16 are exact in fp32. Scores pair adjacent elements of q and k; the weighted sum
 * pairs keys t and t+1, with the weights rounded to bf16 (as flash-attention kernels
 * round them to the dtype). Interleaving two value rows (unpacklo/hi_epi16) leaves
 * the sums of each 32 elements in the order of `paired_index`. Keys, values and
 * their prefetches are blocked and timed as in tile_scores and values_block. */
static inline __attribute__((always_inline)) void pairs_scores(
    const Problem *p, const State *st, int r0, const int nr, const uint16_t *k, int nk, float s[ROWS][TILE],
    Ahead pf) {
    const __m512 z = _mm512_setzero_ps();
    __m512 sums[TILE / 4];
    for (int g = 0; g < TILE / 4; g++) {
        if (4 * g >= nk) {
            sums[g] = z;
            continue;
        }
        int64_t row[4];
        for (int j = 0; j < 4; j++) row[j] = (int64_t)(4 * g + j < nk ? 4 * g + j : nk - 1) * p->row_stride;
        __m512 a[16];
        for (int i = 0; i < 16; i++) a[i] = z;
        for (int c = 0; c < p->d; c += 32) {
            if (pf.next)
                for (int j = 0; j < 4; j++) ask(pf, (row[j] + c) * 2);
            for (int j = 0; j < 4; j++) {
                const __m512bh kv = (__m512bh)_mm512_loadu_si512(k + row[j] + c);
                for (int i = 0; i < nr; i++)
                    a[4 * j + i] = _mm512_dpbf16_ps(a[4 * j + i], (__m512bh)_mm512_load_si512(&st->qb[r0 + i][c]), kv);
            }
        }
        sums[g] = _mm512_mul_ps(sum16(a), _mm512_set1_ps(p->scale));
    }
    store_scores(sums, nr, s);
}

static inline __attribute__((always_inline)) void pairs_values(
    const Problem *p, State *st, int r0, const int nr, const uint16_t *v, int nk, const uint32_t w[ROWS][TILE / 2],
    Ahead pf) {
    for (int c = 0; c < p->d; c += 32) {
        __m512 lo[ROWS], hi[ROWS];
        for (int i = 0; i < nr; i++) {
            lo[i] = _mm512_load_ps(&st->acc[r0 + i][c]);
            hi[i] = _mm512_load_ps(&st->acc[r0 + i][c + 16]);
        }
        for (int t = 0; t < nk; t += 2) {
            if (pf.next)
                for (int j = t; j < t + 2; j++) ask(pf, p->values_delta + ((int64_t)j * p->row_stride + c) * 2);
            __m512i v0 = _mm512_loadu_si512(v + (int64_t)t * p->row_stride + c);
            /* An odd last key pairs with zeros, not with the (unowned) next slot. */
            __m512i v1 = t + 1 < nk ? _mm512_loadu_si512(v + (int64_t)(t + 1) * p->row_stride + c)
                                    : _mm512_setzero_si512();
            __m512bh vlo = (__m512bh)_mm512_unpacklo_epi16(v0, v1), vhi = (__m512bh)_mm512_unpackhi_epi16(v0, v1);
            for (int i = 0; i < nr; i++) {
                __m512bh wt = (__m512bh)_mm512_set1_epi32((int)w[i][t / 2]);
                lo[i] = _mm512_dpbf16_ps(lo[i], vlo, wt);
                hi[i] = _mm512_dpbf16_ps(hi[i], vhi, wt);
            }
        }
        for (int i = 0; i < nr; i++) {
            _mm512_store_ps(&st->acc[r0 + i][c], lo[i]);
            _mm512_store_ps(&st->acc[r0 + i][c + 16], hi[i]);
        }
    }
}

static inline __attribute__((always_inline)) void pairs_rows(
    const Problem *p, State *st, int r0, const int nr, const void *k, const void *v, int key0, int nk,
    Ahead pf) {
    float s[ROWS][TILE] __attribute__((aligned(64)));
    float w[ROWS][TILE] __attribute__((aligned(64)));
    uint32_t wb[ROWS][TILE / 2] __attribute__((aligned(64)));
    pairs_scores(p, st, r0, nr, k, nk, s, pf);
    for (int i = 0; i < nr; i++) {
        tile_softmax(p, st, r0 + i, key0, nk, s[i], w[i]);
        _mm256_store_si256((__m256i *)wb[i], (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(w[i])));
    }
    pairs_values(p, st, r0, nr, v, nk, wb, pf);
}

static void pairs_all_rows(const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
                           Ahead pf) {
    int r = 0;
    for (; r + ROWS <= rows; r += ROWS, pf = (Ahead){NULL, NULL}) pairs_rows(p, st, r, ROWS, k, v, key0, nk, pf);
    switch (rows - r) {
    case 1: pairs_rows(p, st, r, 1, k, v, key0, nk, pf); break;
    case 2: pairs_rows(p, st, r, 2, k, v, key0, nk, pf); break;
    case 3: pairs_rows(p, st, r, 3, k, v, key0, nk, pf); break;
    default: break;
    }
}
#endif

static void tile(const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
                 Ahead pf) {
#if defined(__AVX512BF16__)
    if (p->bf16_pairs) {
        pairs_all_rows(p, st, rows, k, v, key0, nk, pf);
        return;
    }
#endif
    if (p->d % 16) goto portable;
    switch (p->kv_dtype) {
    case DT_F32: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_F32); return;
    case DT_BF16: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_BF16); return;
    default: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_F16); return;
    }
portable:;
#else
static void tile(const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
                 Ahead pf) {
#endif
    /* Portable path: the same steps, one row and one key at a time. */
    for (int r = 0; r < rows; r++) {
        float w[TILE], m_tile = -INFINITY;
        for (int t = 0; t < nk; t++) {
            if (r == 0) prefetch_row(p, pf, t, p->d * (p->kv_dtype == DT_F32 ? 4 : 2));
            w[t] = -INFINITY;
            if (!visible(p, st->pos[r], key0 + t)) continue;
            float s = 0.f;
            for (int c = 0; c < p->d; c++)
                s += st->q[r][c] * load_scalar(k, (int64_t)t * p->row_stride + c, p->kv_dtype);
            w[t] = cap_score(p, s);
            m_tile = fmaxf(m_tile, w[t]);
        }
        if (m_tile == -INFINITY) continue;
        float m_new = fmaxf(st->m[r], m_tile), alpha = expf(st->m[r] - m_new);
        st->l[r] *= alpha;
        for (int c = 0; c < p->d; c++) st->acc[r][c] *= alpha;
        for (int t = 0; t < nk; t++) {
            if (w[t] == -INFINITY) continue;
            float e = expf(w[t] - m_new);
            st->l[r] += e;
            for (int c = 0; c < p->d; c++)
                st->acc[r][c] += e * load_scalar(v, (int64_t)t * p->row_stride + c, p->kv_dtype);
        }
        st->m[r] = m_new;
    }
}

#endif
