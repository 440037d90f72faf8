#pragma once
// The data.pkl of a torch.save archive, read by a restricted pickle interpreter that executes
// nothing. It knows only the opcodes a state dict needs (protocols 2 to 5: dicts, tuples, strings,
// integers, booleans, None, the memo, MARK, FRAME, REDUCE, BUILD and BINPERSID) and only the
// globals collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter
// and torch's typed storage classes. Calls are modelled, not made: REDUCE may only build an empty
// OrderedDict or a tensor record, BUILD may only set an OrderedDict's attributes (the _metadata a
// state_dict() carries), and persistent ids must be ('storage', StorageType, key, location,
// numel). Anything else is refused with the reason, before any tensor is read.

#include "io/tensor_file.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headlight::io {

// A storage a persistent id declares: the archive holds its bytes as data/<key>.
struct PickledStorage {
    std::string key;
    DType dtype = DType::F32;
    uint64_t elements = 0;
};

// A tensor as _rebuild_tensor_v2 describes it: a strided view of one storage, in elements.
struct PickledTensor {
    std::string name;
    std::size_t storage = 0; // index into PickledStateDict::storages
    uint64_t offset = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> stride;
};

struct PickledStateDict {
    std::vector<PickledStorage> storages; // each key once
    std::vector<PickledTensor> tensors;   // in the pickle's order, names unique
};

// Interprets `pickle`; every view is checked to lie inside its storage. Throws CheckpointError
// "<where>: <reason>".
PickledStateDict readStateDictPickle(const std::string& where, std::string_view pickle);
} // namespace headlight::io
