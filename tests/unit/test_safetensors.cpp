// Safetensors reading and writing: round trips, exact widening of F16 / BF16 / F64 / integers, and
// every hostile header we can think of refused with a message that names the file and the fault.
#include "error_of.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace headlight;
using namespace headlight::io;

namespace {
template <typename Action> QString errorOf(Action&& action) {
    return test::errorOf<CheckpointError>(std::forward<Action>(action));
}

// A safetensors file from a header text and a data section, the length prefix computed.
QByteArray fileBytes(const QByteArray& header, const QByteArray& data = {}) {
    return test::littleEndian64(static_cast<uint64_t>(header.size())) + header + data;
}

template <typename T> QByteArray rawBytes(std::initializer_list<T> values) {
    QByteArray bytes;
    for (T value : values)
        bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
    return bytes;
}

QByteArray entry(const char* dtype, const char* shape, uint64_t begin, uint64_t end) {
    return QByteArray("{\"dtype\":\"") + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
           QByteArray::number(begin) + "," + QByteArray::number(end) + "]}";
}

bool sameFloat(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0; // bit-exact: tells -0 from 0, keeps NaN comparable
}
} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

    test::ScratchDir dir_;

    QString freshPath() { return dir_.freshPath(); }
    QString writeBytes(const QByteArray& bytes) { return dir_.writeFresh(bytes); }

    // The error opening a file made of `bytes` gives, with the file's path replaced by "<file>".
    QString openError(const QByteArray& bytes) {
        const QString path = writeBytes(bytes);
        return errorOf([&] { SafetensorsFile file(path.toStdString()); }).replace(path, "<file>");
    }

    QString headerError(const QByteArray& header, const QByteArray& data = {}) {
        return openError(fileBytes(header, data));
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void roundTripsF32AndI64WithMetadata() {
        const std::vector<float> weights{0.0f, -1.5f, 3.25e-8f, 1e30f, -0.0f, 42.0f};
        const std::vector<int64_t> ids{0, -1, int64_t(1) << 40,
                                       std::numeric_limits<int64_t>::min()};
        const std::map<std::string, std::string> metadata{{"format", "pt"},
                                                          {"note", "é \"quoted\"\n\\"}};
        const QString path = freshPath();
        writeSafetensors(path.toStdString(),
                         {{"layer.0.weight", {2, 3}, weights, {}},
                          {"ids", {4}, {}, ids},
                          {"scalar", {}, {7.0f}, {}},
                          {"empty", {0, 3}, {}, {}}},
                         metadata);

        const SafetensorsFile file(path.toStdString());
        QCOMPARE(file.tensors().size(), std::size_t(4));
        QCOMPARE(file.metadata(), metadata);
        QCOMPARE(file.info("layer.0.weight").dtype, DType::F32);
        QCOMPARE(file.info("layer.0.weight").shape, (std::vector<int64_t>{2, 3}));
        QCOMPARE(file.info("ids").dtype, DType::I64);
        QCOMPARE(file.info("scalar").shape, std::vector<int64_t>{});
        QCOMPARE(file.info("empty").shape, (std::vector<int64_t>{0, 3}));

        const Tensor loaded = file.loadF32("layer.0.weight");
        QCOMPARE(loaded.shape(), (std::vector<int64_t>{2, 3}));
        for (std::size_t i = 0; i < weights.size(); ++i)
            QVERIFY(sameFloat(loaded.values()[i], weights[i]));
        QCOMPARE(file.loadI64("ids"), ids);
        QCOMPARE(file.loadF32("ids").values()[2], 1099511627776.0f);
        QCOMPARE(file.loadF32("scalar").values()[0], 7.0f);
        QVERIFY(file.loadF32("empty").empty());
        QCOMPARE(file.bytes("layer.0.weight").size(), std::size_t(24));
    }

    void writerPadsHeaderAndAlignsEveryTensor() {
        const QString path = freshPath();
        writeSafetensors(path.toStdString(),
                         {{"f", {3}, {1, 2, 3}, {}}, {"i", {1}, {}, {5}}, {"g", {1}, {4}, {}}});
        QFile raw(path);
        QVERIFY(raw.open(QIODevice::ReadOnly));
        const QByteArray bytes = raw.readAll();
        uint64_t headerLength = 0;
        std::memcpy(&headerLength, bytes.constData(), 8);
        QCOMPARE(headerLength % 8, uint64_t(0));
        const QByteArray header = bytes.mid(8, static_cast<qsizetype>(headerLength));
        const qsizetype close = header.lastIndexOf('}');
        QCOMPARE(header.mid(close + 1), QByteArray(header.size() - close - 1, ' '));
        QCOMPARE(static_cast<uint64_t>(bytes.size()), 8 + headerLength + 8 + 3 * 4 + 4);

        const SafetensorsFile file(path.toStdString());
        for (const auto& [name, info] : file.tensors())
            QCOMPARE(info.begin % dtypeSize(info.dtype), uint64_t(0));
        QCOMPARE(file.info("i").begin, uint64_t(0)); // the 8-byte type goes first
        QCOMPARE(file.loadI64("i"), std::vector<int64_t>{5});
        QCOMPARE(file.loadF32("g").values()[0], 4.0f);
    }

    void widensF16IncludingSubnormalsInfAndNan() {
        const QByteArray data = rawBytes<uint16_t>({0x3C00, 0xC000, 0x0001, 0x03FF, 0x0400, 0x7BFF,
                                                    0x7C00, 0xFC00, 0x7E00, 0x8000, 0x3555});
        const QString path =
            writeBytes(fileBytes("{\"h\":" + entry("F16", "[11]", 0, 22) + "}", data));
        const Tensor t = SafetensorsFile(path.toStdString()).loadF32("h");
        const auto v = t.values();
        QCOMPARE(v[0], 1.0f);
        QCOMPARE(v[1], -2.0f);
        QCOMPARE(v[2], std::ldexp(1.0f, -24));    // smallest subnormal
        QCOMPARE(v[3], std::ldexp(1023.0f, -24)); // largest subnormal
        QCOMPARE(v[4], std::ldexp(1.0f, -14));    // smallest normal
        QCOMPARE(v[5], 65504.0f);                 // largest finite
        QCOMPARE(v[6], std::numeric_limits<float>::infinity());
        QCOMPARE(v[7], -std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(v[8]));
        QVERIFY(sameFloat(v[9], -0.0f));
        QCOMPARE(v[10], 0.333251953125f);
    }

    void widensBf16() {
        const QByteArray data =
            rawBytes<uint16_t>({0x3F80, 0xC040, 0x0001, 0x7F80, 0xFF80, 0x7FC0, 0x4049});
        const QString path =
            writeBytes(fileBytes("{\"b\":" + entry("BF16", "[7]", 0, 14) + "}", data));
        const auto v = SafetensorsFile(path.toStdString()).loadF32("b");
        QCOMPARE(v.values()[0], 1.0f);
        QCOMPARE(v.values()[1], -3.0f);
        QCOMPARE(v.values()[2], std::ldexp(1.0f, -133)); // a float subnormal
        QCOMPARE(v.values()[3], std::numeric_limits<float>::infinity());
        QCOMPARE(v.values()[4], -std::numeric_limits<float>::infinity());
        QVERIFY(std::isnan(v.values()[5]));
        QCOMPARE(v.values()[6], 3.140625f);
    }

    void widensF64AndIntegerTypes() {
        // Deliberately unaligned ranges: a mapped tensor may start at any byte.
        QByteArray data = "x" + rawBytes<double>({1.5, -1e300, 0.1}) + rawBytes<int32_t>({-5, 7}) +
                          rawBytes<int16_t>({-300}) + rawBytes<int8_t>({-128}) +
                          rawBytes<uint8_t>({255}) + rawBytes<uint8_t>({0, 1, 2});
        const QByteArray header =
            "{\"d\":" + entry("F64", "[3]", 1, 25) + ",\"i32\":" + entry("I32", "[2]", 25, 33) +
            ",\"i16\":" + entry("I16", "[1]", 33, 35) + ",\"i8\":" + entry("I8", "[1]", 35, 36) +
            ",\"u8\":" + entry("U8", "[1]", 36, 37) + ",\"mask\":" + entry("BOOL", "[3]", 37, 40) +
            "}";
        const QString path = writeBytes(fileBytes(header, data));
        const SafetensorsFile file(path.toStdString());
        const auto d = file.loadF32("d");
        QCOMPARE(d.values()[0], 1.5f);
        QCOMPARE(d.values()[1], -std::numeric_limits<float>::infinity());
        QCOMPARE(d.values()[2], 0.1f);
        QCOMPARE(file.loadF32("i32").values()[0], -5.0f);
        QCOMPARE(file.loadI64("i32"), (std::vector<int64_t>{-5, 7}));
        QCOMPARE(file.loadI64("i16"), std::vector<int64_t>{-300});
        QCOMPARE(file.loadI64("i8"), std::vector<int64_t>{-128});
        QCOMPARE(file.loadI64("u8"), std::vector<int64_t>{255});
        QCOMPARE(file.loadI64("mask"), (std::vector<int64_t>{0, 1, 1}));
        QCOMPARE(file.loadF32("mask").values()[2], 1.0f);
        QCOMPARE(errorOf([&] { file.loadI64("d"); }).replace(path, "<file>"),
                 QString("<file>: tensor 'd' is F64, not an integer tensor"));
    }

    void acceptsEmptyTensorsUnknownKeysAndNullMetadata() {
        const QByteArray header = "{\"__metadata__\":null,\"a\":" + entry("F32", "[0]", 4, 4) +
                                  ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],"
                                  "\"extra\":{\"nested\":[1,2.5,null,true]}},\"c\":" +
                                  entry("U8", "[0, 5]", 2, 2) + "}    ";
        const QString path = writeBytes(fileBytes(header, rawBytes<float>({2.0f})));
        const SafetensorsFile file(path.toStdString());
        QCOMPARE(file.tensors().size(), std::size_t(3));
        QVERIFY(file.metadata().empty());
        QCOMPARE(file.loadF32("b").values()[0], 2.0f);
        QVERIFY(file.loadF32("c").empty());
    }

    void rejectsTruncatedFiles() {
        QCOMPARE(openError(QByteArray("\x05\0\0\0\0", 5)),
                 QString("<file>: file is 5 bytes, too short for the 8-byte header length"));
        QCOMPARE(openError({}),
                 QString("<file>: file is 0 bytes, too short for the 8-byte header length"));
    }

    void rejectsHeaderLengthBeyondFile() {
        QCOMPARE(openError(test::littleEndian64(100) + "{\"a\":1}   "),
                 QString("<file>: header length 100 runs past the end of the file (10 bytes follow "
                         "the length)"));
    }

    void rejectsHugeHeaderClaims() {
        QCOMPARE(openError(test::littleEndian64(100'000'001) + "{}"),
                 QString("<file>: header length 100000001 exceeds the 100 MB limit"));
        QCOMPARE(openError(test::littleEndian64(std::numeric_limits<uint64_t>::max()) + "{}"),
                 QString("<file>: header length 18446744073709551615 exceeds the 100 MB limit"));
    }

    void rejectsInvalidUtf8_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("message");
        QTest::newRow("bad continuation") << QByteArray("{\"a\xC3\x28\":{}}") << "byte 3";
        QTest::newRow("overlong slash") << QByteArray("{\"\xC0\xAF\":{}}") << "byte 2";
        QTest::newRow("surrogate") << QByteArray("{\"\xED\xA0\x80\":{}}") << "byte 2";
        QTest::newRow("above U+10FFFF") << QByteArray("{\"\xF4\x90\x80\x80\":{}}") << "byte 2";
        QTest::newRow("cut short") << QByteArray("{\"ab\":\xE2\x82") << "byte 6";
    }
    void rejectsInvalidUtf8() {
        QFETCH(QByteArray, header);
        QFETCH(QString, message);
        QCOMPARE(headerError(header),
                 "<file>: header is not valid UTF-8 (" + message + " of the header)");
    }

    void rejectsInvalidJson_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("problem");
        QTest::newRow("missing colon")
            << QByteArray("{\"a\" 1}") << "byte 5 of the header: expected ':' after an object key";
        QTest::newRow("unterminated") << QByteArray("{\"a\":{\"dtype\":\"F32\"")
                                      << "byte 19 of the header: expected '}' or ',' in an object";
        QTest::newRow("trailing comma") << QByteArray("{\"a\":{\"x\":[1,]}}")
                                        << "byte 13 of the header: unexpected character ']'";
        QTest::newRow("garbage after")
            << QByteArray("{} x")
            << "byte 3 of the header: unexpected text after the end of the document";
        QTest::newRow("empty") << QByteArray("") << "byte 0 of the header: unexpected end of text";
        QTest::newRow("single quotes")
            << QByteArray("{'a':1}") << "byte 1 of the header: expected a string key in an object";
        QTest::newRow("leading zero") << QByteArray("{\"a\":{\"x\":[012]}}")
                                      << "byte 12 of the header: expected ']' or ',' in an array";
        QTest::newRow("raw newline in string")
            << QByteArray("{\"a\nb\":1}")
            << "byte 3 of the header: unescaped control character in a string";
        QTest::newRow("lone surrogate escape")
            << QByteArray("{\"\\ud800\":1}")
            << "byte 8 of the header: lone high surrogate in a \\u escape";
        QTest::newRow("bad escape")
            << QByteArray("{\"\\x41\":1}") << "byte 3 of the header: invalid escape '\\x'";
        QTest::newRow("NaN") << QByteArray("{\"a\":NaN}")
                             << "byte 5 of the header: unexpected character 'N'";
        QTest::newRow("NUL padding")
            << QByteArray("{}\0\0", 4)
            << "byte 2 of the header: unexpected text after the end of the document";
    }
    void rejectsInvalidJson() {
        QFETCH(QByteArray, header);
        QFETCH(QString, problem);
        QCOMPARE(headerError(header), "<file>: header is not valid JSON (" + problem + ")");
    }

    void rejectsDeepNesting() {
        const QByteArray deep = QByteArray(100'000, '[') + QByteArray(100'000, ']');
        QCOMPARE(headerError("{\"a\":{\"x\":" + deep + "}}"),
                 QString("<file>: header is not valid JSON (byte 137 of the header: nesting deeper "
                         "than 128 levels)"));
    }

    void rejectsHeaderThatIsNotAnObject() {
        QCOMPARE(headerError("[1, 2]"), QString("<file>: header is an array, not a JSON object"));
        QCOMPARE(headerError("\"x\""), QString("<file>: header is a string, not a JSON object"));
        QCOMPARE(headerError("[1, 2"),
                 QString("<file>: header is not valid JSON (byte 5 of the header: expected ']' or "
                         "',' in an array)"));
    }

    void rejectsDuplicateTensorNames() {
        const QByteArray header = "{\"a.weight\":" + entry("F32", "[1]", 0, 4) +
                                  ",\"a.weight\":" + entry("F32", "[1]", 4, 8) + "}";
        QCOMPARE(headerError(header, QByteArray(8, '\0')),
                 QString("<file>: duplicate tensor name 'a.weight' in the header"));
    }

    void rejectsDuplicateKeysInsideEntriesAndMetadata() {
        QCOMPARE(headerError("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"I64\",\"shape\":[1],"
                             "\"data_offsets\":[0,4]}}",
                             QByteArray(8, '\0')),
                 QString("<file>: tensor 'a': duplicate key 'dtype'"));
        QCOMPARE(headerError("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"),
                 QString("<file>: duplicate __metadata__ key 'k'"));
        QCOMPARE(headerError("{\"__metadata__\":{},\"__metadata__\":{}}"),
                 QString("<file>: duplicate __metadata__ in the header"));
    }

    void rejectsOverlappingRanges() {
        const QByteArray header = "{\"b\":" + entry("F32", "[3]", 8, 20) +
                                  ",\"a\":" + entry("F32", "[3]", 0, 12) +
                                  ",\"c\":" + entry("F32", "[0]", 10, 10) + "}";
        QCOMPARE(headerError(header, QByteArray(20, '\0')),
                 QString("<file>: tensors 'a' [0, 12) and 'b' [8, 20) overlap"));
        const QByteArray contained = "{\"outer\":" + entry("U8", "[10]", 0, 10) +
                                     ",\"inner\":" + entry("U8", "[2]", 3, 5) +
                                     ",\"last\":" + entry("U8", "[1]", 9, 10) + "}";
        QCOMPARE(headerError(contained, QByteArray(10, '\0')),
                 QString("<file>: tensors 'outer' [0, 10) and 'inner' [3, 5) overlap"));
    }

    void rejectsRangesOutsideTheData() {
        QCOMPARE(headerError("{\"a\":" + entry("F32", "[100]", 0, 400) + "}", QByteArray(48, '\0')),
                 QString("<file>: tensor 'a': byte range [0, 400) lies outside the 48-byte data "
                         "section"));
        QCOMPARE(headerError("{\"a\":" + entry("F32", "[1]", 40, 8) + "}", QByteArray(48, '\0')),
                 QString("<file>: tensor 'a': data_offsets [40, 8] end before they begin"));
    }

    void rejectsShapeNotMatchingRange() {
        QCOMPARE(headerError("{\"a.weight\":" + entry("F32", "[3, 4]", 0, 40) + "}",
                             QByteArray(48, '\0')),
                 QString("<file>: tensor 'a.weight' byte range [0, 40) does not match shape [3, 4] "
                         "× F32 (48 bytes)"));
    }

    void rejectsOverflowingShapes() {
        QCOMPARE(
            headerError("{\"a\":" + entry("F32", "[1099511627776, 1099511627776]", 0, 0) + "}"),
            QString("<file>: tensor 'a': shape [1099511627776, 1099511627776] overflows 64 bits"));
        QCOMPARE(
            headerError("{\"a\":" + entry("F64", "[2147483648, 2147483648]", 0, 0) + "}"),
            QString("<file>: tensor 'a': shape [2147483648, 2147483648] × F64 overflows 64 bits"));
    }

    void rejectsUnknownDtype() {
        QCOMPARE(headerError("{\"a\":" + entry("F8_E4M3", "[1]", 0, 1) + "}", QByteArray(1, '\0')),
                 QString("<file>: tensor 'a': unknown dtype 'F8_E4M3' (supported: F64, F32, F16, "
                         "BF16, I64, I32, I16, I8, U8, BOOL)"));
    }

    void rejectsInexactIntegers_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("message");
        const auto offsets = [](const char* values) {
            return QByteArray("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":") + values +
                   "}}";
        };
        const auto shape = [](const char* values) {
            return QByteArray("{\"a\":{\"dtype\":\"U8\",\"shape\":") + values +
                   ",\"data_offsets\":[0,4]}}";
        };
        const QString bad = "<file>: tensor 'a': %1 must be an integer from 0 to 2^53, not %2";
        QTest::newRow("fraction") << offsets("[0,1.5]") << bad.arg("data_offsets[1]", "1.5");
        QTest::newRow("huge exponent")
            << offsets("[1e300,4]") << bad.arg("data_offsets[0]", "1e300");
        QTest::newRow("integral float") << offsets("[0,4.0]") << bad.arg("data_offsets[1]", "4.0");
        QTest::newRow("negative") << offsets("[-8,4]") << bad.arg("data_offsets[0]", "-8");
        QTest::newRow("above 2^53")
            << offsets("[0,9007199254740993]") << bad.arg("data_offsets[1]", "9007199254740993");
        QTest::newRow("beyond u64") << offsets("[0,99999999999999999999999]")
                                    << bad.arg("data_offsets[1]", "99999999999999999999999");
        QTest::newRow("string")
            << offsets("[\"0\",4]")
            << "<file>: tensor 'a': data_offsets[0] is a string, not an integer";
        QTest::newRow("one offset")
            << offsets("[4]") << "<file>: tensor 'a': data_offsets has fewer than two entries";
        QTest::newRow("three offsets")
            << offsets("[0,4,8]") << "<file>: tensor 'a': data_offsets has more than two entries";
        QTest::newRow("offsets object")
            << offsets("{}")
            << "<file>: tensor 'a': data_offsets is an object, not an array [begin, end]";
        QTest::newRow("negative dim") << shape("[-4]") << bad.arg("shape[0]", "-4");
        QTest::newRow("fractional dim") << shape("[2, 2.0]") << bad.arg("shape[1]", "2.0");
        QTest::newRow("null dim") << shape("[null]")
                                  << "<file>: tensor 'a': shape[0] is null, not an integer";
        QTest::newRow("shape string")
            << shape("\"4\"") << "<file>: tensor 'a': shape is a string, not an array";
    }
    void rejectsInexactIntegers() {
        QFETCH(QByteArray, header);
        QFETCH(QString, message);
        QCOMPARE(headerError(header, QByteArray(4, '\0')), message);
    }

    void rejectsMalformedEntries_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QString>("message");
        QTest::newRow("no dtype") << QByteArray("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}")
                                  << "<file>: tensor 'a': missing 'dtype'";
        QTest::newRow("no shape") << QByteArray("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}")
                                  << "<file>: tensor 'a': missing 'shape'";
        QTest::newRow("no offsets") << QByteArray("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}")
                                    << "<file>: tensor 'a': missing 'data_offsets'";
        QTest::newRow("entry array")
            << QByteArray("{\"a\":[1]}") << "<file>: tensor 'a': entry is an array, not an object";
        QTest::newRow("dtype number") << QByteArray("{\"a\":{\"dtype\":4}}")
                                      << "<file>: tensor 'a': dtype is a number, not a string";
        QTest::newRow("lowercase dtype")
            << QByteArray("{\"a\":{\"dtype\":\"float32\"}}")
            << "<file>: tensor 'a': unknown dtype 'float32' (supported: F64, F32, F16, BF16, I64, "
               "I32, I16, I8, U8, BOOL)";
        QTest::newRow("65 dims") << "{\"a\":{\"dtype\":\"U8\",\"shape\":[" +
                                        QByteArray("1,").repeated(64) + "1]}}"
                                 << "<file>: tensor 'a': shape has more than 64 dimensions";
        QTest::newRow("metadata array")
            << QByteArray("{\"__metadata__\":[]}")
            << "<file>: __metadata__ is an array, not an object of strings";
        QTest::newRow("metadata number")
            << QByteArray("{\"__metadata__\":{\"n\":1}}")
            << "<file>: __metadata__ value for 'n' is a number, not a string";
    }
    void rejectsMalformedEntries() {
        QFETCH(QByteArray, header);
        QFETCH(QString, message);
        QCOMPARE(headerError(header, QByteArray(4, '\0')), message);
    }

    void rejectsMissingFilesAndFolders() {
        const QString missing = dir_.filePath("absent.safetensors");
        QCOMPARE(errorOf([&] { SafetensorsFile file(missing.toStdString()); }),
                 missing + ": file does not exist");
        QCOMPARE(errorOf([&] { SafetensorsFile file(dir_.path().toStdString()); }),
                 dir_.path() + ": not a regular file");
    }

    void reportsMissingTensor() {
        const QString path = freshPath();
        writeSafetensors(path.toStdString(), {{"a", {1}, {1.0f}, {}}});
        const SafetensorsFile file(path.toStdString());
        QVERIFY(file.contains("a"));
        QVERIFY(!file.contains("b"));
        const QString expected = path + ": missing tensor 'b'";
        QCOMPARE(errorOf([&] { file.info("b"); }), expected);
        QCOMPARE(errorOf([&] { file.loadF32("b"); }), expected);
        QCOMPARE(errorOf([&] { file.loadI64("b"); }), expected);
        QCOMPARE(errorOf([&] { file.bytes("b"); }), expected);
    }

    void writerRefusesBadInputAndLeavesExistingFileAlone() {
        const QString path = freshPath();
        writeSafetensors(path.toStdString(), {{"kept", {1}, {9.0f}, {}}});
        const QStringList before = QDir(dir_.path()).entryList(QDir::Files);
        const std::string p = path.toStdString();
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"a", {2, 2}, {1, 2, 3}, {}}});
                 }),
                 path + ": tensor 'a' of shape [2, 2] has 3 values");
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"a", {1}, {1}, {}}, {"a", {1}, {2}, {}}});
                 }),
                 path + ": duplicate tensor name 'a'");
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"__metadata__", {1}, {1}, {}}});
                 }),
                 path + ": a tensor may not be named __metadata__");
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"a", {1}, {1}, {1}}});
                 }),
                 path + ": tensor 'a' has values of more than one kind");
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"a", {-1}, {}, {}}});
                 }),
                 path + ": tensor 'a': negative dimension in shape [-1]");
        QCOMPARE(errorOf([&] {
                     writeSafetensors(p, {{"bad\xFF", {1}, {1}, {}}});
                 }),
                 path + ": a tensor name is not valid UTF-8");
        QCOMPARE(QDir(dir_.path()).entryList(QDir::Files), before);
        QCOMPARE(SafetensorsFile(p).loadF32("kept").values()[0], 9.0f);
    }

    void writerFailsCleanlyOnUnwritablePaths() {
        const QString inMissingFolder = dir_.filePath("no-such-folder/model.safetensors");
        QVERIFY(errorOf([&] {
                    writeSafetensors(inMissingFolder.toStdString(), {});
                }).startsWith(inMissingFolder + ": cannot write ("));
        QVERIFY(!QFileInfo::exists(dir_.filePath("no-such-folder")));
        const QString folder = dir_.filePath("a-folder");
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(errorOf([&] {
                    writeSafetensors(folder.toStdString(), {});
                }).startsWith(folder + ": cannot write ("));
        QVERIFY(QDir(folder).isEmpty());
    }

    // Every prefix of a valid file, and thousands of seeded random corruptions of it, must either
    // open (and then load every tensor) or fail with CheckpointError: never crash, never throw
    // anything else. Run under ASan/UBSan this is a small fuzzer.
    void survivesTruncationAndCorruption() {
        const QString source = freshPath();
        writeSafetensors(source.toStdString(),
                         {{"w", {2, 3}, {1, 2, 3, 4, 5, 6}, {}}, {"ids", {2}, {}, {7, 8}}},
                         {{"format", "pt"}});
        QFile file(source);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray original = file.readAll();
        const QString path = freshPath();
        const auto check = [&](const QByteArray& bytes) {
            QFile out(path);
            if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
                out.write(bytes) != bytes.size())
                qFatal("cannot write %s", qPrintable(path));
            out.close();
            try {
                const SafetensorsFile opened(path.toStdString());
                for (const auto& [name, info] : opened.tensors())
                    opened.loadF32(name);
                return true;
            } catch (const CheckpointError&) {
                return false;
            }
        };
        for (qsizetype length = 0; length < original.size(); ++length)
            QVERIFY2(!check(original.left(length)), qPrintable(QString("prefix %1").arg(length)));
        std::mt19937 random(20240607);
        const auto headerEnd = static_cast<int>(original.size() - 6 * 4 - 2 * 8);
        for (int trial = 0; trial < 3000; ++trial) {
            QByteArray bytes = original;
            const int flips = 1 + static_cast<int>(random() % 4);
            for (int i = 0; i < flips; ++i) {
                const auto at = static_cast<qsizetype>(random() % static_cast<unsigned>(headerEnd));
                bytes[at] = static_cast<char>(random() % 256);
            }
            check(bytes);
        }
    }

    void writesAnEmptyFileThatReadsBack() {
        const QString path = freshPath();
        writeSafetensors(path.toStdString(), {});
        QVERIFY(SafetensorsFile(path.toStdString()).tensors().empty());
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
