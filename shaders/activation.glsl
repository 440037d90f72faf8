// Activation functions shared by activation.comp and gated_activation.comp.
// Kinds (the ACT specialization constant): 0 GELU (erf form), 1 GELU (tanh form), 2 ReLU, 3 SiLU,
// in the order of headlight::Activation.
//
// GLSL has no erf, and the short Abramowitz-Stegun formulas err by 1e-7..1e-5 relative, more than
// an f32 reference allows, so erf is built from three Chebyshev least-squares fits (computed
// with mpmath at 40 digits, coefficients rounded to f32):
//   |u| < 1:        erf(u)  = u + u · P(u²)                      (P: 7 terms)
//   0.5 ≤ |u| < 1:  erfc(u) = exp(-u²) / u · C(1/u - 3/2)        (C: 9 terms)
//   1 ≤ |u| < 3:    erfc(u) = exp(-u²) / u · A(1/u - 2/3)        (A: 10 terms)
//   |u| ≥ 3:        erfc(u) = exp(-u²) / u · B(1/u - 1/6)        (B: 9 terms)
// With these f32 coefficients the approximation itself errs by at most 6.4e-9 (erf) and 1.1e-8
// (erfc, u ≥ 0.5) relative; evaluated in f32, GELU stays within ~3 ulp of the exact value.
// Writing erf as u + u·P keeps the leading 2/√π - 1 small, so its f32 rounding costs nothing;
// centring A and B avoids cancellation between large alternating coefficients.

#include "accurate_math.glsl"

const float kSqrtHalf = 0.70710678118654752;

float hornerP(float s) {
    float r = 7.87587487e-05;
    r = fma(r, s, -0.00080168643);
    r = fma(r, s, 0.00518908724);
    r = fma(r, s, -0.0268542115);
    r = fma(r, s, 0.112835944);
    r = fma(r, s, -0.37612626);
    return fma(r, s, 0.128379166);
}

float hornerA(float z) {
    float r = -0.0375909731;
    r = fma(r, z, 0.0370952673);
    r = fma(r, z, -0.0119429398);
    r = fma(r, z, -0.0160379987);
    r = fma(r, z, 0.0463418327);
    r = fma(r, z, -0.0679922104);
    r = fma(r, z, 0.0599401332);
    r = fma(r, z, 0.00694030058);
    r = fma(r, z, -0.17133984);
    return fma(r, z, 0.482378125);
}

float hornerC(float z) {
    float r = -0.000449973537;
    r = fma(r, z, 0.000949450594);
    r = fma(r, z, -0.00148620922);
    r = fma(r, z, 0.00204425957);
    r = fma(r, z, -0.00116519036);
    r = fma(r, z, -0.00593184633);
    r = fma(r, z, 0.0331569612);
    r = fma(r, z, -0.118398048);
    return fma(r, z, 0.359522939);
}

float hornerB(float z) {
    float r = -1.4422282;
    r = fma(r, z, 0.762287915);
    r = fma(r, z, 0.248154834);
    r = fma(r, z, -0.460061699);
    r = fma(r, z, 0.127235293);
    r = fma(r, z, 0.205212355);
    r = fma(r, z, -0.221958861);
    r = fma(r, z, -0.0869200826);
    return fma(r, z, 0.5566594);
}

// erf(u) for |u| < 1.
float erfSmall(float u) { return fma(u, hornerP(u * u), u); }

// exp(u²) · u · erfc(u) for u ≥ 0.5 (the smooth factor of erfc).
float erfcScaled(float u) {
    const float t = 1.0 / u;
    if (u < 1.0) return hornerC(t - 1.5);
    return u < 3.0 ? hornerA(t - 0.666666687) : hornerB(t - 0.166666672);
}

// exp(-x²/2), keeping x² exact: x = xh + xl with xh a multiple of 1/16, so xh² is exact and
// x² = xh² + xl·(x + xh) with a small second term (W. J. Cody's trick; an fma split would need a
// fused fma, which lavapipe does not provide). Rounding x² once would cost ~1e-5 at |x| = 13.
float expHalfSquare(float x) {
    const float xh = round(x * 16.0) / 16.0;
    precise float xl = x - xh;
    return expAccurate(-0.5 * xh * xh) * expAccurate(-0.5 * xl * (x + xh));
}

// GELU(x) = x/2 · (1 + erf(x/√2)). For x < -√2/2 it is x/2 · erfc(|x|/√2), computed directly
// so that it keeps its relative accuracy where 1 + erf would cancel.
float geluErf(float x) {
    const float u = x * kSqrtHalf;
    const float a = abs(u);
    if (a < 0.5) return 0.5 * x * (1.0 + erfSmall(u));
    if (a > 10.0) return u > 0.0 ? x : 0.0; // erfc(10) = 2e-45: beyond f32
    const float erfcA = expHalfSquare(x) / a * erfcScaled(a);
    return u > 0.0 ? x * fma(-0.5, erfcA, 1.0) : 0.5 * x * erfcA;
}

// GELU, tanh form: x/2 · (1 + tanh(√(2/π)(x + 0.044715x³))). Since 1 + tanh(y) = 2/(1 + e^(-2y)),
// this is x / (1 + e^(-2y)): no overflow for large |y| and no cancellation for negative x.
float geluTanh(float x) {
    const float y = 0.79788456080286536 * fma(0.044715 * x, x * x, x);
    return x / (1.0 + exp(-2.0 * y));
}

float relu(float x) { return max(x, 0.0); }

// SiLU(x) = x · sigmoid(x); exp(-x) overflowing to +inf for x < -88 correctly yields -0.
float silu(float x) { return x / (1.0 + exp(-x)); }

float activate(uint kind, float x) {
    if (kind == 0) return geluErf(x);
    if (kind == 1) return geluTanh(x);
    if (kind == 2) return relu(x);
    return silu(x);
}
