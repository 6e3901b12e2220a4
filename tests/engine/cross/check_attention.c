/* paged_attention.c, built for the ISA the compiler flags select, against a
 * double-precision softmax(q.k) v: a batch of a plain prefill, a chunked prefill
 * and two decodes over shuffled blocks, GQA, with and without a sliding window, in
 * fp32, bf16 and fp16; prints the ISA and the mismatches and exits 0 when there
 * are none. Built and run by tests/engine/test_cross_builds.py (see check_linear.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "paged_attention.c"

enum { REQS = 4, HEADS = 8, KV_HEADS = 2, D = 64, BLOCK = 16, BLOCKS_PER_REQ = 8 };

static float random_unit(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / (float)(1u << 24) * 2.f - 1.f;
}

static void put(void *base, int64_t i, float v, int dtype) { store_scalar(base, i, v, dtype); }

int main(void) {
    static const int query_lens[REQS] = {37, 9, 1, 1}, context_lens[REQS] = {0, 40, 70, 100};
    int query_start[REQS + 1] = {0}, seq_lens[REQS], table[REQS][BLOCKS_PER_REQ];
    for (int r = 0; r < REQS; r++) {
        query_start[r + 1] = query_start[r] + query_lens[r];
        seq_lens[r] = context_lens[r] + query_lens[r];
        for (int b = 0; b < BLOCKS_PER_REQ; b++) table[r][b] = (b * REQS + r) * 7 % (REQS * BLOCKS_PER_REQ);
    }
    const int tokens = query_start[REQS], slots = REQS * BLOCKS_PER_REQ * BLOCK;
    const int64_t row = KV_HEADS * D;
    int mismatches = 0;
    unsigned state = 1;
    for (int dtype = DT_F32; dtype <= DT_F16; dtype++)
        for (int window = 0; window <= 30; window += 30) {
            const int esize = dtype == DT_F32 ? 4 : 2;
            char *cache = malloc((size_t)2 * slots * row * esize), *q = malloc((size_t)tokens * HEADS * D * esize);
            char *out = malloc((size_t)tokens * HEADS * D * esize);
            for (int64_t i = 0; i < 2 * slots * row; i++) put(cache, i, random_unit(&state), dtype);
            for (int64_t i = 0; i < (int64_t)tokens * HEADS * D; i++) put(q, i, random_unit(&state), dtype);
            const float scale = 1.f / sqrtf(D);
            if (paged_attention(q, HEADS * D, out, HEADS * D, cache, REQS * BLOCKS_PER_REQ, &table[0][0],
                                BLOCKS_PER_REQ, query_start, seq_lens, NULL, NULL, 0, REQS, HEADS, KV_HEADS, D,
                                BLOCK, dtype, dtype, scale, window, 0.f, 2, 0)) return 2;
            for (int r = 0; r < REQS; r++)
                for (int t = 0; t < query_lens[r]; t++)
                    for (int h = 0; h < HEADS; h++) {
                        const int pos = context_lens[r] + t, kvh = h / (HEADS / KV_HEADS);
                        const int64_t qi = (int64_t)(query_start[r] + t) * HEADS * D + h * D;
                        double weights[256], total = 0, top = -INFINITY, want[D] = {0};
                        for (int key = 0; key <= pos; key++) {
                            weights[key] = -INFINITY;
                            if (window && pos - key >= window) continue;
                            const int64_t ki = ((int64_t)table[r][key / BLOCK] * BLOCK + key % BLOCK) * row + kvh * D;
                            double s = 0;
                            for (int c = 0; c < D; c++) s += (double)load_scalar(q, qi + c, dtype) * load_scalar(cache, ki + c, dtype);
                            weights[key] = s * scale;
                            top = fmax(top, weights[key]);
                        }
                        for (int key = 0; key <= pos; key++) {
                            if (weights[key] == -INFINITY) continue;
                            const double e = exp(weights[key] - top);
                            const int64_t vi = (int64_t)slots * row + ((int64_t)table[r][key / BLOCK] * BLOCK + key % BLOCK) * row + kvh * D;
                            total += e;
                            for (int c = 0; c < D; c++) want[c] += e * load_scalar(cache, vi + c, dtype);
                        }
                        const double bound = dtype == DT_F32 ? 1e-4 : dtype == DT_BF16 ? 2e-2 : 4e-3;
                        for (int c = 0; c < D; c++)
                            if (fabs(load_scalar(out, qi + c, dtype) - want[c] / total) > bound) mismatches++;
                    }
            free(cache), free(q), free(out);
        }
    printf("%s attention: %d mismatches\n", kernel_isa(), mismatches);
    return mismatches != 0;
}
