# What an eighth new-user walk (an ML platform lead pricing a year:
# pre-training a 7B-13B dense model and a 30B-A3B MoE, LoRA on rented and
# export cards, serving two models to an SLO with --target, rent against
# buy across markets, from the CLI and from Lua) found: an answer that was
# wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. infer --target for a dense model with --eplb or --imbalance was
# answered as if they placed experts: --eplb sent llama2-13b down the MoE
# search (8 GPUs as one TP8 instance) where the plain target gives 5 TP1
# replicas, and nothing said the flags meant nothing.  gp.infer refuses
# them on a dense model.
for my $a (['--eplb'], ['--imbalance', '1.5']) {
    ($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'h200-sxm', '--target', '5000', @$a);
    is($c, 1, "infer --target @$a on a dense model: refused");
    is($o, '', "... nothing on stdout");
    like($e, qr/^gpuplan: infer: \Q$a->[0]\E applies to a MoE model's experts: model 'llama2-13b' has no routed experts$/m,
         "infer --target @$a: names the flag and the model") or diag $e;
}
($c, $o, $e) = run_gp('infer', 'qwen3-30b-a3b', '--gpu', 'h200-sxm', '--target', '5000', '--eplb');
is($c, 0, 'infer --target --eplb on a MoE model still runs') or diag $e;

