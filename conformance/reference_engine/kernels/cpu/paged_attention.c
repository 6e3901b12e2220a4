/* Paged attention over the cache layout [2, num_blocks, block_size, kv_heads, D].
 *
 * Why a kernel of our own: decode attention is bound by how fast the context's keys
 * and values stream from memory, and torch can only express it as a gather (a copy)
 * followed by products, several passes over the data. Here a work item is one
 * (request, run of query tokens, range of keys), for every KV head: it reads each
 * key and value of its range once, through the block table, for all query rows of
 * each GQA group at once (rows = query tokens x query heads of that KV head),
 * keeping an online softmax per row. Scores and sums are fp32 whatever the dtypes, and the
 * division by the softmax sum is deferred to the end, so an fp16 sum of large
 * values cannot overflow.
 *
 * Keys are taken 16 at a time (a "tile": block sizes are powers of two >= 16, so a
 * tile never straddles a block), which makes one tile's scores of one row exactly
 * one AVX-512 register (two AVX2, four NEON: paged_attention_tile.h). When there
 * are too few work items to keep every thread busy (batch-1 decode), each item's
 * keys are split into chunks computed in parallel, and the chunks' partial softmax
 * states merged (flash-decoding).
 *
 * Keys past a request's context are never read: the suite fills unowned slots with
 * NaN, and 0 * NaN would poison the sum.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "paged_attention_tile.h"

/* Row r of a unit's KV head h: query token tok0 + r / ng, query head h * group + g0 + r % ng. */
static inline int row_head(const Problem *p, const Unit *u, int h, int r) {
    return h * (p->heads / p->kv_heads) + u->g0 + r % u->ng;
}

static void load_rows(const Problem *p, const Unit *u, int h, State *st) {
    const int start = p->query_start[u->req];
    const int context = p->seq_lens[u->req] - (p->query_start[u->req + 1] - start);
    for (int r = 0; r < u->ntok * u->ng; r++) {
        const int tok = u->tok0 + r / u->ng, head = row_head(p, u, h, r);
        const int64_t base = (int64_t)(start + tok) * p->q_stride + (int64_t)head * p->d;
        if (p->bf16_pairs)
            memcpy(st->qb[r], (const uint16_t *)p->query + base, sizeof(uint16_t) * p->d);
        else
            for (int c = 0; c < p->d; c++) st->q[r][c] = p->scale * load_scalar(p->query, base + c, p->q_dtype);
        memset(st->acc[r], 0, sizeof(float) * p->d);
        st->m[r] = -INFINITY;
        st->l[r] = 0.f;
        st->pos[r] = context + tok;
    }
}

/* Keys [k0, k1) of a unit into st (one State per KV head), a tile at a time
 * through the block table. Tiles sit in blocks scattered through the cache, so the
 * hardware prefetcher, which follows sequential streams, would start on each block
 * only after several misses: each KV head of a tile asks for the rows computed
 * after it (NEXT), the last head for the tile PREFETCH_TILES ahead. */
