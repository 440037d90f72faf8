#include "io/torch_pickle.h"

#include "io/json_reader.h"

#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace headlight::io {
namespace {
// A state dict's pickle holds a few hundred bytes per tensor: 32 MB is tens of thousands of
// tensors. Each opcode makes at most one object, so the object cap bounds memory (~300 MB).
constexpr std::size_t kMaxPickleBytes = 32u << 20;
constexpr std::size_t kMaxObjects = 4u << 20;
constexpr std::size_t kMaxRank = 64;
constexpr int64_t kMaxElements = int64_t(1) << 56;

// The opcodes a state dict needs (pickletools' names).
enum Opcode : uint8_t {
    kProto = 0x80,
    kFrame = 0x95,
    kStop = '.',
    kMark = '(',
    kEmptyDict = '}',
    kEmptyTuple = ')',
    kTuple = 't',
    kTuple1 = 0x85,
    kTuple2 = 0x86,
    kTuple3 = 0x87,
    kSetItem = 's',
    kSetItems = 'u',
    kBinPut = 'q',
    kLongBinPut = 'r',
    kMemoize = 0x94,
    kBinGet = 'h',
    kLongBinGet = 'j',
    kGlobal = 'c',
    kStackGlobal = 0x93,
    kBinUnicode = 'X',
    kShortBinUnicode = 0x8c,
    kBinUnicode8 = 0x8d,
    kBinInt = 'J',
    kBinInt1 = 'K',
    kBinInt2 = 'M',
    kLong1 = 0x8a,
    kNone = 'N',
    kNewTrue = 0x88,
    kNewFalse = 0x89,
    kReduce = 'R',
    kBuild = 'b',
    kBinPersId = 'Q',
};

// Names of the opcodes outside the set, so that a refusal says what the pickle tried.
const char* refusedOpcodeName(uint8_t opcode) {
    static const std::map<uint8_t, const char*> names = {
        {'i', "INST"},
        {'o', "OBJ"},
        {0x81, "NEWOBJ"},
        {0x92, "NEWOBJ_EX"},
        {0x82, "EXT1"},
        {0x83, "EXT2"},
        {0x84, "EXT4"},
        {'P', "PERSID"},
        {']', "EMPTY_LIST"},
        {'a', "APPEND"},
        {'e', "APPENDS"},
        {'l', "LIST"},
        {'d', "DICT"},
        {0x8f, "EMPTY_SET"},
        {0x90, "ADDITEMS"},
        {0x91, "FROZENSET"},
        {0x96, "BYTEARRAY8"},
        {0x97, "NEXT_BUFFER"},
        {0x98, "READONLY_BUFFER"},
        {'B', "BINBYTES"},
        {'C', "SHORT_BINBYTES"},
        {0x8e, "BINBYTES8"},
        {'G', "BINFLOAT"},
        {'F', "FLOAT"},
        {'I', "INT"},
        {'L', "LONG"},
        {0x8b, "LONG4"},
        {'S', "STRING"},
        {'T', "BINSTRING"},
        {'U', "SHORT_BINSTRING"},
        {'V', "UNICODE"},
        {'0', "POP"},
        {'1', "POP_MARK"},
        {'2', "DUP"},
        {'g', "GET"},
        {'p', "PUT"},
    };
    const auto found = names.find(opcode);
    return found == names.end() ? nullptr : found->second;
}

struct StorageClass {
    const char* name;
    DType dtype;
};
constexpr StorageClass kStorageClasses[] = {
    {"DoubleStorage", DType::F64},    {"FloatStorage", DType::F32}, {"HalfStorage", DType::F16},
    {"BFloat16Storage", DType::BF16}, {"LongStorage", DType::I64},  {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16},     {"CharStorage", DType::I8},   {"ByteStorage", DType::U8},
    {"BoolStorage", DType::Bool},
};

enum class Kind { None, Bool, Int, String, Tuple, Dict, Callable, StorageClass, Storage, Tensor };
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter };

using ObjectId = std::size_t;

// The interpreter's objects live in one arena and refer to each other by index, so a pickle that
// puts a dict inside itself makes no reference cycle and nothing is freed recursively.
struct Object {
    Kind kind = Kind::None;
    int64_t integer = 0;         // Int, Bool; Storage and Tensor: their index; Callable's value
    DType dtype = DType::F32;    // StorageClass
    bool ordered = false;        // Dict: made by OrderedDict()
    std::string text;            // String; Callable and StorageClass: the global's dotted name
    std::vector<ObjectId> items; // Tuple: elements; Dict: keys and values alternating
};

