# Small items colleagues' walks left (followups11, newuser11): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);

# 1. A case of a user's file that is read but not predicted -- its
# hardware.gpu no catalog card -- gave its reason as
# "FILE: case 'ID': field 'hardware.gpu': unknown gpu 'h100' ...", no line,
# where a refused case names FILE:LINE.  The reason now names the line of
# the field, found as a refusal's is (the file's text scanned once, only
# when a reason names it).
{
    require JSON::PP;
    my $json = JSON::PP->new->canonical->pretty;
    my $all = shipped_cases();
    my ($ok) = grep { $_->{id} eq 'bloom176b-train-tflops' } @$all;
    my $bad = JSON::PP->new->decode(JSON::PP->new->encode($ok));
    $bad->{id} = 'bad-gpu';
    $bad->{hardware}{gpu} = 'h100';
    my $text = $json->encode([$ok, $bad]);
    # the line of the bad case's "gpu" : "h100" (1-based)
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"gpu" : "h100"/ } 1 .. @lines;
    ok($want && $want > 60, "the bad gpu is on line $want, in the second case");
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $f = "$dir/e8.json";
    open my $out, '>', $f or die $!;
    print $out $text;
    close $out;
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 0, 'a case not predicted: exit 0, a row of the report');
    like($o, qr/^bad-gpu\s+train\s+\S+\s+\Q$f\E:$want: case 'bad-gpu': field 'hardware.gpu': unknown gpu 'h100' \(did you mean /m,
         "the reason names FILE:$want") or diag $o;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    like($o, qr/^bad-gpu,.*"\Q$f\E:$want: case 'bad-gpu': field 'hardware.gpu'/m, 'csv: the same');
}

# 2. gpt-fast, LitGPT and eager PyTorch (Hugging Face generate) run no
# expert parallelism either (gpt-fast shards each expert's weights as
# tensor parallelism, LitGPT splits or shards layers, HF places whole
# layers a GPU): MoE serving on several GPUs under them was priced as
# SGLang's engine (deepseek-v3 EP16 on 16 H200s, exit 0).  Refused by the
# rule llama.cpp's and ExLlamaV2's are, from one list; their own split
# (--tp 2) is still priced, and a serving engine's EP too.
for my $rt (qw(gpt-fast litgpt eager-pytorch)) {
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime), $rt);
    is($c, 2, "deepseek-v3 --ep 16 --runtime $rt: exit 2");
    like($e, qr/^gpuplan: infer: --runtime \Q$rt\E runs no expert parallelism \(.+\): the MoE serving model \(--ep 16\) prices SGLang's, vLLM's and TensorRT-LLM's engines: give --runtime sglang, vllm or trtllm, or price \Q$rt\E's own split with --tp N and none of the serving options$/m,
         "$rt: names the runtime and the option") or diag $e;
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --dp-attention --runtime), $rt);
    is($c, 2, "qwen3-30b-a3b --dp-attention on 2 GPUs under $rt: exit 2");
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --tp 2 --runtime), $rt);
    is($c, 0, "qwen3-30b-a3b --tp 2 under $rt: its own split, priced") or diag $e;
}
for my $rt (qw(vllm trtllm)) {
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime), $rt);
    is($c, 0, "deepseek-v3 --ep 16 under $rt: priced") or diag $e;
}

# 3. The coin-flip line compares results[1] and results[2], the rows the
# table prints first (C.show and C.html print results[1..top] in order):
# on two cards (h100-sxm and h800-sxm, the two fastest layouts within each
# other's ranges) its two ranges are the first two rows' days, as printed.  With
# --top 1 the table shows one row, and the line named a "#2" no row
# carries: it now says "the runner-up", the layout the line above names.
{
    # (--policy fastest: with --tokens alone plan now ranks by cost)
    my @job = qw(plan llama3-8b --gpus 8 --gpu h100-sxm,h800-sxm --seq 4096 --zero 1
                 --recompute none --tokens 1e11 --policy fastest);
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'two cards: runs') or diag $e;
    # the time column: "13.8 days (13.3-15.3)" (the unit its magnitude
    # picks, units.duration_unit); the rows after the rule line
    my @rows = grep { /^\S+\s+8\s+TP/ } split /\n/, $o;
    my @days = map { /\s(\d+\.\d days \(\d+\.\d-\d+\.\d\))\s/ ? $1 : '' } @rows[0, 1];
    my ($d1, $d2) = @days;
    like($o, qr/^coin flip: #1 and #2 lie inside each other's 80% range of time \(\Q$d1\E against \Q$d2\E\): /m,
         "the line's ranges are rows 1 and 2's ($days[0], $days[1])") or diag $o;
    # row 2, whichever card and layout the search ranks there, is the
    # runner-up --top 1 names: "h800-sxm     8  TP1 PP2 DP4 ZeRO-1 mb1 none  ..."
    my ($gpu2, $lay2) = ($rows[1] // '') =~ /^(\S+)\s+8\s+(TP.*?(?:none|full|selective))\s/;
    ok(defined $lay2, "row 2 carries a card and a layout ($rows[1])");
    ($c, $o, $e) = run_gp(@job, '--top', '1');
    is(scalar(grep { /^\S+\s+8\s+TP/ } split /\n/, $o), 1, '--top 1: one row');
    like($o, qr/^runner-up \Q$gpu2\E x 8 \(\Q$lay2\E\): /m, '--top 1: the runner-up named (row 2 of the full table)')
        or diag $o;
    like($o, qr/^coin flip: #1 and the runner-up lie inside each other's 80% range of time /m,
         '--top 1: the coin flip names the runner-up, not a #2 the table lacks') or diag $o;
    ($c, $o, $e) = run_gp(@job, '--top', '1', '--format', 'html');
    like($o, qr/<p>coin flip: #1 and the runner-up lie inside/, '--top 1, html: the same');
}

# 4. --itl-max 2h's refusal named the milliseconds it read ("got
# 7200000"), not the text typed; --ttft-max took no time with its unit at
# all ("expects a number, got '2h'").  Both read a bare number as
# milliseconds or a time with its unit (the parser gp.infer's itl_max and
# ttft_max are), and the bound's refusal names the text as typed.
{
    my @job = qw(infer llama3-8b --gpu h100-sxm --target 1000);
    for my $k (qw(itl-max ttft-max)) {
        for my $t (['2h'], ['7.2e6'], ['3600001'], ['0']) {
            ($c, $o, $e) = run_gp(@job, "--$k", $t->[0]);
            is($c, 1, "--$k $t->[0]: past the bound, exit 1");
            like($e, qr/^gpuplan: infer: --\Q$k\E must be a number of milliseconds in \(0, 3600000\] \(got \Q$t->[0]\E\)$/m,
                 "--$k $t->[0]: names the text typed") or diag $e;
        }
        # 500 ms, said three ways: the same answer, byte for byte
        ($c, my $o0, $e) = run_gp(@job, "--$k", '500');
        is($c, 0, "--$k 500 runs") or diag $e;
        for my $v (qw(500ms 0.5s)) {
            ($c, $o, $e) = run_gp(@job, "--$k", $v);
            is($c, 0, "--$k $v runs") or diag $e;
            is($o, $o0, "--$k $v: the answer of --$k 500");
        }
        ($c, $o, $e) = run_gp(@job, "--$k", '5xx');
        is($c, 2, "--$k 5xx: no time, exit 2");
    }
}

done_testing();
