#include "colormap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace headlight::render {
namespace {

using Rgb = std::array<float, 3>;

// Viridis and cividis from matplotlib (lib/matplotlib/_cm_listed.py, _viridis_data and
// _cividis_data; viridis by van der Walt & Smith, cividis by Nuñez, Anderton & Renslow 2018).
// Why a sample: entry round(k · 255 / 32) for k = 0..32 of the 256-entry tables keeps the files
// small; linear interpolation stays within 1.7/255 (viridis) and 5.3/255 (cividis, at its kink
// near t = 0.09) of the full tables, and both endpoints are exact.
constexpr std::array<Rgb, 33> kViridis = {{
    {0.267004f, 0.004874f, 0.329415f}, {0.277018f, 0.050344f, 0.375715f},
    {0.282327f, 0.094955f, 0.417331f}, {0.282884f, 0.135920f, 0.453427f},
    {0.278826f, 0.175490f, 0.483397f}, {0.270595f, 0.214069f, 0.507052f},
    {0.258965f, 0.251537f, 0.524736f}, {0.244972f, 0.287675f, 0.537260f},
    {0.229739f, 0.322361f, 0.545706f}, {0.214298f, 0.355619f, 0.551184f},
    {0.199430f, 0.387607f, 0.554642f}, {0.185556f, 0.418570f, 0.556753f},
    {0.172719f, 0.448791f, 0.557885f}, {0.160665f, 0.478540f, 0.558115f},
    {0.149039f, 0.508051f, 0.557250f}, {0.137770f, 0.537492f, 0.554906f},
    {0.127568f, 0.566949f, 0.550556f}, {0.121148f, 0.592739f, 0.544641f},
    {0.120081f, 0.622161f, 0.534946f}, {0.130067f, 0.651384f, 0.521608f},
    {0.153894f, 0.680203f, 0.504172f}, {0.191090f, 0.708366f, 0.482284f},
    {0.239374f, 0.735588f, 0.455688f}, {0.296479f, 0.761561f, 0.424223f},
    {0.360741f, 0.785964f, 0.387814f}, {0.430983f, 0.808473f, 0.346476f},
    {0.506271f, 0.828786f, 0.300362f}, {0.585678f, 0.846661f, 0.249897f},
    {0.668054f, 0.861999f, 0.196293f}, {0.751884f, 0.874951f, 0.143228f},
    {0.835270f, 0.886029f, 0.102646f}, {0.916242f, 0.896091f, 0.100717f},
    {0.993248f, 0.906157f, 0.143936f},
}};

constexpr std::array<Rgb, 33> kCividis = {{
    {0.000000f, 0.135112f, 0.304751f}, {0.000000f, 0.157932f, 0.357521f},
    {0.000000f, 0.178802f, 0.414764f}, {0.017852f, 0.198528f, 0.441248f},
    {0.103401f, 0.220406f, 0.435790f}, {0.154261f, 0.242475f, 0.430120f},
    {0.195057f, 0.264372f, 0.425924f}, {0.230871f, 0.286134f, 0.423498f},
    {0.263738f, 0.307831f, 0.422789f}, {0.294669f, 0.329531f, 0.423716f},
    {0.324250f, 0.351289f, 0.426250f}, {0.352892f, 0.373153f, 0.430226f},
    {0.380830f, 0.395164f, 0.435653f}, {0.408226f, 0.417357f, 0.442570f},
    {0.435168f, 0.439763f, 0.451134f}, {0.461616f, 0.462405f, 0.461969f},
    {0.488697f, 0.485318f, 0.471008f}, {0.514226f, 0.505546f, 0.472640f},
    {0.544069f, 0.528948f, 0.471947f}, {0.574417f, 0.552682f, 0.469172f},
    {0.605211f, 0.576777f, 0.464441f}, {0.636412f, 0.601264f, 0.457818f},
    {0.668008f, 0.626171f, 0.449270f}, {0.700008f, 0.651529f, 0.438624f},
    {0.732422f, 0.677364f, 0.425717f}, {0.765223f, 0.703705f, 0.410587f},
    {0.798480f, 0.730580f, 0.392597f}, {0.832192f, 0.758014f, 0.371529f},
    {0.866421f, 0.786028f, 0.346571f}, {0.901195f, 0.814639f, 0.317021f},
    {0.936660f, 0.843841f, 0.280876f}, {0.973114f, 0.873550f, 0.234677f},
    {0.995737f, 0.909344f, 0.217772f},
}};

// ColorBrewer RdBu, 11 classes (Brewer, colorbrewer2.org; marked colour-blind safe), reversed so
// that negative is blue and positive red, with the neutral #f7f7f7 at the centre.
constexpr std::array<Rgb, 11> kDiverging = {{
    {0x05 / 255.f, 0x30 / 255.f, 0x61 / 255.f},
    {0x21 / 255.f, 0x66 / 255.f, 0xac / 255.f},
    {0x43 / 255.f, 0x93 / 255.f, 0xc3 / 255.f},
    {0x92 / 255.f, 0xc5 / 255.f, 0xde / 255.f},
    {0xd1 / 255.f, 0xe5 / 255.f, 0xf0 / 255.f},
    {0xf7 / 255.f, 0xf7 / 255.f, 0xf7 / 255.f},
    {0xfd / 255.f, 0xdb / 255.f, 0xc7 / 255.f},
    {0xf4 / 255.f, 0xa5 / 255.f, 0x82 / 255.f},
    {0xd6 / 255.f, 0x60 / 255.f, 0x4d / 255.f},
    {0xb2 / 255.f, 0x18 / 255.f, 0x2b / 255.f},
    {0x67 / 255.f, 0x00 / 255.f, 0x1f / 255.f},
}};

// ColorBrewer Blues, 9 classes (Brewer, colorbrewer2.org).
constexpr std::array<Rgb, 9> kBlues = {{
    {0xf7 / 255.f, 0xfb / 255.f, 0xff / 255.f},
    {0xde / 255.f, 0xeb / 255.f, 0xf7 / 255.f},
    {0xc6 / 255.f, 0xdb / 255.f, 0xef / 255.f},
    {0x9e / 255.f, 0xca / 255.f, 0xe1 / 255.f},
    {0x6b / 255.f, 0xae / 255.f, 0xd6 / 255.f},
    {0x42 / 255.f, 0x92 / 255.f, 0xc6 / 255.f},
    {0x21 / 255.f, 0x71 / 255.f, 0xb5 / 255.f},
    {0x08 / 255.f, 0x51 / 255.f, 0x9c / 255.f},
    {0x08 / 255.f, 0x30 / 255.f, 0x6b / 255.f},
}};

std::span<const Rgb> table(Colormap map) {
    switch (map) {
    case Colormap::Viridis:
        return kViridis;
    case Colormap::Cividis:
        return kCividis;
    case Colormap::Diverging:
        return kDiverging;
    case Colormap::Blues:
        return kBlues;
    }
    return kViridis;
}
} // namespace

QColor colorAt(Colormap map, double t) {
    const std::span<const Rgb> entries = table(map);
    const double clamped = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
    const double position = clamped * double(entries.size() - 1);
    const std::size_t low = std::min(std::size_t(position), entries.size() - 2);
    const double f = position - double(low);
    Rgb mixed;
    for (std::size_t c = 0; c < 3; ++c)
        mixed[c] = float((1.0 - f) * entries[low][c] + f * entries[low + 1][c]);
    return QColor::fromRgbF(mixed[0], mixed[1], mixed[2]);
}

double normalise(double value, double low, double high) {
    if (!(high > low)) return 0.5;
    return (value - low) / (high - low);
}

bool isDiverging(Colormap map) {
    return map == Colormap::Diverging;
}

QString colormapName(Colormap map) {
    switch (map) {
    case Colormap::Viridis:
        return QStringLiteral("viridis");
    case Colormap::Cividis:
        return QStringLiteral("cividis");
    case Colormap::Diverging:
        return QStringLiteral("RdBu (reversed)");
    case Colormap::Blues:
        return QStringLiteral("Blues");
    }
    return {};
}
} // namespace headlight::render
