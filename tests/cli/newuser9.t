# What a ninth new-user walk (a lab's compute lead: pre-training 1B-8B
# dense models on 64-512 GPUs with FSDP/HSDP, QLoRA and full fine-tuning
# of a 70B, GRPO on 7B-32B with split and colocated rollouts, serving a
# MoE and a dense model, H200 against B200 against H20, from the CLI and
# from Lua) found: an answer that was wrong, silent or unreadable.  One
# block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. infer --target on a MoE model with no layout searched TP instances of
# one and two nodes only (TP8, TP16 on h200-sxm) beside its EP layouts:
# qwen3-30b-a3b (61 GB of bf16 weights, one H200 holds it) at 20000 tok/s
# took 16 GPUs, where the same plan held to --tp 1 takes 6.  The search
# now tries TP1 up to two nodes, so it never answers more GPUs than a TP
# it could have tried: its count is at most --tp 1's and --tp 2's.
sub target_gpus {
    my ($c, $o, $e) = run_gp('infer', 'qwen3-30b-a3b', '--gpu', 'h200-sxm', '--target', '20000',
                             '--format', 'json', @_);
    is($c, 0, "infer --target 20000 @_") or diag $e;
    return JSON::PP::decode_json($o)->[0]{gpus};
}
my $search = target_gpus();
my $tp1 = target_gpus('--tp', '1');
my $tp2 = target_gpus('--tp', '2');
ok($search <= $tp1 && $search <= $tp2, "the search ($search GPUs) takes no more than --tp 1 ($tp1) or --tp 2 ($tp2)");
is($search, 6, 'qwen3-30b-a3b at 20000 tok/s: 6 GPUs (it said 16)');

# 2. plan with a budget and no deadline that nothing meets said "no layout
# fits within the deadline and budget" (plan.lua's miss line), naming a
# deadline never given; the searched line already names the limits given.
for my $t ([['--budget', '50000'], 'the budget'], [['--deadline', '1d'], 'the deadline'],
           [['--budget', '50000', '--deadline', '1d'], 'the deadline and budget']) {
    my ($lim, $words) = @$t;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h20', '--gpus', '64', '--tokens', '1e11',
                          '--price', '7CNY/h', '--top', '1', @$lim);
    is($c, 0, "plan @$lim: nothing meets it, an answer") or diag $e;
    like($o, qr/^no layout fits within \Q$words\E \(--per-card/m, "plan @$lim: names $words") or diag $o;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h20', '--gpus', '64', '--tokens', '1e11',
                          '--price', '7CNY/h', '--per-card', @$lim);
    like($o, qr/^no card meets \Q$words\E$/m, "plan --per-card @$lim: the verdict names $words") or diag $o;
}

# 3. plan --gpus with text that is no count list ('abc', '8..', '1.5')
# exited 1 with no usage lines, where train --gpus abc and plan --zero abc
# exit 2 (docs/output.md: a value the option cannot parse is a usage
# error).  A count list that parses but is out of range stays exit 1.
for my $g ('abc', '8..', '1.5') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h200-sxm', '--gpus', $g);
    is($c, 2, "plan --gpus '$g': a usage error");
    like($e, qr/^gpuplan: plan: --gpus '\Q$g\E': expected counts like 64\.\.1024 or 8,16,32\nusage: gpuplan plan /m,
         "plan --gpus '$g': the message, then the usage line") or diag $e;
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h200-sxm', '--gpus', 'abc');
is($c, 2, 'train --gpus abc: the same exit');
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h200-sxm', '--gpus', '100..64');
is($c, 1, 'plan --gpus 100..64: a bad value, still exit 1');
# A quantity whose text the units parser cannot read (--memory abc,
# --host-bw 5xx) and a price that is no amount exited 1: docs/output.md
# "A usage error is a command line that cannot be read as a question: ...
# a value the option cannot parse" -- exit 2, with the usage line.  One
# that parses but is out of range (--memory 0GB) stays exit 1.
for my $t (['infer', '--memory', 'abc', qr/--memory: bad bytes 'abc'/],
           ['train', '--host-bw', '5xx', qr/--host-bw: bad bandwidth '5xx'/],
           ['infer', '--price', 'abc', qr/--price 'abc': bad price 'abc'/]) {
    my ($cmd, $f, $v, $re) = @$t;
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h200-sxm',
                          $cmd eq 'train' ? ('--gpus', '8') : (), $f, $v);
    is($c, 2, "$cmd $f $v: a usage error");
    like($e, qr/^gpuplan: $cmd: .*$re.*\nusage: gpuplan $cmd /m, "$cmd $f $v: the message, then the usage line")
        or diag $e;
}
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h200-sxm', '--memory', '0GB');
is($c, 1, 'infer --memory 0GB: parses, out of range, exit 1') or diag $e;
# A negative quantity parses too (units.parse reads -5 GB, then refuses
# its sign): out of range, exit 1 as --memory 0GB and plan --budget -5
# are (it exited 2 with the parse failures); '-abc' reads as nothing
# even without its sign, a usage error.
for my $t (['--memory', '-5GB', 1, qr/--memory: bad bytes '-5GB': must not be negative/],
           ['--host-bw', '-5GB/s', 1, qr/--host-bw: bad bandwidth '-5GB\/s': must not be negative/],
           ['--memory', '-abc', 2, qr/--memory: bad bytes '-abc': expected a number/]) {
    my ($f, $v, $rc, $re) = @$t;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h200-sxm', $f, $v);
    is($c, $rc, "infer $f $v: exit $rc");
    like($e, qr/^gpuplan: infer: $re/m, "infer $f $v: the message") or diag $e;
}