static void run_keys(const Problem *p, const Unit *u, State *st, int k0, int k1) {
    const int rows = u->ntok * u->ng, esize = p->kv_dtype == DT_F32 ? 4 : 2;
    const int32_t *table = p->block_table + (int64_t)u->req * p->bt_stride;
    const char *keys = p->keys;
    const int start = p->query_start[u->req], qlen = p->query_start[u->req + 1] - start;
    /* What to prefetch while KV head h of a tile is computed: the next head's rows
     * of the same tile, or the next tile's first head. A whole tile ahead, the
     * prefetched lines of every head would be in L1 at once and evict the current
     * tile's values before they are read. */
#define NEXT(h) ((h) + 1 < p->kv_heads ? k + (int64_t)((h) + 1) * p->d * esize : pf)
    /* One head ahead is too close to cover the latency of a new block's first
     * misses: the tile FAR_TILES ahead is also asked for, only into L2, where it
     * evicts nothing the current tile needs (decode: bf16 -8-17%, fp32 -5-11%). A
     * plain prefill's contiguous keys are the hardware prefetcher's to fetch. */
    if (p->new_keys && qlen > 1 && p->seq_lens[u->req] == qlen) {
        /* A request with no earlier context (a plain prefill) reads its keys and values
         * from the step's inputs: what the cache now holds, but contiguous. */
        Problem own = *p;
        own.row_stride = p->new_stride;
        own.values_delta = (const char *)p->new_values - (const char *)p->new_keys;
        const char *base = (const char *)p->new_keys + (int64_t)start * p->new_stride * esize;
        for (int key = k0; key < k1; key += TILE) {
            const int ahead = key + PREFETCH_TILES * TILE, nk = k1 - key < TILE ? k1 - key : TILE;
            const char *k = base + (int64_t)key * own.row_stride * esize;
            const char *pf = ahead < k1 ? base + (int64_t)ahead * own.row_stride * esize : NULL;
            for (int h = 0; h < p->kv_heads; h++) {
                const int64_t head = (int64_t)h * p->d * esize;
                tile(&own, &st[h], rows, k + head, k + own.values_delta + head, key, nk, (Ahead){NEXT(h), NULL});
            }
        }
        return;
    }
    /* Byte offset of key `key`'s slot. */
#define OFFSET(key) (((int64_t)table[(key) / p->block_size] * p->block_size + (key) % p->block_size) \
                     * p->row_stride * esize)
    for (int key = k0; key < k1; key += TILE) {
        const int ahead = key + PREFETCH_TILES * TILE, nk = k1 - key < TILE ? k1 - key : TILE;
        const char *k = keys + OFFSET(key), *pf = ahead < k1 ? keys + OFFSET(ahead) : NULL;
        const char *far = key + FAR_TILES * TILE < k1 ? keys + OFFSET(key + FAR_TILES * TILE) : NULL;
        for (int h = 0; h < p->kv_heads; h++) {
            const int64_t head = (int64_t)h * p->d * esize;
            const Ahead ahead_of = {NEXT(h), far ? far + head : NULL};
            tile(p, &st[h], rows, k + head, k + p->values_delta + head, key, nk, ahead_of);
        }
    }
#undef OFFSET
#undef NEXT
}

/* Where the bf16 pair path keeps element c of a sum: each 32 elements as the 16
 * sums of unpacklo (elements 0-3 of each 128-bit lane), then the 16 of unpackhi. */
static inline int paired_index(int c) {
    const int base = c & ~31, i = c & 31, lane = i / 8, m = i % 8;
    return base + (m < 4 ? 0 : 16) + lane * 4 + m % 4;
}

static void write_rows(const Problem *p, const Unit *u, int h, const State *st) {
    const int start = p->query_start[u->req];
    for (int r = 0; r < u->ntok * u->ng; r++) {
        const int tok = u->tok0 + r / u->ng, head = row_head(p, u, h, r);
        const int64_t base = (int64_t)(start + tok) * p->o_stride + (int64_t)head * p->d;
        const float inv = st->l[r] > 0.f ? 1.f / st->l[r] : 0.f;
        for (int c = 0; c < p->d; c++)
            store_scalar(p->output, base + c, st->acc[r][p->bf16_pairs ? paired_index(c) : c] * inv, p->q_dtype);
    }
}

/* A chunk's partial state of KV head h: per row m, l, then the D unnormalised sums. */
static float *partial_at(float *partials, const Problem *p, int item, int h) {
    return partials + ((int64_t)item * p->kv_heads + h) * MAX_ROWS * (2 + p->d);
}

static void save_partial(const Problem *p, const Unit *u, const State *st, float *out) {
    for (int r = 0; r < u->ntok * u->ng; r++, out += 2 + p->d) {
        out[0] = st->m[r];
        out[1] = st->l[r];
        memcpy(out + 2, st->acc[r], sizeof(float) * p->d);
    }
}