Object objectOf(Kind kind, int64_t integer = 0) {
    Object object;
    object.kind = kind;
    object.integer = integer;
    return object;
}

std::string shapeText(const std::vector<int64_t>& values) {
    std::string text = "[";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i ? ", " : "") + std::to_string(values[i]);
    return text + "]";
}

class Interpreter {
public:
    Interpreter(const std::string& where, std::string_view pickle)
        : where_(where)
        , pickle_(pickle) {}

    PickledStateDict run();

private:
    [[noreturn]] void fail(const std::string& problem) const {
        throw CheckpointError(where_ + " byte " + std::to_string(opcodeAt_) + ": " + problem);
    }
    // Input.
    uint8_t nextByte();
    uint64_t little(int width);
    std::string_view take(uint64_t count);
    std::string line();
    std::string utf8(std::string_view bytes);
    int64_t long1();
    // Objects and the stack.
    ObjectId make(Object object);
    ObjectId makeInt(int64_t value) { return make(objectOf(Kind::Int, value)); }
    void push(ObjectId id) { stack_.push_back(id); }
    ObjectId pop();
    std::vector<ObjectId> popToMark();
    ObjectId makeTuple(std::vector<ObjectId> items);
    const Object& at(ObjectId id) const { return objects_[id]; }
    std::string describe(ObjectId id) const;
    // Opcodes.
    bool step(uint8_t opcode); // false at STOP
    void memoPut(uint64_t index);
    void memoGet(uint64_t index);
    void global(const std::string& module, const std::string& name);
    void setItems(ObjectId dict, const std::vector<ObjectId>& pairs);
    void reduce();
    void build();
    void persistentId();
    ObjectId rebuildTensor(const std::vector<ObjectId>& args);
    std::vector<int64_t> integers(ObjectId tuple, const char* what) const;
    // The result.
    PickledStateDict finish();
    void checkView(const PickledTensor& tensor, const PickledStorage& storage) const;

    const std::string& where_;
    std::string_view pickle_;
    std::size_t position_ = 0;
    std::size_t opcodeAt_ = 0;
    std::vector<Object> objects_;
    std::vector<ObjectId> stack_;
    std::vector<std::size_t> marks_; // stack sizes at each open MARK
    std::unordered_map<uint64_t, ObjectId> memo_;
    std::vector<PickledStorage> storages_;
    std::map<std::string, std::size_t> storageByKey_;
    std::vector<PickledTensor> tensors_;
};

uint8_t Interpreter::nextByte() {
    if (position_ >= pickle_.size()) fail("the pickle ends without STOP");
    return static_cast<uint8_t>(pickle_[position_++]);
}

uint64_t Interpreter::little(int width) {
    const std::string_view bytes = take(uint64_t(width));
    uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i)
        value = (value << 8) | static_cast<uint8_t>(bytes[std::size_t(i)]);
    return value;
}

std::string_view Interpreter::take(uint64_t count) {
    if (count > pickle_.size() - position_)
        fail("an argument of " + std::to_string(count) + " bytes runs past the end of the pickle");
    const std::string_view bytes = pickle_.substr(position_, std::size_t(count));
    position_ += std::size_t(count);
    return bytes;
}

std::string Interpreter::line() {
    const std::size_t end = pickle_.find('\n', position_);
    if (end == std::string_view::npos) fail("GLOBAL's argument has no end of line");
    const std::size_t length = end - position_;
    return utf8(take(length + 1).substr(0, length));
}

std::string Interpreter::utf8(std::string_view bytes) {
    if (firstInvalidUtf8(bytes)) fail("a string is not valid UTF-8");
    return std::string(bytes);
}

int64_t Interpreter::long1() {
    const uint64_t width = little(1);
    if (width > 8) fail("an integer of " + std::to_string(width) + " bytes, wider than 64 bits");
    if (width == 0) return 0;
    uint64_t value = little(int(width));
    if (width < 8 && (value >> (width * 8 - 1)) & 1) value |= ~uint64_t(0) << (width * 8);
    return static_cast<int64_t>(value);
}

