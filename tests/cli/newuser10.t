# What a tenth new-user walk (an inference platform lead: dense and MoE
# serving with vLLM, SGLang, TensorRT-LLM, llama.cpp and ExLlamaV2 on
# H100/H200/B200/H20/L40S/RTX 4090, LoRA/QLoRA and GRPO on the 8B,
# collectives on NVL72, HGX and PCIe, prices) found on the command line:
# an answer that was wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);

# 1. --price with an offer id the catalog does not hold (a provider it
# does not list) read "bad price 'h100-sxm/lambda/us': expected an amount
# per GPU-hour like '$2.49/h'", exit 2, as if no price id were taken
# (the help: "2.49, '$2.49/h' or a catalog price id").  It is an unknown
# catalog id: exit 1, naming --price and the card's offers.
for my $cmd (qw(train infer plan rl)) {
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--price', 'h100-sxm/lambda/us');
    is($c, 1, "$cmd --price h100-sxm/lambda/us: exit 1 (an unknown id)");
    like($e, qr/^gpuplan: $cmd: --price 'h100-sxm\/lambda\/us' is no catalog offer \(the offers for h100-sxm: .*h100-sxm\/runpod-secure\/global/,
         "$cmd: names --price and the card's offers");
    is($o, '', "$cmd: nothing on stdout");
}
# text that is no id stays a value --price cannot parse
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--price', 'abc/h');
is($c, 2, '--price abc/h: still a usage error');
like($e, qr/bad price 'abc\/h': expected an amount/, '--price abc/h: the amount parser says what it wanted');

# 2. plan without --gpus on a user system of 4 GPUs and no NICs: the
# search's one count, 8 (the default), cannot span two nodes, and the
# refusal asked for NICs ("8 GPUs span 2 nodes of 4, but system ... has
# no NICs: give --nics N and --nic-fabric ID") without saying the 8 was
# the default nobody typed.  It says so, and that --gpus within the node
# is the other way.  With --gpus 8 given, the message stays as it was.
{
    my $cat = File::Temp::tempdir(CLEANUP => 1);
    open(my $fh, '>', "$cat/box.lua") or die;
    print $fh <<'LUA';
gpu {
  id = "my-4090d", name = "RTX 4090D 24GB", vendor = "NVIDIA", arch = "ada", form_factor = "PCIe", year = 2023,
  memory = "24GiB", memory_type = "GDDR6X", mem_bw = "1.008TB/s",
  peak = { bf16 = "147TFLOPS", fp16 = "147TFLOPS", fp8 = "294TFLOPS", int8 = "294TOPS", fp32 = "73.5TFLOPS" },
  pcie = { gen = 4, lanes = 16 }, tdp = "425W", source = "example",
}
system { id = "my-4x4090d", name = "4 x 4090D box", gpu = "my-4090d", gpus = 4, nics = 0,
  scaleup = "pcie4", host_memory = "256GB", host_mem_bw = "100GB/s", source = "example" }
LUA
    close $fh;
    local $ENV{GPUPLAN_CATALOG} = $cat;
    my @job = ('plan', 'llama3-8b', '--gpu', 'my-4090d', '--method', 'qlora', '--tokens', '1e8', '--price', '0.4');
    ($c, $o, $e) = run_gp(@job);
    is($c, 1, 'plan on a 4-GPU box without --gpus: exit 1');
    like($e, qr/^gpuplan: plan: 8 GPUs \(the default --gpus\) span 2 nodes of 4, but system 'my-4x4090d' has no NICs: give --gpus within a node, or --nics N/,
         'the 8 is named as the default, --gpus as the way out');
    ($c, $o, $e) = run_gp(@job, '--gpus', '8');
    like($e, qr/^gpuplan: plan: 8 GPUs span 2 nodes of 4, but system 'my-4x4090d' has no NICs: give --nics N/,
         '--gpus 8 given: the count is the user\'s');
    ($c, $o, $e) = run_gp(@job, '--gpus', '1,2,4');
    is($c, 0, '--gpus 1,2,4 plans on the box') or diag $e;
}

# 3. comm --nccl with text that is no release ("abc", "2.x", "") exited 1,
# where docs/output.md makes "a value the option cannot parse" a usage
# error, exit 2 (comm --min abc is one).  A release that parses but is
# not 2.x (3.0), or one gpuplan does not know, stays exit 1.
for my $v ('abc', '2.x', '') {
    ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MB', '--nccl', $v);
    is($c, 2, "comm --nccl '$v': exit 2");
    like($e, qr/^gpuplan: comm: --nccl must be a release 'major\.minor\[\.patch\]'.*\nusage: gpuplan comm/,
         "comm --nccl '$v': the reason, then the usage line");
}
for my $v ('3.0', '2.99.1') {
    ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1MB', '--nccl', $v);
    is($c, 1, "comm --nccl $v: a release it cannot price, exit 1");
}

# 4. infer --disagg with a prefill pool that is no whole number of its
# instances said "(--tp 8)" whatever set that instance: --ep 8 without
# any tp, or --prefill-tp 8, both named a --tp the user never gave.  It
# says the instance's GPUs.
for my $lay (['--ep', '8'], ['--tp', '8'], ['--ep', '8', '--prefill-tp', '8']) {
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '24', @$lay,
                          '--weights', 'fp8', '--disagg', '--prefill-gpus', '4');
    is($c, 1, "infer --disagg @$lay --prefill-gpus 4: exit 1");
    like($e, qr/^gpuplan: infer: --prefill-gpus 4 is not a multiple of the prefill instance's 8 GPUs$/m,
         "@$lay: the prefill instance's GPUs, no --tp named");
}

