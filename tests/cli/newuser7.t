# What a seventh new-user walk (a PhD student's mixed cluster: A100 PCIe,
# L40S, RTX 4090/5090, H100 NVL; continued pre-training of a 3B, QLoRA of a
# 32B and a VLM, GRPO of a 7B, serving a 70B and an MoE) found: an answer
# that was wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. rl on a 1 + 1 split said "pools: rollout 1 GPUs busy ...; training
# 1 GPUs busy", where the title and the run line say "1 GPU".
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-nvl', '--gpus', '2', '--method', 'lora',
                      '--rollout-gpus', '1');
is($c, 0, 'rl --rollout-gpus 1 of 2 runs') or diag $e;
like($o, qr/^pools: rollout 1 GPU busy [\d.]+ s, idle [\d.]+ s \([\d.]+%\); training 1 GPU busy /m,
     'rl: one GPU a pool is "1 GPU"');

# 2. plan --svg BASE with --format json (a shard's, or any JSON) returned
# before the pictures: no BASE-*.svg was written and nothing said so.
# Same with --per-card (BASE-cards.svg).
{
    my @p = ('plan', 'llama3.2-3b', '--gpu', 'l40s', '--gpus', '1,2', '--tokens', '1e8');
    ($c, $o, $e) = run_gp(@p, '--svg', "$dir/pl", '--format', 'json');
    is($c, 0, 'plan --svg --format json runs') or diag $e;
    ok(-s "$dir/pl-$_.svg", "plan --format json --svg wrote pl-$_.svg") for qw(pareto memory step);
    my @lines = split /\n/, $o;
    ok(eval { JSON::PP::decode_json($lines[0]); 1 }, 'plan --svg --format json: still JSON lines');
    ($c, $o, $e) = run_gp(@p, '--gpu', 'l40s,rtx-4090', '--per-card', '--svg', "$dir/pc",
                          '--format', 'json');
    is($c, 0, 'plan --per-card --svg --format json runs') or diag $e;
    ok(-s "$dir/pc-cards.svg", 'plan --per-card --format json --svg wrote pc-cards.svg');
    ($c, $o, $e) = run_gp(@p, '--svg', "$dir/none/pl", '--format', 'json');
    is($c, 1, 'plan --format json --svg into a missing directory: refused');
    is($o, '', '... before any JSON line');
}

# 3. comm on a catalog system without NICs (the PCIe servers) over two
# nodes said "2 nodes need --nics > 0 to talk"; --nics then was refused,
# the system naming no NIC fabric, and comm has no --nic-fabric.
for my $a (['--nodes', '2'], ['--gpus', '9']) {
    ($c, $o, $e) = run_gp('comm', '--system', 'pcie-8x-4090', @$a);
    is($c, 1, "comm --system pcie-8x-4090 @$a: refused");
    like($e, qr/^gpuplan: comm: \d+ gpus span 2 nodes of 8, but system pcie-8x-4090 has no NICs \(its catalog entry lists none, nor a NIC fabric\): give --system ID \(a catalog system with NICs\)$/m,
         "comm @$a: names the system and what it lacks") or diag $e;
}
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--min', '1MB', '--max', '1MB');
is($c, 0, 'comm over two DGX H100 nodes (NICs) still runs') or diag $e;

# 4. GRPO with --group 1 was priced: a group of one response has no other
# to compare its reward with, every advantage 0.  TRL refuses it
# (grpo_config.py: "GRPO requires at least 2 generations per prompt").
# PPO keeps --group 1, and gp.rl (whose validation pass prices a rollout
# of one answer a prompt) keeps it.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '2', '--group', '1');
is($c, 2, 'rl --group 1 (GRPO): a usage error');
like($e, qr/^gpuplan: rl: --group 1: GRPO needs at least 2 responses a prompt/m, 'rl --group 1: says why')
    or diag $e;
($c, $o, $e) = run_gp('fit', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--method', 'grpo', '--group', '1');
is($c, 2, 'fit --method grpo --group 1: a usage error');
like($e, qr/^gpuplan: fit: --group 1: GRPO needs .*--method ppo\)$/m, 'fit: names --method ppo')
    or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '2', '--group', '1',
                      '--algo', 'ppo');