ObjectId Interpreter::make(Object object) {
    if (objects_.size() >= kMaxObjects)
        fail("more than " + std::to_string(kMaxObjects) +
             " objects; a state dict needs a few per tensor");
    objects_.push_back(std::move(object));
    return objects_.size() - 1;
}

ObjectId Interpreter::pop() {
    const std::size_t fence = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= fence) fail("the stack is empty (below the last MARK)");
    const ObjectId id = stack_.back();
    stack_.pop_back();
    return id;
}

std::vector<ObjectId> Interpreter::popToMark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<ObjectId> items(stack_.begin() + std::ptrdiff_t(mark), stack_.end());
    stack_.resize(mark);
    return items;
}

ObjectId Interpreter::makeTuple(std::vector<ObjectId> items) {
    Object tuple = objectOf(Kind::Tuple);
    tuple.items = std::move(items);
    return make(std::move(tuple));
}

std::string Interpreter::describe(ObjectId id) const {
    const Object& object = at(id);
    switch (object.kind) {
    case Kind::None:
        return "None";
    case Kind::Bool:
        return object.integer ? "True" : "False";
    case Kind::Int:
        return "the integer " + std::to_string(object.integer);
    case Kind::String:
        return "the string " + quotedName(object.text);
    case Kind::Tuple:
        return "a tuple of " + std::to_string(object.items.size());
    case Kind::Dict:
        return object.ordered ? "an OrderedDict" : "a dict";
    case Kind::Callable:
    case Kind::StorageClass:
        return object.text;
    case Kind::Storage:
        return "storage " + quotedName(storages_[std::size_t(object.integer)].key);
    case Kind::Tensor:
        return "a tensor";
    }
    return "an object";
}

void Interpreter::memoPut(uint64_t index) {
    if (stack_.empty()) fail("nothing on the stack to memoize");
    memo_[index] = stack_.back();
}

void Interpreter::memoGet(uint64_t index) {
    const auto found = memo_.find(index);
    if (found == memo_.end()) fail("memo entry " + std::to_string(index) + " was never stored");
    push(found->second);
}

void Interpreter::global(const std::string& module, const std::string& name) {
    const std::string dotted = module + "." + name;
    Object object = objectOf(Kind::Callable);
    object.text = dotted;
    if (dotted == "collections.OrderedDict")
        object.integer = int64_t(Callable::OrderedDict);
    else if (dotted == "torch._utils._rebuild_tensor_v2")
        object.integer = int64_t(Callable::RebuildTensor);
    else if (dotted == "torch._utils._rebuild_parameter")
        object.integer = int64_t(Callable::RebuildParameter);
    else {
        object.kind = Kind::StorageClass;
        const StorageClass* known = nullptr;
        for (const StorageClass& storage : kStorageClasses)
            if (module == "torch" && name == storage.name) known = &storage;
        if (!known)
            fail("global " + quotedName(dotted) +
                 " is refused: a state dict needs only collections.OrderedDict, "
                 "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and "
                 "torch's typed storages");
        object.dtype = known->dtype;
    }
    push(make(std::move(object)));
}

void Interpreter::setItems(ObjectId dict, const std::vector<ObjectId>& pairs) {
    if (at(dict).kind != Kind::Dict) fail("SETITEM on " + describe(dict) + " is refused");
    if (pairs.size() % 2) fail("SETITEMS with a key but no value");
    for (std::size_t i = 0; i < pairs.size(); i += 2)
        if (at(pairs[i]).kind != Kind::String)
            fail("a dict key is " + describe(pairs[i]) + ", not a string");
    auto& items = objects_[dict].items;
    items.insert(items.end(), pairs.begin(), pairs.end());
}

