/* Scalar conversions between fp32 and the 16-bit float formats, as raw words.
 *
 * bf16 rounds to nearest with ties to even and keeps NaN quiet, as torch's
 * conversion does, so a C kernel's output matches torch's rounding of the same
 * fp32 value bit for bit. */
#ifndef CONFORMANCE_HALF_H
#define CONFORMANCE_HALF_H

#include <stdint.h>
#include <string.h>

static inline float bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits >> 16) | 0x40); /* keep NaN a quiet NaN */
    bits += 0x7fffu + ((bits >> 16) & 1u);      /* round to nearest, ties to even */
    return (uint16_t)(bits >> 16);
}

static inline float f16_to_f32(uint16_t h) {
    _Float16 v;
    memcpy(&v, &h, sizeof v);
    return (float)v;
}

static inline uint16_t f32_to_f16(float f) {
    _Float16 v = (_Float16)f;
    uint16_t h;
    memcpy(&h, &v, sizeof h);
    return h;
}

#endif
