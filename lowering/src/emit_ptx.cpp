// The NVPTX back end: the target machine for an architecture, LLVM's O3
// module pipeline, and PTX emission (TOOLCHAIN.md, "LLVM NVPTX").
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

#include "codegen.hpp"
#include "fold_false_ballots.hpp"
#include "kiln/lowering/fault_record.hpp"

namespace kiln::lowering {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";
// PTX ISA 8.5, the newest LLVM 19 knows; without it sm_80 gets PTX 7.0.
constexpr const char* kFeatures = "+ptx85";

void initialize_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

}  // namespace

std::unique_ptr<llvm::TargetMachine> create_target_machine(const GpuTarget& target) {
  initialize_nvptx();
  std::string error;
  const llvm::Target* nvptx = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!nvptx) throw LoweringError("LLVM has no NVPTX target: " + error);
  const llvm::Triple triple(kTriple);
  auto* subtarget_info = nvptx->createMCSubtargetInfo(kTriple, target.arch, kFeatures);
  const bool known = subtarget_info && subtarget_info->isCPUStringValid(target.arch);
  delete subtarget_info;
  if (!known)
    throw LoweringError("GPU architecture `" + target.arch +
                        "` is unknown to LLVM 19's NVPTX backend (sm_80 … sm_90a)");
  // The back end at its default level (llc -O2): on every sample kernel's O3
  // output it emits the same PTX as at -O3 except for one or two
  // instructions in matmul, in 5-13 % less time (softmax).
  std::unique_ptr<llvm::TargetMachine> machine(
      nvptx->createTargetMachine(kTriple, target.arch, kFeatures, llvm::TargetOptions(), std::nullopt, std::nullopt,
                                 llvm::CodeGenOptLevel::Default));
  if (!machine) throw LoweringError("LLVM could not create an NVPTX target machine for `" + target.arch + "`");
  return machine;
}

void optimize_module(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager call_graphs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(call_graphs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, call_graphs, modules);
  builder.registerPeepholeEPCallback(
      [](llvm::FunctionPassManager& passes, llvm::OptimizationLevel) { passes.addPass(FoldFalseBallots()); });
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
  // Where O3 proved every fault impossible (a divisor it knows is not 0), the
  // fault record's global is left unused: the module need not export it.
  if (llvm::GlobalVariable* record = module.getNamedGlobal(kFaultRecordGlobal); record && record->use_empty())
    record->eraseFromParent();
}

std::string emit_ptx(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream stream(ptx);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::AssemblyFile))
    throw LoweringError("the NVPTX backend cannot emit PTX for `" + machine.getTargetCPU().str() + "`");
  passes.run(module);
  return std::string(ptx.str());
}

}  // namespace kiln::lowering
