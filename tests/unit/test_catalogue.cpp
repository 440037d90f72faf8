// The catalogue is the one table of variant options: docs/variants.md's table is generated from
// it, and every choice of the variant panel is one of its entries.
#include "variant_options.h"
#include "variants/catalogue.h"
#include "variants/catalogue_markdown.h"
#include "variants/variant_spec.h"

#include <QFile>
#include <QJsonDocument>
#include <QTest>

using namespace headlight;

class TestCatalogue : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void docsTableIsGeneratedFromTheCatalogue() {
        QFile file(QStringLiteral(HEADLIGHT_SOURCE_DIR "/docs/variants.md"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string committed = file.readAll().toStdString();
        const std::optional<std::string> generated = variants::withCatalogueMarkdown(committed);
        QVERIFY2(generated, "docs/variants.md lost the catalogue table's marker comments");
        QVERIFY2(*generated == committed,
                 "docs/variants.md's catalogue table differs from core/variants/catalogue.cpp; "
                 "regenerate it with: build/release/bin/headlight variants --write-docs "
                 "docs/variants.md");
    }

    // Every entry states what it computes and where it comes from.
    void everyEntryHasAFormulaAndACitation() {
        for (const variants::CatalogueEntry& entry : variants::catalogue()) {
            QVERIFY2(entry.formula && *entry.formula, entry.name);
            QVERIFY2(entry.citation && *entry.citation, entry.name);
        }
    }

    void theTableEscapesCellBreaks() {
        const std::string table = variants::catalogueMarkdown();
        QVERIFY(table.find("\\|i − j\\| ≤ 1") != std::string::npos);
    }

    void everyPanelEntryIsOneChoice() {
        std::size_t labelled = 0;
        for (const variants::CatalogueEntry& entry : variants::catalogue())
            labelled += entry.panelLabel != nullptr;
        std::size_t choices = 0;
        for (const app::OptionGroup& group : app::optionGroups()) {
            choices += group.choices.size() - 1;
            if (group.style == app::GroupStyle::Toggle)
                QVERIFY2(group.choices.size() == 2, qPrintable(group.title));
            for (std::size_t c = 1; c < group.choices.size(); ++c)
                QVERIFY(group.choices[c].entry && group.choices[c].entry->panelLabel);
        }
        QCOMPARE(choices, labelled);
    }

    // What the panel writes for a choice at its parameter's default is a spec the engine takes.
    void everyChoiceWritesASpecTheEngineReads() {
        for (const app::OptionGroup& group : app::optionGroups())
            for (int c = 1; c < int(group.choices.size()); ++c) {
                const QJsonObject spec = app::withChoice({}, group, c, std::nullopt);
                QCOMPARE(app::choiceOf(spec, group), c);
                const std::string json = QJsonDocument(spec).toJson().toStdString();
                try {
                    variants::parseVariantSpec(json);
                } catch (const variants::VariantError& error) {
                    QFAIL(error.what());
                }
            }
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestCatalogue)
#include "test_catalogue.moc"
