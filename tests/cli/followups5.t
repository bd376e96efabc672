# Follow-ups of the seventh new-user walk (its "found, not landed"): a
# user system that became a shipped card's default node, one GPU of a
# card with no link refused, a several-card plan refused for one card's
# counts, a run shorter than one step, and the rollout pool's refusal
# naming options the user did not give.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);

# 1. The default node was the first system, by id, that holds the card:
# a user's lab-l40sx3 (3 x L40S, no NICs) sorted before the shipped
# pcie-8x and became every L40S job's node.  A shipped card keeps its
# shipped system; the user's is used when asked (--system), and the
# defaults line names it.  A user card takes its user system.
{
    my $cat = File::Temp::tempdir(CLEANUP => 1);
    write_file("$cat/lab.lua", <<'LUA');
system { id = "lab-l40sx3", name = "lab box", gpu = "l40s", gpus = 3, scaleup = "pcie4",
         nics = 0, source = "my lab" }
system { id = "lab-a100x3", name = "lab box", gpu = "a100-pcie-80gb", gpus = 3,
         scaleup = "pcie4", nics = 0, source = "my lab" }
gpu { id = "my-card", name = "x", vendor = "NVIDIA", arch = "ampere", memory = "40GiB",
      mem_bw = "1.5TB/s", peak = { bf16 = "312TFLOPS" }, scaleup = { fabric = "pcie4", domain = 8 },
      pcie = { gen = 4, lanes = 16 }, source = "x" }
system { id = "my-box", name = "my box", gpu = "my-card", gpus = 4, scaleup = "pcie4",
         nics = 0, source = "my lab" }
LUA
    local $ENV{GPUPLAN_CATALOG} = $cat;
    my @t = ('train', 'llama3.2-1b', '--method', 'lora');
    ($c, $o, $e) = run_gp(@t, '--gpu', 'l40s', '--gpus', '8');
    is($c, 0, 'train on 8 L40S beside a user 3-L40S system runs') or diag $e;
    like($o, qr/^defaults: .*system=pcie-8x \(the shipped node; user system lab-l40sx3 only when asked\)/m,
         'the shipped pcie-8x is the default, the user system named') or diag $o;
    ($c, $o, $e) = run_gp(@t, '--gpu', 'l40s', '--gpus', '3', '--system', 'lab-l40sx3');
    is($c, 0, '--system lab-l40sx3: runs on it') or diag $e;
    unlike($o, qr/system=/, '... given, not a default');
    ($c, $o, $e) = run_gp(@t, '--gpu', 'a100-pcie-80gb', '--gpus', '2');
    is($c, 0, 'a shipped card with only a user system: runs') or diag $e;
    like($o, qr/^defaults: .*no system \(user system lab-a100x3 only when asked\), gpus_per_node=2, nics=0 \(a100-pcie-80gb on nvlink-bridge, no NICs\)/m,
         '... on the node built from the card, the user system named') or diag $o;
    ($c, $o, $e) = run_gp(@t, '--gpu', 'my-card', '--gpus', '4');
    is($c, 0, 'a user card: runs') or diag $e;
    like($o, qr/^defaults: .*system=my-box,/m, '... on its user system') or diag $o;
    # plan: the walk's comparison ran into lab-l40sx3's missing NICs.
    ($c, $o, $e) = run_gp('plan', 'qwen2.5-32b', '--gpu', 'rtx-4090,rtx-5090,l40s', '--gpus', '1,2,4',
                          '--method', 'qlora');
    is($c, 0, 'plan over l40s with 4 GPUs beside the user system runs') or diag $e;
    like($o, qr/l40s: system=pcie-8x \(the shipped node/, '... on pcie-8x') or diag $o;
}

# 2. train --gpus 1 on a card whose entry states no link was refused
# ("has no scale-up fabric; give --system ID"): one GPU crosses no link.
{
    my $cat = File::Temp::tempdir(CLEANUP => 1);
    write_file("$cat/g.lua", <<'LUA');
gpu { id = "nolink", name = "x", vendor = "NVIDIA", arch = "ampere", memory = "40GiB",
      mem_bw = "1.5TB/s", peak = { bf16 = "312TFLOPS" }, source = "x" }
LUA
    local $ENV{GPUPLAN_CATALOG} = $cat;
    for my $cmd (['train'], ['plan', '--tokens', '1e8'], ['rl', '--method', 'lora']) {
        my ($name, @more) = @$cmd;
        ($c, $o, $e) = run_gp($name, 'llama3.2-1b', '--gpu', 'nolink', '--gpus', '1', @more);
        is($c, 0, "$name --gpus 1 on a card with no link: runs") or diag $e;
        like($o, qr/one GPU, no link \(nolink's entry states no scale-up fabric nor pcie\)/,
             "$name: the defaults say the node") or diag $o;
    }
    ($c, $o, $e) = run_gp('train', 'llama3.2-1b', '--gpu', 'nolink', '--gpus', '2');
    is($c, 1, 'train --gpus 2 on it: still refused');
    like($e, qr/has no scale-up fabric; give --system ID/, '... naming the fix');
    ($c, $o, $e) = run_gp('plan', 'llama3.2-1b', '--gpu', 'nolink', '--gpus', '1,2');
    is($c, 1, 'plan of that card alone over 1,2: still refused (the counts are its question)');
    # beside another card: its 2 is skipped (block 3)
    ($c, $o, $e) = run_gp('plan', 'llama3.2-1b', '--gpu', 'nolink,l40s', '--gpus', '1,2',
                          '--tokens', '1e8', '--per-card');
    is($c, 0, 'plan nolink,l40s --gpus 1,2: runs') or diag $e;
    like($o, qr/^nolink\s+1\s/m, '... nolink at 1 GPU') or diag $o;
    like($o, qr/nolink: 2 GPUs skipped \(more than its node of 1 holds/, '... its 2 skipped, said');
}

# 3. plan over several cards and counts was refused for every card when
# one card's node (H100 NVL: bridged pairs, no NICs) could not reach the
# largest count.  That card is searched at the counts it reaches.
{
    my @p = ('plan', 'qwen2.5-32b', '--gpu', 'rtx-4090,rtx-5090,h100-nvl', '--gpus', '1,2,4',
             '--method', 'qlora', '--per-card');
    ($c, $o, $e) = run_gp(@p);
    is($c, 0, 'plan rtx-4090,rtx-5090,h100-nvl --gpus 1,2,4 runs') or diag $e;
    like($o, qr/^h100-nvl\s+[12]\s/m, 'h100-nvl ranked at a count its node holds') or diag $o;
    like($o, qr/^rtx-4090\s+4\s/m, 'rtx-4090 still searched at 4') or diag $o;
    like($o, qr/h100-nvl: 4 GPUs skipped \(more than its node of 2 holds, and the node has no NICs: the node built from h100-nvl/,
         'the skipped count named') or diag $o;
    # The note told the user the node has no NICs but not what supplies
    # them: it now says the refusal's own advice (gpuplan.comm no_nics),
    # by the command line's flags, not the Lua keys nics / nic_fabric.
    like($o, qr/h100-nvl: 4 GPUs skipped \([^\n]*; to search them give --nics N and --nic-fabric ID \(scale-out fabrics: [^)]*ib-ndr-400[^)]*\), or a system with NICs\)/,
         '... and says to give --nics and --nic-fabric') or diag $o;
    unlike($o, qr/give nics = N/, '... not as the Lua keys') or diag $o;
    ($c, $o, $e) = run_gp('plan', 'qwen2.5-32b', '--gpu', 'h100-nvl', '--gpus', '1,2,4', '--method', 'qlora');
    is($c, 1, 'h100-nvl alone over 1,2,4: still refused');
    like($e, qr/4 GPUs span 2 nodes of 2, but the node built from h100-nvl/, '... naming the node');
}

# 4. A run shorter than one step: --tokens 1 was 1.8e-10 days, 1/262144
# of a step.  A run is at least one step (HF Trainer:
# num_update_steps_per_epoch = max(len_dataloader // accumulation, 1));
# past one step it stays proportional (Megatron floors train_samples //
# global_batch_size, HF's last batch is partial: neither adds a step).
{
    my @t = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--format', 'json');
    ($c, $o, $e) = run_gp(@t, '--tokens', '1');
    is($c, 0, 'train --tokens 1 runs') or diag $e;
    my $r = JSON::PP::decode_json($o);
    # train_s = max(1, tokens_per_step) x step_s / tokens_per_step = step_s;
    # 1e-9 relative: the same product and quotient in floating point.
    ok(abs($r->{train_s} / $r->{step_s} - 1) < 1e-9, "one token: one step ($r->{train_s} s)");
    # cost = train_s x 8 GPUs x 1.80 USD/GPU-h / 3600 (the catalog price
    # the defaults name); 1e-9 relative as above.
    ok(abs($r->{cost} / ($r->{step_s} * 8 * $r->{price} / 3600) - 1) < 1e-9, '... and its cost');
    my $tps = $r->{tokens_per_step};
    ($c, $o, $e) = run_gp(@t, '--tokens', 1.5 * $tps);
    $r = JSON::PP::decode_json($o);
    # 1.5 steps of tokens: 1.5 x step_s (not rounded up to 2).
    ok(abs($r->{train_s} / (1.5 * $r->{step_s}) - 1) < 1e-9, '1.5 steps of tokens: 1.5 steps');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1');
    like($o, qr/^time to train 1 tokens \(one step of 262144 tokens: a run is at least one step\) \(if it fit\): /m,
         'the text says so') or diag $o;
    # plan prices the same floor: its days for 1 token are one step's.
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1',
                          '--format', 'json');
    is($c, 0, 'plan --tokens 1 runs') or diag $e;
    my ($row) = grep { defined $_->{step_s} } map { JSON::PP::decode_json($_) } split /\n/, $o;
    ok($row && abs($row->{days} * 86400 / $row->{step_s} - 1) < 1e-9, 'plan: one step too')
        or diag $o;
}

# 5. rl's rollout pool refusal named --rollout-tp x --rollout-pp where
# the user gave neither, and said "the 1 GPUs".
{
    my @r = ('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--method', 'lora');
    ($c, $o, $e) = run_gp(@r, '--tp', '2', '--gpus', '3', '--rollout-gpus', '1');
    # a usage error (exit 2) since newuser13: engines that do not divide
    # the pool are options that do not go together, as the training
    # pool's 'is not a multiple of tp*pp*cp' is (docs/output.md)
    is($c, 2, 'rl --tp 2 --rollout-gpus 1: refused, exit 2');
    like($e, qr/^gpuplan: rl: the rollout engine's 2 GPUs \(the actor's --tp 2\) do not divide --rollout-gpus 1 \(the rollout pool\)$/m,
         'names --tp, not --rollout-pp') or diag $e;
    ($c, $o, $e) = run_gp(@r, '--rollout-pp', '2', '--gpus', '2', '--rollout-gpus', '1');
    like($e, qr/^gpuplan: rl: the rollout engine's 2 GPUs \(the actor's tensor parallel size 1 x --rollout-pp 2\) do not divide --rollout-gpus 1/m,
         'a defaulted tp in words, the given --rollout-pp by name') or diag $e;
    ($c, $o, $e) = run_gp(@r, '--rollout-tp', '2', '--gpus', '1');
    like($e, qr/^gpuplan: rl: the rollout engine's 2 GPUs \(--rollout-tp 2\) do not divide --gpus 1 \(the colocated pools\)$/m,
         'colocated: names --gpus') or diag $e;
}

done_testing();