# 4. catalog check DIR with DIR an absolute path under the working
# directory said "ok: 0 entries": the loader names each entry's file
# relative to the working directory there, and the count compared it with
# the absolute DIR.  Relative or absolute, the count is the same.
{
    require Cwd;
    my $udir = File::Temp::tempdir(DIR => Cwd::getcwd(), CLEANUP => 1);
    open(my $fh, '>', "$udir/p.lua") or die;
    print $fh 'price { id = "h20/nu9/cn", gpu = "h20", provider = "own", provider_kind = "marketplace", '
            . 'region = "cn", price = "4CNY/h", date = "2026-01", source = "test" }' . "\n";
    close $fh;
    (my $rel = $udir) =~ s{^\Q@{[Cwd::getcwd()]}\E/}{};
    for my $d ($udir, $rel) {
        ($c, $o, $e) = run_gp('catalog', 'check', $d);
        is($c, 0, "catalog check $d") or diag $e;
        like($o, qr/^ok: 1 entry in /, "catalog check $d: counts the one entry (1 entry, not 1 entries)") or diag $o;
    }
}

# 5. rl with models on groups of their own (OpenRLHF's --ref_num_gpus_per_node
# ...): the reference, reward and critic groups showed no idle time, so 8
# reference GPUs busy 3.9 s of a 31.8 s step read as never waiting.  Each
# group's idle is now the step less its phases (on its last phase, as the
# rollout's and the training pool's): reference = step - reference;
# critic = step - values - critic_update.  Tolerance 1e-9 s: sums of the
# same doubles.
{
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h200-sxm', '--gpus', '32', '--algo', 'ppo',
        '--critic-model', 'qwen2.5-7b', '--reward-model', 'qwen2.5-7b', '--rollout-gpus', '8',
        '--ref-gpus', '8', '--critic-gpus', '8', '--reward-gpus', '4', '--zero', '3',
        '--format', 'json');
    is($c, 0, 'rl with reference, reward and critic groups') or diag $e;
    my $r = JSON::PP::decode_json($o);
    my %ph = map { $_->{name} => $_ } @{$r->{phases}};
    my $step = $r->{step_s};
    ok(abs($ph{reference}{idle} - ($step - $ph{reference}{seconds})) < 1e-9,
       "reference group idle = step - its forward ($ph{reference}{idle})");
    ok(abs($ph{reward}{idle} - ($step - $ph{reward}{seconds})) < 1e-9, 'reward group idle likewise');
    ok(abs($ph{critic_update}{idle} - ($step - $ph{values}{seconds} - $ph{critic_update}{seconds})) < 1e-9,
       'critic group idle = step - values - critic_update');
    ok($ph{reference}{idle} > 20, 'the reference group waits most of the step');
    # the training pool's own idle stays on the actor's update (0 here: it
    # is the longest side), and pools.train is unchanged
    is($ph{actor_update}{idle}, $r->{pools}{train}{idle}, "the training pool's idle on actor_update");
}

