/* linear.c's kernels, built for the ISA the compiler flags select, against a
 * double-precision product on ragged shapes; prints the ISA and the mismatches and
 * exits 0 when there are none. For targets torch cannot run on here (an AArch64
 * build under an emulator): tests/engine/test_cross_builds.py builds and runs it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "linear.c"

static float random_unit(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / (float)(1u << 24) * 2.f - 1.f;
}

static float widen(uint16_t h, int dtype) { return dtype == DT_BF16 ? bf16_to_f32(h) : f16_to_f32(h); }

int main(void) {
    static const int shapes[][3] = {{1, 1, 32}, {3, 7, 45}, {5, 33, 1000}, {16, 130, 64}, {33, 9, 2816}};
    unsigned state = 1;
    int mismatches = 0;
    for (int dtype = DT_BF16; dtype <= DT_F16; dtype++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            uint16_t *x = malloc(sizeof(uint16_t) * m * k), *w = malloc(sizeof(uint16_t) * n * k);
            uint16_t *y = malloc(sizeof(uint16_t) * m * n);
            for (int i = 0; i < m * k; i++) x[i] = dtype == DT_BF16 ? f32_to_bf16(random_unit(&state)) : f32_to_f16(random_unit(&state));
            for (int i = 0; i < n * k; i++) w[i] = dtype == DT_BF16 ? f32_to_bf16(random_unit(&state)) : f32_to_f16(random_unit(&state));
            if ((dtype == DT_BF16 ? linear_bf16 : linear_f16)(x, k, w, y, m, n, k, 2)) return 2;
            for (int i = 0; i < m; i++)
                for (int r = 0; r < n; r++) {
                    double want = 0;
                    for (int j = 0; j < k; j++) want += (double)widen(x[i * k + j], dtype) * widen(w[r * k + j], dtype);
                    const double ulp = fabs(want) * (dtype == DT_BF16 ? 1.0 / 256 : 1.0 / 2048);
                    if (fabs(widen(y[i * n + r], dtype) - want) > ulp + 1e-3 * sqrt(k)) mismatches++;
                }
            free(x), free(w), free(y);
        }
    printf("%s linear: %d mismatches\n", kernel_isa(), mismatches);
    return mismatches != 0;
}
