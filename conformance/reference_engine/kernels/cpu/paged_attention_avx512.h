/* The AVX-512 parts of a tile (see paged_attention_tile.h): scores four keys at a
 * time reduced by one transpose tree, and the AVX-512 BF16 pair path. Included by
 * paged_attention_tile.h alone, where SIMD_AVX512 is defined. */
#ifndef CONFORMANCE_PAGED_ATTENTION_AVX512_H
#define CONFORMANCE_PAGED_ATTENTION_AVX512_H

/* The sums of a[4 * key + row] (4 keys x 4 rows) as lane 4 * row + key of one
 * vector: a transpose-add tree, 15 adds for 16 sums. */
static ALWAYS_INLINE __m512 sum16(const __m512 *a) {
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
static ALWAYS_INLINE void store_scores(const __m512 *sums, const int nr,
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
 * beyond it may be unowned or past the buffer); softmax masks their scores. path
 * is the keys' dtype, or PATH_PAIRS for bf16 pairs by vdpbf16ps (below). */
static ALWAYS_INLINE void tile_scores(
    const Problem *p, const State *st, int r0, const int nr, const void *k, int nk,
    float s[ROWS][TILE], Ahead pf, const int path) {
    const int esize = path == DT_F32 ? 4 : 2;
    const __m512 z = _mm512_setzero_ps();
    __m512 sums[TILE / 4];
    for (int g = 0; g < TILE / 4; g++) {
        if (4 * g >= nk) {
            sums[g] = z;
            continue;
        }
        int64_t row[4];
        key_offsets(p, 4 * g, nk, 4, row);
        __m512 a[16];
        for (int i = 0; i < 16; i++) a[i] = z;
        for (int c = 0; c < p->d; c += path == PATH_PAIRS ? 32 : 16) {
            /* The keys computed next (see run_keys), spread over the loop: a burst
             * of them at once would stall the loads this tile needs behind them. */
            if (pf.next && c * esize % 64 == 0)
                for (int j = 0; j < 4; j++) ask(pf, (row[j] + c) * esize);
            for (int j = 0; j < 4; j++) {
#if defined(SIMD_AVX512_BF16)
                if (path == PATH_PAIRS) { /* see pairs_rows */
                    const __m512bh kv = (__m512bh)_mm512_loadu_si512((const uint16_t *)k + row[j] + c);
                    for (int i = 0; i < nr; i++)
                        a[4 * j + i] = _mm512_dpbf16_ps(a[4 * j + i], (__m512bh)_mm512_load_si512(&st->qb[r0 + i][c]), kv);
                    continue;
                }
#endif
                const __m512 kv = vload_as(k, row[j] + c, path);
                for (int i = 0; i < nr; i++)
                    a[4 * j + i] = _mm512_fmadd_ps(_mm512_load_ps(&st->q[r0 + i][c]), kv, a[4 * j + i]);
            }
        }
        /* The pair path's queries are not scaled (bf16 would round them again). */
        sums[g] = path == PATH_PAIRS ? _mm512_mul_ps(sum16(a), _mm512_set1_ps(p->scale)) : sum16(a);
    }
    store_scores(sums, nr, s);
}


#if defined(SIMD_AVX512_BF16)
/* bf16 queries and keys/values: vdpbf16ps multiplies pairs of bf16 and adds them into
 * fp32 lanes, half the instructions of converting and using FMAs. Products of two
 * bf16 are exact in fp32. Scores pair adjacent elements of q and k; the weighted sum
 * pairs keys t and t+1, with the weights rounded to bf16 (as flash-attention kernels
 * round them to the dtype). Interleaving two value rows (unpacklo/hi_epi16) leaves
 * the sums of each 32 elements in the order of `paired_index`. Keys, values and
 * their prefetches are blocked and timed as in tile_scores (which has the pair
 * path's scores) and values_block. */
static ALWAYS_INLINE void pairs_values(
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

static ALWAYS_INLINE void pairs_rows(
    const Problem *p, State *st, int r0, const int nr, const void *k, const void *v, int key0, int nk,
    Ahead pf) {
    float s[ROWS][TILE] __attribute__((aligned(64)));
    float w[ROWS][TILE] __attribute__((aligned(64)));
    uint32_t wb[ROWS][TILE / 2] __attribute__((aligned(64)));
    tile_scores(p, st, r0, nr, k, nk, s, pf, PATH_PAIRS);
    for (int i = 0; i < nr; i++) {
        tile_softmax(p, st, r0 + i, key0, nk, s[i], w[i]);
        _mm256_store_si256((__m256i *)wb[i], (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(w[i])));
    }
    pairs_values(p, st, r0, nr, v, nk, wb, pf);
}

#endif

#endif
