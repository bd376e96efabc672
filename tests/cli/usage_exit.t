# One exit code per kind of error: a refusal raised inside the shared
# library (gpuplan.memory, .train, .rl, .serve, .infer, .sweep, .comm and
# the engine's kernels) that says two options do not go together is the
# command's usage error -- exit 2, the message as it was, then the usage
# lines -- as the command's own checks are; a job that cannot run on this
# model or card stays an error, exit 1, without usage lines.  Before the
# mark (gpuplan.args usage, gp_usage in the engine) every library refusal
# exited 1.  Each message below is the one the command printed before the
# change, word for word: only the exit code and the usage lines are new.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @usage = (
    # gpuplan.memory: vpp without a pipeline
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--vpp', '2'],
     "gpuplan: train: --vpp 2 needs a pipeline (--pp > 1; got --pp 1)"],
    # the engine (memory_layout.c, gp_usage): an offload needs a ZeRO stage
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--offload', 'optimizer'],
     "gpuplan: train: --offload needs a ZeRO stage (--zero 1, 2 or 3: DeepSpeed offloads through its ZeRO optimizer), got --zero 0"],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--offload', 'optimizer'],
     "gpuplan: fit: --offload needs a ZeRO stage (--zero 1, 2 or 3: DeepSpeed offloads through its ZeRO optimizer), got --zero 0"],
    # gpuplan.sweep's own check, and the engine's refusal met by the
    # search's first layout (the job's options, whichever layout)
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--schedule', 'dualpipe', '--vpp-max', '2'],
     "gpuplan: plan: --schedule dualpipe runs one model chunk a stage: --vpp-max 2 searches nothing (give 1f1b or interleaved too)"],
    # (a later refusal: it printed "no layout: no split ..." and exited 0)
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--schedule', 'dualpipe', '--pp-max', '1'],
     "gpuplan: plan: --schedule dualpipe needs an even pp of 2 or more: --pp-max 1 searches nothing (give 1f1b or interleaved too)"],
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--offload', 'optimizer', '--zero', '0'],
     "gpuplan: plan: --offload optimizer goes through DeepSpeed's ZeRO optimizer: --zero 0 cannot be searched with it (give stages 1, 2 or 3)"],
    # the engine's search (sweep.c, gp_usage): an offload whose policies
    # to try leave out none (it exited 1 with these words)
    [['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--recompute', 'selective', '--activation-offload-layers', '4'],
     "gpuplan: plan: --activation-offload-layers needs recompute none (Megatron-Core's \"CPU offloading does not work when activation recomputation is enabled\"): give none among the recompute policies to try"],
    # gpuplan.memory: none with a module list is recomputation too (a
    # later refusal: the run was priced)
    # a module list alone is selective's (Megatron-Core reads it under
    # recompute_granularity "selective" only), which the offload refuses
    [['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron', '--recompute-modules', 'layernorm', '--activation-offload-layers', '4'],
     "gpuplan: train: --activation-offload-layers needs --recompute none (got --recompute selective): Megatron-Core's \"CPU offloading does not work when activation recomputation is enabled\""],
    # none with a module list: Megatron-Core re-runs nothing, so the list
    # would price modules the job does not re-run
    [['train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '8', '--recompute', 'none', '--recompute-modules', 'moe'],
     "gpuplan: train: --recompute-modules applies to --recompute selective: Megatron-Core reads the list only under recompute_granularity \"selective\", and with none re-runs nothing (give --recompute selective, or no --recompute-modules)"],
    # gpuplan.rl, and the engine's refusal under rl's "training step: "
    [['rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--base-checkpoint'],
     "gpuplan: rl: --base-checkpoint needs --response-max: the mean is assumed as a share of the limit"],
    # (--zero 0 given: rl's own default on 8 GPUs is the stack's ZeRO-3)
    [['rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--offload', 'optimizer', '--zero', '0'],
     "gpuplan: rl: training step: offload needs a ZeRO stage (--zero 1, 2 or 3: DeepSpeed offloads through its ZeRO optimizer), got --zero 0"],
    # gpuplan.serve (gp.infer's MoE serving options)
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--acceptance', '0.5'],
     "gpuplan: infer: --acceptance is the MTP drafts' acceptance: it needs --mtp N (draft tokens per step)"],
    # gpuplan.comm's placement
    [['comm', '--system', 'dgx-h100', '--nodes', '3', '--gpus', '8'],
     "gpuplan: comm: 8 gpus do not split evenly over 3 nodes"],
);
for my $t (@usage) {
    my ($args, $want) = @$t;
    my ($c, $o, $e) = run_gp(@$args);
    my $name = "@$args[0, 3 .. $#$args]";
    is($c, 2, "$name: a usage error, exit 2");
    my @lines = split /\n/, $e;
    is($lines[0], $want, "$name: the message as it was");
    like($lines[1] // '', qr/^usage: gpuplan \Q$args->[0]\E /, "$name: then the usage line");
    is($lines[-1], "see 'gpuplan $args->[0] --help'", "$name: and where the help is");
    is($o, '', "$name: nothing on stdout");
}

# Jobs that cannot run here -- the card, the model or the node cannot do
# what the options ask -- stay errors: exit 1, one line, no usage lines.
my @cannot = (
    [['train', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--precision', 'fp8'],
     "gpuplan: train: fp8 training needs fp8 tensor cores; gpu a100-sxm-80gb has none (bf16 or fp16 instead)"],
    [['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'lora', '--lora-rank', '100000'],
     "gpuplan: fit: --lora-rank 100000 is above the model's hidden size 4096 (an adapter's rank is at most its weight's smaller side)"],
    [['plan', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--precision', 'fp8'],
     "gpuplan: plan: fp8 training needs fp8 tensor cores; gpu a100-sxm-80gb has none (bf16 or fp16 instead)"],
    [['rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--rollout-ep', '2'],
     "gpuplan: rl: --rollout-ep 2 given for a dense model"],
    [['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--input', '100000'],
     "gpuplan: infer: --input 100000 + --output 256 tokens exceed llama3-8b's context of 8192 tokens (max_seq)"
     . "; llama3.1-8b of the same family and shape holds it (context 131072)"],
    [['comm', '--gpu', 'h100-sxm', '--nics', '2'],
     "gpuplan: comm: --nics 2: the node built from --gpu h100-sxm has no NIC fabric for them to run on; give --system ID (a catalog system with NICs: dgx-h100 (8 x ib-ndr-400))"],
);
for my $t (@cannot) {
    my ($args, $want) = @$t;
    my ($c, $o, $e) = run_gp(@$args);
    my $name = "@$args[0, 3 .. $#$args]";
    is($c, 1, "$name: cannot run, exit 1");
    is($e, "$want\n", "$name: the one line, no usage lines");
}

# A script that catches a usage refusal sees the message it always saw,
# and one it does not catch exits 1 (a script's error), as before: the
# exit 2 is the command line's.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $script = "$dir/u.lua";
    write_file($script, <<'LUA');
local gp = require "gpuplan"
local ok, e = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, vpp = 2 })
print(ok, type(e), e)
gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, vpp = 2 }
LUA
    my ($c, $o, $e) = run_gp('run', $script);
    is($o, "false\tstring\t$script:2: train: vpp 2 needs a pipeline (pp > 1; got pp 1)\n",
       'pcall: a string, positioned at the script\'s line, the Lua key named');
    is($c, 1, 'uncaught in a script: exit 1, a script error');
    is($e, "gpuplan: $script:4: train: vpp 2 needs a pipeline (pp > 1; got pp 1)\n",
       '... its one line, no usage lines');
}

done_testing;