# 6. comm --algo A that cannot run named the algorithm twice: "comm:
# sharp: sharp needs >= 2 nodes ...", "comm: tree: tree is priced for
# all_reduce only" (engine/comm.c prefixed reasons that begin with it).
# The name is said as the flag that gave it, --algo sharp.
for my $t ([['--algo', 'sharp'], '--algo sharp needs >= 2 nodes'],
           [['--op', 'broadcast', '--algo', 'tree'], '--algo tree is priced for all_reduce only']) {
    ($c, $o, $e) = run_gp('comm', '--system', 'dgx-h200', @{$t->[0]});
    is($c, 1, "comm @{$t->[0]}: refused");
    like($e, qr/^gpuplan: comm: \Q$t->[1]\E/m, "comm @{$t->[0]}: the algorithm named once") or diag $e;
}

# 7. A script's --format that gp.report cannot write (--format xml) failed
# after the script had priced its jobs, at the script's own gp.report line
# ("scripts/a100_vs_h200.lua:81: unknown format 'xml'", exit 1): four of
# the shipped scripts.  gp.options now refuses it, naming --format, when
# the declared default is an output format: a usage error, nothing printed.
for my $s ('a100_vs_h200', 'grid_sweep', 'h800_vs_h100', 'video_sft') {
    ($c, $o, $e) = run_gp('run', "scripts/$s.lua", '--format', 'xml');
    is($c, 2, "run scripts/$s.lua --format xml: a usage error");
    is($o, '', '... nothing on stdout');
    like($e, qr/^gpuplan: scripts\/$s\.lua: --format must be text, markdown, csv or json \(got 'xml'\)$/m,
         '... naming --format and the value') or diag $e;
}

# 8. scripts/grpo.lua --group 1 priced "128 prompts x 1" as GRPO (exit 0),
# whose advantage compares each response with its group's; the rl command
# refuses it.  The script now refuses it too.
($c, $o, $e) = run_gp('run', 'scripts/grpo.lua', '--group', '1');
is($c, 2, 'grpo.lua --group 1: a usage error');
like($e, qr/^gpuplan: grpo: --group 1: GRPO needs at least 2 responses a prompt/m, '... says why') or diag $e;

