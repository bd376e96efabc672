# What a walk as two new users (a researcher fine-tuning a vision-language
# model and running GRPO; a serving engineer sizing DeepSeek-V3, Llama 3.1
# 8B on one card and a two-node all-reduce) found from the README and the
# docs: an error that did not say what to do, an answer that left the user
# to guess.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);

# 1. `gpuplan train` on a job that does not fit printed the verdict and
# its largest term and nothing else, where `plan` and `rl` price what
# would fit (docs/output.md).  Qwen2.5-VL-7B full fine-tune on 8 H100 at
# the default ZeRO 0 (1024-px images: round(1024 / 28) = 37 -> 1036 px,
# 37^2 = 1369 image tokens, + 256 text = seq 1625) needs 133.7 GiB a GPU.
# Now the line names each ZeRO stage above 0 and full recomputation, each
# priced through gp.train: the figures it quotes must be those the option
# gives when run (the same engine, so equal to the printed 0.1 GiB).
my @job = ('train', 'qwen2.5-vl-7b', '--gpu', 'h100-sxm', '--gpus', '8',
           '--image-size', '1024', '--seq', '1625');
($c, $o, $e) = run_gp(@job);
is($c, 0, 'train: a job that does not fit is an answer, exit 0') or diag $e;
like($o, qr/^does not fit: memory: needs [\d.]+ GiB per GPU/m, 'the verdict first');
my ($line) = $o =~ /^(would fit \(priced\): .*)$/m;
ok($line, 'train says what would fit') or diag $o;
$line //= '';
for my $z (1, 2, 3) {
    my ($gib, $step) = $line =~ /--zero $z \(([\d.]+) GiB per GPU, step ([\d.]+) s\)/;
    ok(defined $gib, "--zero $z is priced on the line") or next;
    my ($c2, $o2) = run_gp(@job, '--zero', $z);
    my ($mem) = $o2 =~ /^memory: ([\d.]+) GiB of/m;
    my ($st) = $o2 =~ /^step\s+([\d.]+)/m;
    is($gib, $mem, "--zero $z: the memory quoted is the option's own run's");
    # the line rounds the step to 3 decimals, the table to 4
    ok(abs($step - $st) < 6e-4, "--zero $z: the step quoted is its run's ($step vs $st)");
    like($o2, qr/fits: yes/, "--zero $z fits when run");
}
# Full recomputation alone keeps the unsharded optimizer states (57.1
# GiB, the largest term) and does not fit: said as tried, not offered.
like($line, qr/; not --recompute full \(it does not fit either\)$/,
     'an option tried that does not fit is named as such');
# JSON and CSV carry no such line (it is the text's advice)
($c, $o, $e) = run_gp(@job, '--format', 'csv');
unlike($o, qr/would fit/, 'csv: no advice line');
# A job that fits says nothing of the kind.
($c, $o, $e) = run_gp(@job, '--zero', '3');
unlike($o, qr/would fit/, 'a job that fits: no would-fit line');
# One GPU: no data-parallel ranks to shard over, so no ZeRO stage is
# offered; recomputation is tried.
($c, $o, $e) = run_gp('train', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '1');
unlike($o, qr/--zero \d/, 'one GPU: no ZeRO stage offered');
like($o, qr/--recompute full/, 'one GPU: recomputation is tried');

# 2. The image tokens past --seq: the refusal said "(seq counts them)"
# and not what to give.  Now it names the count: 1369 image tokens (above)
# plus the text.
($c, $o, $e) = run_gp('train', 'qwen2.5-vl-7b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--image-size', '1024', '--seq', '256');
is($c, 1, 'media past --seq: an error, exit 1');
like($e, qr/1 image of 1369 tokens each \(1036 px\) make 1369 tokens, more than the sequence of 256 \(seq counts them: give a seq of 1369 plus the text tokens\)/,
     'the refusal says which seq to give');