# 5. A script's --help (gp.options) printed a float default through
# tostring: scripts/budget_policy.lua's --tokens 2e11 read "(default:
# 200000000000.0)", a ".0" no count has, and grid_sweep's empty --svg
# "(default: )".  They read as typed back: 200000000000 and ''.
($c, $o, $e) = run_gp('run', 'scripts/budget_policy.lua', '--help');
is($c, 0, 'budget_policy --help: exit 0');
like($o, qr/^  --tokens +tokens to train on \(default: 200000000000\)$/m, '--tokens default without ".0"');
($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--help');
like($o, qr/^  --svg +write the Pareto plot here \(empty: none\) \(default: ''\)$/m, "--svg's empty default shown as ''");
unlike($o, qr/\(default: \)|\.0\)$/m, 'no empty or ".0" default');

# 6. infer on the MoE serving model with --batch and --itl-max: the limit,
# which picks the batch, was dropped in silence (qwen3-30b-a3b, 8 x H200,
# --ep 8 --batch 100 --itl-max 20 printed an ITL of 55.6 ms and exit 0),
# where --concurrency with --itl-max is refused.  Refused alike, exit 2.
($c, $o, $e) = run_gp('infer', 'qwen3-30b-a3b', '--gpu', 'h200-sxm', '--gpus', '8', '--ep', '8',
                      '--batch', '100', '--itl-max', '20');
is($c, 2, 'infer MoE --batch 100 --itl-max 20: exit 2');
like($e, qr/^gpuplan: infer: --batch fixes the batch; --itl-max searches it: give one of them$/m,
     'names both flags');
is($o, '', 'nothing priced');
# either alone still prices
($c, $o, $e) = run_gp('infer', 'qwen3-30b-a3b', '--gpu', 'h200-sxm', '--gpus', '8', '--ep', '8',
                      '--itl-max', '20', '--format', 'json');
is($c, 0, '--itl-max 20 alone: exit 0') or diag $e;