# 2. rl --rollout-ep other than the rollout TP said "the engine's experts
# are split over its 1 GPUs (--rollout-ep rollout_tp) or sliced by its TP
# (1)": "1 GPUs", half a flag, and a bare "(1)" for "--rollout-ep 1".
($c, $o, $e) = run_gp('rl', 'qwen3-30b-a3b', '--gpu', 'h20', '--gpus', '16', '--rollout-ep', '8');
is($c, 2, 'rl --rollout-ep 8 with --rollout-tp 1: a usage error');
like($e, qr/^gpuplan: rl: --rollout-ep 8 must equal --rollout-tp \(1: each expert whole on one of the engine's GPUs\) or be 1 \(the experts sliced by its TP\)$/m,
     'rl --rollout-ep: names both flags and the two values it may take') or diag $e;

# 3. infer --target 0, -1 or 1e30 for a dense model said "--target
# tokens/s must be in (0, 1e+15] and the ITL limit in (0, 3600] s (got 0,
# 0.05)": the engine's check, naming a limit the user did not give; a MoE
# model said "must be a positive number" for 0 and the engine's words for
# 1e30.  The option's declaration now bounds it, for both searches.
for my $m (qw(llama2-7b qwen3-30b-a3b)) {
    for my $t (qw(0 -1 1e30)) {
        ($c, $o, $e) = run_gp('infer', $m, '--gpu', 'h200-sxm', '--target', $t);
        is($c, 1, "infer $m --target $t: refused");
        like($e, qr/^gpuplan: infer: --target must be a number in \(0, 1000000000000000\] \(got \Q@{[$t eq '1e30' ? '1e+30' : $t]}\E\)$/m,
             "infer $m --target $t: the option's range, no ITL limit") or diag $e;
    }
}

# 4. --nics 0 over a system with NICs, on more than one node, said
# "system 'hgx-h20' has no NICs: give --nics N and --nic-fabric ID (...)":
# its entry lists 8 NICs and a fabric; the user's --nics 0 took them.
for my $cmd (['train', 'llama2-13b', '--gpus', '16'], ['infer', 'llama2-13b', '--gpus', '16', '--tp', '16'],
             ['rl', 'qwen2.5-7b', '--gpus', '16']) {
    ($c, $o, $e) = run_gp(@$cmd, '--gpu', 'h20', '--nics', '0');
    is($c, 1, "$cmd->[0] --nics 0 over two HGX H20 nodes: refused");
    like($e, qr/^gpuplan: $cmd->[0]: 16 GPUs span 2 nodes of 8, but --nics 0 leaves system 'hgx-h20' no NICs to reach the others: give --nics N above 0$/m,
         "$cmd->[0] --nics 0: says the flag took the NICs") or diag $e;
}
# A node built from a GPU has no NIC fabric either: both flags still named.
($c, $o, $e) = run_gp('train', 'llama2-13b', '--gpu', 'h100-nvl', '--gpus', '4', '--nics', '0');
like($e, qr/has no NICs: give --nics N and --nic-fabric ID/, 'train --nics 0 on a bridged pair: --nic-fabric named too');

# 5. --recompute auto with --recompute-modules: where auto ends at full
# (which refuses a list given with it), the list was dropped and the
# defaults said only "recompute=full (auto: nothing fits; the most
# saving)".  The step is full's, list or not.
{
    my @j = ('train', 'llama2-13b', '--gpu', 'h100-sxm', '--gpus', '64', '--recompute', 'auto');
    ($c, $o, $e) = run_gp(@j, '--recompute-modules', 'layernorm');
    is($c, 0, 'train --recompute auto --recompute-modules runs') or diag $e;
    like($o, qr/recompute=full \(auto: nothing fits; the most saving; full re-runs whole layers, recompute_modules' list unused\)/,
         'auto at full says the list is unused');
    my ($step) = $o =~ /^step\s+([\d.]+)/m;
    ($c, my $o2, $e) = run_gp(@j);
    my ($step2) = $o2 =~ /^step\s+([\d.]+)/m;
    is($step, $step2, 'the same step as auto without the list');
    unlike($o2, qr/list unused/, 'no list, nothing said of one');
}

# 6. plan --budget over cards one of which has no offer in the buyer's
# market said "a budget needs a price for h100-sxm (--price P)": one
# --price for every card searched.  It now says where the card is offered.
($c, $o, $e) = run_gp('plan', 'llama2-13b', '--gpu', 'h20,h100-sxm', '--gpus', '16', '--market', 'cn',
                      '--tokens', '1e11', '--budget', '200kCNY');
is($c, 1, 'plan --budget with an unpriced card: refused');
like($e, qr/^gpuplan: plan: a budget needs a price for h100-sxm: no offer for h100-sxm in cn \(it is offered in [\w, ]+: --market \w+ or --price\)$/m,
     'plan --budget: says where the card is offered') or diag $e;

# 7. A misspelt LoRA target: train said "bad argument #4 to
# 'gpuplan.core.train' (unknown LoRA target 'foo' ...)", the engine
# binding's name; fit named no option.
for my $cmd (['train', '--gpus', '8'], ['fit'], ['rl', '--gpus', '8'], ['plan', '--gpus', '8']) {
    my $name = $cmd->[0];
    ($c, $o, $e) = run_gp($name, 'qwen2.5-7b', @$cmd[1 .. $#$cmd], '--gpu', 'h20', '--method', 'lora',
                          '--lora-targets', 'q,experts');
    is($c, 1, "$name --lora-targets q,experts: refused");
    like($e, qr/^gpuplan: $name: --lora-targets: unknown LoRA target 'experts' \(expected q,k,v,o,gate,up,down or all\)$/m,
         "$name: names the flag and the target") or diag $e;
    unlike($e, qr/bad argument|gpuplan\.core/, "$name: no binding's name");
}
($c, $o, $e) = run_gp('train', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--method', 'lora',
                      '--lora-targets', 'q,k,v,o,gate,up,down');
is($c, 0, 'train --lora-targets with every name runs') or diag $e;

# 8. catalog show / --explain of an id no table holds said "gpuplan:
# unknown id 'h2O' (see 'gpuplan catalog list')": no command, and no
# nearest id, where --gpu h2O says "did you mean".
for my $a (['show', 'h2O', 'h20'], ['--explain', 'h100-sxn', 'h100-sxm']) {
    ($c, $o, $e) = run_gp('catalog', $a->[0], $a->[1]);
    is($c, 1, "catalog $a->[0] $a->[1]: refused");
    # the nearest first, then others near (walk7.t 4: --gpu's ranking)
    like($e, qr/^gpuplan: catalog \Q$a->[0]\E: unknown id '\Q$a->[1]\E' \(did you mean '\Q$a->[2]\E'[,?]/,
       "catalog $a->[0]: names the subcommand and the nearest id");
}
($c, $o, $e) = run_gp('catalog', 'show', 'zzzzzzzzzz');
is($e, "gpuplan: catalog show: unknown id 'zzzzzzzzzz' (see 'gpuplan catalog list')\n",
   'nothing near: where to look');

# 9. plan --ep-max 2 for a dense model searched ep 1 alone and said
# nothing (train --ep 2 refuses it: "given for a dense model").
($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep-max', '2');
is($c, 1, 'plan --ep-max 2 on a dense model: refused');
is($o, '', '... nothing on stdout');
like($e, qr/^gpuplan: plan: --ep-max 2 given for a dense model \(llama2-7b has no experts\)$/m,
     'plan --ep-max: names the flag and the model') or diag $e;
($c, $o, $e) = run_gp('plan', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep-max', '8', '--top', '1');
is($c, 0, 'plan --ep-max 8 on a MoE model runs') or diag $e;

# 10. --kv int8 with --runtime sglang was priced: SGLang has no INT8 KV
# cache (server_args.py --kv-cache-dtype choices: auto, fp8_e5m2,
# fp8_e4m3, bf16, bfloat16, fp4_e2m1; its docs: "FP8 or FP4").  vLLM's
# CacheDType (vllm/config/cache.py) lists int8_per_token_head, and
# TensorRT-LLM has an INT8 KV cache: both run, and rl's vLLM rollout too.
($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'h100-sxm', '--kv', 'int8', '--runtime', 'sglang');
is($c, 1, 'infer --kv int8 --runtime sglang: refused');
like($e, qr/^gpuplan: infer: --kv int8: SGLang has no INT8 KV cache \(.*\); TensorRT-LLM and vLLM have one \(gpuplan infer --runtime trtllm or vllm\), or give --kv fp8$/m,
     'sglang: says which runtimes have one') or diag $e;
for my $rt ('vllm', 'trtllm') {
    ($c, $o, $e) = run_gp('infer', 'llama2-13b', '--gpu', 'h100-sxm', '--kv', 'int8', '--runtime', $rt);
    is($c, 0, "infer --kv int8 --runtime $rt runs") or diag $e;
    like($o, qr/int8 KV/, "$rt: the title says the int8 cache") or diag $o;
}
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--kv', 'int8');
unlike($e, qr/INT8 KV cache/, 'rl --kv int8 (a vLLM rollout): not refused for the cache dtype') or diag $e;

# 10b. --prefix-hit with a MoE model's --target: the MoE serving model
# prices the hit in its prefill pool (engine infer_new_prompt), so at hit
# 0.9 the pool computes a tenth of each prompt and needs fewer GPUs than
# without (deepseek-v3 at 1e5 tok/s on h200-sxm: 176 against 352; the
# decode pool, 144 GPUs, is the same either way).
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '100000', '--prefix-hit', '0.9');
is($c, 0, 'infer --target --prefix-hit on a MoE model: priced') or diag $e;
my ($hit) = $o =~ /^\s*100000\s+\S+\s+(\d+)\s/m;
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '100000');
my ($nohit) = $o =~ /^\s*100000\s+\S+\s+(\d+)\s/m;
ok(defined $hit && defined $nohit && $hit < $nohit, "the hit shrinks the plan ($hit GPUs against $nohit)");

# 11. plan --top 0 said "must be a whole number 1..16777216"; --top 100001
# then said "must be an integer 1..100000" (gp.sweep's bound).  One range.
for my $t (qw(0 100001)) {
    ($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--top', $t);
    is($c, 1, "plan --top $t: refused");
    is($e, "gpuplan: plan: --top must be a whole number 1..100000 (got $t)\n", "plan --top $t: the one range");
}

# 12. merge --top 0 was a usage error (exit 2, "--top must be at least 1,
# got 0") where plan --top 0 is a value out of range (exit 1), and merge
# took --top 1000000.  One range, one exit status.
{
    for my $k (1, 2) {
        ($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--top', '1',
                              '--shard', "$k/2", '--format', 'json');
        is($c, 0, "plan --shard $k/2 runs") or diag $e;
        write_file("$dir/s$k.jsonl", $o);
    }
    for my $t (qw(0 1000000)) {
        ($c, $o, $e) = run_gp('merge', "$dir/s1.jsonl", "$dir/s2.jsonl", '--top', $t);
        is($c, 1, "merge --top $t: exit 1, as plan's");
        is($e, "gpuplan: merge: --top must be a whole number 1..100000 (got $t)\n", "merge --top $t: plan's words");
    }
    ($c, $o, $e) = run_gp('merge', "$dir/s1.jsonl", "$dir/s2.jsonl", '--top', '1');
    is($c, 0, 'merge --top 1 runs') or diag $e;
}

# 13. rl with one prompt a step said "1 prompts x 2 = 2 samples".
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '2', '--rollout-gpus', '1',
                      '--prompts', '1', '--group', '2');
is($c, 0, 'rl --prompts 1 runs') or diag $e;
like($o, qr/\): 1 prompt x 2 = 2 samples, /, 'rl: one prompt is "1 prompt"');

# 14. plan with a value listed twice (--gpus 8,8, --zero 1,1,
# --micro-batch 2,2) searched it twice: each layout came back twice, the
# runner-up the winner again, other layouts pushed out of the top.
for my $a (['--gpus', '8,8', '--gpus lists 8 twice'], ['--zero', '1,1', '--zero lists 1 twice'],
           ['--micro-batch', '2,2', '--micro-batch lists 2 twice'],
           ['--recompute', 'full,full', "--recompute lists 'full' twice"]) {
    ($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', @$a[0, 1]);
    is($c, 1, "plan $a->[0] $a->[1]: refused");
    is($e, "gpuplan: plan: $a->[2]\n", "plan $a->[0] $a->[1]: names the value");
}
($c, $o, $e) = run_gp('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '0,1',
                      '--micro-batch', '1,2', '--top', '4');
is($c, 0, 'plan --zero 0,1 --micro-batch 1,2 runs') or diag $e;
my @rows = $o =~ /^h100-sxm\s+8\s+(\S.*?)\s{2,}/mg;
my %n; $n{$_}++ for @rows;
is(scalar(grep { $n{$_} > 1 } keys %n), 0, 'no layout twice in the table');

done_testing();