# 3. `--weights Q4_K_M` (the GGUF type a llama.cpp user has) was refused
# with "or bits per weight" and no bits.  The refusal now points at the
# bits, with llama.cpp's own table's figure (tools/quantize/README.md,
# Llama 3.1 8B: "| Q4_K_M | 4.8944 |"); a name that is no GGUF type is
# refused as before.  Since, infer prices Q4_K_M, Q8_0 and the other types
# it lays out by name (tests/lua/gguf_types.t); another, IQ4_XS, is
# refused with the hint.
for my $w (qw(Q4_K_M q8_0)) {
    ($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'l40s', '--runtime', 'llama.cpp',
                          '--weights', $w, '--batch', '1');
    is($c, 0, "--weights $w: priced by name") or diag $e;
}
for my $w (qw(IQ4_XS)) {
    ($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'l40s', '--runtime', 'llama.cpp',
                          '--weights', $w, '--batch', '1');
    is($c, 2, "--weights $w: a usage error");
    like($e, qr/unknown weight format '\Q$w\E' .*; gpuplan infer and fit --method infer take Q4_0, Q4_K_M, Q4_K_S, Q5_K_M, Q5_K_S, Q6_K, Q8_0 by name; another GGUF type is given as its bits per weight, e\.g\. --weights 4\.89 for Q4_K_M/,
         "--weights $w: the refusal names the types taken and says to give bits per weight");
}
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'l40s', '--weights', 'foo');
unlike($e, qr/GGUF/, 'a name that is no GGUF type: no GGUF hint');
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'l40s', '--runtime', 'llama.cpp',
                      '--weights', '4.89', '--batch', '1');
is($c, 0, 'the bits the hint names are taken') or diag $e;

# 4. DeepSeek-V3 (673 GB of fp8 weights) with --gpus 16 on H200 and no
# --tp: infer makes 16 replicas of one GPU (replicas = gpus / (tp x pp),
# --help) and was told "try ... more GPUs with --tp" -- the user had given
# 16.  The hint now says what the 16 became and names the replica's axes.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16',
                      '--runtime', 'sglang', '--input', '2048', '--output', '1024',
                      '--concurrency', '32');
is($c, 0, 'not fitting is an answer') or diag $e;
like($o, qr/; try .*more GPUs a replica with --tp or --pp \(--gpus 16 at tp 1, pp 1 is 16 replicas, each holding the whole model\)/,
     '--gpus past one replica: the hint says they are replicas');
# 16 / (4 x 1) = 4 replicas
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--tp', '4');
like($o, qr/\(--gpus 16 at tp 4, pp 1 is 4 replicas, each/, 'the replica count is gpus / (tp x pp)');
# Without --gpus (one replica) the hint is as it was.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm');
like($o, qr/; try --weights int4, --kv fp8, more GPUs with --tp or --offload$/m,
     'one replica: more GPUs with --tp, as before');

# 5. The collective check "all-reduce over 16 H100 on two nodes, 400G IB
# x8" from --gpu h100-sxm: the node built from a card has no NICs, and the
# refusal said "give --system ID (a catalog system with NICs)" without
# naming one (comm takes no --nic-fabric, unlike train, plan, rl and
# infer).  It now names the card's catalog systems that have NICs, with
# their count and fabric (dgx-h100: nics 8, nic_fabric ib-ndr-400 in
# catalog/systems/nvidia-hgx.lua); a card with none is refused as before.
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--nodes', '2', '--min', '256MiB', '--max', '256MiB');
is($c, 1, 'two nodes of a card-built node: refused');
like($e, qr/which has no NICs: give --system ID \(a catalog system with NICs: dgx-h100 \(8 x ib-ndr-400\)\)$/m,
     'the systems of that card with NICs are named');
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--nodes', '2', '--nics', '8');
like($e, qr/no NIC fabric for them to run on; give --system ID \(a catalog system with NICs: dgx-h100 \(8 x ib-ndr-400\)\)$/m,
     '--nics on a card-built node: the same systems named');
($c, $o, $e) = run_gp('comm', '--gpu', 'rtx-4090', '--nodes', '2');
like($e, qr/which has no NICs: give --system ID \(a catalog system with NICs\)$/m,
     'a card no catalog system with NICs carries: as before');
# and the system it names answers the question: 256 MiB over 2 x 8
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--nodes', '2', '--min', '256MiB', '--max', '256MiB');
is($c, 0, 'the named system prices the all-reduce') or diag $e;
like($o, qr/^all_reduce on 16 x h100-sxm on 2 x dgx-h100$/m, 'on 16 GPUs over 2 nodes');
# The same from Lua, the key named as a key
my $dir = File::Temp::tempdir(CLEANUP => 1);
open(my $fh, '>', "$dir/c.lua") or die;
print $fh 'local gp = require "gpuplan"; print(select(2, pcall(gp.comm, { gpu = "h100-sxm", nodes = 2, bytes = "256MiB" })))', "\n";
close $fh;
($c, $o, $e) = run_gp('run', "$dir/c.lua");
like($o, qr/give system = ID \(a catalog system with NICs: dgx-h100 \(8 x ib-ndr-400\)\)$/m, 'Lua: the same systems');

done_testing();
