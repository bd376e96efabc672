# Hardening follow-ups left by the day's walks (newuser6, luawalk3,
# review54): a refusal that did not name the flag the user gave, or two
# commands answering the same misuse differently.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();
use File::Temp ();
use File::Path ();

my ($c, $o, $e);
my @train = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');

# 1. A bad --order was refused as "rank order 'x': ..." (the engine's
# words), naming no flag.  Each of the three refusals names --order.
for my $case (['x', qr/--order 'x': unknown dimension 'x'/],
              ['tp-tp-dp-pp-cp', qr/--order 'tp-tp-dp-pp-cp' names tp twice/],
              ['tp-dp', qr/--order 'tp-dp' must name each of tp, cp, dp and pp once/]) {
    ($c, $o, $e) = run_gp(@train, '--order', $case->[0]);
    is($c, 1, "--order $case->[0]: refused (exit 1, an error in a value)");
    like($e, $case->[1], "--order $case->[0]: the refusal names --order");
}

# 2. comm --min 3 priced an all_reduce of count 0 (3 bytes of 4-byte
# floats: no data at all) at the launch latency.  The smallest message
# is one float; 4 bytes is taken and is count 1.
{
    my @comm = ('comm', '--system', 'dgx-h100');
    ($c, $o, $e) = run_gp(@comm, '--min', '3', '--max', '3');
    # out of range, not malformed: exit 1 (followups26; it exited 2)
    is($c, 1, "comm --min 3: out of range, exit 1");
    like($e, qr/--min 3 is below 4 bytes, one 4-byte float/, "... naming --min and the floor");
    ($c, $o, $e) = run_gp(@comm, '--min', '4', '--max', '4');
    is($c, 0, "comm --min 4 runs");
    like($o, qr/^\s+4\s+1\s/m, "... a row of 4 B, count 1");
}

# 3. --deadline 6mo said "expected a duration like 30d, 12h or 2w" and
# not which units are taken: now it lists them and says months and years
# are not among them.
{
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--tokens', '1e9', '--deadline', '6mo');
    isnt($c, 0, "--deadline 6mo: refused");
    like($e, qr/--deadline '6mo': expected a duration like 30d, 12h or 2w \(a number and one unit: s, m, h, d or w; no months or years: half a year is 26w\)/,
         "... listing the units taken");
}

# 4. infer's "needs" refusals exited 2 (a usage error, infer's rule: an
# option the chosen mode does not read) for --host-memory without
# --offload, but 1 for --offload-layers without --offload and for the
# prefill pool's options without --disagg (gp.infer's own refusals).
# Each is now the command's usage error, with its usage line.
{
    my @infer = ('infer', 'llama3-8b', '--gpu', 'h100-sxm');
    for my $case (['--host-memory', '1TB', '--offload'], ['--offload-layers', '3', '--offload'],
                  ['--prefill-gpus', '2', '--disagg'], ['--prefill-tp', '2', '--disagg'],
                  ['--prefill-ep', '2', '--disagg'], ['--prefill-dp-attention', undef, '--disagg']) {
        my ($flag, $v, $need) = @$case;
        ($c, $o, $e) = run_gp(@infer, $flag, defined $v ? ($v) : ());
        is($c, 2, "infer $flag without $need: exit 2");
        like($e, qr/^gpuplan: infer: \Q$flag\E needs \Q$need\E/m, "... naming both flags");
        like($e, qr/^usage: gpuplan infer /m, "... with the usage line");
    }
    # given with the mode, each is taken (the test can fail)
    ($c, $o, $e) = run_gp(@infer, '--disagg', '--gpus', '4', '--prefill-gpus', '2');
    is($c, 0, "--prefill-gpus with --disagg runs") or diag $e;
}