void Interpreter::reduce() {
    const ObjectId args = pop();
    const ObjectId callable = pop();
    if (at(callable).kind != Kind::Callable)
        fail("REDUCE of " + describe(callable) +
             " is refused: only OrderedDict(), _rebuild_tensor_v2 and _rebuild_parameter are "
             "modelled");
    if (at(args).kind != Kind::Tuple)
        fail("REDUCE of " + at(callable).text + " with " + describe(args) + ", not a tuple");
    const std::vector<ObjectId> values = at(args).items;
    switch (Callable(at(callable).integer)) {
    case Callable::OrderedDict: {
        if (!values.empty()) fail("OrderedDict called with arguments; torch.save passes none");
        Object dict = objectOf(Kind::Dict);
        dict.ordered = true;
        return push(make(std::move(dict)));
    }
    case Callable::RebuildTensor:
        return push(rebuildTensor(values));
    case Callable::RebuildParameter:
        // _rebuild_parameter(data, requires_grad, backward_hooks): the parameter is its tensor.
        if (values.size() != 3 || at(values[0]).kind != Kind::Tensor ||
            at(values[1]).kind != Kind::Bool || at(values[2]).kind != Kind::Dict ||
            !at(values[2]).items.empty())
            fail("_rebuild_parameter takes (tensor, requires_grad, empty hooks)");
        return push(values[0]);
    }
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks
// [, metadata]): a view of the storage; hooks must be empty (they would be code) and metadata
// absent, None or empty.
ObjectId Interpreter::rebuildTensor(const std::vector<ObjectId>& args) {
    if (args.size() != 6 && args.size() != 7)
        fail("_rebuild_tensor_v2 takes 6 or 7 arguments, not " + std::to_string(args.size()));
    if (at(args[0]).kind != Kind::Storage)
        fail("_rebuild_tensor_v2's storage is " + describe(args[0]) + ", not a storage");
    if (at(args[1]).kind != Kind::Int || at(args[1]).integer < 0)
        fail("_rebuild_tensor_v2's storage offset is " + describe(args[1]));
    if (at(args[4]).kind != Kind::Bool)
        fail("_rebuild_tensor_v2's requires_grad is " + describe(args[4]));
    if (at(args[5]).kind != Kind::Dict || !at(args[5]).items.empty())
        fail("_rebuild_tensor_v2's backward hooks are " + describe(args[5]) +
             " with entries; only empty hooks are read");
    if (args.size() == 7 && at(args[6]).kind != Kind::None &&
        !(at(args[6]).kind == Kind::Dict && at(args[6]).items.empty()))
        fail("_rebuild_tensor_v2's tensor metadata is " + describe(args[6]) +
             "; only None or an empty dict is read");
    PickledTensor tensor;
    tensor.storage = std::size_t(at(args[0]).integer);
    tensor.offset = uint64_t(at(args[1]).integer);
    tensor.shape = integers(args[2], "size");
    tensor.stride = integers(args[3], "stride");
    tensors_.push_back(std::move(tensor));
    return make(objectOf(Kind::Tensor, int64_t(tensors_.size() - 1)));
}

std::vector<int64_t> Interpreter::integers(ObjectId tuple, const char* what) const {
    if (at(tuple).kind != Kind::Tuple)
        fail(std::string("_rebuild_tensor_v2's ") + what + " is " + describe(tuple) +
             ", not a tuple");
    if (at(tuple).items.size() > kMaxRank)
        fail(std::string("_rebuild_tensor_v2's ") + what + " has " +
             std::to_string(at(tuple).items.size()) + " dimensions (at most 64)");
    std::vector<int64_t> values;
    for (ObjectId item : at(tuple).items) {
        if (at(item).kind != Kind::Int || at(item).integer < 0)
            fail(std::string("_rebuild_tensor_v2's ") + what + " holds " + describe(item) +
                 ", not a non-negative integer");
        values.push_back(at(item).integer);
    }
    return values;
}

// BUILD sets attributes: torch's state_dict() is an OrderedDict carrying `_metadata` (the module
// versions), and that is the only attribute of the only kind of object it may set.
void Interpreter::build() {
    const ObjectId state = pop();
    if (stack_.empty()) fail("BUILD with nothing to build");
    const ObjectId target = stack_.back();
    if (at(target).kind != Kind::Dict || !at(target).ordered)
        fail("BUILD on " + describe(target) +
             " is refused: only an OrderedDict's _metadata may "
             "be set");
    if (at(state).kind != Kind::Dict)
        fail("BUILD of an OrderedDict with " + describe(state) + ", not a dict of attributes");
    const auto& items = at(state).items;
    for (std::size_t i = 0; i < items.size(); i += 2)
        if (at(items[i]).text != "_metadata")
            fail("BUILD sets the attribute " + quotedName(at(items[i]).text) +
                 " of an OrderedDict; only _metadata is allowed");
}

// BINPERSID: torch's persistent id of a storage, ('storage', StorageClass, key, location,
// numel). The same key may come back for every view of the storage, with the same type and size.
void Interpreter::persistentId() {
    const ObjectId id = pop();
    const Object& tuple = at(id);
    const auto kindAt = [&](std::size_t i, Kind kind) {
        return tuple.items.size() > i && at(tuple.items[i]).kind == kind;
    };
    if (tuple.kind != Kind::Tuple || tuple.items.size() != 5 || !kindAt(0, Kind::String) ||
        at(tuple.items[0]).text != "storage" || !kindAt(1, Kind::StorageClass) ||
        !kindAt(2, Kind::String) || !kindAt(3, Kind::String) || !kindAt(4, Kind::Int) ||
        at(tuple.items[4]).integer < 0)
        fail("a persistent id is " + describe(id) +
             ", not ('storage', StorageType, key, location, numel)");
    PickledStorage storage{at(tuple.items[2]).text, at(tuple.items[1]).dtype,
                           uint64_t(at(tuple.items[4]).integer)};
    const auto [found, added] = storageByKey_.emplace(storage.key, storages_.size());
    if (added)
        storages_.push_back(storage);
    else if (storages_[found->second].dtype != storage.dtype ||
             storages_[found->second].elements != storage.elements)
        fail("storage " + quotedName(storage.key) + " is declared as " +
             dtypeName(storages_[found->second].dtype) + " × " +
             std::to_string(storages_[found->second].elements) + " and as " +
             dtypeName(storage.dtype) + " × " + std::to_string(storage.elements));
    push(make(objectOf(Kind::Storage, int64_t(found->second))));
}

bool Interpreter::step(uint8_t opcode) {
    switch (opcode) {
    case kStop:
        return false;
    case kProto: {
        const uint64_t protocol = little(1);
        if (protocol < 2 || protocol > 5)
            fail("pickle protocol " + std::to_string(protocol) + "; torch.save writes 2 to 5");
        return true;
    }
    case kFrame: // protocol 4's framing only groups the opcodes that follow
        if (little(8) > pickle_.size() - position_) fail("a FRAME runs past the end");
        return true;
    case kMark:
        marks_.push_back(stack_.size());
        return true;
    case kEmptyDict:
        push(make(objectOf(Kind::Dict)));
        return true;
    case kEmptyTuple:
        push(makeTuple({}));
        return true;
    case kTuple:
        push(makeTuple(popToMark()));
        return true;
    case kTuple1:
    case kTuple2:
    case kTuple3: {
        std::vector<ObjectId> items(std::size_t(opcode - kTuple1 + 1));
        for (auto it = items.rbegin(); it != items.rend(); ++it)
            *it = pop();
        push(makeTuple(std::move(items)));
        return true;
    }
    case kSetItem: {
        const ObjectId value = pop();
        const ObjectId key = pop();
        if (stack_.empty()) fail("SETITEM with no dict");
        setItems(stack_.back(), {key, value});
        return true;
    }
    case kSetItems: {
        const std::vector<ObjectId> pairs = popToMark();
        if (stack_.empty()) fail("SETITEMS with no dict");
        setItems(stack_.back(), pairs);
        return true;
    }
    case kBinPut:
        memoPut(little(1));
        return true;
    case kLongBinPut:
        memoPut(little(4));
        return true;
    case kMemoize:
        memoPut(memo_.size());
        return true;
    case kBinGet:
        memoGet(little(1));
        return true;
    case kLongBinGet:
        memoGet(little(4));
        return true;
    case kGlobal: {
        const std::string module = line();
        global(module, line());
        return true;
    }
    case kStackGlobal: {
        const ObjectId name = pop();
        const ObjectId module = pop();
        if (at(name).kind != Kind::String || at(module).kind != Kind::String)
            fail("STACK_GLOBAL of " + describe(module) + " and " + describe(name));
        global(at(module).text, at(name).text);
        return true;
    }
    case kBinUnicode:
    case kShortBinUnicode:
    case kBinUnicode8: {
        const int width = opcode == kShortBinUnicode ? 1 : opcode == kBinUnicode ? 4 : 8;
        const uint64_t length = little(width);
        Object text = objectOf(Kind::String);
        text.text = utf8(take(length));
        push(make(std::move(text)));
        return true;
    }
    case kBinInt:
        push(makeInt(int64_t(int32_t(uint32_t(little(4))))));
        return true;
    case kBinInt1:
        push(makeInt(int64_t(little(1))));
        return true;
    case kBinInt2:
        push(makeInt(int64_t(little(2))));
        return true;
    case kLong1:
        push(makeInt(long1()));
        return true;
    case kNone:
        push(make(objectOf(Kind::None)));
        return true;
    case kNewTrue:
    case kNewFalse:
        push(make(objectOf(Kind::Bool, opcode == kNewTrue ? 1 : 0)));
        return true;
    case kReduce:
        reduce();
        return true;
    case kBuild:
        build();
        return true;
    case kBinPersId:
        persistentId();
        return true;
    default:
        break;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", opcode);
    const char* name = refusedOpcodeName(opcode);
    fail(std::string("opcode ") + (name ? std::string(name) + " (" + hex + ")" : hex) +
         " is not one a state dict needs");
}

PickledStateDict Interpreter::run() {
    if (pickle_.size() > kMaxPickleBytes)
        fail("the pickle is " + std::to_string(pickle_.size()) +
             " bytes; a state dict's is far below the 32 MB limit");
    opcodeAt_ = 0;
    if (pickle_.empty() || static_cast<uint8_t>(pickle_[0]) != kProto)
        fail("not a pickle of protocol 2 to 5 (no PROTO opcode first)");
    while (true) {
        opcodeAt_ = position_;
        if (!step(nextByte())) break;
    }
    if (position_ != pickle_.size()) fail("bytes follow STOP");
    if (!marks_.empty() || stack_.size() != 1)
        fail("STOP with " + std::to_string(stack_.size()) + " objects and " +
             std::to_string(marks_.size()) + " marks on the stack, not one object");
    return finish();
}

PickledStateDict Interpreter::finish() {
    const ObjectId top = stack_.back();
    if (at(top).kind != Kind::Dict)
        fail("the pickle holds " + describe(top) + ", not a state dict (a dict of tensors)");
    PickledStateDict result;
    result.storages = storages_;
    std::set<std::string> names;
    const auto& items = at(top).items;
    for (std::size_t i = 0; i < items.size(); i += 2) {
        const std::string& name = at(items[i]).text;
        const Object& value = at(items[i + 1]);
        if (value.kind != Kind::Tensor)
            fail("the state dict's value for " + quotedName(name) + " is " +
                 describe(items[i + 1]) + ", not a tensor");
        if (!names.insert(name).second) fail("tensor " + quotedName(name) + " appears twice");
        PickledTensor tensor = tensors_[std::size_t(value.integer)];
        tensor.name = name;
        checkView(tensor, storages_[tensor.storage]);
        result.tensors.push_back(std::move(tensor));
    }
    return result;
}

// The view's elements (offset + Σ index_i × stride_i) must all lie inside the storage, computed
// without overflow. An empty tensor reads nothing but its offset must still be in range.
void Interpreter::checkView(const PickledTensor& tensor, const PickledStorage& storage) const {
    const std::string view = "tensor " + quotedName(tensor.name) + " (offset " +
                             std::to_string(tensor.offset) + ", shape " + shapeText(tensor.shape) +
                             ", stride " + shapeText(tensor.stride) + ")";
    if (tensor.shape.size() != tensor.stride.size())
        fail(view + ": shape and stride differ in length");
    int64_t elements = 1;
    for (int64_t size : tensor.shape)
        if (size != 0 && elements > kMaxElements / size)
            fail(view + " has more than 2^56 elements");
        else
            elements *= size;
    const uint64_t limit = uint64_t(1) << 62;
    if (tensor.offset > limit) fail(view + " overflows its storage");
    uint64_t last = tensor.offset;
    for (std::size_t i = 0; i < tensor.shape.size() && elements > 0; ++i) {
        const uint64_t step = uint64_t(tensor.shape[i] - 1);
        const uint64_t stride = uint64_t(tensor.stride[i]);
        if (stride != 0 && step > (limit - last) / stride) fail(view + " overflows its storage");
        last += step * stride;
    }
    if (elements > 0 ? last >= storage.elements : last > storage.elements)
        fail(view + " reaches element " + std::to_string(last) + " of storage " +
             quotedName(storage.key) + ", which holds " + std::to_string(storage.elements));
}
} // namespace

PickledStateDict readStateDictPickle(const std::string& where, std::string_view pickle) {
    return Interpreter(where, pickle).run();
}
} // namespace headlight::io
