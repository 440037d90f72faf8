#pragma once
// Animated PNG (APNG, the PNG group's extension every current browser and slide tool plays):
// several PNG images of one size become one file whose first frame is an ordinary PNG, so a
// viewer without animation still shows it. Built from PNG files Qt already encoded: their IHDR
// and ancillary chunks are kept, the first frame's image data stays in IDAT chunks, the others
// move into fdAT chunks, and an acTL and one fcTL per frame say how many frames there are and
// how long each is shown (https://wiki.mozilla.org/APNG_Specification).

#include <QByteArray>
#include <QString>
#include <vector>

namespace headlight::render {

// One APNG from `frames` (each a whole PNG file, all of the same size and pixel format), each
// shown for `frameMs` milliseconds, looping forever. Throws ExportError (one line, naming
// `path`) for no frame, a frame that is not a PNG, or frames of different sizes or formats.
QByteArray animatedPng(const QString& path, const std::vector<QByteArray>& frames, int frameMs);
} // namespace headlight::render
