# Items earlier helpers left (followups25): one block a fix.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e);
my $tmp = tempdir(CLEANUP => 1);

# 5. A list option read "0x8" as 8 (Lua's tonumber takes hexadecimal)
# where --batch 0x10 was a usage error: every count typed is decimal,
# so a hexadecimal list entry is refused the same way (exit 2).
{
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --batch 0x10));
    is($c, 2, 'train --batch 0x10: a usage error');
    for my $bad (['--gpus', '0x8'], ['--gpus', '8,0x10'], ['--micro-batch', '1,0x2']) {
        ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm), ($bad->[0] eq '--gpus' ? () : qw(--gpus 8)), @$bad);
        is($c, 2, "plan $bad->[0] $bad->[1]: a usage error, as --batch 0x10 is") or diag $o;
        like($e, qr/^gpuplan: plan: \Q$bad->[0]\E.*'\Q$bad->[1]\E'/m, 'naming the option and its value') or diag $e;
    }
    ($c, $o, $e) = run_gp(qw(comm --gpu h100-sxm --max 0x10));
    is($c, 2, 'comm --max 0x10: a usage error') or diag $e;
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8,16', '--top', '1');
    is($c, 0, 'plan --gpus 8,16 (decimal) still reads') or diag $e;
}

# 6. `gpuplan run missing.lua` said only "cannot open script": the
# system's reason is said (io.open's strerror text).  `catalog check
# FILE` printed "not a directory: FILE" without gpuplan's prefix, which
# every other line of its own carries (a file's error leads with its
# file:line instead, as a compiler's does).
{
    ($c, $o, $e) = run_gp('run', "$tmp/missing.lua");
    is($c, 1, 'run missing.lua: exit 1');
    like($e, qr/^gpuplan: cannot open script '\Q$tmp\E\/missing\.lua': No such file or directory$/m,
         'the reason is said') or diag $e;
    open(my $fh, '>', "$tmp/one.cat") or die; print $fh "x\n"; close $fh;
    mkdir "$tmp/cat"; open($fh, '>', "$tmp/cat/x.lua") or die; print $fh "gpu { id = }\n"; close $fh;
    ($c, $o, $e) = run_gp('catalog', 'check', "$tmp/one.cat");
    is($c, 1, 'catalog check FILE: exit 1');
    my @l = split /\n/, $e;
    is($l[0], "gpuplan: not a directory: $tmp/one.cat", 'its first line has the prefix') or diag $e;
    ($c, $o, $e) = run_gp('catalog', 'check', "$tmp/cat");
    like($e, qr/^\Q$tmp\E\/cat\/x\.lua:1: /m, "a file's error still leads with its file:line") or diag $e;
}

# 8. roofline rewords gp.infer's "infer: ..." refusals as its own; a
# usage refusal among them must stay one (exit 2), as infer's is.
# Already so on this branch (480f3526 raises every reworded refusal
# through cli.reword, which keeps the mark): this pins it, each refusal
# checked against infer's own exit for the same flags.
{
    for my $bad (['--weights', 'abc'], ['--batch', 'abc'], ['--weights', 'gptq-g64x'], ['--batch', '0']) {
        my ($ci) = run_gp(qw(infer llama3-8b --gpu h100-sxm), @$bad);
        ($c, $o, $e) = run_gp(qw(roofline --gpu h100-sxm --model llama3-8b), @$bad);
        is($c, $ci, "roofline @$bad: exit $ci, as infer's") or diag $e;
        like($e, qr/^gpuplan: roofline: /m, 'said as roofline\'s') or diag $e;
    }
    ($c) = run_gp(qw(roofline --gpu h100-sxm --model llama3-8b --weights abc));
    is($c, 2, 'an unknown weight format through roofline: a usage error');
}

# 3. fit --method lora --optimizer muon said "optimizer 4 (8 on the
# embedding, output layer and norms)": LoRA trains only its 2-D adapter
# matrices (the embedding, output layer and norms are frozen), so every
# trained parameter is Muon's and the AdamW share is not said.  The
# adapter's bytes were already priced so: llama3-8b rank 8 on q,v is
# 32 layers x 8 x ((4096 + 4096) + (4096 + 1024)) = 3,407,872 params,
# x 12 B (2 + 2 + 4 + Muon's 4-byte momentum) = 40,894,464 B, exact.
{
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method lora --optimizer muon));
    is($c, 0, 'fit lora muon: exit 0') or diag $e;
    like($o, qr/^adapter states: 12\.0 B\/param before sharding \(weights 2 \+ grads 2 \+ master 4 \+ optimizer 4; recipe mixed-16\)$/m,
         'no AdamW share named for LoRA') or diag $o;
    unlike($o, qr/embedding, output layer and norms/, 'the frozen modules are not said to be trained');
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method lora --optimizer muon --format json));
    like($o, qr/"bytes":\s*40894464,\s*"name":\s*"adapter"/, 'adapter bytes: 3407872 x 12') or diag $o;
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --optimizer muon));
    like($o, qr/optimizer 4 \(8 on the embedding, output layer and norms\)/, 'full fine-tuning still says it');
}

