#include "export/animated_png.h"

#include "export/atomic_write.h"

#include <QtEndian>
#include <zlib.h>

namespace headlight::render {
namespace {

constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
constexpr qsizetype kSignatureSize = 8;

struct Chunk {
    QByteArray type; // four letters
    QByteArray data;
};

QByteArray bigEndian32(quint32 value) {
    QByteArray bytes(4, '\0');
    qToBigEndian(value, bytes.data());
    return bytes;
}

QByteArray bigEndian16(quint16 value) {
    QByteArray bytes(2, '\0');
    qToBigEndian(value, bytes.data());
    return bytes;
}

// A PNG file's chunks in order; an empty list when the bytes are not a whole PNG.
std::vector<Chunk> chunksOf(const QByteArray& png) {
    if (!png.startsWith(QByteArray(kSignature, kSignatureSize))) return {};
    std::vector<Chunk> chunks;
    qsizetype at = kSignatureSize;
    while (at + 12 <= png.size()) {
        const quint32 length = qFromBigEndian<quint32>(png.constData() + at);
        if (length > quint32(png.size() - at - 12)) return {};
        chunks.push_back({png.mid(at + 4, 4), png.mid(at + 8, qsizetype(length))});
        at += 12 + qsizetype(length);
        if (chunks.back().type == "IEND") return at == png.size() ? chunks : std::vector<Chunk>{};
    }
    return {};
}

void appendChunk(QByteArray& out, const QByteArray& type, const QByteArray& data) {
    out += bigEndian32(quint32(data.size()));
    const qsizetype typeAt = out.size();
    out += type;
    out += data;
    uLong crc = crc32(0L, nullptr, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.constData() + typeAt),
                uInt(type.size() + data.size()));
    out += bigEndian32(quint32(crc));
}

// fcTL: the frame covers the whole canvas, is shown for frameMs and replaces what was there.
QByteArray frameControl(quint32 sequence, const QByteArray& header, int frameMs) {
    QByteArray data = bigEndian32(sequence);
    data += header.left(8); // width and height, as the IHDR gives them
    data += bigEndian32(0) + bigEndian32(0);
    data += bigEndian16(quint16(frameMs)) + bigEndian16(1000);
    data += QByteArray(1, '\0'); // dispose_op NONE
    data += QByteArray(1, '\0'); // blend_op SOURCE
    return data;
}

const QByteArray& headerOf(const QString& path, const std::vector<Chunk>& chunks, int frame) {
    if (chunks.empty() || chunks.front().type != "IHDR" || chunks.front().data.size() != 13)
        failExport(path, QStringLiteral("frame %1 is not a PNG image").arg(frame + 1));
    return chunks.front().data;
}
} // namespace

QByteArray animatedPng(const QString& path, const std::vector<QByteArray>& frames, int frameMs) {
    if (frames.empty()) failExport(path, QStringLiteral("an animation needs at least one frame"));
    if (frameMs < 1 || frameMs > 65535)
        failExport(path, QStringLiteral("a frame is shown for 1 to 65535 ms, not %1").arg(frameMs));
    const std::vector<Chunk> first = chunksOf(frames.front());
    const QByteArray header = headerOf(path, first, 0);
    QByteArray out(kSignature, kSignatureSize);
    appendChunk(out, "IHDR", header);
    appendChunk(out, "acTL", bigEndian32(quint32(frames.size())) + bigEndian32(0));
    quint32 sequence = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        const std::vector<Chunk> chunks = f == 0 ? first : chunksOf(frames[f]);
        if (headerOf(path, chunks, int(f)) != header)
            failExport(path, QStringLiteral("frame %1 differs from the first in size or pixel "
                                            "format; every frame of an animation must match")
                                 .arg(f + 1));
        appendChunk(out, "fcTL", frameControl(sequence++, header, frameMs));
        for (const Chunk& chunk : chunks) {
            if (chunk.type == "IDAT") {
                if (f == 0)
                    appendChunk(out, "IDAT", chunk.data);
                else
                    appendChunk(out, "fdAT", bigEndian32(sequence++) + chunk.data);
            } else if (f == 0 && chunk.type != "IHDR" && chunk.type != "IEND") {
                // The first frame's ancillary chunks (pHYs, the text that holds the provenance)
                // describe the file.
                appendChunk(out, chunk.type, chunk.data);
            }
        }
    }
    appendChunk(out, "IEND", {});
    return out;
}
} // namespace headlight::render
