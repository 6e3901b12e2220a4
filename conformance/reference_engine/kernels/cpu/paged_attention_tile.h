/* One tile of keys against a work item's query rows: the inner loops of
 * paged_attention.c (see its header for the design), with the types they share.
 * Kept apart so the file that schedules work items reads on its own; everything
 * here is static inline and included by that one file.
 *
 * The steps of a tile are written once over simd.h's vectors (VL lanes of fp32),
 * which each variant's build turns into its ISA: the softmax update and the
 * weighted sum of values everywhere, the scores everywhere but AVX-512, whose
 * scores (a transpose tree over 16 lanes) and bf16 pair path are in
 * paged_attention_avx512.h. */
#ifndef CONFORMANCE_PAGED_ATTENTION_TILE_H
#define CONFORMANCE_PAGED_ATTENTION_TILE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

#define TILE 16        /* keys per tile */
#define ROWS 4         /* query rows per pass over a tile */
#define MAX_ROWS 16    /* query rows per work item */
#define MAX_D 256      /* head sizes: multiples of HEAD_ALIGN up to MAX_D */
#define HEAD_ALIGN 32  /* a bf16 pair step, and a whole number of vectors on every ISA */
#define PREFETCH_TILES 1 /* tiles read ahead into L1 */
#define FAR_TILES 2    /* and into L2 (measured: 2 to 4 alike, on Zen 5) */
#define MIN_CHUNK 256  /* keys: the least worth a split of its own (a judgement, not measured) */
/* Keys per pass of the scores, and value vectors per pass of the weighted sum:
 * their ROWS x n accumulators, the n keys or values and a query or weight vector
 * must fit the register file. */
#define SCORE_KEYS (SIMD_REGISTERS >= 32 ? 4 : 2)
#define VALUE_VECTORS (SIMD_REGISTERS >= 32 ? 4 : 2)

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


/* Element offsets of keys t0 .. t0 + n - 1 of a tile of nk; keys past nk repeat the
 * last one (slots beyond it may be unowned or past the buffer). */
static ALWAYS_INLINE void key_offsets(const Problem *p, int t0, int nk, const int n, int64_t *row) {
    for (int j = 0; j < n; j++) row[j] = (int64_t)(t0 + j < nk ? t0 + j : nk - 1) * p->row_stride;
}

/* acc[r][c, c + VL nc) += sum_t w[r][t] * v_t: nr x nc accumulators stay in
 * registers over the tile's keys, so acc is read and written once per tile and
 * each value vector loaded once for all rows. The values computed next are asked
 * for here rather than with their keys: issued then, they would wait in L1 through
 * a whole tile, and be the first lines evicted. */
static ALWAYS_INLINE void values_block(
    const Problem *p, State *st, int r0, const int nr, const void *v, int nk,
    float w[ROWS][TILE], int c, const int nc, Ahead pf, const int dtype) {
    const int esize = dtype == DT_F32 ? 4 : 2;
    vf a[ROWS][VALUE_VECTORS];
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) a[i][j] = vload(&st->acc[r0 + i][c + VL * j]);
    for (int t = 0; t < nk; t++) {
        vf vv[VALUE_VECTORS];
        for (int j = 0; j < nc; j++) {
            const int64_t at = (int64_t)t * p->row_stride + c + VL * j;
            if (pf.next && (c + VL * j) * esize % 64 == 0) ask(pf, p->values_delta + at * esize);
            vv[j] = vload_as(v, at, dtype);
        }
        for (int i = 0; i < nr; i++) {
            const vf wt = vset1(w[i][t]);
            for (int j = 0; j < nc; j++) a[i][j] = vfma(wt, vv[j], a[i][j]);
        }
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) vstore(&st->acc[r0 + i][c + VL * j], a[i][j]);
}

/* acc[r] += sum_t w[r][t] * v_t for rows [r0, r0 + nr) and the tile's nk values
 * (d is a multiple of HEAD_ALIGN, so of VL). */
static ALWAYS_INLINE void tile_values(
    const Problem *p, State *st, int r0, const int nr, const void *v, int nk,
    float w[ROWS][TILE], Ahead pf, const int dtype) {
    const int block = VL * VALUE_VECTORS;
    int c = 0;
    for (; c + block <= p->d; c += block) values_block(p, st, r0, nr, v, nk, w, c, VALUE_VECTORS, pf, dtype);
    switch ((p->d - c) / VL) {
    case 1: values_block(p, st, r0, nr, v, nk, w, c, 1, pf, dtype); break;
    case 2: values_block(p, st, r0, nr, v, nk, w, c, VALUE_VECTORS > 2 ? 2 : 1, pf, dtype); break;
    case 3: values_block(p, st, r0, nr, v, nk, w, c, VALUE_VECTORS > 3 ? 3 : 1, pf, dtype); break;
    default: break;
    }
}

/* Softmax update of row r with the scores sr of keys [key0, key0 + nk); leaves the
 * weights in w (TILE of them, 0 for keys the row may not see: past its position,
 * before its window, past nk). */
