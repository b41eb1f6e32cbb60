// Small queries and edits on a Graph, shared by the passes.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/passes/passes.h"

namespace dnnx {

// The index of the one node that reads `value`, or -1 when none or several do, or when it is
// a graph output (a fused-away value must not be visible outside).
int sole_consumer(const Graph& graph, const std::string& value);

// The constant called `name`, or nullptr (graph inputs shadow initializers, as in the planner).
const ConstTensor* find_constant(const Graph& graph, const std::string& name);

// Adds a float32 constant under a name no tensor uses yet (derived from `base`); returns it.
std::string add_constant(Graph& graph, const std::string& base, const Shape& shape, std::vector<float> values);
// The same for an int64 vector (a Reshape's shape).
std::string add_int64_constant(Graph& graph, const std::string& base, const std::vector<int64_t>& values);

// Every value's type for the declared input shapes, symbolic dims taken as `symbolic_dim` (ranks
// and the fixed dims are what the passes look at), by the op registry's shape inference. Two
// calls with different `symbolic_dim` tell the dims that follow the inputs' symbolic ones.
std::map<std::string, TensorInfo> value_types(const Graph& graph, int64_t symbolic_dim = 1);

// Drops the nodes whose flag is set, keeping the order of the rest.
void erase_nodes(Graph& graph, const std::vector<bool>& dead);

// Drops the constants no node reads and no graph output names (e.g. a Conv's W and the BN
// statistics once fold_batchnorm has made new weights).
void drop_unused_constants(Graph& graph);

// Names no value of the graph uses yet (derived from a base: "x/fp16", "x/fp16_1", ...), for the
// passes that rebuild the node list (half_storage, channels_last).
class FreshNames {
 public:
  explicit FreshNames(const Graph& graph);
  std::string operator()(const std::string& base);

 private:
  std::set<std::string> taken_;
};

// Renames graph output `out` to `inner` wherever `nodes` write or read it, so that a last node
// can make `out` from `inner` (a conversion back to what the caller expects).
void rename_output_inside(std::vector<Node>& nodes, const std::string& out, const std::string& inner);

// Whether the backend can run `node` (always, without a can_run check).
bool backend_can_run(const PassOptions& options, const Node& node);

// Producer -> sole consumer pairs become one node at the producer's place: for each node that
// `is_producer` accepts and that has exactly one output, read by one node alone (sole_consumer)
// not yet merged, `merge(producer, consumer)` gives the merged node (nullopt: leave the pair);
// when the backend can run it, it replaces the producer and the consumer is dropped. Returns the
// number of pairs merged.
using NodeTest = std::function<bool(const Node&)>;
using PairMerge = std::function<std::optional<Node>(const Node& producer, const Node& consumer)>;
int fuse_with_sole_consumer(Graph& graph, const PassOptions& options, const NodeTest& is_producer,
                            const PairMerge& merge);

// producer -> Relu (ai.onnx's) pairs become one node "<op>+Relu" at the producer's place
// (producer_op is "Conv", "Gemm" or "BatchNormalization", and `also`, where given, must accept
// the producer too): the producer's inputs and attributes, the Relu's outputs.
int fuse_with_relu(Graph& graph, const PassOptions& options, const std::string& producer_op,
                   const NodeTest& also = nullptr);

}  // namespace dnnx
