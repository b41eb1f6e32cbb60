// SequenceMap (opset 17): the body runs once per position of the input sequence(s); its outputs,
// one per node output, are collected into sequences. Inputs: input_sequence, then the
// additional inputs (a sequence gives the body its element at the position, every sequence being
// as long as the first; a tensor gives itself each time), then the outer-scope values (Note
// [subgraphs]). The body is an Engine of its own (Engine::body), planned per element shape.
#include "runtime/engine.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

std::vector<HostValue> run_sequence_map(Engine& owner, const Node& node, const std::vector<HostValue>& inputs) {
  const size_t formal = inputs.size() - node.captured_inputs();
  const size_t length = sequence_input(node, inputs, 0).items.size();
  for (size_t i = 1; i < formal; ++i) {
    if (inputs[i].kind == ValueKind::Sequence && inputs[i].items.size() != length) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " is " + inputs[i].str() +
                                             ", but input_sequence holds " + std::to_string(length) +
                                             ": every sequence input must be as long");
    }
    if (inputs[i].kind == ValueKind::Optional) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " must be a sequence or a tensor, got " + inputs[i].str());
    }
  }
  Engine& body = owner.body(node, "body");
  const size_t n_out = node.outputs.size();
  std::vector<std::vector<HostValue>> collected(n_out);
  std::vector<HostValue> args;
  for (size_t p = 0; p < length; ++p) {
    args.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
      args.push_back(i < formal && inputs[i].kind == ValueKind::Sequence ? inputs[i].items[p] : inputs[i]);
    }
    std::vector<HostValue> outs = body.run_values(args);
    for (size_t o = 0; o < n_out; ++o) {
      tensor_of(node, outs.at(o), "body output " + std::to_string(o));
      collected[o].push_back(outs[o]);
    }
  }
  std::vector<HostValue> results;
  const Graph& g = body.graph();
  for (size_t o = 0; o < n_out; ++o) {
    // An empty result keeps the body's declared output type.
    const DType elem = !collected[o].empty() ? collected[o][0].tensor->info.dtype
                       : o < g.output_decls.size() ? g.output_decls[o].dtype
                                                   : DType::Float32;
    results.push_back(HostValue::sequence(elem, std::move(collected[o])));
  }
  return results;
}

}  // namespace dnnx