static void merge_partials(const Problem *p, const Unit *u, int h, float *partials, State *st) {
    for (int r = 0; r < u->ntok * u->ng; r++) {
        float m = -INFINITY;
        for (int c = 0; c < u->chunks; c++) m = fmaxf(m, partial_at(partials, p, u->first_item + c, h)[r * (2 + p->d)]);
        st->m[r] = m;
        st->l[r] = 0.f;
        memset(st->acc[r], 0, sizeof(float) * p->d);
        if (m == -INFINITY) continue;
        for (int c = 0; c < u->chunks; c++) {
            const float *part = partial_at(partials, p, u->first_item + c, h) + r * (2 + p->d);
            const float f = expf(part[0] - m);
            st->l[r] += f * part[1];
            for (int i = 0; i < p->d; i++) st->acc[r][i] += f * part[2 + i];
        }
    }
}

/* The new tokens of request r that this call computes: none for a plain prefill
 * (no earlier context) the caller computes itself, else all. */
static int tokens_computed(const int32_t *query_start, const int32_t *seq_lens, int r, int skip_plain_prefills) {
    const int qlen = query_start[r + 1] - query_start[r];
    return skip_plain_prefills && qlen > 1 && seq_lens[r] == qlen ? 0 : qlen;
}

/* Attention of every request's new tokens into output, but for plain prefills when
 * skip_plain_prefills is set (the caller then computes them: where SDPA is faster).
 * new_keys/new_values (token stride new_stride, in the cache's dtype) may be NULL:
 * plain prefills then read the cache too. Returns 0, or -1 when the head size (a multiple of HEAD_ALIGN up to
 * MAX_D) or memory is out of range. */
