#pragma once
// Key paths: how every error message and diff names a place in a JSON document or experiment file,
// "train.batch_size", "model.layers[2].units", "cluster.worker[1]". One spelling everywhere, so a
// user can paste a path from one message into `--set` or search for it in another.
#include <cstddef>
#include <string>
#include <string_view>

namespace trainbench::engine {

// The member `key` of the object at `parent` ("" is the top level): "parent.key", or "key".
inline std::string keyPathMember(std::string_view parent, std::string_view key) {
    std::string path(parent);
    if (!path.empty()) path += '.';
    path += key;
    return path;
}

// Element `index` of the array at `parent`: "parent[index]".
inline std::string keyPathElement(std::string_view parent, std::size_t index) {
    std::string path(parent);
    // append() rather than "[" + ...: GCC 12 at -O3 warns (falsely) about the temporary.
    path.append("[").append(std::to_string(index)).append("]");
    return path;
}

}  // namespace trainbench::engine
