#pragma once
// A count with its noun, singular for one: "1 layer", "12 layers" (captions and titles said
// "1 layers"). Every noun it is used with takes a plain -s plural.

#include <QString>

namespace headlight::app {

inline QString counted(qint64 count, const QString& noun) {
    return QStringLiteral("%1 %2%3").arg(count).arg(noun,
                                                    count == 1 ? QString() : QStringLiteral("s"));
}
} // namespace headlight::app