static inline void tile_softmax(const Problem *p, State *st, int r, int key0, int nk, float *sr, float *w) {
    static const float offsets[TILE] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const int pos = st->pos[r], last = pos < key0 + nk - 1 ? pos : key0 + nk - 1;
    const int first = p->window > 0 ? pos - p->window + 1 : key0;
    if (last < key0 || first > last) {
        memset(w, 0, sizeof(float) * TILE);
        return;
    }
    if (p->soft_cap > 0.f)
        for (int t = 0; t < nk; t++) sr[t] = cap_score(p, sr[t]);
    /* Visible: first - key0 <= t <= last - key0, as signed distances >= 0. */
    const vf hidden = vset1(-INFINITY), zero = vzero();
    vf s[TILE / VL], m = hidden;
    for (int g = 0; g < TILE / VL; g++) {
        const vf t = vload(offsets + g * VL);
        s[g] = vselect_ge(vsub(vset1((float)(last - key0)), t), zero, vload(sr + g * VL), hidden);
        if (p->window > 0) s[g] = vselect_ge(vsub(t, vset1((float)(first - key0))), zero, s[g], hidden);
        m = vmax(m, s[g]);
    }
    const float m_new = fmaxf(st->m[r], vmaxv(m)), alpha = expf(st->m[r] - m_new);
    vf total = zero;
    for (int g = 0; g < TILE / VL; g++) {
        const vf e = vexp(vsub(s[g], vset1(m_new)));
        vstore(w + g * VL, e);
        total = vadd(total, e);
    }
    st->l[r] = st->l[r] * alpha + vsum(total);
    if (alpha != 1.f)
        for (int c = 0; c < p->d; c += VL) vstore(&st->acc[r][c], vmul(vset1(alpha), vload(&st->acc[r][c])));
    st->m[r] = m_new;
}

/* Which inner loops a tile runs: the tile's dtype through vload_as, or (AVX-512
 * BF16, bf16 queries and keys) the pair path. */
enum { PATH_PAIRS = 3 };

#if defined(SIMD_AVX512)
#include "paged_attention_avx512.h"
#else
/* Scores of rows [r0, r0 + nr) against the nk (<= TILE) keys of one tile, into
 * s[i][0, nk): SCORE_KEYS keys at a time against all rows, so each key vector is
 * loaded once for all rows and each q vector once per SCORE_KEYS keys. Scores of
 * keys past nk are not stored. */
static ALWAYS_INLINE void tile_scores(
    const Problem *p, const State *st, int r0, const int nr, const void *k, int nk,
    float s[ROWS][TILE], Ahead pf, const int dtype) {
    const int esize = dtype == DT_F32 ? 4 : 2;
    for (int t0 = 0; t0 < nk; t0 += SCORE_KEYS) {
        int64_t row[SCORE_KEYS];
        key_offsets(p, t0, nk, SCORE_KEYS, row);
        vf a[SCORE_KEYS][ROWS];
        for (int j = 0; j < SCORE_KEYS; j++)
            for (int i = 0; i < nr; i++) a[j][i] = vzero();
        for (int c = 0; c < p->d; c += VL) {
            /* The keys computed next (see run_keys), spread over the loop. */
            if (pf.next && c * esize % 64 == 0)
                for (int j = 0; j < SCORE_KEYS; j++) ask(pf, (row[j] + c) * esize);
            for (int j = 0; j < SCORE_KEYS; j++) {
                const vf kv = vload_as(k, row[j] + c, dtype);
                for (int i = 0; i < nr; i++) a[j][i] = vfma(vload(&st->q[r0 + i][c]), kv, a[j][i]);
            }
        }
        for (int j = 0; j < SCORE_KEYS && t0 + j < nk; j++)
            for (int i = 0; i < nr; i++) s[i][t0 + j] = vsum(a[j][i]);
    }
}
#endif

static ALWAYS_INLINE void tile_rows(
    const Problem *p, State *st, int r0, const int nr, const void *k, const void *v,
    int key0, int nk, Ahead pf, const int path) {
#if defined(SIMD_AVX512_BF16)
    if (path == PATH_PAIRS) {
        pairs_rows(p, st, r0, nr, k, v, key0, nk, pf);
        return;
    }
#endif
    float s[ROWS][TILE] __attribute__((aligned(64)));
    float w[ROWS][TILE] __attribute__((aligned(64)));
    tile_scores(p, st, r0, nr, k, nk, s, pf, path);
    for (int i = 0; i < nr; i++) tile_softmax(p, st, r0 + i, key0, nk, s[i], w[i]);
    tile_values(p, st, r0, nr, v, nk, w, pf, path);
}

/* Every row of a unit, ROWS at a time; only the first pass asks for what comes next. */
static ALWAYS_INLINE void tile_all_rows(
    const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
    Ahead pf, const int path) {
    int r = 0;
    for (; r + ROWS <= rows; r += ROWS, pf = (Ahead){NULL, NULL}) tile_rows(p, st, r, ROWS, k, v, key0, nk, pf, path);
    switch (rows - r) {
    case 1: tile_rows(p, st, r, 1, k, v, key0, nk, pf, path); break;
    case 2: tile_rows(p, st, r, 2, k, v, key0, nk, pf, path); break;
    case 3: tile_rows(p, st, r, 3, k, v, key0, nk, pf, path); break;
    default: break;
    }
}

static void tile(const Problem *p, State *st, int rows, const void *k, const void *v, int key0, int nk,
                 Ahead pf) {
#if defined(SIMD_AVX512_BF16)
    if (p->bf16_pairs) {
        tile_all_rows(p, st, rows, k, v, key0, nk, pf, PATH_PAIRS);
        return;
    }
#endif
    switch (p->kv_dtype) {
    case DT_F32: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_F32); return;
    case DT_BF16: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_BF16); return;
    default: tile_all_rows(p, st, rows, k, v, key0, nk, pf, DT_F16); return;
    }
}

#endif