# 9. scripts/moe_serving.lua: one message for four bounds ("--target,
# --itl-max must be positive, --input >= 1, --output >= 2") named neither
# the option nor the value; --gpus '' printed empty tables and exit 0; an
# unknown card named the script's line, not --gpus.
for my $t ([['--target', '-1'], qr/--target must be above 0 \(got -1\)/],
           [['--output', '1'], qr/--output must be at least 2 \(got 1\)/],
           [['--gpu', ''], qr/--gpu names no card/]) {
    ($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', @{$t->[0]});
    is($c, 2, "moe_serving.lua @{$t->[0]}: a usage error");
    like($e, qr/^gpuplan: moe_serving: $t->[1]/m, "moe_serving.lua @{$t->[0]}: names it") or diag $e;
}
($c, $o, $e) = run_gp('run', 'scripts/moe_serving.lua', '--gpu', 'h20,foo');
is($c, 2, 'moe_serving.lua --gpu h20,foo: an unknown card, a usage error (exit 2)');
like($e, qr/^gpuplan: moe_serving: --gpu: unknown gpu 'foo'/m, '... named with --gpu') or diag $e;

# 10. --zero-group beside --fsdp hybrid_shard, or a --zero list holding 0:
# the refusal named the Lua key and a list ("zero_group 8 and fsdp
# hybrid_shard both set ...", "the zero list must not hold 0"), not the
# flags the user typed.
for my $t ([['train', 'llama3-8b', '--gpus', '64', '--fsdp', 'hybrid_shard'],
            qr/^gpuplan: train: --zero-group 8 and --fsdp hybrid_shard both set the shard group/],
           [['plan', 'llama3-8b', '--gpus', '64', '--fsdp', 'hybrid_shard'],
            qr/^gpuplan: plan: --zero-group 8 and --fsdp hybrid_shard both set the shard group/],
           [['plan', 'llama3-8b', '--gpus', '64', '--zero', '0,1'],
            qr/^gpuplan: plan: --zero-group 8 shards the ZeRO states: --zero 0 cannot be searched with it/]) {
    my ($args, $want) = @$t;
    ($c, $o, $e) = run_gp(@$args, '--gpu', 'h200-sxm', '--zero-group', '8');
    is($c, 2, "@$args --zero-group 8: a usage error");
    like($e, $want, "@$args --zero-group 8: the flags named") or diag $e;
}

# 11. catalog list prices --format csv/json gave the price as a string
# ("$2.10/h", "6.68CNY/h") under the key price_s; a machine format's money
# is a number and its currency apart (infer's cost_per_mtok, currency).
{
    ($c, $o, $e) = run_gp('catalog', 'list', 'prices', '--format', 'json');
    is($c, 0, 'catalog list prices --format json') or diag $e;
    my ($h20) = grep { $_->{id} eq 'h20/autodl/cn' } @{JSON::PP::decode_json($o)};
    is($h20->{price}, 6.98, 'h20/autodl/cn: price 6.98 (catalog/prices/cny.lua: autodl("h20", "6.98"))');
    is($h20->{currency}, 'CNY', '... in CNY');
    ok(!exists $h20->{price_s}, '... and no price string');
    ($c, $o, $e) = run_gp('catalog', 'list', 'prices', '--format', 'csv');
    like($o, qr/^id,gpu,provider,provider_kind,region,price,currency,date$/m, 'csv: price and currency columns');
    like($o, qr/^h20\/autodl\/cn,h20,AutoDL,specialty,cn,6\.98,CNY,/m, 'csv: the h20 row');
}

# 11b. catalog list models --format csv/json gave the MoE shape as text
# ("256×top8", key moe_s), as the prices' "$2.10/h" was: a machine format
# gives numbers -- experts, top_k, shared_experts -- empty (JSON null) for
# a dense model; the text table keeps its "256×top8" cell.
{
    ($c, $o, $e) = run_gp('catalog', 'list', 'models', '--format', 'json');
    is($c, 0, 'catalog list models --format json') or diag $e;
    my %m = map { $_->{id} => $_ } @{JSON::PP::decode_json($o)};
    # catalog/models/moe.lua: deepseek-v3 experts = 256, top_k = 8,
    # shared_experts = 1 (config.json n_routed_experts 256, n_shared_experts 1)
    is_deeply([@{$m{'deepseek-v3'}}{qw(experts top_k shared_experts)}], [256, 8, 1],
              'deepseek-v3: 256 experts, top 8, 1 shared, as numbers');
    ok(!exists $m{'deepseek-v3'}{moe_s}, '... and no shape string');
    is_deeply([@{$m{'bloom-176b'}}{qw(experts top_k shared_experts)}], [undef, undef, undef],
              'bloom-176b, dense: null');
    ($c, $o, $e) = run_gp('catalog', 'list', 'models', '--format', 'csv');
    like($o, qr/^id,name,layers,hidden,heads,kv_heads,params_b,experts,top_k,shared_experts$/m,
         'csv: the three MoE columns');
    like($o, qr/^deepseek-v3,DeepSeek-V3,61,7168,128,128,671,256,8,1$/m, 'csv: the deepseek-v3 row');
    like($o, qr/^bloom-176b,BLOOM 176B,[^\n]*,,,$/m, 'csv: a dense model, empty');
    ($c, $o, $e) = run_gp('catalog', 'list', 'models');
    like($o, qr/^deepseek-v3\s.*\s256(?:\x{d7}|\xc3\x97)top8$/m, 'text: the shape cell as before')
        or diag $o;
}

# 12. catalog list gpus/fabrics/archs --format csv headed converted cells
# with the JSON's SI key: "mem_bw" over 0.600 (TB/s) where the JSON's
# mem_bw is 600000000000 bytes/s; bf16 in TFLOPS, a fabric's bw in GB/s
# and latency in us.  docs/output.md: a unit the CSV changes is carried by
# its name (comm's algbw_gbps).
{
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus', '--format', 'csv');
    like($o, qr/^id,name,memory,mem_bw_tbs,bf16_tflops,fp8_tflops,fabric,source$/m, 'gpus: the units in the header');
    # h20: 96GiB = 96 x 2^30 = 103079215104 B (a number in bytes, as the
    # JSON's memory: the text's "96GiB" had been the CSV's and the JSON's
    # too, under memory_s), 4.0TB/s, 148TFLOPS bf16
    # (catalog/gpus/nvidia-hopper.lua)
    like($o, qr/^h20,NVIDIA H20 96GB,103079215104,4\.000,148\.0,296\.0,/m, 'h20: bytes, TB/s and TFLOPS under those names');
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus', '--format', 'json');
    my ($h20) = grep { $_->{id} eq 'h20' } @{JSON::PP::decode_json($o)};
    is($h20->{memory}, 96 * 2**30, 'gpus --format json: memory in bytes, a number');
    ok(!exists $h20->{memory_s}, '... and no memory string');
    ($c, $o, $e) = run_gp('catalog', 'list', 'gpus');
    like($o, qr/^h20 .* 96GiB /m, 'the text keeps 96GiB');
    ($c, $o, $e) = run_gp('catalog', 'list', 'fabrics', '--format', 'csv');
    like($o, qr/^id,name,scope,bw_gbps,latency_us,achievable,in_switch_reduction$/m, 'fabrics: the units in the header');
    ($c, $o, $e) = run_gp('catalog', 'list', 'archs', '--format', 'csv');
    like($o, qr/^id,name,hbm,gemm_bf16,launch_overhead_us$/m, 'archs: the unit in the header');
}

# 13. MoE under a small --zero-group: a group of N x tp GPUs that cuts an
# expert group (etp x ep) was priced with the experts' states whole
# (mixtral ep 8, --zero-group 4: 44.99 GiB of optimizer a GPU against
# 5.44 without a group); Megatron-Core refuses that split of the expert
# data-parallel group, so train and rl refuse it naming the flags (exit
# 2), plan skips those splits and counts them, and fit's title names the
# groups, as train's and rl's do.
for my $cmd ('train', 'rl') {
    ($c, $o, $e) = run_gp($cmd, 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '64', '--ep', '8',
                          '--zero', '1', '--zero-group', '4');
    is($c, 2, "$cmd mixtral --ep 8 --zero-group 4: a usage error");
    like($e, qr/^gpuplan: $cmd: --zero-group 4 shards in groups of 4 GPUs \(--zero-group x --tp 1\), which cut the expert group --etp 1 x --ep 8/m,
         "$cmd: the group and the expert group named") or diag $e;
}
# An --etp of its own cuts a group at --ep 1 too: tp 1 x etp 2 makes a
# 2-GPU expert group, --zero-group 1 spans 1 GPU (1 mod 2 = 1); the
# flags' refusal, exit 2 (it read the engine's 'a shard group of 1 GPUs
# (--zero-group x tp, or a node under hybrid_shard)', exit 1)
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '1',
                      '--etp', '2', '--zero', '1', '--zero-group', '1');
