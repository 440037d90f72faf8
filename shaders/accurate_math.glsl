// Transcendentals accurate to a few ulp, for kernels whose results are compared with the CPU's
// libm (activation.glsl's GELU, map.comp). Driver versions are not: lavapipe's exp errs by ~1e-6
// relative even for small x, any exp2(x · log2 e) by |x| · 1e-7 for large x, and GPU sin, cos
// and log are fast approximations whose absolute error grows with |x|.
// Polynomials are Cephes' single-precision minimax fits (S. L. Moshier). `precise` keeps the
// compiler from reassociating argument reductions; nothing here relies on a fused fma, which
// lavapipe does not provide.

float infinity() { return uintBitsToFloat(0x7f800000u); }

// a · b + c rounded once (but for rare double roundings of ties), as a fused fma would, for
// devices whose fma() is two roundings (lavapipe; Vulkan does not require fusion): Dekker's exact
// split gives the product's rounding error, Knuth's two-sum the sum's. Where a fused and an
// unfused result differ most (a · b ≈ -c, cancellation), this one is exact.
float fmaExact(float a, float b, float c) {
    precise float product = a * b;
    // The split multiplies by 4097: beyond 1e30 it could overflow (and the error is negligible).
    if (!(max(abs(a), abs(b)) < 1e30 && abs(product) < 1e30)) return product + c;
    precise float ca = 4097.0 * a, cb = 4097.0 * b;
    precise float aHigh = ca - (ca - a), bHigh = cb - (cb - b);
    precise float aLow = a - aHigh, bLow = b - bHigh;
    precise float productError =
        ((aHigh * bHigh - product) + aHigh * bLow + aLow * bHigh) + aLow * bLow;
    precise float sum = product + c;
    precise float cPart = sum - product;
    precise float sumError = (product - (sum - cPart)) + (c - cPart);
    precise float result = sum + (sumError + productError);
    return result;
}

// e^x = e · 2^n with x = n·ln2 + r: Cody-Waite reduction with ln2 in two parts (n · 0.693145752
// is exact for |n| < 256), then a degree-7 Taylor polynomial on |r| ≤ ln2/2 (truncation < 6e-9).
float expReduced(float x, out int n) {
    const float nf = round(x * 1.44269504);
    n = int(nf);
    precise float r = (x - nf * 0.693145752) - nf * 1.42860677e-06;
    precise float e = 1.98412698e-04;
    e = e * r + 1.38888889e-03;
    e = e * r + 8.33333333e-03;
    e = e * r + 4.16666667e-02;
    e = e * r + 1.66666667e-01;
    e = e * r + 0.5;
    e = e * r + 1.0;
    e = e * r + 1.0;
    return e;
}

// exp(x) to ~1 ulp for x in [-87, 88] (where 2^n and the result are normal).
float expAccurate(float x) {
    int n;
    const float e = expReduced(x, n);
    return ldexp(e, n);
}

// exp(x) for every x: 0 below the smallest subnormal, +inf above the largest float, and 2^n
// applied in two halves so that no intermediate power leaves the normal range.
float expAnyRange(float x) {
    if (x < -104.0) return 0.0;
    if (x > 88.7228394) return infinity();
    int n;
    const float e = expReduced(x, n);
    return ldexp(ldexp(e, n / 2), n - n / 2);
}

// sin and cos: x = q·π/2 + r with π/2 in three parts (q · part is exact for |q| < 8192, so
// |x| < 12868 keeps ~1 ulp), then minimax polynomials on |r| ≤ π/4.
float sinPolynomial(float r) {
    const float z = r * r;
    return ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
}

float cosPolynomial(float r) {
    const float z = r * r;
    return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z -
           0.5 * z + 1.0;
}

// Returns r and sets the quadrant q (0..3) of x.
float reduceHalfPi(float x, out uint q) {
    const float nf = round(x * 0.636619772);
    q = uint(int(nf)) & 3u;
    precise float r = ((x - nf * 1.5703125) - nf * 4.837512969970703125e-4) -
                      nf * 7.54978995489188216e-8;
    return r;
}

float sinAccurate(float x) {
    uint q;
    const float r = reduceHalfPi(x, q);
    const float v = (q & 1u) == 0u ? sinPolynomial(r) : cosPolynomial(r);
    return q >= 2u ? -v : v;
}

float cosAccurate(float x) {
    uint q;
    const float r = reduceHalfPi(x, q);
    const float v = (q & 1u) == 0u ? cosPolynomial(r) : sinPolynomial(r);
    return q == 1u || q == 2u ? -v : v;
}

// ln x: x = m · 2^e with m in [√½, √2), ln x = e·ln2 + ln(1 + f), ln2 in two parts.
float logAccurate(float x) {
    if (x == 0.0) return -infinity();
    if (!(x > 0.0)) return uintBitsToFloat(0x7fc00000u); // negative or NaN: NaN
    if (isinf(x)) return x;
    int e;
    float m = frexp(x, e); // m in [0.5, 1)
    if (m < 0.707106781) {
        m += m;
        e -= 1;
    }
    precise float f = m - 1.0;
    const float z = f * f;
    float y = 7.0376836292e-2;
    y = y * f - 1.1514610310e-1;
    y = y * f + 1.1676998740e-1;
    y = y * f - 1.2420140846e-1;
    y = y * f + 1.4249322787e-1;
    y = y * f - 1.6668057665e-1;
    y = y * f + 2.0000714765e-1;
    y = y * f - 2.4999993993e-1;
    y = y * f + 3.3333331174e-1;
    precise float result = y * f * z + float(e) * -2.12194440e-4 - 0.5 * z + f;
    return result + float(e) * 0.693359375;
}

// tanh: an odd polynomial for |x| < 0.625, else 1 - 2 / (e^2|x| + 1), which keeps full relative
// accuracy there and saturates to ±1 without overflow.
float tanhAccurate(float x) {
    const float a = abs(x);
    if (a < 0.625) {
        const float z = x * x;
        return ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z +
                 1.33314422036e-1) * z - 3.33332819422e-1) * z * x + x;
    }
    const float t = 1.0 - 2.0 / (expAnyRange(2.0 * a) + 1.0);
    return x < 0.0 ? -t : t;
}