int paged_attention(const void *query, int64_t q_stride, void *output, int64_t o_stride,
                    const void *kv_cache, int64_t num_blocks, const int32_t *block_table,
                    int64_t bt_stride, const int32_t *query_start, const int32_t *seq_lens,
                    const void *new_keys, const void *new_values, int64_t new_stride,
                    int num_reqs, int heads, int kv_heads, int d,
                    int block_size, int q_dtype, int kv_dtype, float scale, int window,
                    float soft_cap, int num_threads, int skip_plain_prefills) {
    if (d > MAX_D || d <= 0 || d % HEAD_ALIGN || kv_heads <= 0 || heads % kv_heads) return -1;
    const int esize = kv_dtype == DT_F32 ? 4 : 2, group = heads / kv_heads;
    const int64_t row_stride = (int64_t)kv_heads * d;
    const Problem p = {
        query, kv_cache, output,
        block_table, query_start, seq_lens, q_stride, o_stride, bt_stride, row_stride,
        num_blocks * block_size * row_stride * esize, new_keys, new_values, new_stride,
        heads, kv_heads, d, block_size, q_dtype, kv_dtype, window,
#if defined(SIMD_AVX512_BF16)
        q_dtype == DT_BF16 && kv_dtype == DT_BF16 && d % 32 == 0,
#else
        0,
#endif
        scale, soft_cap,
    };
    /* A unit holds up to MAX_ROWS rows: several query tokens of a whole group, or
     * (groups larger than MAX_ROWS) one token of a slice of the group. */
    const int ng = group < MAX_ROWS ? group : MAX_ROWS, tokens_per_unit = MAX_ROWS / ng;
    const int slices = (group + ng - 1) / ng;
    int num_units = 0;
    for (int r = 0; r < num_reqs; r++) {
        const int qlen = tokens_computed(query_start, seq_lens, r, skip_plain_prefills);
        num_units += slices * ((qlen + tokens_per_unit - 1) / tokens_per_unit);
    }
    Unit *units = malloc(sizeof(Unit) * (num_units ? num_units : 1));
    if (!units) return -1;
    int64_t total_keys = 0;
    int n = 0;
    for (int r = 0; r < num_reqs; r++) {
        const int qlen = tokens_computed(query_start, seq_lens, r, skip_plain_prefills);
        const int context = seq_lens[r] - qlen;
        for (int tok0 = 0; tok0 < qlen; tok0 += tokens_per_unit) {
            const int ntok = qlen - tok0 < tokens_per_unit ? qlen - tok0 : tokens_per_unit;
            /* Keys before the first row's window, or after the last row, are never seen. */
            int k0 = window > 0 ? context + tok0 - window + 1 : 0;
            k0 = k0 > 0 ? k0 / TILE * TILE : 0;
            const int k1 = context + tok0 + ntok;
            for (int g0 = 0; g0 < group; g0 += ng, n++) {
                const int rows = group - g0 < ng ? group - g0 : ng;
                units[n] = (Unit){r, tok0, ntok, g0, rows, k0, k1 > k0 ? k1 : k0, 1, 0};
                total_keys += units[n].k1 - k0;
            }
        }
    }
    /* Split keys into chunks when units alone leave threads idle. */
    int num_items = 0;
    for (int i = 0; i < num_units; i++) {
        Unit *u = &units[i];
        if (num_units < 2 * num_threads) {
            const int64_t share = total_keys / (2 * num_threads) + 1;
            const int64_t chunk = share > MIN_CHUNK ? share : MIN_CHUNK;
            u->chunks = (int)((u->k1 - u->k0 + chunk - 1) / chunk);
            if (u->chunks < 1) u->chunks = 1;
        }
        u->first_item = num_items;
        num_items += u->chunks;
    }
    int *item_unit = malloc(sizeof(int) * (num_items ? num_items : 1));
    float *partials = num_items > num_units ? malloc(sizeof(float) * (int64_t)num_items * kv_heads * MAX_ROWS * (2 + d)) : NULL;
    if (!item_unit || (num_items > num_units && !partials)) {
        free(units), free(item_unit), free(partials);
        return -1;
    }
    for (int i = 0; i < num_units; i++)
        for (int c = 0; c < units[i].chunks; c++) item_unit[units[i].first_item + c] = i;

    int failed = 0;
    /* One State per KV head and thread, allocated once: per item, a few hundred KB
     * would go through mmap and fault its pages in again every time. */
    #pragma omp parallel num_threads(num_threads)
    {
        State *st = aligned_alloc(64, sizeof(State) * kv_heads);
        #pragma omp for schedule(dynamic, 1)
        for (int item = 0; item < num_items; item++) {
            if (!st) {
                #pragma omp atomic write
                failed = 1;
                continue;
            }
            const Unit *u = &units[item_unit[item]];
            const int c = item - u->first_item;
            /* Chunk boundaries on tiles, so every tile stays within one block. */
            const int tiles = (u->k1 - u->k0 + TILE - 1) / TILE;
            const int a = u->k0 + (int)((int64_t)tiles * c / u->chunks) * TILE;
            int b = u->k0 + (int)((int64_t)tiles * (c + 1) / u->chunks) * TILE;
            b = b < u->k1 ? b : u->k1;
            for (int h = 0; h < kv_heads; h++) load_rows(&p, u, h, &st[h]);
            run_keys(&p, u, st, a, b);
            for (int h = 0; h < kv_heads; h++) {
                if (u->chunks == 1) write_rows(&p, u, h, &st[h]);
                else save_partial(&p, u, &st[h], partial_at(partials, &p, item, h));
            }
        }
        free(st);
    }
    if (num_items > num_units) {
        #pragma omp parallel for schedule(dynamic, 1) num_threads(num_threads)
        for (int i = 0; i < num_units; i++) {
            if (units[i].chunks == 1) continue;
            State st;
            for (int h = 0; h < kv_heads; h++) {
                merge_partials(&p, &units[i], h, partials, &st);
                write_rows(&p, &units[i], h, &st);
            }
        }
    }
    free(units), free(item_unit), free(partials);
    return failed ? -1 : 0;
}