is($c, 2, 'train mixtral --etp 2 --zero-group 1: a usage error');
like($e, qr/^gpuplan: train: --zero-group 1 shards in groups of 1 GPU \(--zero-group x --tp 1\), which cut the expert group --etp 2 x --ep 1/m,
     'train --etp 2: the group and the expert group named') or diag $e;
($c, $o, $e) = run_gp('plan', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '64', '--zero-group', '2',
                      '--ep-max', '8');
is($c, 0, 'plan mixtral --zero-group 2') or diag $e;
like($o, qr/^searched: .*, \d+ splits? skipped \(a shard group cuts its expert group etp x ep\)/m,
     'plan: the cut splits counted on the searched: line');
unlike($o, qr/ EP[48] .* G2 /, 'plan: no kept layout at ep 4 or 8 (a 2-GPU group at tp 1 cuts them)');
($c, $o, $e) = run_gp('fit', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '64', '--zero', '1',
                      '--zero-group', '8');
is($c, 0, 'fit --zero-group 8') or diag $e;
like($o, qr/^mixtral-8x7b on h100-sxm x64, method full \(dp 64, zero 1 in groups of 8 ranks\)$/m,
     'fit: the title names the groups');

# 14. plan --gpus with a count out of range or more than 64 counts named
# no command ("gpuplan: value 1 of --gpus must be ...", "gpuplan: gpus: at
# most 64 counts"): gp.sweep's count-list reasons had no "sweep: " head,
# so the command's name was never put in its place.  The range is the
# count kind's (gpuplan.options bad_count: 1..2^24 = 16777216).
for my $t (['0', 'value 1 of --gpus must be a whole number 1..16777216 (got 0)'],
           ['8,0', 'value 2 of --gpus must be a whole number 1..16777216 (got 0)'],
           [join(',', 1 .. 70), '--gpus: at most 64 counts (got 70)']) {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', $t->[0]);
    is($c, 1, "plan --gpus $t->[0]: refused");
    like($e, qr/^gpuplan: plan: \Q$t->[1]\E$/m, "... naming plan and --gpus") or diag $e;
}

done_testing();