# 7. train --seq 1048576 on llama3-8b (max_seq 8192, its config's
# max_position_embeddings) priced the step and said nothing of the
# context: a note now says it (not an error: a context extension trains
# there, and the step's cost does not depend on what positions mean);
# plan says the same; within the context, no note.
{
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --cp 8 --seq 1048576));
    is($c, 0, 'train past the context: still priced, exit 0') or diag $e;
    like($o, qr/^note: seq 1048576 is past llama3-8b's stated context of 8192 tokens \(max_seq\)/m,
         'the note names the seq, the model and its context') or diag $o;
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --seq 8192 --format json));
    unlike($o, qr/context_note/, 'at the context: no note in the JSON');
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --cp 2 --seq 16384 --format json));
    like($o, qr/"context_note":\s*"seq 16384 is past/, 'the JSON carries it') or diag $o;
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 64 --seq 16384 --top 1));
    is($c, 0, 'plan: exit 0') or diag $e;
    like($o, qr/^note: seq 16384 is past llama3-8b's stated context of 8192 tokens/m, 'plan says it too') or diag $o;
    # fit prices the same training memory there: it says it too (its
    # --method infer refuses a prompt past the context instead)
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --seq 16384));
    is($c, 0, 'fit past the context: exit 0') or diag $e;
    like($o, qr/^note: seq 16384 is past llama3-8b's stated context of 8192 tokens/m, 'fit says it too') or diag $o;
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --seq 8192));
    unlike($o, qr/^note: /m, 'fit at the context: no note') or diag $o;
}

# 1. plan and train seemed to price one hf layout's memory differently
# (llama3-8b TP2 PP2 DP2: plan's row 46.4 GiB, train's 29.2): they priced
# different jobs.  plan's defaults are a pre-training run (method
# pretrain: seq 8192, the model's context; global batch 512), train's a
# fine-tune (method full: seq 2048, global batch 128), each said on its
# defaults line.  Given plan's job, train prints the row's numbers: the
# same bytes and step, to the printed digits (both from one engine call).
{
    my @j = qw(llama3-8b --gpu h100-sxm --gpus 8 --stack hf);
    ($c, $o, $e) = run_gp('plan', @j, qw(--tp-max 2 --pp-max 2 --top 40 --format json));
    is($c, 0, 'plan: exit 0') or diag $e;
    my ($row) = grep { /"layout":\s*"TP2 PP2 DP2 ZeRO-1 SP mb1 none"/ } split /\n/, $o;
    ok($row, 'plan has the TP2 PP2 DP2 ZeRO-1 SP mb1 none row') or diag $o;
    my ($pm) = ($row // '') =~ /"mem_bytes":\s*([\d.e+]+)/;
    my ($ps) = ($row // '') =~ /"step_s":\s*([\d.e+]+)/;
    ($c, $o, $e) = run_gp('train', @j, qw(--tp 2 --pp 2 --zero 1 --sp --batch 1 --recompute none
        --method pretrain --seq 8192 --global-batch 512 --format json));
    is($c, 0, 'train of that job and layout: exit 0') or diag $e;
    my ($tm) = $o =~ /"memory":\s*\{.*?"total":\s*([\d.e+]+)/s;
    my ($ts) = $o =~ /"step_s":\s*([\d.e+]+)/;
    ok(defined $pm && defined $tm && abs($pm - $tm) <= 1e-9 * $tm, "the same bytes ($pm vs $tm)");
    ok(defined $ps && defined $ts && abs($ps - $ts) <= 1e-9 * $ts, "the same step ($ps vs $ts)");
}

# 2. --optimizer muon with --offload optimizer (DeepSpeed ZeRO-Offload)
# priced a host step cheaper than AdamW's, with no Newton-Schulz: the host
# optimizer gets flat 1-D partitions, where DeepSpeed's Muon runs none
# (PR #8464, RFC #8463).  Refused, naming both flags (exit 2); without
# offload Muon is still priced.
{
    for my $off ('optimizer', 'params+optimizer') {
        my $z = $off eq 'optimizer' ? 2 : 3;
        ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --stack deepspeed --optimizer muon),
                              '--zero', $z, '--offload', $off);
        is($c, 2, "train muon --offload $off: a usage error") or diag $e;
        like($e, qr/^gpuplan: train: --optimizer muon with --offload \Q$off\E: .*Newton-Schulz/m,
             'naming both flags and why') or diag $e;
    }
    ($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --gpus 8 --zero 2 --offload optimizer --optimizer muon));
    is($c, 2, 'fit: the same refusal') or diag $e;
    ($c, $o, $e) = run_gp(qw(plan llama3-8b --gpu h100-sxm --gpus 8 --stack deepspeed --offload optimizer --optimizer muon));
    is($c, 2, 'plan: the same refusal') or diag $e;
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --stack deepspeed --zero 2 --offload optimizer --optimizer adamw));
    is($c, 0, 'adamw with offload: still priced') or diag $e;
    ($c, $o, $e) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --stack deepspeed --zero 2 --optimizer muon));
    is($c, 0, 'muon without offload: still priced') or diag $e;
}

done_testing();
