#pragma once
// What a figure measures for a piece of text in a font, kept per thread (figures are also painted
// off the GUI thread: export, the Atlas's tiles). Why: a heatmap of T tokens shapes each of its
// 2·T labels several times per repaint (the label band's width, the rotation test, the line
// heights), and every toggle repaints the same labels; shaping them anew was 15–20 % of the GUI
// thread's time per toggle on a BERT-base-sized model at T = 128. A value is computed exactly as
// without the cache, so figures come out the same. Only numbers and strings are kept: a kept
// QFont or QTextLayout would outlive the application's fonts at exit.

#include <QFont>
#include <QHash>
#include <QString>
#include <QStringList>
#include <utility>

namespace headlight::render {

// Names a font for the cache. Why the families too: QFont::key names only the first family, and
// figure fonts list the fallbacks after it. Writing it costs about as much as a lookup: callers
// measuring many texts in one font name it once.
inline QString textCacheFont(const QFont& font) {
    return font.key() + QLatin1Char('|') + font.families().join(QLatin1Char(','));
}

template <typename Value> class TextCache {
public:
    // The value for `text` in the font `textCacheFont` named: the kept one, else `compute()`
    // (which is then kept).
    template <typename Compute>
    Value get(const QString& font, const QString& text, Compute compute) {
        Key key{font, text};
        if (const auto found = values_.constFind(key); found != values_.constEnd()) return *found;
        // Why cleared whole: a long text's labels would otherwise grow it without bound; the next
        // repaint refills it with the labels in view.
        if (values_.size() >= kCapacity) values_.clear();
        const Value value = compute();
        values_.insert(std::move(key), value);
        return value;
    }

private:
    using Key = std::pair<QString, QString>;
    static constexpr qsizetype kCapacity = 8192;

    QHash<Key, Value> values_;
};
} // namespace headlight::render
