// torch_fuzz_seed --dict: prints the libFuzzer dictionary of fuzz_torch (each node kind the
// converter handles, and a few it does not, as the format writes a literal kind: byte 255, the
// length, the text).
// torch_fuzz_seed MODEL.pt INPUT_SHAPES OUT: writes the seed of fuzz_torch for a real TorchScript
// model: the graph the libtorch reader makes of MODEL.pt (the importer's readTorchScript), with
// the input shapes ("x:[1,3,8,8]", as --input-shapes), in the byte format of
// tests/fuzz/targets/TorchGraphBytes.h. It checks what it writes: the bytes decode to a graph that
// encodes to the same bytes, and that graph converts exactly as the model's file does (same
// printed module, or the same error). Needs Loom built with libtorch (the reader library).
// Exit code 0 when the seed was written, 1 when the graph does not fit the format or a check
// failed (said on stderr).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "core/graph/Printer.h"
#include "tests/fuzz/targets/TorchGraphBytes.h"

using namespace loom;

namespace {
std::string convertText(const frontend::ts::Graph& g, const frontend::TorchImportOptions& o) {
  try {
    return graph::printModule(frontend::convertTorchGraph(g, "model.pt", o));
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}
} // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--dict") {
    std::vector<std::string> kinds = frontend::supportedTorchOps();
    for (const char* k : {"aten::unknown_op", "prim::GetAttr", "prim::PythonOp", "prim::CallMethod"}) kinds.push_back(k);
    std::cout << "# fuzz_torch: node kinds as the format writes them (tests/fuzz/tools/torch_fuzz_seed --dict)\n";
    for (const std::string& k : kinds) {
      char head[16];
      std::snprintf(head, sizeof head, "\\xff\\x%02x", unsigned(k.size()));
      std::cout << "\"" << head << k << "\"\n";
    }
    return 0;
  }
  if (argc != 4) {
    std::cerr << "usage: torch_fuzz_seed MODEL.pt INPUT_SHAPES OUT\n";
    return 2;
  }
  try {
    frontend::ts::Graph g = frontend::readTorchScript(argv[1]);
    frontend::TorchImportOptions options;
    options.inputs = frontend::parseInputSpecs(argv[2]);
    fuzz::torchbytes::Encoder enc;
    std::string why;
    if (!enc.encode(g, options, &why)) {
      std::cerr << argv[1] << ": does not fit the fuzz_torch format: " << why << "\n";
      return 1;
    }
    const std::string& bytes = enc.bytes();
    frontend::ts::Graph back;
    frontend::TorchImportOptions backOptions;
    std::vector<std::string> kinds = frontend::supportedTorchOps();
    fuzz::torchbytes::Decoder(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kinds).decode(back, backOptions);
    fuzz::torchbytes::Encoder again;
    if (!again.encode(back, backOptions, &why) || again.bytes() != bytes) {
      std::cerr << argv[1] << ": the decoded graph does not encode to the same bytes\n";
      return 1;
    }
    std::string want = convertText(g, options), got = convertText(back, backOptions);
    if (want != got) {
      std::cerr << argv[1] << ": the decoded graph converts differently:\n" << want << "\n---\n" << got << "\n";
      return 1;
    }
    std::ofstream(argv[3], std::ios::binary) << bytes;
    std::cout << argv[3] << ": " << bytes.size() << " bytes, " << g.values.size() << " values; "
              << (want.rfind("error: ", 0) == 0 ? want : "converts") << "\n";
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