is($c, 0, 'rl --algo ppo --group 1 still runs') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '2', '--group', '2',
                      '--method', 'lora');
is($c, 0, 'rl --group 2 (GRPO) runs') or diag $e;
{
    my $lua = "$dir/g1.lua";
    write_file($lua, 'local r = require("gpuplan").rl{ model = "qwen2.5-7b", gpu = "h100-sxm", '
                   . 'gpus = 2, group = 1, method = "lora" } print(r.samples)' . "\n");
    ($c, $o, $e) = run_gp('run', $lua);
    is($o, "64\n", 'gp.rl{group = 1} still prices a one-answer rollout') or diag $e;
}

# 5. plan --policy cheapest (or best-per-dollar) where no card has a price
# ranked every layout at an infinite cost, the ties by GPU-seconds a token
# (plan.t: the cost at any one price), under "best layouts by cheapest"
# with every cost "-" and nothing said.  The defaults line says it.  A
# user GPU (no offer in the catalog) is such a card.
{
    my $cat = File::Temp::tempdir(CLEANUP => 1);
    write_file("$cat/a100-40.lua", <<'LUA');
gpu {
  id = "my-a100-pcie-40gb", name = "A100 PCIe 40GB", vendor = "NVIDIA", arch = "ampere",
  memory = "40GiB", mem_bw = "1.555TB/s",
  peak = { fp32 = "19.5TFLOPS", tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS" },
  scaleup = { fabric = "pcie4", domain = 4 }, pcie = { gen = 4, lanes = 16 },
  source = "NVIDIA A100 datasheet",
}
LUA
    local $ENV{GPUPLAN_CATALOG} = $cat;
    my @p = ('plan', 'llama3.2-3b', '--gpu', 'my-a100-pcie-40gb', '--gpus', '4', '--tokens', '1e9');
    for my $pol (['cheapest', 'cheapest'], ['best-per-dollar', 'best_per_dollar']) {
        ($c, $o, $e) = run_gp(@p, '--policy', $pol->[0]);
        is($c, 0, "plan --policy $pol->[0], no price: runs") or diag $e;
        like($o, qr/^defaults: .*\Q$pol->[1]\E: no price for my-a100-pcie-40gb in the buyer's markets, ranked by GPU-hours a token \(the cost at any one price\)/m,
             "plan --policy $pol->[0]: says how it ranked") or diag $o;
    }
    ($c, $o, $e) = run_gp(@p, '--policy', 'cheapest', '--price', '1.1');
    unlike($o, qr/ranked by GPU-hours/, 'plan --policy cheapest --price 1.1: nothing to say');
    ($c, $o, $e) = run_gp(@p, '--gpu', 'my-a100-pcie-40gb,l40s', '--gpus', '2', '--policy', 'cheapest');
    is($c, 0, 'plan --policy cheapest: one priced card among them') or diag $e;
    like($o, qr/^l40s\s/m, '... ranks first');
    unlike($o, qr/ranked by GPU-hours/, '... and nothing to say');
}

# 6. train, plan and rl refused a LoRA option without a LoRA method as
# "--lora-rank applies to method lora|qlora|grpo|ppo": two methods those
# commands refuse (rl's --method is the actor's; grpo and ppo are fit's
# RL-step methods).  fit and gp.memory keep all four.
for my $cmd (['train'], ['plan'], ['rl', '--gpus', '2']) {
    ($c, $o, $e) = run_gp($cmd->[0], 'qwen2.5-7b', '--gpu', 'h100-sxm', @{$cmd}[1 .. $#$cmd],
                          '--lora-rank', '8');
    is($c, 2, "$cmd->[0] --lora-rank without a LoRA method: a usage error, exit 2");
    like($e, qr/^gpuplan: $cmd->[0]: --lora-rank applies to method lora\|qlora \(got \w+\)$/m,
         "$cmd->[0]: names only the methods it takes") or diag $e;
}
# The same for --weights with a method that trains every weight: train,
# plan and rl named fit's "--lora-rank with method grpo|ppo" and inference.
for my $cmd (['train'], ['plan'], ['rl', '--gpus', '2']) {
    ($c, $o, $e) = run_gp($cmd->[0], 'qwen2.5-7b', '--gpu', 'h100-sxm', @{$cmd}[1 .. $#$cmd],
                          '--weights', 'int4');
    like($e, qr/^gpuplan: $cmd->[0]: --weights applies to an adapter's frozen base \(method lora\|qlora\); method \w+ trains every weight/m,
         "$cmd->[0] --weights: names only the methods it takes") or diag $e;
}
($c, $o, $e) = run_gp('fit', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--weights', 'int4');
like($e, qr/with method grpo\|ppo\) and to inference; /, 'fit --weights keeps grpo|ppo and inference') or diag $e;
($c, $o, $e) = run_gp('fit', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--lora-rank', '8');
like($e, qr/--lora-rank applies to --method lora\|qlora\|grpo\|ppo$/m, 'fit keeps grpo|ppo') or diag $e;

# 7. A GGUF-style bits-per-weight figure read as a count in the titles:
# "4.85 weights".  Now "4.85-bit weights"; a format's name is unchanged,
# and the JSON keeps the value given.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--weights', '4.85');
like($o, qr/^llama3-8b on 1 x rtx-4090 \(tp 1, pp 1\), 4\.85-bit weights, bf16 KV,/m, 'infer: 4.85-bit weights')
    or diag $e;
($c, $o, $e) = run_gp('roofline', '--gpu', 'rtx-4090', '--model', 'llama3-8b', '--weights', '4.85');
like($o, qr/decode at batch 1, 4\.85-bit weights \(/m, 'roofline: 4.85-bit weights') or diag $e;
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--weights', 'awq');
like($o, qr/, awq weights, /m, 'infer: a named format is unchanged');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--weights', '4.85', '--format', 'json');
is(JSON::PP::decode_json($o)->{weights}, '4.85', 'infer JSON: the value as given');

# 8. plan's searched line said "5 fit and 5 within of 27 timed" with no
# deadline or budget: within nothing the user set (the engine counts the
# layouts within both), and "within of" did not parse.  It names the limit
# and only with one.
{
    my @p = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9');
    ($c, $o, $e) = run_gp(@p);
    like($o, qr/^searched: h100-sxm \d+ layouts: \d+ timed \(\d+ skipped by the bound\), \d+ fit$/m,
         'plan without a deadline: no "within"') or diag $e;
    ($c, $o, $e) = run_gp(@p, '--deadline', '1d');
    like($o, qr/^searched: h100-sxm \d+ layouts: \d+ timed \(\d+ skipped by the bound\), \d+ fit, \d+ within the deadline$/m,
         'plan --deadline: within the deadline') or diag $e;
    ($c, $o, $e) = run_gp(@p, '--deadline', '1d', '--budget', '1000');
    like($o, qr/, \d+ fit, \d+ within the deadline and budget$/m, 'plan --deadline --budget: both');
}

# 9. rl with pools of their own on H100 NVL pairs (a bridge, no catalog
# system, no NICs): --gpus 4 --rollout-gpus 2 (or auto) said "the rollout
# and training pools span nodes, but the system has no NICs" -- "the
# system" where there is none, and nothing to give; --gpus 5 with auto
# said "training step: 4 GPUs span 2 nodes of 2, but the system has no
# NICs".  Now the refusal the colocated job gives, naming the node and
# the flags.
for my $a (['--gpus', '4', '--rollout-gpus', '2'], ['--gpus', '4', '--rollout-gpus', 'auto'],
           ['--gpus', '5', '--rollout-gpus', 'auto']) {
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-nvl', '--method', 'lora', @$a);
    is($c, 1, "rl h100-nvl @$a: refused");
    like($e, qr/^gpuplan: rl: the rollout and training pools: \d GPUs span \d nodes of 2, but the node built from h100-nvl \(nvlink-bridge, no catalog system\) has no NICs: give --nics N and --nic-fabric ID /m,
         "rl @$a: names the node and what to give") or diag $e;
}
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-nvl', '--method', 'lora', '--gpus', '4',
                      '--rollout-gpus', '2', '--nics', '1', '--nic-fabric', 'ib-ndr-400');
is($c, 0, 'rl h100-nvl --gpus 4 --rollout-gpus 2 with a NIC a node: runs') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-nvl', '--method', 'lora', '--gpus', '2',
                      '--rollout-gpus', '1');
is($c, 0, 'rl h100-nvl 1 + 1 within the pair: runs') or diag $e;

# 10. infer over several cards as CSV: the header said ttft_s and itl_s
# over the text's milliseconds (198.1 for 0.198 s), and cost over
# "0.373 USD", a string.  Now seconds, as the JSON's fields (docs/output.md:
# a CSV column is the JSON's unless its name carries another unit), and
# cost_per_mtok and currency apart, as one card's CSV has them.
{
    my @j = ('infer', 'llama3-8b', '--gpu', 'l40s,rtx-4090,h100-nvl');
    ($c, $o, $e) = run_gp(@j, '--format', 'json');
    my %js = map { $_->{gpu} => $_ } @{ JSON::PP::decode_json($o)->{per_card} };
    ($c, $o, $e) = run_gp(@j, '--format', 'csv');
    is($c, 0, 'infer several cards --format csv runs') or diag $e;
    my ($head, @rows) = split /\n/, $o;
    is($head, 'gpu,gpus,layout_name,batch,ttft_s,itl_s,itl_load_s,stream_tokens_per_s,per_gpu,cost_per_mtok,currency,fits,loses',
       'the header: seconds, the cost and its currency apart');
    for my $row (@rows) {
        my @f = split /,/, $row;
        my $x = $js{$f[0]};
        # the CSV prints 15 significant digits of the JSON's value
        ok(abs($f[4] - $x->{ttft_s}) <= 1e-12 * $x->{ttft_s}, "$f[0]: ttft_s is the JSON's seconds");
        ok(abs($f[5] - $x->{itl_s}) <= 1e-12 * $x->{itl_s}, "$f[0]: itl_s is the JSON's seconds");
        # (itl_load_s, the mean gap a user sees, is column 6)
        if (defined $x->{cost_per_mtok}) {
            ok(abs($f[9] - $x->{cost_per_mtok}) <= 1e-12 * $x->{cost_per_mtok} && $f[10] eq 'USD',
               "$f[0]: cost_per_mtok a number, currency USD");
        } else {
            ok($f[9] eq '' && $f[10] eq '', "$f[0]: no price, no cost and no currency");
        }
    }
}

# 11. infer --tp 2 on a user GPU whose entry gives neither a scale-up
# fabric nor a PCIe link, with no system: the engine's alpha-beta
# placeholder priced the all-reduce at 360 GB/s, an NVLink's rate (TTFT
# 35 ms against 77 ms with a PCIe 4 link), said only as "a placeholder".
# train refuses that card past one GPU; so does infer now.
{
    my $cat = File::Temp::tempdir(CLEANUP => 1);
    write_file("$cat/g.lua", <<'LUA');
gpu { id = "nolink", name = "x", vendor = "NVIDIA", arch = "ampere", memory = "40GiB",
      mem_bw = "1.5TB/s", peak = { bf16 = "312TFLOPS" }, source = "x" }
gpu { id = "pcielink", name = "x", vendor = "NVIDIA", arch = "ampere", memory = "40GiB",
      mem_bw = "1.5TB/s", peak = { bf16 = "312TFLOPS" }, pcie = { gen = 4, lanes = 16 }, source = "x" }
LUA
    local $ENV{GPUPLAN_CATALOG} = $cat;
    for my $a (['--tp', '2'], ['--pp', '2']) {
        ($c, $o, $e) = run_gp('infer', 'llama3.2-1b', '--gpu', 'nolink', '--gpus', '2', @$a);
        is($c, 1, "infer on a card with no link, @$a: refused");
        like($e, qr/^gpuplan: infer: --gpu 'nolink' has no scale-up fabric \(nor a pcie link in its catalog entry\) for the .* to cross: give --system ID/m,
             "infer @$a: names the card and the fix") or diag $e;
    }
    ($c, $o, $e) = run_gp('infer', 'llama3.2-1b', '--gpu', 'nolink');
    is($c, 0, 'infer on that card alone (tp 1): runs') or diag $e;
    ($c, $o, $e) = run_gp('infer', 'llama3.2-1b', '--gpu', 'pcielink', '--tp', '2', '--gpus', '2');
    is($c, 0, 'infer --tp 2 on a card with a PCIe link: runs') or diag $e;
    ($c, $o, $e) = run_gp('train', 'llama3.2-1b', '--gpu', 'nolink', '--gpus', '2');
    like($e, qr/has no scale-up fabric; give --system ID/, 'train refuses the same card (as before)');
}

# 12. A VLM's one image of one token read "media: 1 units of 1 tokens".
($c, $o, $e) = run_gp('train', 'qwen2.5-vl-7b', '--gpu', 'h100-sxm', '--method', 'lora',
                      '--images', '1', '--image-size', '20');
like($o, qr/; media: 1 unit of 1 token \(28 px\) = 1 of 2048 tokens$/m, 'train: 1 unit of 1 token') or diag $e;
($c, $o, $e) = run_gp('train', 'qwen2.5-vl-7b', '--gpu', 'h100-sxm', '--method', 'lora',
                      '--images', '4', '--image-size', '448');
like($o, qr/; media: 4 units of 256 tokens \(448 px\) = 1024 of 2048 tokens$/m, 'train: 4 units of 256 tokens') or diag $e;

# 13. rl --tp 2 at the default --gpus 1 said "the 1 training GPUs are not
# a multiple of tp*pp*cp = 2"; train says "--gpus 1 is not a multiple".
# Colocated, the training GPUs are --gpus; split, the job's less the
# rollout pool's, in the singular for one.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--tp', '2');
like($e, qr/^gpuplan: rl: --gpus 1 is not a multiple of tp\*pp\*cp = 2$/m, 'rl colocated: names --gpus') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '3', '--rollout-gpus', '2', '--tp', '2');
like($e, qr/^gpuplan: rl: the 1 training GPU \(the job's less the rollout pool's\) is not a multiple of tp\*pp\*cp = 2$/m,
     'rl split: the training pool, singular') or diag $e;

# 14. fit --method infer --offload layers: the concurrency and context
# were sized before the offload, for every layer's KV on the GPU: a 70B
# AWQ on one RTX 4090 read "max concurrent sequences at this context: 0;
# max context at this concurrency: 0 tokens" beside "fits: yes" with 43
# layers in host memory.  Now they are the resident layers'.
{
    my @j = ('fit', 'llama3.3-70b', '--gpu', 'rtx-4090', '--method', 'infer', '--offload', 'layers',
             '--weights', 'awq', '--seq', '4096');
    ($c, $o, $e) = run_gp(@j, '--format', 'json');
    is($c, 0, 'fit --offload layers runs') or diag $e;
    my $r = JSON::PP::decode_json($o);
    my %b = map { $_->{name} => $_->{bytes} } @{ $r->{components} };
    my $gpu_layers = 80 - $r->{cpu_layers};
    # Hand: Llama 3.3 70B's KV is 8 heads x 128 x 2 (K, V) x 2 B = 4096 B
    # a layer a token; the GPU keeps 80 - cpu_layers layers.  The context
    # that fits: the usable memory less the weights and the workspace with
    # its 5% fragmentation (fit's fragmentation row / workspace), over the
    # resident layers' KV a token.  Exact: the engine bisects whole tokens.
    is($b{kv_cache}, $gpu_layers * 4096 * 4096, 'the resident layers hold the KV (4096 tokens)');
    my $frag = $b{fragmentation} / $b{workspace};
    my $ctx = int(($r->{usable} - $b{weights} - (1 + $frag) * $b{workspace}) / ($gpu_layers * 4096));
    is($r->{max_ctx}, $ctx, "max context: the resident layers' ($ctx tokens)");
    is($r->{max_seqs}, 1, 'one sequence fits, as the verdict says');
    ok($r->{fits}, '... and it fits');
    ($c, $o, $e) = run_gp(@j);
    like($o, qr/^max concurrent sequences at this context: 1; max context at this concurrency: $ctx tokens$/m,
         'the text says the same') or diag $o;
}

done_testing();