# 7. scripts/budget_policy.lua refused its own options at its own lines:
# "scripts/budget_policy.lua:34: monthly budget 'abc': ...", ":33:
# unknown model 'nope'", ":33: sweep: tokens must be ..." -- no flag
# named, and 'abc' (no amount) exit 1.  Each names its flag, before any
# search; text that is no amount is a usage error (exit 2), as plan's
# --budget abc is.
for my $t ([['--monthly', 'abc'], 2, qr/^gpuplan: budget_policy: --monthly 'abc': expected an amount/],
           [['--monthly', '-5kCNY'], 1, qr/^gpuplan: budget_policy: --monthly '-5kCNY': must be a positive amount/],
           [['--model', 'nope'], 2, qr/^gpuplan: budget_policy: --model: unknown model 'nope'/],
           [['--tokens', '0'], 1, qr/^gpuplan: budget_policy: --tokens must be a positive number/]) {
    my ($a, $rc, $re) = @$t;
    ($c, $o, $e) = run_gp('run', 'scripts/budget_policy.lua', @$a);
    is($c, $rc, "budget_policy @$a: exit $rc");
    like($e, $re, "budget_policy @$a: names the flag");
    unlike($e, qr/budget_policy\.lua:\d/, "budget_policy @$a: no file:line of the script");
}

# 8. scripts/h800_vs_h100.lua and grid_sweep.lua refused their own options
# at their own lines with gp.train's and gp.sweep's keys
# ("scripts/h800_vs_h100.lua:41: train: seq must be ...",
# "scripts/grid_sweep.lua:29: unknown gpu 'foo'").  Each names its flag.
for my $t ([['h800_vs_h100.lua', '--seq', '0'], 1, qr/^gpuplan: h800_vs_h100: --seq must be a whole number/],
           [['h800_vs_h100.lua', '--global-batch', '0'], 1, qr/^gpuplan: h800_vs_h100: --global-batch must be/],
           [['h800_vs_h100.lua', '--model', 'nope'], 2, qr/^gpuplan: h800_vs_h100: --model: unknown model 'nope'/],
           [['grid_sweep.lua', '--tokens', '0'], 1, qr/^gpuplan: grid_sweep: --tokens must be a positive number/],
           [['grid_sweep.lua', '--gpu', 'foo'], 2, qr/^gpuplan: grid_sweep: --gpu: unknown gpu 'foo'/],
           [['grid_sweep.lua', '--gpus', '0'], 1, qr/^gpuplan: grid_sweep: value 1 of --gpus must be a whole number/]) {
    my ($a, $rc, $re) = @$t;
    my ($script, @rest) = @$a;
    ($c, $o, $e) = run_gp('run', "scripts/$script", @rest);
    # an unknown catalog name is a usage error (exit 2), a value out of
    # its range an error (exit 1)
    is($c, $rc, "$script @rest: exit $rc");
    like($e, $re, "$script @rest: names the flag");
    unlike($e, qr/\.lua:\d/, "$script @rest: no file:line");
}