# 5. fit took no --system: it checked an offload's host fit against the
# card's default node (dgx-h100, 2 TB) only, where train --system a node
# of more DRAM answers for that node.  Llama 3.1 405B, ZeRO-3
# params+optimizer offload on 16 H100s holds 3779.8 GiB a node of 8
# (tests/cli/host_fit.t): past the default node's 2 TB = 1862.6 GiB,
# within a user node's 8 TB = 8e12 / 2^30 = 7450.6 GiB.
{
    my $xdg = File::Temp::tempdir(CLEANUP => 1);
    my $dir = "$xdg/gpuplan/catalog";
    File::Path::make_path($dir);
    open(my $fh, '>', "$dir/node.lua") or die;
    print $fh <<'LUA';
system {
  id = "my-h100-8tb", name = "DGX H100 with 8 TB of DRAM", gpu = "h100-sxm", gpus = 8,
  scaleup = "nvlink4", nics = 8, nic_fabric = "ib-ndr-400",
  host_memory = "8TB", host_mem_bw = "614.4GB/s", source = "user test",
}
LUA
    close $fh;
    local $ENV{XDG_CONFIG_HOME} = $xdg;
    local $ENV{GPUPLAN_CATALOG} = '';
    my @job = ('llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3', '--offload',
               'params+optimizer', '--stack', 'deepspeed', '--recompute', 'full', '--seq', '512');
    ($c, $o, $e) = run_gp('fit', @job, '--system', 'my-h100-8tb', '--format', 'json');
    is($c, 0, 'fit --system my-h100-8tb runs') or diag $e;
    my $j = eval { JSON::PP::decode_json($o) } || {};
    ok($j->{fits} && $j->{host_memory} == 8e12 && $j->{host_system} eq 'my-h100-8tb',
       'fit --system: the offload checked against that node, which holds it') or diag $o;
    ($c, $o, $e) = run_gp('train', @job, '--method', 'full', '--system', 'my-h100-8tb', '--format', 'json');
    my $t = eval { JSON::PP::decode_json($o) } || {};
    is(!!$t->{fits}, !!$j->{fits}, 'train --system agrees');
    ($c, $o, $e) = run_gp('fit', @job, '--format', 'json');
    $j = eval { JSON::PP::decode_json($o) } || {};
    ok(!$j->{fits} && $j->{host_system} eq 'dgx-h100', 'without --system: the default node, short');
    ($c, $o, $e) = run_gp('fit', @job, '--system', 'hgx-h800');
    is($c, 1, 'fit --system of another card: refused');
    like($e, qr/^gpuplan: fit: --system 'hgx-h800' holds h800-sxm, not h100-sxm$/m, '... naming --system');
    ($c, $o, $e) = run_gp('fit', @job, '--system', 'nope');
    like($e, qr/^gpuplan: fit: --system: unknown system 'nope'/m, 'an unknown --system named');
}

# 6. infer --max-num-tokens 16 --chunked-prefill named the default decode
# batch (209) but not --batch as a way out.  It names both ways, each
# with the value that meets the rule (batch <= max_num_tokens): 16 or
# 209; and --batch 16 then runs (the test can fail).
{
    my @infer = ('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--max-num-tokens', '16', '--chunked-prefill');
    ($c, $o, $e) = run_gp(@infer);
    is($c, 1, "--max-num-tokens 16 --chunked-prefill: refused");
    like($e, qr/at least the decode batch \(209\): a step holds one token of each decoding sequence \(give --batch 16, or --max-num-tokens 209\)$/m,
         "... naming --batch and --max-num-tokens with the values that meet it");
    ($c, $o, $e) = run_gp(@infer, '--batch', '16');
    is($c, 0, "... and --batch 16 runs") or diag $e;
}

# 7. plan for a job that fits nowhere said "no layout fits" and not how
# far the nearest layout is.  The search now keeps the least a GPU of
# the refused layouts must hold (sweep.c past_gpu), said in train's
# words.  Llama 3 70B on 1 H100: the nearest of the 9 layouts is
# recompute full at micro-batch 1, which train prices the same
# (1259.5 GiB of a 79.1 GiB budget, short by 1188.3 GiB): the two must
# agree to the printed 0.1 GiB.
{
    ($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '1');
    is($c, 0, 'plan 70B on 1 GPU answers') or diag $e;
    my ($need, $short) = $o =~ /^no layout fits \(the nearest layout needs ([\d.]+) GiB per GPU, short by ([\d.]+) GiB\)$/m;
    ok(defined $need, '... saying how far the nearest layout is') or diag $o;
    ($c, $o, $e) = run_gp('train', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '1', '--method', 'pretrain',
                          '--recompute', 'full', '--batch', '1');
    my ($tneed, $tshort) = $o =~ /^memory: ([\d.]+) GiB of [\d.]+ GiB per GPU; fits: no \(short by ([\d.]+) GiB/m;
    is($need, $tneed, '... the bytes train gives that layout');
    is($short, $tshort, '... and its shortfall');
    # 2 shards merged keep the least (merge.lua sums past_gpu, keeps the least)
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my @plan = ('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '1', '--format', 'json');
    for my $k (1 .. 2) {
        ($c, $o, $e) = run_gp(@plan, '--shard', "$k/2");
        open(my $fh, '>', "$dir/s$k.jsonl") or die; print $fh $o; close $fh;
    }
    ($c, $o, $e) = run_gp('merge', "$dir/s1.jsonl", "$dir/s2.jsonl");
    like($o, qr/^no layout fits \(the nearest layout needs \Q$need\E GiB per GPU, short by \Q$short\E GiB\)$/m,
         'merged shards say the same nearest layout') or diag "$o$e";
}

done_testing();
