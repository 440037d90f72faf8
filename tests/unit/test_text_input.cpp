// Token labels for the views (app/session/text_input.h): the text each token covers, white space
// made visible instead of a byte-level vocabulary's Ġ/Ċ spelling, special tokens by their spelling,
// and token ids for a checkpoint without a tokenizer.
#include "golden.h"
#include "text_input.h"
#include "zoo_models.h"

#include <QTest>

using namespace headlight;

class TestTextInput : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void byteLevelWhiteSpaceIsVisible() {
        const auto tokenizer =
            tokenize::Tokenizer::load((test::zooModelsRoot() + "/pre_ln").toStdString());
        const app::PreparedText prepared = app::prepareText(tokenizer.get(), "a b\nc\td");
        QCOMPARE(prepared.labels, (QStringList{"a", "␣", "b", "↵", "c", "⇥", "d"}));
        QCOMPARE(prepared.input.ids, (std::vector<int32_t>{97, 32, 98, 10, 99, 9, 100}));
    }

    void mergedTokensShowTheirText() {
        const auto tokenizer =
            tokenize::Tokenizer::load((test::goldenRoot() + "/gpt2").toStdString());
        const app::PreparedText prepared = app::prepareText(tokenizer.get(), "Hello  world");
        QVERIFY(!prepared.labels.join(' ').contains(QChar(0x0120))); // no Ġ anywhere
        QCOMPARE(prepared.labels.first(), QString("Hello"));
        QCOMPARE(prepared.labels.last(), QString("world"));
    }

    void specialTokensKeepTheirSpelling() {
        const auto tokenizer =
            tokenize::Tokenizer::load((test::goldenRoot() + "/bert").toStdString());
        const app::PreparedText prepared = app::prepareText(tokenizer.get(), "The cat.");
        QCOMPARE(prepared.labels.first(), QString("[CLS]"));
        QCOMPARE(prepared.labels.last(), QString("[SEP]"));
    }

    void withoutATokenizerTheTextIsIds() {
        QCOMPARE(app::prepareText(nullptr, "101, 7592 102").input.ids,
                 (std::vector<int32_t>{101, 7592, 102}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, app::prepareText(nullptr, "101 cat"));
    }
};

QTEST_GUILESS_MAIN(TestTextInput)
#include "test_text_input.moc"