# 8b. A --gpus text that is no list of counts is a usage error (exit 2)
# in the script as in plan (docs/output.md: "a value the option cannot
# parse"); the script's rewording of gp.sweep's refusal dropped the usage
# mark, so it exited 1.
for my $g ('abc', '8,') {
    ($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', $g);
    is($c, 2, "grid_sweep --gpus '$g': exit 2, as plan --gpus '$g'");
    like($e, qr/^gpuplan: grid_sweep: --gpus '\Q$g\E': expected counts like/, "... naming the flag");
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', $g);
    is($c, 2, "plan --gpus '$g': exit 2");
}

# 9. fit, train, plan and rl with an adapter's base in mxfp4 or fp6 were
# refused "bad argument #4 to 'gpuplan.core.train' (base: unknown field
# 'fixed_group' (did you mean 'group'?))": an internal field and a
# binding's argument number.  They price it.
for my $cmd (['train', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'qlora', '--weights', 'mxfp4'],
             ['train', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'lora', '--weights', 'fp6'],
             ['fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'qlora', '--weights', 'mxfp4'],
             ['plan', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'qlora', '--weights', 'mxfp4', '--tokens', '1e8'],
             ['rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'qlora', '--weights', 'mxfp4']) {
    ($c, $o, $e) = run_gp(@$cmd);
    is($c, 0, "@$cmd: exit 0") or diag $e;
    unlike($e, qr/fixed_group|bad argument/, "@$cmd: no internal field");
}

# 10. infer's text said "KV budget per GPU 19.03 GB (1 sequence)" under
# ExLlamaV2's max_batch_size 1, beside "KV per sequence per GPU 0.302 GB":
# the engine's cap read as the budget's size.  It says both.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--runtime', 'exllamav2', '--weights', '4.0');
is($c, 0, 'infer exllamav2: exit 0') or diag $e;
like($o, qr/^KV budget per GPU +19\.\d\d GB \(\d\d sequences; the engine batches at most 1\)$/m,
     'the budget holds dozens of sequences; the engine batches one');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm');
like($o, qr/^KV budget per GPU +58\.72 GB \(205 sequences\)$/m, 'no cap below the KV: as before');

# 11. infer --graph-sizes with text that is no list of numbers ('1,2,x',
# '8,', 'abc') exited 1, where docs/output.md makes a value the option
# cannot parse a usage error, exit 2 (plan --gpus 'abc' and '8,' are).
# A list that parses but holds a bad size (0, a repeat) stays exit 1.
for my $v ('1,2,x', '8,', 'abc') {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--graph-sizes', $v);
    is($c, 2, "infer --graph-sizes '$v': exit 2");
    like($e, qr/^gpuplan: infer: --graph-sizes must be whole numbers joined by commas \(got '\Q$v\E'\)\nusage: gpuplan infer/,
         "--graph-sizes '$v': the reason, then the usage line");
}
for my $v ('0', '1,1') {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--graph-sizes', $v);
    is($c, 1, "infer --graph-sizes '$v': a size refused, exit 1");
}

# 12. plan --zero and --micro-batch dropped an empty entry: '1,,2', '1,'
# and ',1' were searched as 1,2 and 1, exit 0, where --gpus '8,' and
# --gpu 'a,,b' are refused as lists that cannot be read.  Refused alike,
# exit 2.
for my $opt ('--zero', '--micro-batch') {
    for my $v ('1,,2', '1,', ',1') {
        ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', $opt, $v);
        is($c, 2, "plan $opt '$v': exit 2");
        like($e, qr/^gpuplan: plan: \Q$opt\E expects a list of integers, got '\Q$v\E'$/m, "plan $opt '$v': says so");
    }
}
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--zero', '1,2', '--micro-batch', '1,2');
is($c, 0, 'plan --zero 1,2 --micro-batch 1,2: still searched') or diag $e;

# ... and --recompute, --etp and --fsdp dropped an empty entry the same
# way ('none,,full' searched none and full; 'tp,' and 'full_shard,' one).
for my $t (['--recompute', 'none,,full'], ['--etp', 'tp,'], ['--fsdp', 'full_shard,'], ['--fsdp', ',full_shard']) {
    my ($opt, $v) = @$t;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', $opt, $v);
    is($c, 2, "plan $opt '$v': exit 2");
    like($e, qr/^gpuplan: plan: \Q$opt\E.*'\Q$v\E'/m, "plan $opt '$v': names the flag and the value");
}

# 13. comm --systems (the --svg chart's lines) dropped an empty entry
# (',dgx-h100', 'dgx-h100,,dgx-a100') and drew a system named twice as
# two lines, exit 0.  Refused as lists that cannot be read, exit 2,
# before anything is written.
{
    my $d = File::Temp::tempdir(CLEANUP => 1);
    for my $t ([',dgx-h100', qr/--systems expects system ids separated by commas, got ',dgx-h100'/],
               ['dgx-h100,,dgx-a100', qr/--systems expects system ids separated by commas/],
               ['dgx-h100,dgx-h100', qr/--systems names dgx-h100 twice/]) {
        my ($v, $re) = @$t;
        ($c, $o, $e) = run_gp('comm', '--systems', $v, '--svg', "$d/c.svg", '--max', '1MB');
        is($c, 2, "comm --systems '$v': exit 2");
        like($e, $re, "comm --systems '$v': says why");
        ok(!-e "$d/c.svg", "comm --systems '$v': no chart written");
    }
    ($c, $o, $e) = run_gp('comm', '--systems', 'dgx-h100,dgx-a100', '--svg', "$d/c.svg", '--max', '1MB');
    is($c, 0, 'comm --systems dgx-h100,dgx-a100: drawn') or diag $e;
}

done_testing();
